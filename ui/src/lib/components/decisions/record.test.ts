import { describe, expect, it } from "vitest";
import type { Gate } from "../../api/types";
import { receivedPayload, spanOf, waitedSentence } from "./record";

const decided = (action: string, extra: Record<string, unknown> = {}) =>
  ({
    agent: "deployer",
    mode: "sync",
    created_at: "2026-11-26T10:00:00Z",
    payload: { table: "orders_2019", cascade: true },
    decision: { action, decided_by: "bob", decided_at: "2026-11-26T10:04:00Z", latency_ms: 240_000, ...extra },
  }) as unknown as Gate;

describe("a decided gate's record", () => {
  it("an edit: the payload received, and what changed from the proposal", () => {
    const got = receivedPayload(decided("edit", { payload: { table: "orders_2018", cascade: true } }))!;
    expect(got.changed).toBe(true);
    expect(JSON.parse(got.text)).toEqual({ table: "orders_2018", cascade: true });
    expect(JSON.parse(got.proposed)).toEqual({ table: "orders_2019", cascade: true });
    expect(got.segments.filter((s) => s.op === "del").map((s) => s.text)).toEqual(["orders_2019"]);
    expect(got.segments.filter((s) => s.op === "ins").map((s) => s.text)).toEqual(["orders_2018"]);
  });

  it("an approval: the proposal, unchanged; a rejection or a gate without payload: nothing received", () => {
    expect(receivedPayload(decided("approve"))).toMatchObject({ changed: false, segments: [] });
    expect(receivedPayload(decided("reject"))).toBeNull();
    expect(receivedPayload({ ...decided("approve"), payload: null } as Gate)).toBeNull();
    expect(receivedPayload({ ...decided("approve"), decision: null } as Gate)).toBeNull();
  });

  it("an edit that sent the proposal back unchanged says so", () => {
    expect(receivedPayload(decided("edit", { payload: { table: "orders_2019", cascade: true } }))).toMatchObject({ changed: false });
  });

  it("how long the agent waited, in words", () => {
    expect(waitedSentence(decided("approve"))).toBe("deployer waited 4 min for this decision (blocked until then).");
    expect(waitedSentence({ ...decided("approve"), mode: "async" } as Gate)).toBe("deployer waited 4 min for this decision.");
    expect(spanOf(40_000)).toBe("40 s");
    expect(spanOf(3_900_000)).toBe("1 h 5 min");
    expect(spanOf(2 * 86_400_000 + 3 * 3_600_000)).toBe("2 d 3 h");
    expect(spanOf(-5)).toBe("0 s");
  });
});
