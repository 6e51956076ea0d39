import { describe, expect, it } from "vitest";
import type { Answer } from "../api/client";
import type { LogEvent } from "../api/types";
import { Loading } from "./loading.svelte";

/** A fetch whose answers the test hands out, in the order it was called. */
function server<T>() {
  const waiting: ((answer: Answer<T>) => void)[] = [];
  return {
    calls: () => waiting.length,
    fetch: () => new Promise<Answer<T>>((resolve) => waiting.push(resolve)),
    answer: (i: number, answer: Answer<T>) => waiting[i]!(answer),
  };
}

const refused = (message: string): Answer<never> => ({
  ok: false,
  message,
  error: { status: 500, code: "internal", field: null, message, resolvedBy: null, resolvedAt: null },
});
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const batch = [{ type: "gate_opened" }] as unknown as LogEvent[];

describe("a view's loading", () => {
  it("holds the value, or the problem until the next success", async () => {
    const s = server<number>();
    const loading = new Loading<number>({ fetch: s.fetch });
    const first = loading.load();
    expect(loading.loading).toBe(true);
    s.answer(0, refused("Cannot load the metrics (500): boom"));
    await first;
    expect(loading).toMatchObject({ value: null, problem: "Cannot load the metrics (500): boom", loading: false, loaded: true });
    const second = loading.load();
    s.answer(1, { ok: true, value: 7 });
    await second;
    expect(loading).toMatchObject({ value: 7, problem: null, loading: false });
  });

  it("drops an answer that arrives after a newer load started", async () => {
    const s = server<string>();
    const loading = new Loading<string>({ fetch: s.fetch });
    const old = loading.load();
    const latest = loading.load();
    s.answer(1, { ok: true, value: "new" });
    await latest;
    s.answer(0, { ok: true, value: "old" });
    await old;
    expect(loading.value).toBe("new");
  });

  it("loads again at once on events that change it, with no minimum interval", async () => {
    const s = server<number>();
    const loading = new Loading<number>({ fetch: s.fetch });
    let listener: ((events: readonly LogEvent[]) => void) | undefined;
    const stop = loading.follow(
      (l) => ((listener = l), () => (listener = undefined)),
      (events) => events.length > 0,
    );
    listener!([]);
    expect(s.calls()).toBe(0);
    listener!(batch);
    expect(s.calls()).toBe(1);
    stop();
    expect(listener).toBeUndefined();
  });

  it("loads at most once per interval however busy the stream is, and not after it stops", async () => {
    const s = server<number>();
    let now = 10_000;
    const timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
    const loading = new Loading<number>({
      fetch: s.fetch,
      minInterval: 2000,
      now: () => now,
      later: (fn, ms) => {
        const t = { fn, ms, cancelled: false };
        timers.push(t);
        return () => (t.cancelled = true);
      },
    });
    let listener: (events: readonly LogEvent[]) => void = () => {};
    const stop = loading.follow((l) => ((listener = l), () => {}), () => true);
    void loading.load();
    now += 500;
    listener(batch);
    listener(batch);
    listener(batch);
    expect(timers.map((t) => t.ms)).toEqual([1500]);
    timers[0]!.fn();
    expect(s.calls()).toBe(2);
    listener(batch);
    stop();
    expect(timers[1]!.cancelled).toBe(true);
    await tick();
  });
});
