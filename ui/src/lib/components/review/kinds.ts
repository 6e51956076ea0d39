// What each kind of gate calls its decisions, and which kinds bring their
// own review (and their own editing) to the resolution modal. The engine
// decides which actions a gate allows (`allowed_actions`); this only names
// them the way reviewers expect: a response is accepted or retried, an
// information review proceeds, a goal is refined or accepted, a plan is
// approved, modified or rejected.

import type { DecisionAction, GateKind } from "../../api/types";
import { ACTION_LABELS } from "../decisions/decision";

const LABELS: Partial<Record<GateKind, Partial<Record<DecisionAction, string>>>> = {
  response_review: { approve: "Accept", edit: "Accept edited text", retry: "Retry with changes" },
  information_review: { approve: "Proceed", edit: "Proceed with changes" },
  quality_score: { approve: "Accept score", needs_revision: "Request revision" },
  goal_review: { approve: "Accept goal", needs_revision: "Refine" },
  plan_review: { approve: "Approve plan", edit: "Approve modified plan", needs_revision: "Request changes" },
};

/** The bar's label of every action for a gate of `kind`. */
export function actionLabels(kind: GateKind): Record<DecisionAction, string> {
  return { ...ACTION_LABELS, ...LABELS[kind] };
}

/**
 * The decision bar's labels for a gate of `kind`: a gate of several
 * actions approves or rejects every open one; with "always allow" chosen,
 * an approval says so.
 */
export function barLabels(kind: GateKind, batch: boolean, allowing: boolean): Record<DecisionAction, string> {
  return {
    ...actionLabels(kind),
    ...(batch ? { approve: "Approve all open", reject: "Reject all open" } : {}),
    ...(allowing ? { approve: "Approve and always allow", edit: "Approve with edits and always allow" } : {}),
  };
}

/**
 * Kinds whose review edits something other than the raw payload: the
 * audited text, the prompt and model, the plan. For these the modal shows
 * the kind's own editor instead of the JSON payload editor, and `edit` is
 * offered even when the gate has no payload.
 */
export function editsOwnPayload(kind: GateKind): boolean {
  return kind === "response_review" || kind === "information_review" || kind === "plan_review";
}

/** Kinds with a review of their own in the modal (the others show the generic details). */
export function hasOwnReview(kind: GateKind): boolean {
  return editsOwnPayload(kind) || kind === "quality_score" || kind === "goal_review";
}

/** How sure the agent says it is, in words and as a level for colour. */
export function confidenceLevel(confidence: number | null | undefined): { label: string; level: "low" | "medium" | "high" } | null {
  if (confidence == null || Number.isNaN(confidence)) return null;
  const pct = Math.round(Math.min(1, Math.max(0, confidence)) * 100);
  const level = confidence < 0.5 ? "low" : confidence < 0.8 ? "medium" : "high";
  return { label: `${pct}%`, level };
}

/** Every safety flag on the gate, from the gate and from its spec, once each. */
export function allSafetyFlags(gateFlags: readonly string[] | undefined, specFlags: readonly string[] | undefined): string[] {
  return [...new Set([...(gateFlags ?? []), ...(specFlags ?? [])].map((f) => f.trim()).filter(Boolean))];
}
