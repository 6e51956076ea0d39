// An EventSource stand-in for tests: records its URL and lets the test
// open it, fail it and deliver named events, as a server would.

import type { EventSourceLike } from "./event-stream";
import type { LogEvent } from "../api/types";

export class FakeEventSource implements EventSourceLike {
  static readonly opened: FakeEventSource[] = [];
  readyState = 0;
  closed = false;
  #listeners = new Map<string, ((e: MessageEvent) => void)[]>();

  constructor(readonly url: string) {
    FakeEventSource.opened.push(this);
  }

  static reset(): void {
    FakeEventSource.opened.length = 0;
  }

  static latest(): FakeEventSource {
    const last = FakeEventSource.opened[FakeEventSource.opened.length - 1];
    if (!last) throw new Error("no EventSource was opened");
    return last;
  }

  addEventListener(type: string, listener: (e: MessageEvent) => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.closed = true;
    this.readyState = 2;
  }

  /** The connection is up. */
  open(): void {
    this.readyState = 1;
    this.#fire("open", {} as MessageEvent);
  }

  /** The connection dropped; `gaveUp` when the browser will not retry by itself. */
  fail(gaveUp = false): void {
    this.readyState = gaveUp ? 2 : 0;
    this.#fire("error", {} as MessageEvent);
  }

  /** The server sends one event. */
  send(event: LogEvent): void {
    this.#fire(event.type, { data: JSON.stringify(event), lastEventId: String(event.seq) } as MessageEvent);
  }

  #fire(type: string, e: MessageEvent): void {
    for (const listener of this.#listeners.get(type) ?? []) listener(e);
  }
}
