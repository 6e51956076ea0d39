import { describe, expect, it } from "vitest";
import type { Gate } from "../../api/types";
import { malformedParts, rawGateData } from "./malformed";

const gate = (spec: Record<string, unknown>, payload?: unknown) => ({ spec, payload }) as unknown as Pick<Gate, "spec" | "payload">;

describe("agent data a review cannot render", () => {
  it("a plan whose tasks lack ids, repeat them, or are not tasks", () => {
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: [{ description: "a" }, { description: "b" }] }))).toEqual([
      "Task 1 has no `task_id`.",
      "Task 2 has no `task_id`.",
    ]);
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: [{ task_id: "x" }, { task_id: "x" }] }))).toEqual([
      "Task id `x` is used by more than one task.",
    ]);
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: ["do it", 3, null] }))).toHaveLength(3);
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: "all of them" }))).toEqual(["The plan's `tasks` is not a list."]);
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: [{ task_id: "a", dependencies: "b" }] }))).toEqual([
      "Task 1's dependencies are not a list of ids.",
    ]);
  });

  it("a well-formed plan, or a plan kept in the run, is not malformed", () => {
    expect(malformedParts(gate({ kind: "plan_review" }, { tasks: [{ task_id: "a", dependencies: [] }, { task_id: "b", dependencies: ["a"] }] }))).toEqual([]);
    expect(malformedParts(gate({ kind: "plan_review", plan_revision: 3 }))).toEqual([]);
    expect(malformedParts(gate({ kind: "plan_review" }, [1, 2]))).toEqual([]);
  });

  it("a response review without its texts, a rubric that is not criteria", () => {
    expect(malformedParts(gate({ kind: "response_review" }))).toEqual(["The response review has no `raw` or `audited` text."]);
    expect(malformedParts(gate({ kind: "response_review", raw: "r", audited: 3 }))).toEqual(["The response review has no `audited` text."]);
    expect(malformedParts(gate({ kind: "quality_score", rubric: [1, null] }))).toEqual(["The rubric is not a list of criteria."]);
    expect(malformedParts(gate({ kind: "quality_score" }))).toEqual([]);
  });

  it("goals of any shape and payloads of any type are rendered by their reviews", () => {
    for (const goal of ["Ship it", { steps: [1, null] }, null, [1, 2]]) expect(malformedParts(gate({ kind: "goal_review", goal }))).toEqual([]);
    for (const payload of [[1, "two"], "text", 3, null]) expect(malformedParts(gate({ kind: "approval" }, payload))).toEqual([]);
  });

  it("shows the spec and payload exactly as sent", () => {
    const raw = rawGateData(gate({ kind: "plan_review" }, { tasks: [{ description: "a" }] }));
    expect(JSON.parse(raw)).toEqual({ spec: { kind: "plan_review" }, payload: { tasks: [{ description: "a" }] } });
    expect(JSON.parse(rawGateData(gate({ kind: "approval" })))).toEqual({ spec: { kind: "approval" }, payload: null });
  });
});
