// The runs list as pure functions: which events change it, how one batch
// of events changes the listed runs (status at once, counts by reloading), which
// controls a run's status allows, and how progress reads. The store
// (`runs.svelte.ts`) applies these to what the server listed.

import type { EventType, LogEvent, ProgressState, RunStatus, RunSummary } from "../api/types";
import { timeKey } from "../format";
import { lowerWord, word } from "../words";

/** Events that change a run's line or its timeline; the stream listens for these too. */
export const RUN_EVENTS = [
  "run_created",
  "run_status_changed",
  "turn_added",
  "gate_opened",
  "gate_auto_passed",
  "gate_resolved",
  "allow_rule_created",
  "vote_recorded",
  "actions_decided",
  "gate_escalated",
  "gate_released",
  "resolution_refused",
  "gate_expired",
  "gate_cancelled",
  "context_set",
  "context_deleted",
  "plan_revised",
  "score_recorded",
  "run_control_changed",
  "instruction_injected",
  "next_agent_set",
  "directive_delivered",
  "recording_imported",
  "retention_purged",
] as const satisfies readonly EventType[];

const TERMINAL: readonly RunStatus[] = ["completed", "failed", "cancelled"];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL.includes(status);
}

/**
 * The reviewer's controls a run in `status` accepts (the engine's
 * transition table): only a paused run steps; instructions, the next agent
 * and the plan can be changed until the run ends. An imported run is
 * history from another database: it takes none.
 */
export function runControls(
  status: RunStatus,
  imported = false,
): {
  start: boolean;
  retry: boolean;
  pause: boolean;
  resume: boolean;
  cancel: boolean;
  step: boolean;
  steer: boolean;
} {
  const live = !isTerminal(status) && !imported;
  if (imported) return { start: false, retry: false, pause: false, resume: false, cancel: false, step: false, steer: false };
  return {
    start: status === "created",
    retry: status === "failed" || status === "cancelled",
    pause: status === "active" || status === "awaiting_human",
    // Awaiting a human, resuming goes on without waiting: its sync gates are released, still open.
    resume: status === "paused" || status === "awaiting_human",
    cancel: live,
    step: status === "paused",
    steer: live,
  };
}

/** "3 of 5 (60%)", or "—" for a run with nothing to count yet. */
export function progressLabel(p: ProgressState): string {
  if (p.total === 0) return "—";
  return `${p.completed} of ${p.total} (${Math.round((p.completed / p.total) * 100)}%)`;
}

/** The fraction done, 0 to 1, for a bar. */
export function progressFraction(p: ProgressState): number {
  return p.total === 0 ? 0 : Math.min(1, p.completed / p.total);
}

export interface RunsChange {
  runs: RunSummary[];
  /** Something changed that only the server counts (pending gates, progress, a new run): reload the list. */
  stale: boolean;
  /** Runs whose events arrived, to refresh the one shown. */
  touched: Set<string>;
}

/** Events after which only the server can say what the list shows. */
const RECOUNT: readonly EventType[] = [
  "run_created",
  "gate_opened",
  "gate_auto_passed",
  "gate_resolved",
  "gate_expired",
  "gate_cancelled",
  "plan_revised",
  "recording_imported",
  "retention_purged",
];

/**
 * Applies events in log order to the listed runs. A status change shows at
 * once (unless the listed run is already newer: the stream may replay
 * events the list reflects); counts and progress are the server's to
 * count, so events that move them mark the list stale for one reload.
 * Replaying events the list already reflects changes nothing.
 */
export function applyRunEvents(runs: readonly RunSummary[], events: readonly LogEvent[]): RunsChange {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const touched = new Set<string>();
  let stale = false;
  for (const e of events) {
    const id = e.type === "run_created" ? e.run.id : e.run_id;
    if (id) touched.add(id);
    if (RECOUNT.includes(e.type)) stale = true;
    const run = id ? byId.get(id) : undefined;
    if (e.type === "run_status_changed" && run && timeKey(e.at) >= timeKey(run.updated_at)) {
      byId.set(run.id, { ...run, status: e.to, updated_at: e.at });
    }
  }
  return { runs: runs.map((r) => byId.get(r.id)!), stale, touched };
}

/**
 * How a run's status reads: an imported run shows as history ("Imported"),
 * whatever status it was recorded with, which the `recorded` words keep
 * ("recorded as awaiting a human") for a tooltip or a detail line.
 */
export function runStatusWords(status: RunStatus, imported: boolean): { label: string; recorded: string | null } {
  if (!imported) return { label: word("RunStatus", status), recorded: null };
  return { label: "Imported", recorded: `recorded as ${lowerWord("RunStatus", status)}` };
}
