// What the decision bar offers and what a submission sends: labels and
// keys for each action the gate allows, which action Ctrl+Enter takes, and
// the DecisionInput built from the reviewer's draft. Kept apart from the
// components so the rules are tested on their own.

import type { AllowRuleRequest, DecisionAction, DecisionInput, QualityScore } from "../../api/types";
import type { Action } from "../../keys";
import type { Json, PayloadState } from "../payload";
import type { ReviewContribution } from "../review/contribution";
import type { Choice } from "../batch/batch";
import type { CriterionDraft, ScoreDraft } from "../review/quality";

export const ACTION_LABELS: Record<DecisionAction, string> = {
  approve: "Approve",
  edit: "Approve with edits",
  reject: "Reject",
  respond: "Send answer",
  needs_revision: "Request revision",
  defer: "Defer",
  retry: "Retry",
};

/** The shortcut that triggers an action directly, if any. */
export const ACTION_KEYS: Partial<Record<DecisionAction, Action>> = {
  approve: "gate.approve",
  edit: "gate.edit",
  reject: "gate.reject",
  retry: "gate.retry",
  needs_revision: "gate.revise",
};

/** Actions that wait for the reviewer's text before they are sent (armed by their key). */
export const NEEDS_TEXT: readonly DecisionAction[] = ["reject", "needs_revision", "retry"];

/** Bar order: the going-ahead actions first, the stopping ones last. */
const ORDER: DecisionAction[] = ["respond", "approve", "edit", "retry", "needs_revision", "defer", "reject"];

/** The actions to show, in bar order; `edit` only when there is something to edit. */
export function barActions(allowed: readonly DecisionAction[], canEdit: boolean): DecisionAction[] {
  return ORDER.filter((a) => allowed.includes(a) && (a !== "edit" || canEdit));
}


/** What the reviewer has typed or changed so far in the modal. */
export interface Draft {
  /** The answer, reason or feedback. */
  text: string;
  /** The edited payload, when it parses and differs from the proposal. */
  editedPayload?: Json;
  /** Whether the edited payload has errors (bad JSON, missing required fields). */
  payloadInvalid: boolean;
  /** An action the reviewer chose that waits for the text (reject after `r`). */
  armed: DecisionAction | null;
  /** The payload editor's text, kept so a reopened gate shows it again. */
  payloadText?: string;
  /** A quality gate's score. */
  quality?: ScoreDraft;
  /** A quality gate's scores and justifications so far, kept so a reopened gate shows them again. */
  criteria?: CriterionDraft[];
  /** A response form's fields as typed, kept so a reopened gate shows them again. */
  formEntries?: Record<string, string | boolean>;
  /** A gate of several actions: the choices not yet sent, by action id, kept for a reopened gate. */
  choices?: [string, Choice][];
  /** A gate with a response form: the filled answer, or what is wrong with it. */
  form?: { value: Json } | { problem: string };
  /** "Always allow" chosen with an approval: the rule to send with it, or why it cannot be sent. */
  allow?: { rule: AllowRuleRequest } | { problem: string };
}

export const EMPTY_DRAFT: Draft = { text: "", payloadInvalid: false, armed: null };

/** What the modal holds of the reviewer's work, before it is one draft. */
export interface DraftParts {
  text: string;
  armed: DecisionAction | null;
  /** The gate's kind edits through its own review (its contribution), not the JSON editor (`payload`). */
  ownEditor: boolean;
  review: ReviewContribution;
  payload: PayloadState;
  formEntries: Record<string, string | boolean> | undefined;
  choices: ReadonlyMap<string, Choice>;
  /** A response form's answer (undefined when the gate has no form). */
  form: { value: Json } | { problem: string } | undefined;
  allow: { rule: AllowRuleRequest } | { problem: string } | null;
}

/** The reviewer's work as one draft: the edit from whichever editor the gate uses, and only the parts given. */
export function draftOf(p: DraftParts): Draft {
  const edited = p.ownEditor ? p.review.editedPayload : (p.payload.edited as Json | undefined);
  return {
    text: p.text,
    armed: p.armed,
    payloadInvalid: p.ownEditor ? p.review.invalid : p.payload.invalid,
    ...(edited !== undefined ? { editedPayload: edited } : {}),
    ...(p.review.quality ? { quality: p.review.quality } : {}),
    ...(p.review.criteria ? { criteria: p.review.criteria } : {}),
    ...(p.formEntries !== undefined ? { formEntries: p.formEntries } : {}),
    ...(p.choices.size > 0 ? { choices: [...p.choices] } : {}),
    ...(p.form !== undefined ? { form: p.form } : {}),
    ...(p.allow !== null ? { allow: p.allow } : {}),
  };
}

/**
 * The action Ctrl+Enter submits: the armed one; else edits, when the payload
 * was changed; else the answer, for questions; else, for a scored quality
 * gate, approval when the score passes and a revision when it does not;
 * else approval.
 */
export function primaryAction(allowed: readonly DecisionAction[], draft: Draft): DecisionAction | null {
  if (draft.armed && allowed.includes(draft.armed)) return draft.armed;
  if ((draft.editedPayload !== undefined || draft.payloadInvalid) && allowed.includes("edit")) return "edit";
  if (draft.quality && !draft.quality.passes && allowed.includes("needs_revision")) return "needs_revision";
  if (allowed.includes("respond")) return "respond";
  if (allowed.includes("approve")) return "approve";
  return null;
}

/**
 * What Ctrl+Enter may send: the primary action only when the reviewer chose
 * it (armed it, edited the payload, typed an answer, scored the work);
 * never an approval nobody armed. Null: Ctrl+Enter decides nothing.
 */
export function confirmAction(allowed: readonly DecisionAction[], draft: Draft): DecisionAction | null {
  const action = primaryAction(allowed, draft);
  if (action !== "approve" || draft.armed === "approve" || draft.quality?.passes) return action;
  return null;
}

/**
 * What Ctrl+Enter says when no decision is armed: the keys that arm one
 * ("Choose a decision first: a approve, r reject; then Ctrl+Enter.").
 */
export function chooseFirst(actions: readonly DecisionAction[], keyOf: (action: Action) => string | undefined, confirm: string): string {
  const keyed = actions.flatMap((a) => {
    const shortcut = ACTION_KEYS[a];
    const key = shortcut ? keyOf(shortcut) : undefined;
    return key ? [`${key} ${ACTION_LABELS[a].toLowerCase()}`] : [];
  });
  const how = keyed.length > 0 ? keyed.join(", ") : "use a button below";
  return `Choose a decision first: ${how}; then ${confirm} confirms it.`;
}

/**
 * The decision to send, or why it cannot be sent yet. An approval (as
 * proposed or edited) carries the "always allow" rule when one was chosen.
 */
export function buildDecision(action: DecisionAction, draft: Draft): { input: DecisionInput } | { problem: string } {
  const built = decisionOf(action, draft);
  if (draft.allow === undefined || "problem" in built || (action !== "approve" && action !== "edit")) return built;
  if ("problem" in draft.allow) return { problem: `Always allow: ${draft.allow.problem}` };
  return { input: { ...built.input, allow_rule: draft.allow.rule } };
}

function decisionOf(action: DecisionAction, draft: Draft): { input: DecisionInput } | { problem: string } {
  if (draft.quality) return buildScored(action, draft, draft.quality);
  const text = draft.text.trim();
  switch (action) {
    case "edit":
      if (draft.payloadInvalid) return { problem: "Fix the payload first: it is not valid or misses required fields." };
      if (draft.editedPayload === undefined) return { problem: "Nothing was edited: approve as proposed instead." };
      return { input: { action, payload: draft.editedPayload, ...(text ? { text } : {}) } };
    case "respond":
      if (draft.form) {
        if ("problem" in draft.form) return { problem: `Fix the form first: ${draft.form.problem}` };
        return { input: { action, response: draft.form.value, ...(text ? { text } : {}) } };
      }
      if (!text) return { problem: "Type an answer first." };
      return { input: { action, text } };
    case "needs_revision":
      if (!text) return { problem: "Say what to change: a revision needs feedback." };
      return { input: { action, text } };
    case "retry":
      if (!text) return { problem: "Say what to change for the retry." };
      return { input: { action, text } };
    default:
      return { input: { action, ...(text ? { text } : {}) } };
  }
}

/**
 * A quality gate's decision: approving or asking for a revision carries the
 * score (the engine records it and refuses an approval below the required
 * score); a revision's feedback is the reviewer's text, else the
 * justifications. Rejecting needs no score.
 */
function buildScored(action: DecisionAction, draft: Draft, quality: ScoreDraft): { input: DecisionInput } | { problem: string } {
  const text = draft.text.trim();
  if (action === "reject") return { input: { action, ...(text ? { text } : {}) } };
  if (quality.score === null) return { problem: quality.problem ?? "Score every criterion first." };
  const score = quality.score;
  if (action === "approve" && !quality.passes) {
    return { problem: `The score ${score.score} is below the required score: request a revision instead.` };
  }
  const feedback = text || (score.justification ?? "").trim();
  if (action === "needs_revision" && !feedback) return { problem: "Say what to change: a revision needs feedback." };
  return { input: { action, score, ...(feedback ? { text: feedback } : {}) } };
}

/** The label of the text box, by what it will be sent as. */
export function textLabel(allowed: readonly DecisionAction[], armed: DecisionAction | null, form = false): string {
  if (armed === "reject") return "Reason for rejecting";
  if (armed === "needs_revision") return "What should change";
  if (armed === "retry") return "What to change for the retry";
  if (form) return "Note with your answer (optional)";
  if (allowed.includes("respond")) return "Your answer";
  return "Note, reason or feedback (optional)";
}

/** What a gate is about, for the armed sentence: an approval's action, else the kind of thing reviewed. */
function subjectOf(gate: { spec: { kind: string; action?: string | null } }): string {
  if (gate.spec.kind === "approval" && typeof gate.spec.action === "string" && gate.spec.action.trim() !== "") return gate.spec.action.trim();
  return SUBJECTS[gate.spec.kind] ?? "this gate";
}

const SUBJECTS: Record<string, string> = {
  approval: "this action",
  payload_review: "this payload",
  question: "this question",
  information_review: "this request",
  response_review: "this response",
  quality_score: "this deliverable",
  goal_review: "this goal",
  plan_review: "this plan",
};

/** The reviewer's text as quoted in a sentence, shortened past `max` characters. */
function quoted(text: string, max = 80): string {
  const t = text.trim().replace(/\s+/g, " ");
  return `“${t.length > max ? `${t.slice(0, max - 1)}…` : t}”`;
}

/**
 * What the armed decision will do, in words, before the reviewer confirms
 * it: "Approve DROP TABLE orders_2019 as proposed, for deployer."
 */
export function armedSentence(
  gate: { agent: string; spec: { kind: string; action?: string | null } },
  action: DecisionAction,
  text: string,
  edits: number,
): string {
  const what = subjectOf(gate);
  const agent = gate.agent;
  const said = text.trim() !== "";
  switch (action) {
    case "approve":
      return `Approve ${what} as proposed, for ${agent}.`;
    case "edit":
      return `Approve ${what} with your edits${edits > 0 ? ` (${edits})` : ""}, for ${agent}.`;
    case "reject":
      return said ? `Reject ${what}: ${agent} is told ${quoted(text)}.` : `Reject ${what}: type the reason ${agent} is told.`;
    case "needs_revision":
      return said ? `Ask ${agent} to revise ${what}: ${quoted(text)}.` : `Ask ${agent} to revise ${what}: say what to change.`;
    case "retry":
      return said ? `Ask ${agent} to retry ${what}: ${quoted(text)}.` : `Ask ${agent} to retry ${what}: say what to change.`;
    case "respond":
      return said ? `Answer ${agent}: ${quoted(text)}.` : `Answer ${agent}: type the answer.`;
    case "defer":
      return `Defer ${what} for ${agent}.`;
  }
}

/** What a preset option chosen by its digit will do: "Answer ops with “Use us-east-1”." */
export function optionSentence(gate: { agent: string; spec: { kind: string; action?: string | null } }, action: DecisionAction, title: string): string {
  const what = subjectOf(gate);
  if (action === "respond") return `Answer ${gate.agent} with ${quoted(title)}.`;
  if (action === "reject") return `Reject ${what} with ${quoted(title)}.`;
  if (action === "approve") return `Approve ${what} with ${quoted(title)}, for ${gate.agent}.`;
  return `${ACTION_LABELS[action]} ${what} with ${quoted(title)}, for ${gate.agent}.`;
}
