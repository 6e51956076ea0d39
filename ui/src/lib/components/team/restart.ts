// A reviewer's restart of a task on a team run (`POST /runs/{id}/restart-task`):
// a named agent, or the one holding the turn, goes back to redo its turn
// with an optional instruction. Nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { components } from "../../api/schema";
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

/** What a reviewer reads of a parallel handoff's sync point. */
export function syncLine(group: Pick<ParallelGroup, "lead" | "synced" | "branches">): string {
  const done = group.branches.filter((b) => b.status === "completed" || b.status === "cancelled" || b.status === "failed").length;
  return group.synced
    ? `${group.lead} passed the sync point: ${done} of ${group.branches.length} branches ended`
    : `${group.lead} waits at the sync point: ${done} of ${group.branches.length} branches ended`;
}
