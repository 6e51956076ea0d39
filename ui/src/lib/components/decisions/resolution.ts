// Submitting a decision and what the modal shows afterwards. The first
// resolver wins: a 409 says what closed the gate first (who resolved it
// and when, or that it expired or was withdrawn), and the reviewer's unsent
// text stays on screen (no input is lost). On a quorum gate an
// answer is one vote: the gate may still be pending after it, and a second
// vote by the same reviewer is refused.

import { attempt, type Api, type ApiError } from "../../api/client";
import type { ApiErrorCode, DecisionAction, DecisionInput, Gate, GateStatus, Vote } from "../../api/types";
import { DECIDED, previewOf } from "../../format";
import type { Closed } from "../../stores/queue-logic";
import type { Draft } from "./decision";
import { pathOfServerField } from "../form/form";
import { voteOf } from "./quorum";

/** What closed a gate before this reviewer's decision reached it. */
export interface Conflict {
  kind: "conflict";
  message: string;
  /** How it closed: resolved, expired or cancelled; null when the gate could not be read. */
  gateStatus: Exclude<GateStatus, "pending"> | null;
  resolvedBy: string | null;
  /** When it was resolved, expired or withdrawn. */
  resolvedAt: string | null;
}

export type Outcome =
  /** Decided (or, for a gate of several actions, the actions chosen were). */
  | { kind: "resolved"; gate: Gate }
  /** A quorum gate counted the vote and waits for more. */
  | { kind: "voted"; gate: Gate }
  /** A quorum gate refused a second vote from the same reviewer. */
  | { kind: "already_voted"; gate: Gate; vote: Vote }
  | Conflict
  /** Refused: the server's message, its error code and the field it names (from the error body), where there are. */
  | { kind: "refused"; status: number; message: string; code?: ApiErrorCode; field?: string };

/**
 * How the gate leaves the queue after `sent`, when it does: decided here
 * (named by its preview: the queue may have dropped it already, the stream
 * is quick), or found closed by someone else; null while it stays.
 */
export function closingOf(sent: Outcome, gateId: string, action: DecisionAction): { closed: Closed; decidedHere: boolean; preview?: string } | null {
  if (sent.kind === "resolved") {
    const decision = sent.gate.decision;
    const at = decision?.decided_at ?? new Date().toISOString();
    return { closed: { gateId, how: "resolved", by: decision?.decided_by ?? "you", at, action }, decidedHere: true, preview: previewOf(sent.gate.text) };
  }
  if (sent.kind === "conflict") {
    const how = sent.gateStatus ?? "resolved";
    const by = sent.resolvedBy ?? (how === "resolved" ? "someone else" : "system");
    return { closed: { gateId, how, by, at: sent.resolvedAt ?? new Date().toISOString() }, decidedHere: false };
  }
  return null;
}

/** Sends a decision as `me` (the signed-in reviewer, when known) and classifies the answer. */
export async function submitDecision(api: Api, gateId: string, input: DecisionInput, me: string | null = null): Promise<Outcome> {
  const answer = await attempt("decide the gate", () =>
    api.POST("/api/hitl/gates/{gate_id}/resolve", { params: { path: { gate_id: gateId } }, body: input }),
  );
  if (answer.ok) {
    const gate = answer.value;
    return gate.quorum && gate.status === "pending" ? { kind: "voted", gate } : { kind: "resolved", gate };
  }
  const { error } = answer;
  if (error.status === 0) return { kind: "refused", status: 0, message: `Cannot reach the server: ${error.message}` };
  if (error.code === "conflict" || error.status === 409) {
    // The body names who and when, not what happened: the gate as it is now says.
    return conflictOf(error, await currentGate(api, gateId), me);
  }
  return refusal(error, error.message ?? "the server refused the request");
}

/** A refusal as the modal shows it: the server's message, and the field it names (from the body, never the message). */
function refusal(error: ApiError, message: string): Outcome {
  return {
    kind: "refused",
    status: error.status,
    message,
    ...(error.code ? { code: error.code } : {}),
    ...(error.field ? { field: error.field } : {}),
  };
}

/** The gate as the server has it now; undefined when it cannot be read. */
async function currentGate(api: Api, gateId: string): Promise<Gate | undefined> {
  try {
    return (await api.GET("/api/hitl/gates/{gate_id}", { params: { path: { gate_id: gateId } } })).data?.gate;
  } catch {
    return undefined;
  }
}

/** A 409 explained by the gate as it is now (`current`; undefined when it could not be read). */
export function conflictOf(error: ApiError, current: Gate | undefined, me: string | null): Outcome {
  const message = error.message ?? "The gate was closed first.";
  const status = current?.status;
  if (status === "pending") {
    // Still open: this reviewer's vote is in already, or something else (a paused run) refused it.
    const vote = current && voteOf(current, me);
    return current && vote ? { kind: "already_voted", gate: current, vote } : refusal(error, message);
  }
  const resolvedBy = error.resolvedBy ?? current?.decision?.decided_by ?? null;
  return {
    kind: "conflict",
    message,
    gateStatus: status ?? (resolvedBy !== null ? "resolved" : null),
    resolvedBy,
    resolvedAt: error.resolvedAt ?? current?.closed_at ?? null,
  };
}

/**
 * The form fields a refusal is about, with the server's message for each:
 * `{ "percent": "must be at most 100" }` for a refusal naming
 * `response.percent`. Read from the error's `field`, never its message.
 */
export function fieldProblems(outcome: Outcome | null): Record<string, string> {
  if (outcome?.kind !== "refused" || !outcome.field) return {};
  const path = pathOfServerField(outcome.field);
  return path === null ? {} : { [path]: outcome.message };
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
  // Only a refusal leaves the reviewer something to send again.
  return !state.busy && (state.outcome === null || state.outcome.kind === "refused");
}

/** What closed the gate first, in a sentence: who resolved it and when, or when it expired or was withdrawn. */
export function conflictSentence(conflict: Conflict, when: (iso: string) => string): string {
  const at = conflict.resolvedAt;
  switch (conflict.gateStatus) {
    case "resolved": {
      const who = conflict.resolvedBy ?? "Someone else";
      return at ? `${who} resolved this gate at ${when(at)}.` : `${who} resolved this gate first.`;
    }
    case "expired":
      return at ? `This gate expired at ${when(at)}, before your decision reached it.` : "This gate expired before your decision reached it.";
    case "cancelled":
      return at ? `This gate was withdrawn at ${when(at)}, before your decision reached it.` : "This gate was withdrawn before your decision reached it.";
    case null:
      // The gate could not be read: the server's own words.
      return conflict.message;
  }
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

/**
 * Whether the gate closed under this reviewer without their decision: their
 * submission met a conflict, or the event stream said it closed while they
 * had it open. Its record (what the other decided, and why) is then shown.
 */
export function closedElsewhere(outcome: Outcome | null, closedLive: boolean): boolean {
  return outcome?.kind === "conflict" || (closedLive && outcome?.kind !== "resolved");
}

/** How long the desk's word after a decision stays, unless the reviewer acts first. */
export const DECIDED_NOTICE_MS = 6000;

/**
 * The desk's word after a decision made here, naming the gate by its
 * preview: "Approved with edits: “Deploy the billing service”."
 */
export function decidedSentence(action: string | undefined, preview: string | undefined): string {
  const done = action !== undefined && Object.hasOwn(DECIDED, action) ? DECIDED[action as DecisionAction] : "decided";
  const what = preview ? `“${preview}”` : "the gate";
  return `${done.charAt(0).toUpperCase()}${done.slice(1)}: ${what}.`;
}

/** How a gate closed under the reviewer, in words: "resolved", "expired", "passed automatically". */
export function closedHow(how: "resolved" | "expired" | "cancelled" | "auto_passed"): string {
  return how === "auto_passed" ? "passed automatically" : how;
}
