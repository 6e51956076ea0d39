// A gate of several proposed actions (an agent's parallel tool calls):
// what the reviewer has chosen for each open action, checked and turned
// into the `actions` of a DecisionInput. The server takes any subset; the
// gate resolves once every action is decided.

import type { ActionChoice, DecisionAction, ProposedAction } from "../../api/types";

/** The four decisions one action can take. */
export const ACTION_CHOICES: readonly DecisionAction[] = ["approve", "edit", "reject", "respond"];

export const CHOICE_LABELS: Partial<Record<DecisionAction, string>> = {
  approve: "Approve",
  edit: "Edit",
  reject: "Reject",
  respond: "Respond",
};

/** What the reviewer chose for one action, before sending. */
export interface Choice {
  action: DecisionAction;
  /** The edited arguments as typed (edit). */
  argsText?: string;
  /** A rejection's reason or a response's text. */
  text?: string;
}

/** The decisions an action allows (all four when its agent named none). */
export function allowedChoices(action: ProposedAction): DecisionAction[] {
  const allowed = action.allowed_actions ?? [];
  return ACTION_CHOICES.filter((c) => allowed.length === 0 || allowed.includes(c));
}

/** An action's id (always set on a gate the server returns). */
export function idOf(action: ProposedAction): string {
  return action.id ?? "";
}

/** The actions still open. */
export function openActions(actions: readonly ProposedAction[]): ProposedAction[] {
  return actions.filter((a) => a.decision == null);
}

/** "2 of 3 decided". */
export function progressText(actions: readonly ProposedAction[]): string {
  const decided = actions.length - openActions(actions).length;
  return `${decided} of ${actions.length} decided`;
}

/** The arguments as the editor starts them: pretty JSON. */
export function argsText(action: ProposedAction): string {
  return JSON.stringify(action.args ?? null, null, 2);
}

/** Why an edit's arguments cannot be sent, or null when they parse. */
export function argsProblem(text: string | undefined): string | null {
  if (text === undefined) return null;
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    return `Not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * The choices as the server takes them, in the gate's order, or the first
 * problem naming the action. Choices for actions decided meanwhile are dropped.
 */
export function buildChoices(
  actions: readonly ProposedAction[],
  choices: ReadonlyMap<string, Choice>,
): { ok: ActionChoice[] } | { problem: string } {
  const out: ActionChoice[] = [];
  for (const action of openActions(actions)) {
    const id = idOf(action);
    const choice = choices.get(id);
    if (!choice) continue;
    const text = choice.text?.trim() ?? "";
    const name = `${action.name} (${id})`;
    if (!allowedChoices(action).includes(choice.action)) return { problem: `${name} does not allow ${choice.action}.` };
    if (choice.action === "edit") {
      const source = choice.argsText ?? argsText(action);
      const problem = argsProblem(source);
      if (problem) return { problem: `${name}: ${problem}` };
      out.push({ id, action: "edit", args: JSON.parse(source) });
    } else if (choice.action === "respond") {
      if (text === "") return { problem: `${name}: a response needs its text.` };
      out.push({ id, action: "respond", text });
    } else {
      out.push({ id, action: choice.action, ...(text !== "" ? { text } : {}) });
    }
  }
  if (out.length === 0) return { problem: "Choose a decision for at least one open action." };
  return { ok: out };
}
