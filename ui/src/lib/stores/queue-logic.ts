// The pending-gate queue as pure functions, so ordering, live updates and
// filters are tested without a browser: the order the panel shows (sync
// first, then priority, then age, then id: the server's own order), how
// one event changes the queue, and which gates a filter keeps.

import { previewOf, timeKey } from "../format";
import type { BlockingMode, EventType, Gate, GateKind, GateSummary, LogEvent, Priority } from "../api/types";

const MODE_RANK: Record<BlockingMode, number> = { sync: 0, async: 1, advisory: 2 };
const PRIORITY_RANK: Record<Priority, number> = { low: 0, normal: 1, high: 2, urgent: 3 };

/** The events that change the pending queue; the stream listens for these. */
export const QUEUE_EVENTS = [
  "gate_opened",
  "gate_resolved",
  "gate_expired",
  "gate_cancelled",
  "gate_auto_passed",
  "gate_escalated",
  "gate_released",
] as const satisfies readonly EventType[];

const keys = new WeakMap<GateSummary, number>();
function createdKey(g: GateSummary): number {
  let key = keys.get(g);
  if (key === undefined) {
    key = timeKey(g.created_at);
    keys.set(g, key);
  }
  return key;
}

/** Panel order: sync before async before advisory, then urgent first, then oldest first, then id. */
export function compareGates(a: GateSummary, b: GateSummary): number {
  return (
    MODE_RANK[a.mode] - MODE_RANK[b.mode] ||
    PRIORITY_RANK[b.priority] - PRIORITY_RANK[a.priority] ||
    createdKey(a) - createdKey(b) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** A gate as one line of the panel (what `GET /gates` lists). */
export function summaryOf(gate: Gate): GateSummary {
  return {
    id: gate.id,
    run_id: gate.run_id,
    kind: gate.spec.kind,
    mode: gate.mode,
    priority: gate.priority,
    agent: gate.agent,
    preview: previewOf(gate.text),
    status: gate.status,
    created_at: gate.created_at,
    expires_at: gate.expires_at ?? null,
    ...(gate.agent_chain?.length ? { agent_chain: gate.agent_chain } : {}),
    ...(gate.deciders?.length ? { deciders: gate.deciders } : {}),
  };
}

/** How a gate left the queue, so an open modal can say so. */
export interface Closed {
  gateId: string;
  how: "resolved" | "expired" | "cancelled" | "auto_passed";
  /** Who decided (a reviewer, a policy) or caused it. */
  by: string;
  /** When. */
  at: string;
  /** The decision's action, for resolutions. */
  action?: string;
  /** Why it expired or was cancelled. */
  reason?: string;
}

/** What one event does to the queue: a gate added, a gate closed, a gate escalated or released, or nothing. */
export type QueueChange =
  | { add: GateSummary }
  | { remove: Closed }
  | { escalate: { gateId: string; priority: Priority; expiresAt: string | null } }
  | { release: { gateId: string } }
  | null;

export function changeOf(event: LogEvent): QueueChange {
  switch (event.type) {
    case "gate_opened":
      return event.gate.status === "pending" ? { add: summaryOf(event.gate) } : null;
    case "gate_resolved":
      return {
        remove: {
          gateId: event.gate_id,
          how: "resolved",
          by: event.decision.decided_by,
          at: event.decision.decided_at,
          action: event.decision.action,
        },
      };
    case "gate_expired":
      return { remove: { gateId: event.gate_id, how: "expired", by: event.actor, at: event.at, reason: event.reason } };
    case "gate_cancelled":
      return { remove: { gateId: event.gate_id, how: "cancelled", by: event.actor, at: event.at, reason: event.reason } };
    case "gate_auto_passed":
      return {
        remove: {
          gateId: event.gate.id,
          how: "auto_passed",
          by: event.decision.decided_by,
          at: event.decision.decided_at,
          action: event.decision.action,
        },
      };
    case "gate_escalated":
      return { escalate: { gateId: event.gate_id, priority: event.priority, expiresAt: event.expires_at ?? null } };
    case "gate_released":
      return { release: { gateId: event.gate_id } };
    default:
      return null;
  }
}

/**
 * Applies events, in log order, to a queue in panel order and returns the
 * new queue (the old one is not changed) and the gates that closed.
 * Idempotent: replaying events the queue already reflects (after a
 * refetch, or a replay from an older point) changes nothing, since a gate
 * opens once and closes once. Costs O(n + k log k) for k events.
 */
export function applyEvents(queue: readonly GateSummary[], events: readonly LogEvent[]): {
  queue: GateSummary[];
  closed: Closed[];
} {
  const touched = new Map<string, GateSummary | null>();
  const closed: Closed[] = [];
  for (const event of events) {
    const change = changeOf(event);
    if (change === null) continue;
    if ("add" in change) {
      // A gate that already closed in this batch stays closed.
      if (touched.get(change.add.id) !== null) touched.set(change.add.id, change.add);
    } else if ("escalate" in change) {
      // It moves up the panel: the same gate, more urgent, with its expiry from now on.
      const { gateId, priority, expiresAt } = change.escalate;
      const current = touched.has(gateId) ? touched.get(gateId) : queue.find((g) => g.id === gateId);
      if (current) touched.set(gateId, { ...current, priority, expires_at: expiresAt });
    } else if ("release" in change) {
      // Still open, no longer blocking its run: it moves down among the async gates.
      const { gateId } = change.release;
      const current = touched.has(gateId) ? touched.get(gateId) : queue.find((g) => g.id === gateId);
      if (current) touched.set(gateId, { ...current, mode: "async" });
    } else {
      touched.set(change.remove.gateId, null);
      closed.push(change.remove);
    }
  }
  if (touched.size === 0) return { queue: [...queue], closed };
  const kept = queue.filter((g) => !touched.has(g.id));
  const added = [...touched.values()].filter((g): g is GateSummary => g !== null).sort(compareGates);
  return { queue: mergeSorted(kept, added), closed };
}

/** Merges two lists already in panel order. */
export function mergeSorted(a: readonly GateSummary[], b: readonly GateSummary[]): GateSummary[] {
  if (b.length === 0) return [...a];
  const out: GateSummary[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareGates(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** What the reviewer narrows the panel to; empty fields match everything. */
export interface QueueFilter {
  text: string;
  kind: GateKind | "";
  mode: BlockingMode | "";
  agent: string;
  run: string;
}

export const NO_FILTER: QueueFilter = { text: "", kind: "", mode: "", agent: "", run: "" };

export function isFiltering(f: QueueFilter): boolean {
  return f.text.trim() !== "" || f.kind !== "" || f.mode !== "" || f.agent !== "" || f.run !== "";
}

/** The gates `f` keeps, in the same order. */
export function filterGates(queue: readonly GateSummary[], f: QueueFilter): readonly GateSummary[] {
  if (!isFiltering(f)) return queue;
  const needle = f.text.trim().toLowerCase();
  return queue.filter(
    (g) =>
      (f.kind === "" || g.kind === f.kind) &&
      (f.mode === "" || g.mode === f.mode) &&
      (f.agent === "" || g.agent === f.agent) &&
      (f.run === "" || g.run_id === f.run) &&
      (needle === "" ||
        g.preview.toLowerCase().includes(needle) ||
        g.agent.toLowerCase().includes(needle) ||
        g.run_id.toLowerCase().includes(needle) ||
        g.kind.includes(needle)),
  );
}

/** The distinct agents and runs in the queue with their gate counts, for the filter menus. */
export function facets(queue: readonly GateSummary[]): { agents: [string, number][]; runs: [string, number][] } {
  const agents = new Map<string, number>();
  const runs = new Map<string, number>();
  for (const g of queue) {
    agents.set(g.agent, (agents.get(g.agent) ?? 0) + 1);
    runs.set(g.run_id, (runs.get(g.run_id) ?? 0) + 1);
  }
  const byName = (a: [string, number], b: [string, number]) => a[0].localeCompare(b[0]);
  return { agents: [...agents].sort(byName), runs: [...runs].sort(byName) };
}

/**
 * Which gate to keep selected after the list changed: the same one if it
 * is still there, else the one that took its place (so resolving a gate
 * moves on to the next), else none.
 */
export function keepSelection(
  before: readonly GateSummary[],
  after: readonly GateSummary[],
  selectedId: string | null,
): string | null {
  if (after.length === 0) return null;
  if (selectedId === null) return after[0]!.id;
  const listed = new Set(after.map((g) => g.id));
  if (listed.has(selectedId)) return selectedId;
  const oldIndex = before.findIndex((g) => g.id === selectedId);
  // Walk forward from the old position to the first gate still listed.
  for (let i = Math.max(oldIndex, 0); i < before.length; i++) {
    const candidate = before[i]!.id;
    if (listed.has(candidate)) return candidate;
  }
  return after[Math.min(Math.max(oldIndex, 0), after.length - 1)]!.id;
}

/** A listed gate that expired unanswered, with why (the server's words). */
export interface Lapsed {
  gate: GateSummary;
  reason: string;
}

/** The gates of `listed` that `closed` says expired, in panel order. */
export function expiredOf(listed: readonly GateSummary[], closed: readonly Closed[]): Lapsed[] {
  const reasons = new Map(closed.filter((c) => c.how === "expired").map((c) => [c.gateId, c.reason ?? "expired"]));
  if (reasons.size === 0) return [];
  return listed.filter((g) => reasons.has(g.id)).map((gate) => ({ gate, reason: reasons.get(gate.id)! }));
}

/**
 * What the desk says when listed gates expire unanswered (an
 * expired blocker is shown, not just dropped): one gate by its preview and
 * the server's reason, several by their count.
 */
export function expiryNotice(lapsed: readonly Lapsed[]): string | null {
  if (lapsed.length === 0) return null;
  if (lapsed.length > 1) return `${lapsed.length} gates expired without resolution.`;
  const [{ gate, reason }] = lapsed as [Lapsed];
  return `“${gate.preview}” ${reason}.`;
}

/** What the header says of the queue: agents blocked waiting (sync), and the gates that block nobody. */
export interface Urgency {
  /** Distinct agents (per run) waiting on a sync gate: they are stopped until a reviewer answers. */
  blockedAgents: number;
  sync: number;
  async: number;
  advisory: number;
}

export function urgencyOf(queue: readonly GateSummary[]): Urgency {
  const blocked = new Set<string>();
  const count = { sync: 0, async: 0, advisory: 0 };
  for (const g of queue) {
    count[g.mode]++;
    if (g.mode === "sync") blocked.add(`${g.run_id}\u0000${g.agent}`);
  }
  return { blockedAgents: blocked.size, ...count };
}

/** The header's sentence: "2 agents blocked waiting · 3 async · 1 advisory". */
export function urgencySentence(u: Urgency): string {
  const agents = u.blockedAgents === 0 ? "No agent blocked" : `${u.blockedAgents} agent${u.blockedAgents === 1 ? "" : "s"} blocked waiting`;
  const rest = [u.async > 0 ? `${u.async} async` : "", u.advisory > 0 ? `${u.advisory} advisory` : ""].filter(Boolean);
  return [agents, ...rest].join(" · ");
}
