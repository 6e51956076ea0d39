// The preview shows a payload's beginning only when it is large.

import { describe, expect, it } from "vitest";
import type { Api } from "../../api/client";
import { event, gate } from "../../test-fixtures";
import { changesPreview, GateDetails, payloadExcerpt, planInRun, revisionPlan } from "./details";

describe("payloadExcerpt", () => {
  it("shows a small payload whole, indented", () => {
    expect(payloadExcerpt({ a: 1 })).toEqual({ text: '{\n  "a": 1\n}', cut: false, size: "1 KB" });
  });

  it("cuts a large one and says how large it is", () => {
    const big = { rows: "x".repeat(2 * 1024 * 1024) };
    const shown = payloadExcerpt(big, 100);
    expect(shown.cut).toBe(true);
    expect(shown.text).toHaveLength(101);
    expect(shown.size).toBe("2.0 MB");
  });
});

describe("changesPreview", () => {
  const shown = { id: "g1", run_id: "r1" };

  it("is true for an event about the gate or its run's context, plan or status", () => {
    expect(changesPreview([event({ type: "vote_recorded", gate_id: "g1" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "gate_escalated", gate_id: "g1", priority: "urgent" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "context_set", key: "k" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "plan_revised" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "turn_added" }, { run_id: "r1" })], shown)).toBe(true);
  });

  it("is false for other gates, other runs and events that show nothing here", () => {
    expect(changesPreview([event({ type: "vote_recorded", gate_id: "g2" }, { run_id: "r1" })], shown)).toBe(false);
    expect(changesPreview([event({ type: "context_set", key: "k" }, { run_id: "r2" })], shown)).toBe(false);
    expect(changesPreview([event({ type: "instruction_injected" }, { run_id: "r1" })], shown)).toBe(false);
    expect(changesPreview([], shown)).toBe(false);
  });
});

describe("a plan review whose plan is its run's", () => {
  const task = (id: string) => ({ task_id: id, description: `do ${id}`, status: "pending", priority: "medium", dependencies: [], metadata: {} });
  const revision = (n: number, ids: string[]) => ({ revision: n, plan: { tasks: ids.map(task) }, change_log: [], actor: "gatehouse", at: "2026-11-26T10:00:00Z" });
  const revisions = [revision(1, ["a"]), revision(2, ["a", "b"]), revision(3, ["a", "b", "c"])];

  it("is told apart from one that carries its plan", () => {
    expect(planInRun(gate({ spec: { kind: "plan_review", plan_revision: 2 } }))).toBe(true);
    expect(planInRun(gate({ spec: { kind: "plan_review" }, payload: { tasks: [] } }))).toBe(false);
    expect(planInRun(gate({ spec: { kind: "approval", action: "x" } }))).toBe(false);
  });

  it("reads the revision it names, else the newest", () => {
    expect(revisionPlan(revisions as never, 2)?.tasks.map((t) => t.task_id)).toEqual(["a", "b"]);
    expect(revisionPlan(revisions as never, null)?.tasks).toHaveLength(3);
    expect(revisionPlan(revisions as never, 9)?.tasks).toHaveLength(3);
    expect(revisionPlan([], 1)).toBeNull();
  });

  it("is loaded with the run's plan; a run that cannot be read leaves none", async () => {
    const shown = gate({ id: "g1", run_id: "r1", spec: { kind: "plan_review", plan_revision: 2 }, payload: null });
    const asked: string[] = [];
    const api = {
      GET: async (path: string) => {
        asked.push(path);
        if (path.endsWith("/plan")) return { data: { plan: revisions[2], revisions, progress: {} }, response: { status: 200 } };
        return { data: { gate: shown, text_html: "", run_title: null }, response: { status: 200 } };
      },
    } as unknown as Api;
    const loaded = await new GateDetails(api).load("g1");
    expect(asked).toEqual(["/api/hitl/gates/{gate_id}", "/api/hitl/runs/{run_id}/plan"]);
    expect(loaded.ok && loaded.runPlan?.tasks.map((t) => t.task_id)).toEqual(["a", "b"]);

    const failing = {
      GET: async (path: string) => {
        if (path.endsWith("/plan")) throw new Error("offline");
        return { data: { gate: shown, text_html: "", run_title: null }, response: { status: 200 } };
      },
    } as unknown as Api;
    const none = await new GateDetails(failing).load("g1");
    expect(none.ok && none.runPlan).toBeNull();
  });
});
