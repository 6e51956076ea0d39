// A team run's memory beyond what the team panel reads with the team: the
// snapshots kept at each handoff and at the run's end
// (`GET /runs/{id}/memory/snapshots`), how a reviewer reads a snapshot's
// label, the global memory every run's team agents share
// (`GET /memory/global`, reviewers with an unscoped token), and a
// reviewer's deletion of a remembered key (`DELETE /runs/{id}/memory/{scope}/{key}`,
// `DELETE /memory/global/{key}`). Nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { components } from "../../api/schema";
import { MEMORY_SCOPE, SNAPSHOT_TAKEN } from "../../words";

export type MemorySnapshot = components["schemas"]["MemorySnapshot"];
export type MemoryDeletion = components["schemas"]["MemoryDeletion"];
export type GlobalMemory = components["schemas"]["GlobalMemory"];

/** The run's memory snapshots, in the order they were taken. */
export async function loadSnapshots(api: Api, runId: string): Promise<Answer<MemorySnapshot[]>> {
  const answer = await attempt("load the memory snapshots", () =>
    api.GET("/api/hitl/runs/{run_id}/memory/snapshots", { params: { path: { run_id: runId } } }),
  );
  return answer.ok ? { ok: true, value: answer.value.snapshots } : answer;
}

/** The global memory's live entries and its history (reviewers with an unscoped token). */
export function loadGlobalMemory(api: Api): Promise<Answer<GlobalMemory>> {
  return attempt("load the global memory", () => api.GET("/api/hitl/memory/global"));
}

/** Deletes `key` of the run's `scope` memory, or of the global memory (a reviewer's; recorded under their name). */
export function deleteMemory(api: Api, runId: string, scope: string, key: string): Promise<Answer<MemoryDeletion>> {
  if (scope === "global") {
    return attempt("delete the remembered value", () =>
      api.DELETE("/api/hitl/memory/global/{key}", { params: { path: { key } } }),
    );
  }
  return attempt("delete the remembered value", () =>
    api.DELETE("/api/hitl/runs/{run_id}/memory/{scope}/{key}", { params: { path: { run_id: runId, scope, key } } }),
  );
}

/** Why a snapshot was taken, in words: "At a handoff (turn 4)", "At the run's end". */
export function snapshotReason(label: string): string {
  const [why, turn] = label.split(":", 2) as [string, string | undefined];
  const words = Object.hasOwn(SNAPSHOT_TAKEN, why) ? SNAPSHOT_TAKEN[why as keyof typeof SNAPSHOT_TAKEN] : label;
  return turn !== undefined && why === "handoff" ? `${words} (turn ${turn})` : words;
}

/** A snapshot entry's `SCOPE:KEY` as the scope in words and the key. */
export function entryPlace(scopedKey: string): { scope: string; key: string } {
  const at = scopedKey.indexOf(":");
  if (at < 0) return { scope: "", key: scopedKey };
  const scope = scopedKey.slice(0, at);
  const words = Object.hasOwn(MEMORY_SCOPE, scope) ? MEMORY_SCOPE[scope as keyof typeof MEMORY_SCOPE] : scope;
  return { scope: words, key: scopedKey.slice(at + 1) };
}
