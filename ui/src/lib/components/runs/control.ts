// The reviewer's controls over a run, over the API: start (a run created
// without starting), pause, resume and cancel (the HITL run API's endpoints); step, instructions, the next agent,
// the step mode and the plan (the reviewer run-control endpoints); exporting
// and importing recordings. (The run's event log is the store's:
// `stores/run-log.ts`.)
// Each answers with the new run or a message to show; nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { ImportSummary, Instruction, Plan, PlanRevision, Recording, Run, StepMode } from "../../api/types";

export type Control = "start" | "pause" | "resume" | "cancel" | "retry";

/** Starts, pauses, resumes, cancels or retries a run. */
export function controlRun(api: Api, runId: string, control: Control, reason?: string): Promise<Answer<Run>> {
  const path = { params: { path: { run_id: runId } } };
  switch (control) {
    case "start":
      return attempt("start the run", () => api.POST("/api/hitl/run/{run_id}/start", path));
    case "retry":
      return attempt("retry the run", () => api.POST("/api/hitl/run/{run_id}/retry", path));
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

/** Every run of a session as one recording, to save as a file. */
export function exportSessionRecording(api: Api, sessionId: string): Promise<Answer<Recording>> {
  return attempt("export the session's recording", () =>
    api.GET("/api/hitl/sessions/{session_id}/recording", { params: { path: { session_id: sessionId } } }),
  );
}

/** Imports a recording; the server checks it and refuses runs it already holds. */
export function importRecording(api: Api, recording: Recording): Promise<Answer<ImportSummary>> {
  return attempt("import the recording", () => api.POST("/api/hitl/recordings", { body: recording }));
}

/** Lets a paused run take one step (in step mode it pauses again after the next agent turn). */
export function stepRun(api: Api, runId: string): Promise<Answer<Run>> {
  return attempt("step the run", () => api.POST("/api/hitl/runs/{run_id}/step", { params: { path: { run_id: runId } } }));
}

/** Holds an instruction for the run's agents until one of them asks for its directive. */
export function injectInstruction(api: Api, runId: string, text: string): Promise<Answer<Instruction>> {
  return attempt("send the instruction", () =>
    api.POST("/api/hitl/runs/{run_id}/instructions", { params: { path: { run_id: runId } }, body: { text } }),
  );
}

/** Chooses the agent to act next, or with `null` stops choosing. */
export function overrideNextAgent(api: Api, runId: string, agent: string | null): Promise<Answer<Run>> {
  return attempt("set the next agent", () =>
    api.PUT("/api/hitl/runs/{run_id}/next-agent", { params: { path: { run_id: runId } }, body: { agent } }),
  );
}

/** Sets how the run steps, keeping its breakpoints. */
export function setStepMode(api: Api, run: Run, stepMode: StepMode): Promise<Answer<Run>> {
  return attempt("change the step mode", () =>
    api.PUT("/api/hitl/runs/{run_id}/control", {
      params: { path: { run_id: run.id } },
      body: { step_mode: stepMode, breakpoints: run.control?.breakpoints ?? [] },
    }),
  );
}

/** Replaces the run's plan with the reviewer's edit (a new revision). */
export function replacePlan(api: Api, runId: string, plan: Plan): Promise<Answer<PlanRevision>> {
  return attempt("save the plan", () =>
    api.POST("/api/hitl/runs/{run_id}/plan", { params: { path: { run_id: runId } }, body: { op: "replace", plan } }),
  );
}
