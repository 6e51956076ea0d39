import { beforeEach, describe, expect, it, vi } from "vitest";
import { createApi } from "../api/client";
import type { GateSummary } from "../api/types";
import { cancelled, expired, gate, jsonResponse, opened, resolved, summary } from "../test-fixtures";
import { openEventStream } from "./event-stream";
import { FakeEventServer } from "./fake-event-server";
import { QueueStore, STREAM_EVENTS } from "./queue.svelte";

const ids = (list: readonly GateSummary[]) => list.map((g) => g.id);

let events = new FakeEventServer();

const isEvents = (request: Request) => new URL(request.url).pathname === "/api/hitl/events";

/** A server whose `GET /gates` answers from `lists` in turn; its event stream is `events`. */
function server(...lists: { gates: GateSummary[]; total: number; head_seq?: number }[]) {
  const requests: Request[] = [];
  const api = createApi("tok", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      if (isEvents(request)) return events.answer(request);
      requests.push(request);
      return jsonResponse(200, lists[Math.min(requests.length - 1, lists.length - 1)]);
    },
  });
  return { api, requests };
}

function store(api: ReturnType<typeof createApi>) {
  return new QueueStore({ api, schedule: (flush) => flush() });
}

/** Lets the stream's fetch, reads and parsing run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  events = new FakeEventServer();
});

describe("the queue store", () => {
  it("loads the pending gates in panel order, then follows the stream from the snapshot's place in the log", async () => {
    const s = server({ gates: [summary({ id: "async", mode: "async" }), summary({ id: "sync" })], total: 2, head_seq: 41 });
    const queue = store(s.api);
    await queue.start();
    expect(ids(queue.gates)).toEqual(["sync", "async"]);
    expect(queue.total).toBe(2);
    expect(new URL(s.requests[0]!.url).search).toBe("?status=pending&limit=200");
    expect(s.requests).toHaveLength(1);
    await settle();
    const stream = events.latest().request;
    const url = new URL(stream.url);
    expect(url.pathname).toBe("/api/hitl/events");
    expect(url.search).toBe("?after=41");
    expect(stream.headers.get("Authorization")).toBe("Bearer tok");
  });

  it("shows the top of a long queue first, then loads all of it and follows the stream from there", async () => {
    const top = { gates: [summary({ id: "g1" })], total: 3, head_seq: 7 };
    const all = { gates: [summary({ id: "g1" }), summary({ id: "g2" }), summary({ id: "g3", mode: "async" })], total: 3, head_seq: 9 };
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const requests: string[] = [];
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async (request) => {
        if (isEvents(request)) return events.answer(request);
        requests.push(new URL(request.url).search);
        if (requests.length === 1) return jsonResponse(200, top);
        await held;
        return jsonResponse(200, all);
      },
    });
    const queue = store(api);
    const started = queue.start();
    await vi.waitFor(() => expect(requests).toHaveLength(2));
    // The top is on screen with the whole count while the rest loads; no stream yet.
    expect(ids(queue.gates)).toEqual(["g1"]);
    expect(queue.total).toBe(3);
    expect(events.streams).toHaveLength(0);
    release();
    await started;
    await settle();
    expect(requests).toEqual(["?status=pending&limit=200", "?status=pending&limit=10000"]);
    expect(ids(queue.gates)).toEqual(["g1", "g2", "g3"]);
    expect(events.latest().url.searchParams.get("after")).toBe("9");
  });
  it("follows the whole log when the server does not say where the snapshot stands", async () => {
    await store(server({ gates: [], total: 0 }).api).start();
    await settle();
    expect(events.latest().url.searchParams.get("after")).toBe("0");
  });

  it("adds and removes gates as events arrive, and remembers who closed them", async () => {
    const queue = store(server({ gates: [summary({ id: "g1", mode: "async" })], total: 1 }).api);
    await queue.start();
    await settle();
    expect(queue.connection).toBe("live");
    const es = events.latest();
    es.send(opened(gate({ id: "g2" })));
    await settle();
    expect(ids(queue.gates)).toEqual(["g2", "g1"]);
    expect(queue.total).toBe(2);
    es.send(resolved("g1", "carol", "2026-01-01T00:09:00Z"));
    es.send(cancelled("g2"));
    await settle();
    expect(queue.gates).toEqual([]);
    expect(queue.total).toBe(0);
    expect(queue.closed.get("g1")).toMatchObject({ how: "resolved", by: "carol", at: "2026-01-01T00:09:00Z" });
    expect(queue.closed.get("g2")).toMatchObject({ how: "cancelled" });
  });

  it("tells its expiry listeners of listed gates that expired, and not of others", async () => {
    const queue = store(server({ gates: [summary({ id: "g1", preview: "Which region?" }), summary({ id: "g2" })], total: 2 }).api);
    await queue.start();
    const heard: string[][] = [];
    const stop = queue.onExpired((lapsed) => heard.push(lapsed.map((l) => `${l.gate.preview}: ${l.reason}`)));
    await settle();
    const es = events.latest();
    es.send(resolved("g2"));
    es.send(expired("g1"));
    es.send(expired("never-listed"));
    await settle();
    expect(heard).toEqual([["Which region?: no answer in 24 h"]]);
    stop();
    es.send(opened(gate({ id: "g3" })));
    es.send(expired("g3"));
    await settle();
    expect(heard).toHaveLength(1);
  });

  it("refetches after a gap and replays what arrived meanwhile on top", async () => {
    vi.useFakeTimers();
    try {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const lists: string[] = [];
      const api = createApi("tok", {
        baseUrl: "http://gatehouse.test",
        fetch: async (request) => {
          if (isEvents(request)) return events.answer(request);
          lists.push(request.url);
          if (lists.length === 1) return jsonResponse(200, { gates: [summary({ id: "g1" })], total: 1, head_seq: 3 });
          // The second snapshot was taken before g3 opened and before g1 was resolved.
          await held;
          return jsonResponse(200, { gates: [summary({ id: "g1" }), summary({ id: "g2" })], total: 2 });
        },
      });
      const queue = store(api);
      await queue.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(queue.connection).toBe("live");
      events.latest().fail();
      await vi.advanceTimersByTimeAsync(0);
      expect(queue.connection).toBe("reconnecting");
      await vi.advanceTimersByTimeAsync(1_000);
      expect(queue.connection).toBe("live");
      expect(events.streams).toHaveLength(2);
      expect(events.latest().url.searchParams.get("after")).toBe("3");
      events.latest().send(opened(gate({ id: "g3", mode: "advisory" })));
      events.latest().send(resolved("g1"));
      await vi.advanceTimersByTimeAsync(0);
      release();
      await vi.advanceTimersByTimeAsync(0);
      expect(lists).toHaveLength(2);
      expect(ids(queue.gates)).toEqual(["g2", "g3"]);
      expect(queue.total).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("takes out a gate this reviewer decided without waiting for its event", async () => {
    const queue = store(server({ gates: [summary({ id: "g1" }), summary({ id: "g2" })], total: 2 }).api);
    await queue.start();
    queue.remove({ gateId: "g1", how: "resolved", by: "me", at: "2026-01-01T00:00:00Z" });
    expect(ids(queue.gates)).toEqual(["g2"]);
    expect(queue.total).toBe(1);
    await settle();
    events.latest().send(resolved("g1", "me"));
    await settle();
    expect(queue.total).toBe(1);
  });

  it("says why the queue could not be loaded", async () => {
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => jsonResponse(500, { code: "internal", message: "disk full" }),
    });
    const queue = store(api);
    await queue.start();
    expect(queue.error).toBe("Cannot load the queue (500): disk full");
    await settle();
    expect(events.streams).toHaveLength(0);
  });
});

describe("the event stream", () => {
  /** A stream on `events` whose retries wait on `timers` (run by hand). */
  function follow(after = 5) {
    const seen: number[] = [];
    const gaps: boolean[] = [];
    const timers: { fn: () => void; ms: number }[] = [];
    let downs = 0;
    const stream = openEventStream({
      connect: (from, signal) => events.connect(from, signal),
      after,
      types: ["gate_opened", "gate_resolved"],
      handlers: { onEvent: (e) => seen.push(e.seq), onOpen: (gap) => gaps.push(gap), onDown: () => downs++ },
      setTimer: (fn, ms) => timers.push({ fn, ms }),
      clearTimer: () => {},
    });
    const retry = () => timers.shift()!.fn();
    return { stream, seen, gaps, timers, retry, downs: () => downs };
  }

  it("reconnects from the last event when the server ends the stream or refuses it, backing off", async () => {
    const f = follow();
    await settle();
    const first = events.latest();
    expect(first.url.search).toBe("?after=5");
    const event = resolved("g1");
    first.send(event);
    first.send(event); // a duplicate is dropped
    first.end();
    await settle();
    expect(f.downs()).toBe(1);
    expect(f.timers.map((t) => t.ms)).toEqual([1_000]);
    events.status = 401;
    f.retry();
    await settle();
    expect(f.timers.map((t) => t.ms)).toEqual([2_000]);
    events.status = 200;
    f.retry();
    await settle();
    expect(events.streams).toHaveLength(2);
    expect(events.latest().url.search).toBe(`?after=${event.seq}`);
    expect(f.seen).toEqual([event.seq]);
    expect(f.gaps).toEqual([false, true]);
    expect(f.downs()).toBe(1);
  });

  it("delivers only the events it listens for, in order, whatever the pieces the text arrives in", async () => {
    const f = follow(0);
    await settle();
    const g = opened(gate({ id: "g1" }));
    const text = `: keep-alive\n\nid: ${g.seq}\r\nevent: gate_opened\r\ndata: ${JSON.stringify(g)}\r\n\r\n` + "event: run_created\ndata: {\"seq\": 999}\n\n";
    for (const piece of text.match(/[\s\S]{1,7}/g)!) events.latest().write(piece);
    await settle();
    expect(f.seen).toEqual([g.seq]);
  });

  it("aborts the request when closed (sign-out) and never reconnects", async () => {
    const f = follow();
    await settle();
    f.stream.close();
    await settle();
    expect(events.latest().closed).toBe(true);
    expect(f.timers).toEqual([]);
    expect(f.downs()).toBe(0);
  });

  it("hands every batch to subscribers, and listens for the runs view's events on the same stream", async () => {
    const queue = store(server({ gates: [], total: 0 }).api);
    const batches: string[][] = [];
    const unsubscribe = queue.subscribe((events) => batches.push(events.map((e) => e.type)));
    await queue.start();
    queue.receive([opened(gate({ id: "g1" })), resolved("g1")]);
    unsubscribe();
    queue.receive([opened(gate({ id: "g2" }))]);
    expect(batches).toEqual([["gate_opened", "gate_resolved"]]);
    expect(STREAM_EVENTS).toEqual(expect.arrayContaining(["gate_opened", "run_status_changed", "turn_added", "context_set"]));
    expect(new Set(STREAM_EVENTS).size).toBe(STREAM_EVENTS.length);
  });
});
