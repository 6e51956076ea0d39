// A goal under review, round by round: the previous round's goal (the
// run's earlier goal review) and what the reviewer asked for then, so the
// change between rounds is shown as a diff.

import type { Decision, Gate, RunState } from "../../api/types";
import { readableText } from "./readable";

/** The goal as text to read: a string as it is, structured goals as lines in words (`readable.ts`). */
export function goalText(goal: unknown): string {
  return readableText(goal);
}

/**
 * The goal review before this one in the same run: the newest earlier
 * round, or failing round numbers, the newest goal review opened before.
 */
export function previousRound(gate: Gate, state: RunState | null): { gate: Gate; goal: unknown; decision: Decision | null } | null {
  if (!state || gate.spec.kind !== "goal_review") return null;
  const round = gate.spec.round ?? 1;
  const earlier = state.gates.filter(
    (g) =>
      g.id !== gate.id &&
      g.spec.kind === "goal_review" &&
      ((g.spec.round ?? 1) < round || ((g.spec.round ?? 1) === round && g.created_at < gate.created_at)),
  );
  if (earlier.length === 0) return null;
  const prev = earlier.reduce((a, b) => {
    const ra = a.spec.kind === "goal_review" ? (a.spec.round ?? 1) : 0;
    const rb = b.spec.kind === "goal_review" ? (b.spec.round ?? 1) : 0;
    return rb > ra || (rb === ra && b.created_at > a.created_at) ? b : a;
  });
  return { gate: prev, goal: prev.spec.kind === "goal_review" ? prev.spec.goal : null, decision: prev.decision ?? null };
}
