// The live event stream (Server-Sent Events from `GET /api/hitl/events`).
// While the connection drops and comes back by itself, the browser resumes
// with `Last-Event-ID` and nothing is missed. When the browser gives up (the
// server restarted, refused the token, a proxy failed), this reconnects
// with a growing delay from the last event seen. Either way the caller is
// told the stream is back after a gap, so it can refetch what it shows.

import type { EventType, LogEvent } from "../api/types";

export interface StreamHandlers {
  /** One event, in log order. */
  onEvent(event: LogEvent): void;
  /** Connected; `afterGap` when this follows a drop. */
  onOpen(afterGap: boolean): void;
  /** The connection dropped; it is being re-established. */
  onDown(): void;
}

export interface EventStream {
  /** The sequence number of the last event received. */
  readonly lastSeq: number;
  close(): void;
}

/** The part of `EventSource` used here, so tests can supply their own. */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (e: MessageEvent) => void): void;
  close(): void;
}
export type EventSourceFactory = (url: string) => EventSourceLike;

/** `EventSource.CLOSED`: the browser will not reconnect by itself. */
const CLOSED = 2;
const RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

export interface StreamOptions {
  /** The stream's URL resuming after a sequence number. */
  url: (after: number) => string;
  /** Start after this sequence number. */
  after: number;
  /** The events to listen for (SSE `event:` names). */
  types: readonly EventType[];
  handlers: StreamHandlers;
  open?: EventSourceFactory;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

export function openEventStream(options: StreamOptions): EventStream {
  const open = options.open ?? ((url: string) => new EventSource(url));
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  let lastSeq = options.after;
  let source: EventSourceLike | null = null;
  let retryTimer: unknown = null;
  let failures = 0;
  let down = false;
  let closed = false;

  const connect = () => {
    retryTimer = null;
    const es = open(options.url(lastSeq));
    source = es;
    es.addEventListener("open", () => {
      if (source !== es) return;
      failures = 0;
      options.handlers.onOpen(down);
      down = false;
    });
    es.addEventListener("error", () => {
      if (source !== es || closed) return;
      if (!down) {
        down = true;
        options.handlers.onDown();
      }
      if (es.readyState === CLOSED) {
        es.close();
        const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!;
        failures += 1;
        retryTimer = setTimer(connect, delay);
      }
    });
    for (const type of options.types) {
      es.addEventListener(type, (message) => {
        if (source !== es) return;
        let event: LogEvent;
        try {
          event = JSON.parse(message.data as string) as LogEvent;
        } catch {
          return;
        }
        if (event.seq <= lastSeq) return;
        lastSeq = event.seq;
        options.handlers.onEvent(event);
      });
    }
  };

  connect();
  return {
    get lastSeq() {
      return lastSeq;
    },
    close() {
      closed = true;
      if (retryTimer !== null) clearTimer(retryTimer);
      source?.close();
      source = null;
    },
  };
}
