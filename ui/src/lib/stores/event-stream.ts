// The live event stream (Server-Sent Events from `GET /api/hitl/events`),
// read with fetch so the token goes in the Authorization header like every
// other call: `EventSource` cannot send headers, and a token in a URL is
// kept in proxy logs and history. When the connection drops, the server
// refuses it or ends the stream, this reconnects with a growing delay,
// resuming after the last event seen (`after`), so nothing is missed and
// nothing repeated. The caller is told the stream is back after a gap, so
// it can refetch what it shows. Closing (sign-out) aborts the request.

import type { EventType, LogEvent } from "../api/types";
import { SseParser } from "./sse";

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

/**
 * Requests the stream resuming after `after`: its body, or `null` when the
 * server refused (the API client has already told the session of a 401).
 * Rejects when the request fails or `signal` aborts it.
 */
export type StreamConnector = (after: number, signal: AbortSignal) => Promise<ReadableStream<Uint8Array> | null>;

const RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

export interface StreamOptions {
  /** Opens the stream after a sequence number. */
  connect: StreamConnector;
  /** Start after this sequence number. */
  after: number;
  /** The events to deliver (SSE `event:` names); others are skipped. */
  types: readonly EventType[];
  handlers: StreamHandlers;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

export function openEventStream(options: StreamOptions): EventStream {
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  const wanted = new Set<string>(options.types);
  let lastSeq = options.after;
  let current: AbortController | null = null;
  let retryTimer: unknown = null;
  let failures = 0;
  let down = false;
  let closed = false;

  const deliver = (type: string, data: string) => {
    if (!wanted.has(type)) return;
    let event: LogEvent;
    try {
      event = JSON.parse(data) as LogEvent;
    } catch {
      return;
    }
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    options.handlers.onEvent(event);
  };

  /** Reads one connection until it ends. */
  const follow = async (signal: AbortSignal) => {
    const body = await options.connect(lastSeq, signal);
    if (body === null) return;
    failures = 0;
    options.handlers.onOpen(down);
    down = false;
    const parser = new SseParser((message) => deliver(message.event, message.data));
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) return;
        parser.push(decoder.decode(value, { stream: true }));
      }
    } finally {
      // Closes the connection when this side stops reading first.
      reader.cancel().catch(() => {});
    }
  };

  const connect = () => {
    retryTimer = null;
    const controller = new AbortController();
    current = controller;
    const dropped = () => {
      if (closed || current !== controller) return;
      controller.abort();
      if (!down) {
        down = true;
        options.handlers.onDown();
      }
      const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!;
      failures += 1;
      retryTimer = setTimer(connect, delay);
    };
    follow(controller.signal).then(dropped, dropped);
  };

  connect();
  return {
    get lastSeq() {
      return lastSeq;
    },
    close() {
      closed = true;
      if (retryTimer !== null) clearTimer(retryTimer);
      current?.abort();
      current = null;
    },
  };
}
