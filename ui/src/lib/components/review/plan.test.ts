import { describe, expect, it } from "vitest";
import { gate } from "../../test-fixtures";
import type { Plan, PlanRevision, RunState } from "../../api/types";
import {
  addTask,
  checkPlan,
  findCycle,
  parseDependencies,
  planChanges,
  planProgress,
  taskPercent,
  plansDiffer,
  planUnderReview,
  previousRevision,
  removeTask,
  updateTask,
  waitingOn,
} from "./plan";

const plan = (tasks: Plan["tasks"]): Plan => ({ tasks }) as Plan;
const rev = (n: number, p: Plan, change_log: string[] = []): PlanRevision => ({ revision: n, plan: p, change_log, actor: "planner", at: "2026-01-01T00:00:00Z" });
const v1 = plan([
  { task_id: "a", description: "Design", status: "completed", dependencies: [] },
  { task_id: "b", description: "Build", status: "pending", dependencies: ["a"] },
]);
const v2 = plan([
  { task_id: "a", description: "Design", status: "completed", dependencies: [] },
  { task_id: "b", description: "Build the API", status: "in_progress", dependencies: ["a"] },
  { task_id: "c", description: "Test", status: "pending", dependencies: ["b"] },
]);
const state = { plan: rev(2, v2, ["added task c"]), plan_revisions: [rev(1, v1), rev(2, v2, ["added task c"])], gates: [] } as unknown as RunState;

describe("plan review", () => {
  it("reviews the revision the gate names, or the payload when it is a plan", () => {
    const named = gate({ spec: { kind: "plan_review", plan_revision: 1, round: 1 } });
    expect(planUnderReview(named, state)?.plan).toBe(v1);
    const latest = gate({ spec: { kind: "plan_review", round: 1 } });
    expect(planUnderReview(latest, state)?.revision?.revision).toBe(2);
    const inPayload = gate({ spec: { kind: "plan_review", round: 1 }, payload: v1 });
    expect(planUnderReview(inPayload, null)).toEqual({ plan: v1, revision: null });
    expect(planUnderReview(latest, null)).toBeNull();
    expect(previousRevision(state, state.plan!)?.revision).toBe(1);
    expect(previousRevision(state, rev(1, v1))).toBeNull();
  });

  it("lists what changed task by task between revisions", () => {
    expect(planChanges(v1, v2)).toEqual([
      {
        task_id: "b",
        op: "changed",
        fields: [
          { field: "description", before: "Build", after: "Build the API" },
          { field: "status", before: "Pending", after: "In progress" },
        ],
      },
      { task_id: "c", op: "added", fields: [] },
    ]);
    expect(planChanges(v2, v1).map((c) => [c.task_id, c.op])).toEqual([
      ["b", "changed"],
      ["c", "removed"],
    ]);
    expect(planChanges(null, v1).map((c) => c.op)).toEqual(["added", "added"]);
  });

  it("refuses the plans the engine refuses, in its words", () => {
    expect(checkPlan(v2)).toBeNull();
    expect(checkPlan(plan([{ task_id: " ", description: "x" }]))).toMatch(/empty id/);
    expect(checkPlan(plan([{ task_id: "a", description: "x" }, { task_id: "a", description: "y" }]))).toMatch(/more than one task/);
    expect(checkPlan(plan([{ task_id: "a", description: "" }]))).toBe("a task description must not be empty");
    expect(checkPlan(plan([{ task_id: "a", description: "x", dependencies: ["a"] }]))).toBe("task `a` depends on itself");
    expect(checkPlan(plan([{ task_id: "a", description: "x", dependencies: ["z"] }]))).toMatch(/`z`, which is not in the plan/);
    const cyclic = plan([
      { task_id: "a", description: "x", dependencies: ["b"] },
      { task_id: "b", description: "y", dependencies: ["c"] },
      { task_id: "c", description: "z", dependencies: ["a"] },
    ]);
    expect(checkPlan(cyclic)).toBe("dependency cycle: a -> b -> c -> a (each task depends on the next)");
    expect(findCycle(v2.tasks!)).toBeNull();
  });

  it("edits tasks, and removing one removes it from dependencies", () => {
    const added = addTask(v2);
    expect(added.tasks!.at(-1)).toEqual({ task_id: "task-4", description: "", status: "pending", dependencies: [] });
    expect(checkPlan(added)).toBe("a task description must not be empty");
    const removed = removeTask(v2, "b");
    expect(removed.tasks!.map((t) => t.task_id)).toEqual(["a", "c"]);
    expect(removed.tasks![1]!.dependencies).toEqual([]);
    const updated = updateTask(v2, "c", { dependencies: parseDependencies("a, b  a") });
    expect(updated.tasks![2]!.dependencies).toEqual(["a", "b"]);
    expect(plansDiffer(v2, updated)).toBe(true);
    expect(plansDiffer(v2, JSON.parse(JSON.stringify(v2)) as Plan)).toBe(false);
    expect(v2.tasks![2]!.dependencies).toEqual(["b"]);
  });

  it("says what a task waits for and how far the plan is", () => {
    expect(waitingOn(v2, v2.tasks![2]!)).toEqual(["b"]);
    expect(waitingOn(v2, v2.tasks![1]!)).toEqual([]);
    expect(planProgress(v2)).toEqual({ done: 1, total: 3 });
  });
});

describe("a task's own progress", () => {
  const task = (status: string, metadata: Record<string, unknown> = {}) =>
    ({ task_id: "t", description: "d", status, metadata }) as unknown as Parameters<typeof taskPercent>[0];
  it("shows what the agent reported for a task in progress, capped at 100", () => {
    expect(taskPercent(task("in_progress", { progress: 40 }))).toBe(40);
    expect(taskPercent(task("in_progress", { progress: 250 }))).toBe(100);
  });
  it("shows nothing for other statuses or an unreadable report", () => {
    expect(taskPercent(task("completed", { progress: 40 }))).toBeNull();
    expect(taskPercent(task("in_progress", { progress: "most" }))).toBeNull();
    expect(taskPercent(task("in_progress", { progress: -1 }))).toBeNull();
    expect(taskPercent(task("in_progress"))).toBeNull();
  });
});
