import { describe, expect, it } from "vitest";
import { gate } from "../test-fixtures";
import { escalationSentence, fallbackOf, isNear } from "./deadline";

const opened = "2026-01-01T12:00:00Z";
const tenMinutes = "2026-01-01T12:10:00Z";

describe("a gate's deadline in words", () => {
  it("says what happens when nobody answers, and whether that decides for the reviewer", () => {
    const at = (on_timeout: Parameters<typeof fallbackOf>[0]["on_timeout"], mode: "sync" | "async" = "async") =>
      fallbackOf(gate({ on_timeout, mode, created_at: opened, expires_at: tenMinutes }));
    expect(at("approve")).toEqual({ text: "then it is approved automatically", decides: true });
    expect(at("reject")).toEqual({ text: "then it is rejected automatically", decides: true });
    expect(at("fail")).toEqual({ text: "then it expires and its run fails", decides: false });
    expect(at("escalate")).toEqual({ text: "then it escalates: urgent, with 10m more to answer", decides: false });
    expect(at("expire")).toEqual({ text: "then it expires", decides: false });
    // The default is to expire; a sync gate's run waits on it, so its expiry fails the run.
    expect(at(undefined, "sync")).toEqual({ text: "then it expires and its run fails", decides: false });
  });

  it("names whom an escalation brings in and when, before and after", () => {
    const due = { after_secs: 600, due_at: tenMinutes };
    const when = (iso: string) => iso.slice(11, 16);
    expect(escalationSentence(gate({ escalation: { ...due, to: ["ops"] } }), when)).toBe("escalates to ops at 12:10");
    expect(escalationSentence(gate({ escalation: { ...due, to: ["dave", "role:sre"] } }), when)).toBe(
      "escalates to dave and anyone with the role sre at 12:10",
    );
    expect(escalationSentence(gate({ escalation: { ...due, to: [] } }), when)).toBe("escalates to a higher priority at 12:10");
    expect(escalationSentence(gate({ escalation: { ...due, to: ["ops"], escalated_at: "2026-01-01T12:10:02Z" } }), when)).toBe(
      "escalated to ops at 12:10",
    );
    expect(escalationSentence(gate(), when)).toBeNull();
  });

  it("flags a deadline within 15 minutes, or past, for the panel", () => {
    const now = Date.parse(opened);
    expect(isNear(tenMinutes, now)).toBe(true);
    expect(isNear("2026-01-01T12:15:00Z", now)).toBe(true);
    expect(isNear("2026-01-01T12:15:01Z", now)).toBe(false);
    expect(isNear("2026-01-01T11:59:00Z", now)).toBe(true);
    expect(isNear(null, now)).toBe(false);
  });
});
