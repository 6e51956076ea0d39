// The gates' full content for the preview pane, fetched once each and kept
// for the last few gates looked at, so moving back with k shows a gate at
// once. One request per gate at a time; a gate that closes is forgotten,
// and one the event stream says changed (a vote, an escalation, actions
// decided, its run's turns, context or plan) is fetched again. A plan
// review whose plan lives in its run, not its payload, is fetched with the
// run's plan (the revision it names, else the newest).

import type { Api } from "../../api/client";
import { errorMessage } from "../../api/client";
import type { Gate, GateDetail, LogEvent, Plan, PlanRevision } from "../../api/types";

/** How much of a payload the preview shows: a large one is read in the gate's own window. */
export const PAYLOAD_PREVIEW_CHARS = 20_000;

/** A payload as indented JSON, cut at `max` characters (a 1 MB payload would cost the preview seconds). */
export function payloadExcerpt(payload: unknown, max = PAYLOAD_PREVIEW_CHARS): { text: string; cut: boolean; size: string } {
  const compact = JSON.stringify(payload);
  const size = compact.length >= 1024 * 1024 ? `${(compact.length / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(compact.length / 1024)} KB`;
  // Indenting a huge value is the cost: indent only what is shown.
  if (compact.length > max) return { text: `${compact.slice(0, max)}…`, cut: true, size };
  const text = JSON.stringify(payload, null, 2);
  return text.length > max ? { text: `${text.slice(0, max)}…`, cut: true, size } : { text, cut: false, size };
}

/** Events about a run that change what a gate's preview shows of it (its status, recent turns, context and plan). */
const RUN_CONTENT: ReadonlySet<string> = new Set(["run_status_changed", "turn_added", "context_set", "context_deleted", "plan_revised"]);

/** Whether any of `events` changes what the preview shows of `gate`: an event about the gate, or about its run's content. */
export function changesPreview(events: readonly LogEvent[], gate: { id: string; run_id: string }): boolean {
  return events.some((e) => {
    const about = (e as { gate_id?: unknown }).gate_id;
    if (about === gate.id) return true;
    return e.run_id === gate.run_id && RUN_CONTENT.has(e.type);
  });
}

/** A gate's content; `runPlan` for a plan review whose plan is its run's (null when the run has none or it could not be read). */
export type Loaded = { ok: true; detail: GateDetail; runPlan?: Plan | null } | { ok: false; message: string };

/** Whether `gate` is a plan review whose payload carries no plan, so its plan is its run's. */
export function planInRun(gate: Pick<Gate, "spec" | "payload">): boolean {
  const payload = gate.payload as { tasks?: unknown } | null | undefined;
  return gate.spec.kind === "plan_review" && !(payload !== null && typeof payload === "object" && Array.isArray(payload.tasks));
}

/** The plan of revision `wanted` among a run's revisions, else its newest. */
export function revisionPlan(revisions: readonly PlanRevision[], wanted: number | null | undefined): Plan | null {
  const found = wanted != null ? revisions.find((r) => r.revision === wanted) : undefined;
  return (found ?? revisions.at(-1))?.plan ?? null;
}

export class GateDetails {
  #api: Api;
  #keep: number;
  #done = new Map<string, Loaded>();
  #loading = new Map<string, Promise<Loaded>>();

  constructor(api: Api, keep = 50) {
    this.#api = api;
    this.#keep = keep;
  }

  /** The gate's content if already here (no request). */
  cached(gateId: string): Loaded | undefined {
    return this.#done.get(gateId);
  }

  /** The gate's content, from here or the server; `signal` gives up on it (nothing is kept then). */
  load(gateId: string, signal?: AbortSignal): Promise<Loaded> {
    const done = this.#done.get(gateId);
    if (done) return Promise.resolve(done);
    const pending = this.#loading.get(gateId);
    if (pending) return pending;
    const request = this.#fetch(gateId, signal).then((loaded) => {
      this.#loading.delete(gateId);
      if (loaded.ok) this.#remember(gateId, loaded);
      return loaded;
    });
    this.#loading.set(gateId, request);
    return request;
  }

  forget(gateId: string): void {
    this.#done.delete(gateId);
  }

  async #fetch(gateId: string, signal?: AbortSignal): Promise<Loaded> {
    try {
      const { data, error, response } = await this.#api.GET("/api/hitl/gates/{gate_id}", { params: { path: { gate_id: gateId } }, ...(signal ? { signal } : {}) });
      if (!data) return { ok: false, message: `Cannot load this gate (${response.status}): ${errorMessage(error)}` };
      if (!planInRun(data.gate)) return { ok: true, detail: data };
      const wanted = data.gate.spec.kind === "plan_review" ? data.gate.spec.plan_revision : null;
      return { ok: true, detail: data, runPlan: await this.#runPlan(data.gate.run_id, wanted, signal) };
    } catch (e) {
      return { ok: false, message: `Cannot load this gate: ${e instanceof Error ? e.message : String(e)}` };
    }
  }

  /** The run's plan at revision `wanted` (else its newest); null when it has none or it cannot be read. */
  async #runPlan(runId: string, wanted: number | null | undefined, signal?: AbortSignal): Promise<Plan | null> {
    try {
      const { data } = await this.#api.GET("/api/hitl/runs/{run_id}/plan", { params: { path: { run_id: runId } }, ...(signal ? { signal } : {}) });
      return data ? revisionPlan(data.revisions, wanted) : null;
    } catch {
      return null;
    }
  }

  #remember(gateId: string, loaded: Loaded): void {
    this.#done.delete(gateId);
    this.#done.set(gateId, loaded);
    while (this.#done.size > this.#keep) this.#done.delete(this.#done.keys().next().value!);
  }
}
