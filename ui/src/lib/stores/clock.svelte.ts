// The time the panel's "5m ago" labels are measured against: one ticking
// value for the whole page, so every row re-renders together and only
// rows on screen are recomputed. This is a clock, not a poll: nothing is
// fetched.

export class Clock {
  now = $state(Date.now());
  #timer: ReturnType<typeof setInterval> | null = null;

  /** Ticks every `ms` until stopped. */
  start(ms = 10_000): void {
    this.stop();
    this.now = Date.now();
    this.#timer = setInterval(() => (this.now = Date.now()), ms);
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }
}

export const clock = new Clock();
