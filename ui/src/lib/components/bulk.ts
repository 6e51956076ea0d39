// Bulk review: several pending gates marked in the panel (x, Ctrl/Cmd-click,
// Shift-click for a range) and decided together. Each gate gets its own
// decision, sent as its own request; the outcome is reported per gate, so a
// conflict or refusal on some never hides the others' success.

import type { Api } from "../api/client";
import type { DecisionInput, GateSummary } from "../api/types";
import { submitDecision, type Conflict, type Outcome } from "./resolution";

/** Marks `id`, or unmarks it when it was marked. */
export function toggleMark(marked: ReadonlySet<string>, id: string): Set<string> {
  const next = new Set(marked);
  if (!next.delete(id)) next.add(id);
  return next;
}

/** Marks every shown gate from `anchor` to `id` (inclusive), keeping the other marks. */
export function markRange(marked: ReadonlySet<string>, shown: readonly GateSummary[], anchor: string | null, id: string): Set<string> {
  const next = new Set(marked);
  const to = shown.findIndex((g) => g.id === id);
  const from = anchor === null ? to : shown.findIndex((g) => g.id === anchor);
  if (to < 0) return next;
  const [lo, hi] = from < 0 ? [to, to] : [Math.min(from, to), Math.max(from, to)];
  for (const g of shown.slice(lo, hi + 1)) next.add(g.id);
  return next;
}

/** Drops marks of gates no longer pending (decided elsewhere, expired). */
export function keepPending(marked: ReadonlySet<string>, gates: readonly GateSummary[]): Set<string> {
  const pending = new Set(gates.map((g) => g.id));
  return new Set([...marked].filter((id) => pending.has(id)));
}

export interface BulkResult {
  gateId: string;
  outcome: Outcome;
}

/** Sends `input` to each gate, a few at a time, and returns every outcome in the order given. */
export async function decideEach(api: Api, gateIds: readonly string[], input: DecisionInput, parallel = 4): Promise<BulkResult[]> {
  const results: BulkResult[] = new Array(gateIds.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < gateIds.length) {
      const i = next++;
      const gateId = gateIds[i]!;
      results[i] = { gateId, outcome: await submitDecision(api, gateId, input) };
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, gateIds.length) }, worker));
  return results;
}

/** One line saying what happened: "Approved 3 gates. 1 refused: … 1 already decided: …". */
export function summarize(verb: string, results: readonly BulkResult[], label: (gateId: string) => string): string {
  const done = results.filter((r) => r.outcome.kind === "resolved").length;
  const parts = [`${verb} ${done} gate${done === 1 ? "" : "s"}.`];
  // A quorum gate takes each approval as one vote and may still wait for others.
  const votes = results.filter((r) => r.outcome.kind === "voted").length;
  if (votes > 0) parts.push(`${votes} vote${votes === 1 ? "" : "s"} counted on gates that wait for more.`);
  const conflicts = results.filter((r) => r.outcome.kind === "conflict");
  if (conflicts.length > 0) {
    const how = conflicts.map((r) => `${label(r.gateId)} (${r.outcome.kind === "conflict" ? closedFirst(r.outcome) : ""})`);
    parts.push(`${conflicts.length} already decided: ${how.join(", ")}.`);
  }
  const refused = results.filter((r) => r.outcome.kind === "refused");
  if (refused.length > 0) {
    const why = refused.map((r) => `${label(r.gateId)}: ${r.outcome.kind === "refused" ? r.outcome.message : ""}`);
    parts.push(`${refused.length} refused: ${why.join("; ")}.`);
  }
  return parts.join(" ");
}

/** How a gate closed before the bulk decision reached it: "by bob", "expired", "withdrawn". */
function closedFirst(conflict: Conflict): string {
  if (conflict.gateStatus === "expired") return "expired";
  if (conflict.gateStatus === "cancelled") return "withdrawn";
  return `by ${conflict.resolvedBy ?? "someone else"}`;
}
