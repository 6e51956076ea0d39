// The runs view's server state: the listed runs, and the selected run's
// state and event log (its timeline). It never polls: it follows the
// queue store's event stream (one stream for the whole page), applies what
// it can to the list at once, and reloads only what the server must count
// again (progress), at most once a second.

import { errorMessage, type Api } from "../api/client";
import type { LogEvent, RunState, RunSummary } from "../api/types";
import { runEvents, type TimelineEvent } from "./run-log";
import { applyRunEvents } from "./runs-logic";

/** The most runs the server lists at once: one page. */
export const RUNS_LIMIT = 500;
const RELOAD_MS = 1_000;

export interface RunsDeps {
  api: Api;
  /** Subscribes to the page's event stream; returns the unsubscribe. */
  follow: (listener: (events: readonly LogEvent[]) => void) => () => void;
  /** Runs `fn` after `ms` (tests pass their own). */
  later?: (fn: () => void, ms: number) => void;
}

export class RunsStore {
  runs = $state.raw<RunSummary[]>([]);
  error = $state<string | null>(null);
  loaded = $state(false);
  /** Whether older runs than those listed may exist (the last page was full). */
  hasOlder = $state(false);
  selectedId = $state<string | null>(null);
  /** The selected run's state (`GET /run/{id}/state`). */
  state = $state.raw<RunState | null>(null);
  /** The selected run's events, oldest first. */
  events = $state.raw<TimelineEvent[]>([]);
  detailError = $state<string | null>(null);

  #deps: RunsDeps;
  #unfollow: (() => void) | null = null;
  #listReload = false;
  /** How many pages of runs the reviewer has asked to see. */
  #pages = 1;
  #stateReload = false;

  constructor(deps: RunsDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    this.#unfollow = this.#deps.follow((events) => this.receive(events));
    await this.reload();
  }

  stop(): void {
    this.#unfollow?.();
    this.#unfollow = null;
  }

  /** Lists the newest runs again, as many pages as are shown. */
  async reload(): Promise<void> {
    const listed: RunSummary[] = [];
    let full = false;
    for (let page = 0; page < this.#pages; page++) {
      const got = await this.#page(page * RUNS_LIMIT);
      if (got === null) return;
      listed.push(...got);
      full = got.length === RUNS_LIMIT;
      if (!full) break;
    }
    this.runs = dedupe(listed);
    this.hasOlder = full;
    if (this.selectedId === null && listed.length > 0) void this.select(listed[0]!.id);
  }

  /** Adds the next page of older runs to the list. */
  async loadOlder(): Promise<void> {
    if (!this.hasOlder) return;
    const got = await this.#page(this.#pages * RUNS_LIMIT);
    if (got === null) return;
    this.#pages += 1;
    // Runs created meanwhile shift the pages: a run may come twice.
    this.runs = dedupe([...this.runs, ...got]);
    this.hasOlder = got.length === RUNS_LIMIT;
  }

  /** One page of runs, newest first; null (with the error shown) when it failed. */
  async #page(offset: number): Promise<RunSummary[] | null> {
    const query = offset === 0 ? { limit: RUNS_LIMIT } : { limit: RUNS_LIMIT, offset };
    const { data, error, response } = await this.#deps.api.GET("/api/hitl/runs", { params: { query } });
    this.loaded = true;
    if (data === undefined) {
      this.error = `Cannot list the runs (${response.status}): ${errorMessage(error)}`;
      return null;
    }
    this.error = null;
    return data.runs;
  }

  /** Shows a run: its state and its whole event log. */
  async select(runId: string): Promise<void> {
    if (this.selectedId === runId && this.state?.run.id === runId) return;
    this.selectedId = runId;
    this.state = null;
    this.events = [];
    this.detailError = null;
    await Promise.all([this.#loadState(runId), this.#loadEvents(runId)]);
  }

  /** Applies a batch of events from the stream. */
  receive(events: readonly LogEvent[]): void {
    const change = applyRunEvents(this.runs, events);
    this.runs = change.runs;
    if (change.stale) this.#schedule("list");
    const id = this.selectedId;
    if (id !== null && change.touched.has(id)) {
      const mine = events.filter((e) => e.run_id === id);
      if (mine.length > 0) this.events = [...this.events, ...mine];
      this.#schedule("state");
    }
  }

  /** A run's summary line, if listed. */
  summary(runId: string): RunSummary | undefined {
    return this.runs.find((r) => r.id === runId);
  }

  /** Replaces a run's status at once after a control succeeded (the event confirms it). */
  setStatus(runId: string, status: RunSummary["status"]): void {
    this.runs = this.runs.map((r) => (r.id === runId ? { ...r, status } : r));
    if (this.state?.run.id === runId) this.state = { ...this.state, run: { ...this.state.run, status } };
  }

  #schedule(what: "list" | "state"): void {
    const later = this.#deps.later ?? ((fn, ms) => setTimeout(fn, ms));
    if (what === "list") {
      if (this.#listReload) return;
      this.#listReload = true;
      later(() => {
        this.#listReload = false;
        void this.reload();
      }, RELOAD_MS);
    } else {
      if (this.#stateReload) return;
      this.#stateReload = true;
      later(() => {
        this.#stateReload = false;
        if (this.selectedId !== null) void this.#loadState(this.selectedId);
      }, RELOAD_MS);
    }
  }

  async #loadState(runId: string): Promise<void> {
    const { data, error } = await this.#deps.api.GET("/api/hitl/run/{run_id}/state", { params: { path: { run_id: runId } } });
    if (this.selectedId !== runId) return;
    if (data === undefined) this.detailError = `Cannot load the run: ${errorMessage(error)}`;
    else this.state = data;
  }

  /** The run's whole event log (`GET /runs/{id}/events`, page by page). */
  async #loadEvents(runId: string): Promise<void> {
    const answer = await runEvents(this.#deps.api, runId);
    if (this.selectedId !== runId) return;
    if (!answer.ok) {
      this.detailError = answer.message;
      return;
    }
    // Live events that arrived while loading are kept after the history (the timeline drops repeats).
    this.events = [...answer.value, ...this.events];
  }

  /** Reloads the selected run's state now (after the reviewer changed it). */
  async refreshState(): Promise<void> {
    if (this.selectedId !== null) await this.#loadState(this.selectedId);
  }
}

/** Keeps the first of each run id, in order. */
function dedupe(runs: readonly RunSummary[]): RunSummary[] {
  const seen = new Set<string>();
  return runs.filter((r) => !seen.has(r.id) && seen.add(r.id) !== undefined);
}
