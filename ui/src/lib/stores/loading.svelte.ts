// One thing a view loads from the server (the metrics, the rules list):
// loaded on demand, and again when the page's event stream says it
// changed, at most once per `minInterval` however busy the stream is; with
// its loading and error state. Only the latest load counts: an answer that
// arrives after a newer load started is dropped.

import type { Answer } from "../api/client";
import type { LogEvent } from "../api/types";

export interface LoadingDeps<T> {
  /** Loads the value (an answer: nothing throws). */
  fetch: () => Promise<Answer<T>>;
  /** Least time from one load's start to the next the stream causes (ms); 0 loads at once. */
  minInterval?: number;
  /** The clock and timer (tests pass their own). */
  now?: () => number;
  later?: (fn: () => void, ms: number) => () => void;
}

export class Loading<T> {
  /** The last value loaded, null before the first answer. */
  value = $state.raw<T | null>(null);
  /** Why the last load failed, null after a success. */
  problem = $state<string | null>(null);
  /** A load is in flight. */
  loading = $state(false);
  /** A load has answered (with its value or a problem). */
  loaded = $state(false);

  #deps: LoadingDeps<T>;
  #ticket = 0;
  #last = 0;
  #cancel: (() => void) | null = null;

  constructor(deps: LoadingDeps<T>) {
    this.#deps = deps;
  }

  /** Loads now. */
  async load(): Promise<void> {
    const mine = ++this.#ticket;
    this.loading = true;
    this.#last = this.#now();
    const answer = await this.#deps.fetch();
    if (mine !== this.#ticket) return;
    this.loading = false;
    this.loaded = true;
    if (answer.ok) {
      this.value = answer.value;
      this.problem = null;
    } else this.problem = answer.message;
  }

  /** Loads again as soon as the minimum interval since the last load allows (once, however often asked meanwhile). */
  soon(): void {
    const min = this.#deps.minInterval ?? 0;
    if (min <= 0) {
      void this.load();
      return;
    }
    if (this.#cancel !== null) return;
    const later = this.#deps.later ?? defaultLater;
    this.#cancel = later(
      () => {
        this.#cancel = null;
        void this.load();
      },
      Math.max(0, this.#last + min - this.#now()),
    );
  }

  /**
   * Loads again (`soon`) after each batch of the page's event stream that
   * `touches` says changes the value; returns the stop, which also drops a
   * load still waiting for its interval.
   */
  follow(follow: (listener: (events: readonly LogEvent[]) => void) => () => void, touches: (events: readonly LogEvent[]) => boolean): () => void {
    const unfollow = follow((events) => {
      if (touches(events)) this.soon();
    });
    return () => {
      unfollow();
      this.#cancel?.();
      this.#cancel = null;
    };
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }
}

function defaultLater(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
}
