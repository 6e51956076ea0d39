// A reviewer's restart of a task (`POST /runs/{id}/restart-task`): on a
// team run a named agent, or the one holding the turn, goes back to redo
// its turn with an optional instruction; on a run Gatehouse drives through
// a plan, a plan task and the tasks depending on it run again. Nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { components } from "../../api/schema";
import type { PlanRevision, Run } from "../../api/types";
import type { TeamState } from "./team";

export type RestartTaskRequest = components["schemas"]["RestartTaskRequest"];
export type ParallelGroup = components["schemas"]["ParallelGroupState"];
export type TeamChangeEntry = components["schemas"]["TeamChangeEntry"];

/** Sends `agent` (none: the agent holding the turn) back to redo its turn. */
export async function restartTask(api: Api, runId: string, agent: string | null, instruction: string): Promise<Answer<TeamState>> {
  const body: RestartTaskRequest = {
    ...(agent ? { agent } : {}),
    ...(instruction.trim() ? { instruction: instruction.trim() } : {}),
  };
  const answer = await attempt("restart the task", () =>
    api.POST("/api/hitl/runs/{run_id}/restart-task", { params: { path: { run_id: runId } }, body }),
  );
  if (!answer.ok || "agents" in answer.value) return answer as Answer<TeamState>;
  // A plan collaboration run answers with its plan revision: not a team run's panel.
  const message = "Cannot restart the task: the run has no team";
  return { ok: false, message, error: { status: 200, code: null, field: null, message, resolvedBy: null, resolvedAt: null } };
}

/** The agent Gatehouse's own orchestrated runs are recorded under. */
const ORCHESTRATOR = "gatehouse";

/** Whether `run` is one Gatehouse drives through a plan (a plan
 *  collaboration run, or a team run), whose plan tasks a reviewer may restart. */
export function restartsPlanTasks(run: Pick<Run, "agent" | "input"> | null | undefined): boolean {
  if (run?.agent !== ORCHESTRATOR) return false;
  const input = run.input as { team?: unknown; collaborate?: { plan?: unknown } } | null | undefined;
  return (input?.team ?? null) !== null || input?.collaborate?.plan === true;
}

/** The plan tasks a reviewer may restart: every one that has started. */
export function restartableTasks(revision: Pick<PlanRevision, "plan"> | null): { id: string; line: string }[] {
  return (revision?.plan.tasks ?? [])
    .filter((t) => t.status !== "pending")
    .map((t) => ({ id: t.task_id, line: `${t.task_id}: ${t.description}` }));
}

/** Restarts the plan task `taskId` and the tasks depending on it, with
 *  the reviewer's feedback; the run's plan revision or team, as it answers. */
export async function restartPlanTask(api: Api, runId: string, taskId: string, instruction: string): Promise<Answer<string>> {
  const body: RestartTaskRequest = { task_id: taskId, ...(instruction.trim() ? { instruction: instruction.trim() } : {}) };
  const answer = await attempt("restart the task", () =>
    api.POST("/api/hitl/runs/{run_id}/restart-task", { params: { path: { run_id: runId } }, body }),
  );
  if (!answer.ok) return answer;
  return { ok: true, value: `Task ${taskId} and the tasks depending on it run again.` };
}

/** What a reviewer reads of a parallel handoff's sync point. */
export function syncLine(group: Pick<ParallelGroup, "lead" | "synced" | "branches">): string {
  const done = group.branches.filter((b) => b.status === "completed" || b.status === "cancelled" || b.status === "failed").length;
  return group.synced
    ? `${group.lead} passed the sync point: ${done} of ${group.branches.length} branches ended`
    : `${group.lead} waits at the sync point: ${done} of ${group.branches.length} branches ended`;
}
