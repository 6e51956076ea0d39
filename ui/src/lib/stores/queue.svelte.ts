// The one store of server state: the pending gates, in panel order, kept
// live by the event stream. It loads the queue once (`GET /gates`), then
// follows the log from where that snapshot stood. A long queue loads its
// top first (the server lists in panel order), so the panel shows the most
// urgent gates and the count before the rest arrive. After a gap in the
// stream it loads the queue again and replays what arrived meanwhile on
// top. Components read it and never poll.
//
// Events are applied in batches (every 30 ms at most), so a burst of
// thousands, or a replay of the log, costs one re-render. Other views (the
// runs) subscribe to the same batches, so the page keeps one stream.

import { errorMessage, openEvents, type Api } from "../api/client";
import type { GateList, GateSummary, LogEvent } from "../api/types";
import { openEventStream, type EventStream } from "./event-stream";
import { applyEvents, compareGates, expiredOf, QUEUE_EVENTS, type Closed, type Lapsed } from "./queue-logic";
import { RUN_EVENTS } from "./runs-logic";
import { RULE_EVENTS } from "./rules-logic";
import { ALERT_EVENTS } from "./alerts-logic";

/** Every event the page's stream listens for: the queue's, the runs view's, the rules view's and alerts. */
export const STREAM_EVENTS = [...new Set([...QUEUE_EVENTS, ...RUN_EVENTS, ...RULE_EVENTS, ...ALERT_EVENTS])];

/** The most gates one request lists (the server's limit). */
export const QUEUE_LIMIT = 10_000;
/** The top of the queue, loaded first: a screenful and then some. */
export const FIRST_PAGE = 200;
/** How many closed gates are remembered for open modals. */
const CLOSED_MEMORY = 500;

export type Connection = "connecting" | "live" | "reconnecting" | "offline";

export interface QueueDeps {
  /** Every call, the event stream's too. */
  api: Api;
  /** Runs `flush` soon: the batching window for events (default 30 ms). */
  schedule?: (flush: () => void) => void;
}

export class QueueStore {
  /** Pending gates in panel order. */
  gates = $state.raw<GateSummary[]>([]);
  /** How many are pending in all (more than listed only beyond the server's limit). */
  total = $state(0);
  connection = $state<Connection>("connecting");
  /** The last load error, if the queue could not be loaded. */
  error = $state<string | null>(null);
  /** Gates that closed while this page watched, by id. */
  closed = $state.raw<ReadonlyMap<string, Closed>>(new Map());

  #deps: QueueDeps;
  #stream: EventStream | null = null;
  #incoming: LogEvent[] = [];
  #flushScheduled = false;
  /** Events received while a refetch is in flight, replayed onto its answer. */
  #sinceRefetch: LogEvent[] | null = null;
  #stopped = false;
  #listeners = new Set<(events: readonly LogEvent[]) => void>();
  #expiryListeners = new Set<(expired: readonly Lapsed[]) => void>();

  constructor(deps: QueueDeps) {
    this.#deps = deps;
  }

  /** Loads the queue and follows the stream. */
  async start(): Promise<void> {
    // Parsing 10,000 gates takes a while; the top of the queue does not.
    let snapshot = await this.#load(FIRST_PAGE);
    if (snapshot === null || this.#stopped) return;
    this.#install(snapshot.gates, snapshot.total);
    if (snapshot.total > snapshot.gates.length) {
      snapshot = await this.#load();
      if (snapshot === null || this.#stopped) return;
      this.#install(snapshot.gates, snapshot.total);
    }
    this.#follow(headOf(snapshot));
  }

  stop(): void {
    this.#stopped = true;
    this.#stream?.close();
    this.#stream = null;
  }

  /** Loads the queue again, keeping the stream; events meanwhile are replayed on top. */
  async refetch(): Promise<void> {
    if (this.#sinceRefetch !== null) return;
    this.#sinceRefetch = [];
    const snapshot = await this.#load();
    const meanwhile = this.#sinceRefetch;
    this.#sinceRefetch = null;
    if (snapshot === null || this.#stopped) return;
    const gates = [...snapshot.gates].sort(compareGates);
    const { queue } = applyEvents(gates, meanwhile);
    this.gates = queue;
    this.total = Math.max(snapshot.total - (gates.length - queue.length), queue.length);
  }

  /** Takes a gate out at once (this reviewer just decided it); the event confirms it. */
  remove(closed: Closed): void {
    this.#closeAll([closed]);
    const before = this.gates.length;
    this.gates = this.gates.filter((g) => g.id !== closed.gateId);
    this.total = Math.max(0, this.total - (before - this.gates.length));
  }

  /** Hands every batch of events to `listener` too; returns the unsubscribe. */
  subscribe(listener: (events: readonly LogEvent[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells `listener` of listed gates that expired unanswered (each batch's); returns the unsubscribe. */
  onExpired(listener: (expired: readonly Lapsed[]) => void): () => void {
    this.#expiryListeners.add(listener);
    return () => this.#expiryListeners.delete(listener);
  }

  /** Applies events now (tests; the stream batches them). */
  receive(events: LogEvent[]): void {
    this.#incoming.push(...events);
    this.flush();
  }

  flush(): void {
    this.#flushScheduled = false;
    if (this.#incoming.length === 0) return;
    const batch = this.#incoming;
    this.#incoming = [];
    this.#sinceRefetch?.push(...batch);
    const listed = this.gates;
    const { queue, closed } = applyEvents(listed, batch);
    this.gates = queue;
    this.total = Math.max(0, this.total + (queue.length - listed.length));
    this.#closeAll(closed);
    for (const listener of this.#listeners) listener(batch);
    const lapsed = expiredOf(listed, closed);
    if (lapsed.length > 0) for (const listener of this.#expiryListeners) listener(lapsed);
  }

  async #load(limit = QUEUE_LIMIT): Promise<GateList | null> {
    const { data, error, response } = await this.#deps.api.GET("/api/hitl/gates", {
      params: { query: { status: "pending", limit } },
    });
    if (data === undefined) {
      this.error = `Cannot load the queue (${response.status}): ${errorMessage(error)}`;
      return null;
    }
    this.error = null;
    return data;
  }

  #install(gates: GateSummary[], total: number): void {
    this.gates = [...gates].sort(compareGates);
    this.total = total;
  }

  #follow(after: number): void {
    const { api } = this.#deps;
    this.#stream = openEventStream({
      connect: (from, signal) => openEvents(api, from, signal),
      after,
      types: STREAM_EVENTS,
      handlers: {
        onEvent: (event) => this.#enqueue(event),
        onOpen: (afterGap) => {
          this.connection = "live";
          if (afterGap) void this.refetch();
        },
        onDown: () => {
          this.connection = "reconnecting";
        },
      },
    });
  }

  #enqueue(event: LogEvent): void {
    this.#incoming.push(event);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    const schedule = this.#deps.schedule ?? defaultSchedule;
    schedule(() => this.flush());
  }

  #closeAll(closed: Closed[]): void {
    if (closed.length === 0) return;
    const next = new Map(this.closed);
    for (const c of closed) next.set(c.gateId, c);
    while (next.size > CLOSED_MEMORY) next.delete(next.keys().next().value as string);
    this.closed = next;
  }
}

/** A short timer rather than a frame: frames stop in background tabs, and the title's count should not. */
function defaultSchedule(flush: () => void): void {
  setTimeout(flush, 30);
}

/**
 * Where the snapshot stands in the event log, so the stream starts right
 * after it. Servers that do not report it yet are followed from the start
 * of the log: replaying is idempotent, so the queue is still right, only
 * slower to settle on a long log.
 */
function headOf(snapshot: GateList): number {
  const head = (snapshot as GateList & { head_seq?: number }).head_seq;
  return typeof head === "number" ? head : 0;
}
