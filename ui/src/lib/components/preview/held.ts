// The preview holds a gate that someone else decided while it was selected:
// the pane stays on it and says who decided, what, why and when, instead of
// jumping to the next gate under the reviewer's eyes. j/k leave it; the
// panel's selection has already moved to the gate that took its place, so
// leaving moves by however much lands on the neighbour the reviewer meant.

import type { GateSummary } from "../../api/types";
import { DECIDED } from "../../format";
import { compareGates, type Closed } from "../../stores/queue-logic";

/** A decided gate the preview stays on, with how it closed. */
export interface Held {
  gate: GateSummary;
  closed: Closed;
}

/**
 * Whether the closing of `selected` holds the preview on it: it was
 * resolved (not expired or withdrawn, which the desk says otherwise) by
 * someone other than the signed-in reviewer (`me`; unknown counts as
 * someone else, this page's own decisions never reach here).
 */
export function holdFor(selected: GateSummary | undefined, closed: Closed | undefined, me: string | null): Held | null {
  if (selected === undefined || closed === undefined || closed.gateId !== selected.id) return null;
  if (closed.how !== "resolved" || (me !== null && closed.by === me)) return null;
  return { gate: selected, closed };
}

/**
 * How many rows j (1) or k (-1) move the panel's selection when they leave
 * a held gate. The panel already sits on the gate that took its place: the
 * one after it (j stays, k steps back over it), or, when it was the last,
 * the one before it (k stays, j has nothing further).
 */
export function leaveHeld(held: GateSummary, selected: GateSummary | undefined, delta: 1 | -1): number {
  if (selected === undefined) return delta;
  const after = compareGates(selected, held) > 0;
  if (delta > 0) return after ? 0 : 1;
  return after ? -1 : 0;
}

/** What the pane says at once, before the gate's record is read: "Rejected by bob." */
export function heldSentence(closed: Closed): string {
  const what = closed.action && closed.action in DECIDED ? DECIDED[closed.action as keyof typeof DECIDED] : "decided";
  return `${what.charAt(0).toUpperCase()}${what.slice(1)} by ${closed.by}.`;
}
