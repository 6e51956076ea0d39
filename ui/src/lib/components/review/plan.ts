// A plan under review (the run's plan.json): the task list with dependencies and
// status, the change log since the previous revision, and the reviewer's
// edits. The checks mirror the engine's `Plan::validate` (ids, descriptions,
// dependencies, cycles), so a modified plan is refused here, with the same
// words, before the server refuses it. A modification is an `edit` decision
// whose payload is the whole edited plan.

import type { Gate, Plan, PlanRevision, PlanTask, RunState, TaskStatus } from "../../api/types";
import { word } from "../../words";

export const TASK_STATUSES: readonly TaskStatus[] = ["pending", "in_progress", "completed", "failed", "blocked", "skipped"];

function isPlan(value: unknown): value is Plan {
  return value !== null && typeof value === "object" && Array.isArray((value as Plan).tasks);
}

/**
 * The plan a plan review is about: the gate's payload when it is a plan;
 * else the revision the gate names; else the run's current plan.
 */
export function planUnderReview(gate: Gate, state: RunState | null): { plan: Plan; revision: PlanRevision | null } | null {
  const wanted = gate.spec.kind === "plan_review" ? gate.spec.plan_revision : null;
  const revisions = state?.plan_revisions ?? [];
  const revision = (wanted != null ? revisions.find((r) => r.revision === wanted) : undefined) ?? state?.plan ?? null;
  if (isPlan(gate.payload)) return { plan: gate.payload, revision };
  return revision ? { plan: revision.plan, revision } : null;
}

/** The revision before `revision`, if the run kept one. */
export function previousRevision(state: RunState | null, revision: PlanRevision | null): PlanRevision | null {
  if (!state || !revision) return null;
  const older = state.plan_revisions.filter((r) => r.revision < revision.revision);
  return older.length > 0 ? older.reduce((a, b) => (a.revision > b.revision ? a : b)) : null;
}

/** One task's change between two plans. */
export interface TaskChange {
  task_id: string;
  op: "added" | "removed" | "changed";
  /** For `changed`: each field that differs, before → after. */
  fields: { field: string; before: string; after: string }[];
}

const FIELDS = ["description", "status", "dependencies", "assigned_agent", "priority", "estimated_duration"] as const;

function show(task: PlanTask, field: (typeof FIELDS)[number]): string {
  const v = task[field];
  if (field === "status" && typeof v === "string") return word("TaskStatus", v);
  if (field === "priority" && typeof v === "string") return word("TaskPriority", v);
  if (Array.isArray(v)) return v.join(", ");
  return v == null ? "" : String(v);
}

/** What changed task by task from `before` to `after`, in the order of `after` (removed ones last). */
export function planChanges(before: Plan | null, after: Plan): TaskChange[] {
  const old = new Map((before?.tasks ?? []).map((t) => [t.task_id, t]));
  const now = new Set(after.tasks?.map((t) => t.task_id));
  const out: TaskChange[] = [];
  for (const task of after.tasks ?? []) {
    const prev = old.get(task.task_id);
    if (!prev) {
      out.push({ task_id: task.task_id, op: "added", fields: [] });
      continue;
    }
    const fields = FIELDS.filter((f) => show(prev, f) !== show(task, f)).map((f) => ({
      field: f,
      before: show(prev, f),
      after: show(task, f),
    }));
    if (fields.length > 0) out.push({ task_id: task.task_id, op: "changed", fields });
  }
  for (const task of before?.tasks ?? []) {
    if (!now.has(task.task_id)) out.push({ task_id: task.task_id, op: "removed", fields: [] });
  }
  return out;
}

/** Why the plan is not valid, in the engine's words; null when it is. */
export function checkPlan(plan: Plan): string | null {
  const tasks = plan.tasks ?? [];
  const ids = new Set<string>();
  for (const t of tasks) {
    if (t.task_id.trim() === "") return "invalid task_id: a task has an empty id";
    if (ids.has(t.task_id)) return `task id \`${t.task_id}\` is used by more than one task`;
    ids.add(t.task_id);
    if (t.description.trim() === "") return "a task description must not be empty";
  }
  for (const t of tasks) {
    const deps = t.dependencies ?? [];
    if (deps.includes(t.task_id)) return `task \`${t.task_id}\` depends on itself`;
    const unknown = deps.find((d) => !ids.has(d));
    if (unknown !== undefined) return `task \`${t.task_id}\` depends on \`${unknown}\`, which is not in the plan`;
  }
  const cycle = findCycle(tasks);
  return cycle ? `dependency cycle: ${cycle.join(" -> ")} (each task depends on the next)` : null;
}

/** A dependency cycle, found depth first in task order (as the engine does), or null. */
export function findCycle(tasks: readonly PlanTask[]): string[] | null {
  const index = new Map(tasks.map((t, i) => [t.task_id, i]));
  const state = new Uint8Array(tasks.length);
  for (let start = 0; start < tasks.length; start++) {
    if (state[start] !== 0) continue;
    state[start] = 1;
    const path: [number, number][] = [[start, 0]];
    while (path.length > 0) {
      const frame = path[path.length - 1]!;
      const [node, next] = frame;
      frame[1] += 1;
      const dep = tasks[node]!.dependencies?.[next];
      if (dep === undefined) {
        state[node] = 2;
        path.pop();
        continue;
      }
      const d = index.get(dep);
      if (d === undefined) continue;
      if (state[d] === 1) {
        const from = path.findIndex(([n]) => n === d);
        return [...path.slice(from).map(([n]) => tasks[n]!.task_id), tasks[d]!.task_id];
      }
      if (state[d] === 0) {
        state[d] = 1;
        path.push([d, 0]);
      }
    }
  }
  return null;
}

/** A dependency list as typed ("a, b c") → ids. */
export function parseDependencies(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** A fresh task id not yet used in the plan (`task-4`, ...). */
export function newTaskId(plan: Plan): string {
  const ids = new Set((plan.tasks ?? []).map((t) => t.task_id));
  let n = (plan.tasks?.length ?? 0) + 1;
  while (ids.has(`task-${n}`)) n++;
  return `task-${n}`;
}

export function addTask(plan: Plan): Plan {
  const task: PlanTask = { task_id: newTaskId(plan), description: "", status: "pending", dependencies: [] };
  return { ...plan, tasks: [...(plan.tasks ?? []), task] };
}

/** The plan without the task, and without it in anyone's dependencies. */
export function removeTask(plan: Plan, id: string): Plan {
  const tasks = (plan.tasks ?? [])
    .filter((t) => t.task_id !== id)
    .map((t) => (t.dependencies?.includes(id) ? { ...t, dependencies: t.dependencies.filter((d) => d !== id) } : t));
  return { ...plan, tasks };
}

export function updateTask(plan: Plan, id: string, patch: Partial<PlanTask>): Plan {
  return { ...plan, tasks: (plan.tasks ?? []).map((t) => (t.task_id === id ? { ...t, ...patch } : t)) };
}

/** Whether two plans differ (field order aside). */
export function plansDiffer(a: Plan, b: Plan): boolean {
  return canonical(a) !== canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );
}

/** Tasks this one waits for that are not completed (or skipped) yet. */
export function waitingOn(plan: Plan, task: PlanTask): string[] {
  const done = new Set(
    (plan.tasks ?? []).filter((t) => t.status === "completed" || t.status === "skipped").map((t) => t.task_id),
  );
  return (task.dependencies ?? []).filter((d) => !done.has(d));
}

/** Done of all, for a progress line. */
export function planProgress(plan: Plan): { done: number; total: number } {
  const tasks = plan.tasks ?? [];
  return { done: tasks.filter((t) => t.status === "completed").length, total: tasks.length };
}

/**
 * How far along a task in progress is, as its agent last reported it
 * (`metadata.progress`, a percentage, capped at 100), the server's rule for
 * a run's per-task progress; null when it is not in progress or reported
 * nothing readable.
 */
export function taskPercent(task: PlanTask): number | null {
  if (task.status !== "in_progress") return null;
  const reported = (task.metadata as Record<string, unknown> | undefined)?.progress;
  if (typeof reported !== "number" || !Number.isFinite(reported) || reported < 0) return null;
  return Math.min(100, Math.round(reported));
}
