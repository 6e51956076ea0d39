// A gate's preset answers, as the modal decides them: the option a digit
// names (only one whose decision the gate allows), what the armed option
// will do in words, and the decision it sends (its action, its name, and
// the reviewer's own text when they typed one, else the option's).

import type { DecisionAction, DecisionInput, Gate } from "../../api/types";
import { optionSentence } from "./decision";

type Option = NonNullable<Gate["options"]>[number];

/** The option at `index` (from 0), if the gate has it and allows its decision. */
export function optionAt(gate: Pick<Gate, "options"> | undefined, index: number | null, allowed: readonly DecisionAction[]): Option | null {
  const option = index === null ? undefined : gate?.options?.[index];
  return option && allowed.includes(option.action ?? "respond") ? option : null;
}

/** What choosing `option` will do, in words ("Answer deployer with “EU only”."). */
export function optionWords(gate: Parameters<typeof optionSentence>[0], option: Option): string {
  return optionSentence(gate, option.action ?? "respond", option.title);
}

/** The decision `option` sends, with `typed` as its text when the reviewer wrote one. */
export function optionDecision(option: Option, typed: string): { action: DecisionAction; input: DecisionInput } {
  const action = option.action ?? "respond";
  const text = typed.trim();
  return { action, input: { action, option: option.name, ...(text ? { text } : {}) } };
}
