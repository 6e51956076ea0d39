// The event stream (`GET /api/hitl/events`) as an async iterator: read with
// fetch so the token travels in the Authorization header, never in the URL;
// on a dropped connection it reconnects with `Last-Event-ID`, so nothing is
// missed and nothing repeated.

import { AuthError, GatehouseError, NotFound } from "./errors.js";
import { type Transport, sleep } from "./http.js";
import type { Event } from "./types.js";

/** One message of the stream: its sequence number, type and the logged event. */
export interface StreamedEvent {
  /** The event's sequence number (the SSE `id`). */
  id: number;
  /** Its type (the SSE `event`): `gate_opened`, `gate_resolved`, ... */
  type: string;
  /** The event as logged. */
  data: Event;
}

export interface EventFilter {
  /** Only this run's events (required for agent tokens). */
  runId?: string;
  sessionId?: string;
  userId?: string;
  /** Start after this sequence number (0 replays the matching log). */
  after?: number;
  /** Ends the stream. */
  signal?: AbortSignal;
}

/** Turns lines of a `text/event-stream` into messages; comments and messages without an id are skipped. */
export class SseParser {
  #id: string | undefined;
  #type = "message";
  #data: string[] = [];

  feed(line: string): StreamedEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "id") this.#id = value;
    else if (name === "event") this.#type = value;
    else if (name === "data") this.#data.push(value);
    return undefined;
  }

  #dispatch(): StreamedEvent | undefined {
    const [id, type, data] = [this.#id, this.#type, this.#data.join("\n")];
    this.#id = undefined;
    this.#type = "message";
    this.#data = [];
    if (id === undefined || !/^\d+$/.test(id) || !data) return undefined;
    return { id: Number(id), type, data: JSON.parse(data) as Event };
  }
}

async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + (buffered.startsWith("\r\n", end) ? 2 : 1));
      yield line;
    }
  }
}

/** Follows the event log until `filter.signal` aborts, reconnecting after dropped connections. */
export async function* follow(transport: Transport, filter: EventFilter = {}): AsyncGenerator<StreamedEvent> {
  let last = filter.after ?? 0;
  let failures = 0;
  const query = { run_id: filter.runId, session_id: filter.sessionId, user_id: filter.userId, after: filter.after };
  while (!filter.signal?.aborted) {
    try {
      const headers: Record<string, string> = last > 0 ? { "last-event-id": String(last) } : {};
      const response = await transport.stream("/events", query, headers, filter.signal);
      if (!response.body) throw new GatehouseError("GET /events answered without a body");
      const parser = new SseParser();
      for await (const line of lines(response.body)) {
        const event = parser.feed(line);
        if (event === undefined || event.id <= last) continue;
        last = event.id;
        failures = 0;
        yield event;
      }
    } catch (error) {
      if (filter.signal?.aborted) return;
      // A refused token or filter will be refused again: say so instead of retrying.
      if (error instanceof AuthError || error instanceof NotFound || (error instanceof GatehouseError && error.status === 422)) throw error;
      failures += 1;
      if (failures >= transport.retry.attempts) throw error;
    }
    await sleep(transport.delayBefore(Math.max(failures, 1)), filter.signal).catch(() => undefined);
  }
}
