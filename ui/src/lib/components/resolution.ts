// Submitting a decision and what the modal shows afterwards. The first
// resolver wins: a 409 names who resolved the gate and when, and the
// reviewer's unsent text stays on screen (seed 002: no input lost).

import { errorMessage, type Api } from "../api/client";
import type { DecisionInput, Gate } from "../api/types";
import type { Draft } from "./decision";

export type Outcome =
  | { kind: "resolved"; gate: Gate }
  | { kind: "conflict"; message: string; resolvedBy: string | null; resolvedAt: string | null }
  | { kind: "refused"; status: number; message: string; field?: string };

/** Sends a decision and classifies the answer. */
export async function submitDecision(api: Api, gateId: string, input: DecisionInput): Promise<Outcome> {
  try {
    const { data, error, response } = await api.POST("/api/hitl/gates/{gate_id}/resolve", {
      params: { path: { gate_id: gateId } },
      body: input,
    });
    if (data !== undefined) return { kind: "resolved", gate: data };
    if (response.status === 409) {
      return {
        kind: "conflict",
        message: errorMessage(error, "Someone else resolved this gate first."),
        resolvedBy: error?.resolved_by ?? null,
        resolvedAt: error?.resolved_at ?? null,
      };
    }
    const message = errorMessage(error);
    // A 422 names the field first ("response.percent: must be ..."), as the server writes it.
    const field = response.status === 422 ? /^([\w.[\]-]+):/.exec(message)?.[1] : undefined;
    return { kind: "refused", status: response.status, message, ...(field ? { field } : {}) };
  } catch (e) {
    return { kind: "refused", status: 0, message: `Cannot reach the server: ${e instanceof Error ? e.message : e}` };
  }
}

/** The modal's state around a submission. */
export interface Submission {
  draft: Draft;
  busy: boolean;
  outcome: Outcome | null;
}

/**
 * The modal after an outcome: the draft is kept as it was in every case
 * but success (so a conflict or refusal never loses the reviewer's text),
 * and an armed action is kept so they can retry.
 */
export function afterOutcome(state: Submission, outcome: Outcome): Submission {
  return { draft: state.draft, busy: false, outcome };
}

/** Whether the gate can still be decided from this modal. */
export function canDecide(state: Submission): boolean {
  return !state.busy && state.outcome?.kind !== "conflict" && state.outcome?.kind !== "resolved";
}

/** Who closed the gate first, in a sentence. */
export function conflictSentence(resolvedBy: string | null, resolvedAt: string | null, when: (iso: string) => string): string {
  const who = resolvedBy ? `${resolvedBy}` : "Someone else";
  return resolvedAt ? `${who} resolved this gate at ${when(resolvedAt)}.` : `${who} resolved this gate first.`;
}

/** Drafts per gate, so closing the modal and coming back keeps what was typed. */
export class Drafts {
  #drafts = new Map<string, Draft>();
  get(gateId: string): Draft | undefined {
    return this.#drafts.get(gateId);
  }
  set(gateId: string, draft: Draft): void {
    this.#drafts.set(gateId, draft);
  }
  forget(gateId: string): void {
    this.#drafts.delete(gateId);
  }
}
