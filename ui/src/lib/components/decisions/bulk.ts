// Bulk review: several pending gates marked in the panel (x, Ctrl/Cmd-click,
// Shift-click for a range) and decided together. Each gate gets its own
// decision, sent as its own request; the outcome is reported per gate, so a
// conflict or refusal on some never hides the others' success.

import type { Api } from "../../api/client";
import type { DecisionAction, DecisionInput, GateSummary } from "../../api/types";
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

/** A gate left out of a bulk decision, and why, in words. */
export interface LeftOut {
  gateId: string;
  why: string;
}

/** A bulk decision split by what each marked gate allows: the gates that take it, and those left out. */
export interface BulkPlan {
  take: string[];
  leftOut: LeftOut[];
}

/** Each decision as a thing a gate takes: "an approval", "an answer". */
const AS_NOUN: Record<DecisionAction, string> = {
  approve: "an approval",
  edit: "an approval with edits",
  reject: "a rejection",
  respond: "an answer",
  needs_revision: "a revision request",
  defer: "a deferral",
  retry: "a retry",
};

/** "a", "a or b", "a, b or c". */
function either(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * Splits `gateIds` (in order) by whether each gate allows `action`, as its
 * `allowed_actions` say (`allowedOf` gives null for a gate that could not be
 * read). Those left out are named with what they take instead, so no raw
 * server refusal reaches the reviewer.
 */
export function planBulk(
  gateIds: readonly string[],
  action: DecisionAction,
  allowedOf: (gateId: string) => readonly DecisionAction[] | null,
  label: (gateId: string) => string,
): BulkPlan {
  const plan: BulkPlan = { take: [], leftOut: [] };
  for (const gateId of gateIds) {
    const allowed = allowedOf(gateId);
    if (allowed?.includes(action)) {
      plan.take.push(gateId);
      continue;
    }
    const why =
      allowed === null
        ? `${label(gateId)} could not be read: open it to decide.`
        : allowed.length === 0
          ? `${label(gateId)} takes no decision from you now: open it to see why.`
          : `${label(gateId)} takes ${either(allowed.map((a) => AS_NOUN[a]))}, not ${AS_NOUN[action]}: open it to decide.`;
    plan.leftOut.push({ gateId, why });
  }
  return plan;
}

/** One line saying what happened: "Approved 3 gates. 1 left out: … 1 refused: … 1 already decided: …". */
export function summarize(verb: string, results: readonly BulkResult[], label: (gateId: string) => string, leftOut: readonly LeftOut[] = []): string {
  const done = results.filter((r) => r.outcome.kind === "resolved").length;
  const parts = [`${verb} ${done} gate${done === 1 ? "" : "s"}.`];
  if (leftOut.length > 0) parts.push(`${leftOut.length} left out: ${leftOut.map((l) => l.why).join(" ")}`);
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
