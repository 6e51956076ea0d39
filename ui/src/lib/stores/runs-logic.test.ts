import { describe, expect, it } from "vitest";
import { cancelled, event, gate, opened, resolved, runSummary } from "../test-fixtures";
import { applyRunEvents, isTerminal, progressFraction, progressLabel, runControls, runStatusWords } from "./runs-logic";

describe("the runs list", () => {
  it("offers the controls the engine's transition table allows", () => {
    expect(runControls("active")).toEqual({ start: false, retry: false, pause: true, resume: false, cancel: true, step: false, steer: true });
    expect(runControls("awaiting_human").pause).toBe(true);
    expect(runControls("awaiting_human").resume).toBe(true);
    expect(runControls("paused")).toEqual({ start: false, retry: false, pause: false, resume: true, cancel: true, step: true, steer: true });
    expect(runControls("created").pause).toBe(false);
    expect(runControls("created").start).toBe(true);
    for (const s of ["completed", "failed", "cancelled"] as const) {
      expect(isTerminal(s)).toBe(true);
      expect(runControls(s)).toEqual({ start: false, retry: s !== "completed", pause: false, resume: false, cancel: false, step: false, steer: false });
    }
  });

  it("offers no control over an imported run, and names it history whatever status it was recorded with", () => {
    const none = { start: false, retry: false, pause: false, resume: false, cancel: false, step: false, steer: false };
    for (const s of ["created", "active", "awaiting_human", "paused", "failed", "cancelled"] as const) expect(runControls(s, true)).toEqual(none);
    expect(runStatusWords("awaiting_human", true)).toEqual({ label: "Imported", recorded: "recorded as awaiting a reviewer" });
    expect(runStatusWords("awaiting_human", false)).toEqual({ label: "Awaiting a reviewer", recorded: null });
  });

  it("reads progress as done of all", () => {
    expect(progressLabel({ total: 5, completed: 3, status: "in_progress" })).toBe("3 of 5 (60%)");
    expect(progressLabel({ total: 0, completed: 0, status: "pending" })).toBe("—");
    expect(progressFraction({ total: 4, completed: 1, status: "in_progress" })).toBe(0.25);
    expect(progressFraction({ total: 0, completed: 0, status: "pending" })).toBe(0);
  });

  it("shows a status change at once and reloads for counts, however often the stream replays", () => {
    const runs = [runSummary({ id: "run_1", pending_gates: 1 }), runSummary({ id: "run_2" })];
    const paused = event({ type: "run_status_changed", from: "active", to: "paused", reason: null }, { at: "2026-01-01T00:20:00Z" });
    const quiet = applyRunEvents(runs, [paused]);
    expect(quiet.runs.map((r) => r.status)).toEqual(["paused", "active"]);
    expect(quiet.runs[0]!.updated_at).toBe("2026-01-01T00:20:00Z");
    expect(quiet.stale).toBe(false);
    expect([...quiet.touched]).toEqual(["run_1"]);
    expect(runs[0]!.status).toBe("active");
    // An old status change replayed onto a newer listing changes nothing.
    const newer = [runSummary({ status: "completed", updated_at: "2026-01-01T01:00:00Z" })];
    expect(applyRunEvents(newer, [paused]).runs).toEqual(newer);

    const busy = applyRunEvents(runs, [opened(gate({ id: "g2" })), resolved("g1"), cancelled("g2")]);
    expect(busy.runs).toEqual(runs);
    expect(busy.stale).toBe(true);
  });

  it("lists a new run after reloading, and ignores events of runs it does not list", () => {
    const created = event({ type: "run_created", run: { id: "run_9", title: "new" } }, { run_id: "run_9" });
    const change = applyRunEvents([runSummary()], [created]);
    expect(change.stale).toBe(true);
    expect(change.touched.has("run_9")).toBe(true);
    expect(change.runs).toHaveLength(1);
    const other = applyRunEvents([runSummary()], [event({ type: "turn_added", turn: {} }, { run_id: "run_x" })]);
    expect(other.runs).toEqual([runSummary()]);
  });
});
