// The runs' titles, so a panel row and the preview name a gate's run by
// its title, not the tail of its id. Loaded once from the runs list (the
// newest page), kept by `run_created` events from the page's stream, and
// for a run not among them, asked for once (its state) when a gate names it.

import type { Api } from "../api/client";
import type { LogEvent } from "../api/types";
import { plainText } from "../plain-text";
import { RUNS_LIMIT } from "./runs.svelte";

export class RunTitles {
  /** Title by run id; a run without a title is absent. */
  titles = $state.raw<ReadonlyMap<string, string>>(new Map());
  #api: Api;
  /** Runs asked for (or listed): never asked twice. */
  #asked = new Set<string>();
  /** The runs list, loaded first: most runs' titles come from it. */
  #listed: Promise<void> = Promise.resolve();

  constructor(api: Api) {
    this.#api = api;
  }

  /** The title of `runId`, when known. */
  of(runId: string): string | undefined {
    return this.titles.get(runId);
  }

  start(): Promise<void> {
    this.#listed = this.#list();
    return this.#listed;
  }

  async #list(): Promise<void> {
    const { data } = await this.#api.GET("/api/hitl/runs", { params: { query: { limit: RUNS_LIMIT } } }).catch(() => ({ data: undefined }));
    if (!data) return;
    for (const r of data.runs) this.#asked.add(r.id);
    this.#add(data.runs.map((r) => [r.id, r.title]));
  }

  /** Asks for the titles of the runs among `runIds` not yet known. */
  need(runIds: Iterable<string>): void {
    const ids = [...runIds];
    void this.#listed.then(() => this.#ask(ids));
  }

  #ask(runIds: readonly string[]): void {
    for (const id of runIds) {
      if (this.#asked.has(id)) continue;
      this.#asked.add(id);
      void this.#api
        .GET("/api/hitl/run/{run_id}/state", { params: { path: { run_id: id } } })
        .then(({ data }) => data && this.#add([[id, data.run.title]]))
        .catch(() => undefined);
    }
  }

  /** Learns the titles of runs created since. */
  receive(events: readonly LogEvent[]): void {
    const created: [string, string][] = [];
    for (const e of events) {
      if (e.type === "run_created") {
        this.#asked.add(e.run.id);
        created.push([e.run.id, e.run.title]);
      }
    }
    if (created.length > 0) this.#add(created);
  }

  #add(pairs: readonly [string, string | null | undefined][]): void {
    const next = new Map(this.titles);
    let changed = false;
    for (const [id, title] of pairs) {
      const text = plainText(title ?? "");
      if (text && next.get(id) !== text) {
        next.set(id, text);
        changed = true;
      }
    }
    if (changed) this.titles = next;
  }
}
