// The reviewer's controls over a run, over the API: pause, resume and
// cancel (seed 004's endpoints), and exporting and importing recordings.
// Each answers with the new run or a message to show; nothing throws.

import { errorMessage, type Api } from "../../api/client";
import type { ImportSummary, Recording, Run } from "../../api/types";

export type Control = "pause" | "resume" | "cancel";

export type Answer<T> = { ok: true; value: T } | { ok: false; message: string };

async function attempt<T>(what: string, call: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call();
    if (data !== undefined) return { ok: true, value: data };
    return { ok: false, message: `Cannot ${what} (${response.status}): ${errorMessage(error)}` };
  } catch (e) {
    return { ok: false, message: `Cannot reach the server to ${what}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Pauses, resumes or cancels a run. */
export function controlRun(api: Api, runId: string, control: Control, reason?: string): Promise<Answer<Run>> {
  const path = { params: { path: { run_id: runId } } };
  switch (control) {
    case "pause":
      return attempt("pause the run", () => api.POST("/api/hitl/run/{run_id}/pause", path));
    case "resume":
      return attempt("resume the run", () => api.POST("/api/hitl/run/{run_id}/resume", path));
    case "cancel":
      return attempt("cancel the run", () =>
        api.DELETE("/api/hitl/run/{run_id}", {
          params: { path: { run_id: runId }, query: reason ? { reason } : {} },
        }),
      );
  }
}

/** A run's recording, to save as a file. */
export function exportRecording(api: Api, runId: string): Promise<Answer<Recording>> {
  return attempt("export the recording", () => api.GET("/api/hitl/runs/{run_id}/recording", { params: { path: { run_id: runId } } }));
}

/** Imports a recording; the server checks it and refuses runs it already holds. */
export function importRecording(api: Api, recording: Recording): Promise<Answer<ImportSummary>> {
  return attempt("import the recording", () => api.POST("/api/hitl/recordings", { body: recording }));
}
