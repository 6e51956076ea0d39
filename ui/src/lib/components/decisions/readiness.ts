// Whether a decision the reviewer confirmed can go as it stands, and if
// not what happens instead: an approval with unsent edits is refused (send
// the edit, or reset); a rejection, retry or revision without its reason
// is armed and waits for the text; an edit with nothing edited opens the
// editor; a review's own problem is said. Pure: the modal acts on it.

import type { DecisionAction, DecisionInput } from "../../api/types";
import { buildDecision, NEEDS_TEXT, type Draft } from "./decision";

export type Readiness =
  | { kind: "send"; input: DecisionInput }
  | { kind: "refuse"; why: string }
  /** Arm the action and put the cursor in the note: it needs the reviewer's words. */
  | { kind: "ask-text" }
  /** Nothing was edited yet: put the cursor in the editor. */
  | { kind: "open-editor" };

/**
 * What confirming `action` does with `draft`. `ownEditor`: the gate's kind
 * edits through its own review (response, information, plan), whose
 * `reviewProblem` blocks an edit.
 */
export function readiness(action: DecisionAction, draft: Draft, ownEditor: boolean, reviewProblem?: string | null): Readiness {
  if (action === "approve" && draft.editedPayload !== undefined) {
    const why = ownEditor
      ? "You made changes: send them with the edit, or reset them first."
      : "You edited the payload: approve with edits, or reset to the proposal first.";
    return { kind: "refuse", why };
  }
  // A quality gate's revision may take the justifications as its feedback.
  const feedbackReady = action === "needs_revision" && (draft.quality?.score?.justification?.trim() ?? "") !== "";
  if (NEEDS_TEXT.includes(action) && draft.armed !== action && draft.text.trim() === "" && !feedbackReady) return { kind: "ask-text" };
  if (action === "edit" && draft.editedPayload === undefined && !draft.payloadInvalid) return { kind: "open-editor" };
  if (action === "edit" && ownEditor && reviewProblem) return { kind: "refuse", why: reviewProblem };
  const built = buildDecision(action, draft);
  return "problem" in built ? { kind: "refuse", why: built.problem } : { kind: "send", input: built.input };
}
