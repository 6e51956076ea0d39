import { describe, expect, it } from "vitest";
import type { ApiError } from "../../api/client";
import type { Recording, RunState } from "../../api/types";
import { event, gate, run } from "../../test-fixtures";
import { alreadyImported, importSentence, parseRecording, recordingFileName } from "./recording";
import type { TimelineEvent } from "../../stores/run-log";
import { entryOf, knownRoles, replayStep, timeline } from "./timeline";

const ev = (body: Record<string, unknown>, where: Partial<{ actor: string; at: string }> = {}) => event(body, where) as TimelineEvent;

describe("a run's timeline", () => {
  const decided = gate({
    id: "g1",
    agent: "helper-bot",
    decision: { decided_by: "bob", origin: { by: "human" } } as never,
  });
  const state = { turns: [{ actor: "ops-bot", role: "agent" }], gates: [decided] } as unknown as RunState;
  const roles = knownRoles(run(), state);

  it("knows who is an agent, a human or the system from the run", () => {
    expect(roles.get("BackendWorker-abc123")).toBe("agent");
    expect(roles.get("alice")).toBe("human");
    expect(roles.get("system")).toBe("system");
    // The engine itself (step and breakpoint pauses, expiries) acts as `gatehouse`.
    expect(roles.get("gatehouse")).toBe("system");
    expect(roles.get("ops-bot")).toBe("agent");
    expect(roles.get("helper-bot")).toBe("agent");
    expect(roles.get("bob")).toBe("human");
  });

  it("shows an agent's markdown as the words a reader sees, the raw text kept under More", () => {
    const content = "**coder**: Wrote the change with `git apply`.\n\n- Calls: handoff";
    const turn = entryOf(ev({ type: "turn_added", turn: { index: 2, actor: "coder", role: "agent", content } }), roles);
    expect(turn?.summary).toBe("Turn 2: coder: Wrote the change with git apply. Calls: handoff");
    expect(turn?.detail).toContain("**coder**");
  });

  it("says what happened, by whom and when, for turns, gates, decisions and context changes", () => {
    const turn = entryOf(ev({ type: "turn_added", turn: { index: 3, actor: "ops-bot", role: "agent", content: "Ran the\nmigration" } }), roles);
    expect(turn).toMatchObject({ group: "turn", who: "agent", actor: "ops-bot", summary: "Turn 3: Ran the migration" });
    const open = entryOf(ev({ type: "gate_opened", gate: gate({ id: "g7", spec: { kind: "payload_review" }, text: "Check it" }) }), roles);
    expect(open).toMatchObject({ group: "gate", who: "agent", gateId: "g7", summary: "Gate opened (payload review, SYNC): Check it" });
    const decision = entryOf(
      ev({
        type: "gate_resolved",
        gate_id: "g7",
        decision: { action: "needs_revision", decided_by: "alice", origin: { by: "human" }, text: "Use UTC", score: null, diff: null },
      }),
      roles,
    );
    expect(decision).toMatchObject({ who: "human", actor: "alice", group: "decision", summary: "Decided: sent back for revision: Use UTC" });
    const auto = entryOf(ev({ type: "gate_auto_passed", gate: gate({ id: "g8" }), decision: {} }), roles);
    expect(auto).toMatchObject({ who: "system", group: "decision" });
    const ctx = entryOf(ev({ type: "context_set", key: "region", old: null, new: "eu-west" }, { actor: "alice" }), roles);
    expect(ctx).toMatchObject({ who: "human", group: "context", summary: "Context region: nothing → eu-west" });
    const status = entryOf(ev({ type: "run_status_changed", from: "active", to: "awaiting_human", reason: null }), roles);
    expect(status).toMatchObject({ who: "system", group: "run", summary: "Run active → awaiting a reviewer" });
    const stranger = entryOf(ev({ type: "context_deleted", key: "k", old: 1 }, { actor: "mallory" }), roles);
    expect(stranger.who).toBe("unknown");
  });

  it("takes whoever steered the run for a human, for all their events", () => {
    const events = [
      ev({ type: "run_status_changed", from: "active", to: "paused", reason: null }, { actor: "carol", at: "2026-01-01T00:01:00Z" }),
      ev({ type: "instruction_injected", instruction: { id: "ins_1", text: "Use UTC", by: "carol", at: "t" } }, { actor: "carol", at: "2026-01-01T00:02:00Z" }),
      ev({ type: "context_set", key: "k", old: null, new: 1 }, { actor: "dave", at: "2026-01-01T00:03:00Z" }),
    ];
    expect(timeline(events, roles).map((e) => [e.actor, e.who])).toEqual([
      ["carol", "human"],
      ["carol", "human"],
      ["dave", "unknown"],
    ]);
  });

  it("shows an event once even when it arrives from the history and live", () => {
    const body = { type: "context_set", key: "region", old: null, new: "eu" };
    const fromRecording = ev(body, { at: "2026-01-01T00:01:00Z" });
    const live = { ...fromRecording, seq: 12 } as TimelineEvent;
    const other = ev({ ...body, key: "zone" }, { at: "2026-01-01T00:01:00Z" });
    expect(timeline([fromRecording, other, live], roles).map((e) => e.summary)).toEqual([
      "Context region: nothing → eu",
      "Context zone: nothing → eu",
    ]);
    // One transaction may change a run's status twice at the same instant.
    const at = { at: "2026-01-01T00:02:00Z" };
    const twice = [
      ev({ type: "run_status_changed", from: "created", to: "active", reason: null }, at),
      ev({ type: "run_status_changed", from: "active", to: "awaiting_human", reason: null }, at),
    ];
    expect(timeline(twice, roles)).toHaveLength(2);
  });
});

describe("replaying a run", () => {
  it("moves one step at a time between the first entry and the last", () => {
    expect(replayStep(0, 1, 5)).toBe(1);
    expect(replayStep(3, 1, 5)).toBe(4);
    expect(replayStep(5, 1, 5)).toBe(5);
    expect(replayStep(1, -1, 5)).toBe(1);
    expect(replayStep(4, -1, 5)).toBe(3);
    expect(replayStep(9, 0, 5)).toBe(5);
    expect(replayStep(0, 1, 0)).toBe(0);
  });
});

describe("recordings", () => {
  it("names an export after the run and the time", () => {
    const at = new Date(2026, 0, 2, 3, 4);
    expect(recordingFileName("Migrate the DB: phase 2!", "run_x", at)).toBe("gatehouse-run-migrate-the-db-phase-2-20260102-0304.json");
    expect(recordingFileName("???", "run_0193abcdef123456", at)).toBe("gatehouse-run-abcdef123456-20260102-0304.json");
    expect(recordingFileName("sess-launch", "sess-launch", at, "session")).toBe("gatehouse-session-sess-launch-20260102-0304.json");
  });

  it("refuses a file that is not a recording, in words", () => {
    expect(parseRecording("{nope")).toHaveProperty("problem", expect.stringMatching(/^This file is not JSON/));
    expect(parseRecording("[1]")).toEqual({ problem: "This file is not a recording (not a JSON object)." });
    expect(parseRecording('{"format":"x"}')).toEqual({ problem: "This file is not a Gatehouse recording (it lacks format, runs or events)." });
    const ok = { format: "gatehouse-recording", version: 1, exported_at: "t", scope: {}, runs: [], events: [] };
    expect(parseRecording(JSON.stringify(ok))).toEqual({ recording: ok });
  });

  it("finds the run an import refused as already there, and nothing in other refusals", () => {
    const recording = { runs: [{ run: { id: "run_a" } }, { run: { id: "run_b" } }] } as unknown as Recording;
    const refused = (status: number, code: string | null, field: string | null) =>
      ({ status, code, field, message: "m", resolvedBy: null, resolvedAt: null }) as ApiError;
    expect(alreadyImported(refused(409, "conflict", "runs[1].run.id"), recording)).toBe("run_b");
    expect(alreadyImported(refused(409, "conflict", "runs[7].run.id"), recording)).toBeNull();
    expect(alreadyImported(refused(409, "conflict", null), recording)).toBeNull();
    expect(alreadyImported(refused(422, "invalid", "runs[0].run.id"), recording)).toBeNull();
  });

  it("says what an import brought in", () => {
    expect(importSentence({ runs: ["r"], gates: 1, events: 7 })).toBe("Imported 1 run, 1 gate and 7 events.");
    expect(importSentence({ runs: ["a", "b"], gates: 0, events: 2 })).toBe("Imported 2 runs, 0 gates and 2 events.");
  });
});
