import { beforeEach, describe, expect, it, vi } from "vitest";
import { createApi } from "../api/client";
import type { GateSummary } from "../api/types";
import { cancelled, expired, gate, jsonResponse, opened, resolved, summary } from "../test-fixtures";
import { openEventStream } from "./event-stream";
import { FakeEventSource } from "./fake-event-source";
import { QueueStore, STREAM_EVENTS } from "./queue.svelte";

const ids = (list: readonly GateSummary[]) => list.map((g) => g.id);

/** A server whose `GET /gates` answers from `lists` in turn. */
function server(...lists: { gates: GateSummary[]; total: number; head_seq?: number }[]) {
  const requests: Request[] = [];
  const api = createApi("tok", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      requests.push(request);
      return jsonResponse(200, lists[Math.min(requests.length - 1, lists.length - 1)]);
    },
  });
  return { api, requests };
}

function store(api: ReturnType<typeof createApi>) {
  return new QueueStore({
    api,
    token: "tok",
    baseUrl: "http://gatehouse.test",
    openSource: (url) => new FakeEventSource(url),
    schedule: (flush) => flush(),
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => FakeEventSource.reset());

describe("the queue store", () => {
  it("loads the pending gates in panel order, then follows the stream from the snapshot's place in the log", async () => {
    const s = server({ gates: [summary({ id: "async", mode: "async" }), summary({ id: "sync" })], total: 2, head_seq: 41 });
    const queue = store(s.api);
    await queue.start();
    expect(ids(queue.gates)).toEqual(["sync", "async"]);
    expect(queue.total).toBe(2);
    expect(new URL(s.requests[0]!.url).search).toBe("?status=pending&limit=200");
    expect(s.requests).toHaveLength(1);
    const url = new URL(FakeEventSource.latest().url);
    expect(url.pathname).toBe("/api/hitl/events");
    expect(url.searchParams.get("after")).toBe("41");
    expect(url.searchParams.get("access_token")).toBe("tok");
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
    expect(FakeEventSource.opened).toHaveLength(0);
    release();
    await started;
    expect(requests).toEqual(["?status=pending&limit=200", "?status=pending&limit=10000"]);
    expect(ids(queue.gates)).toEqual(["g1", "g2", "g3"]);
    expect(new URL(FakeEventSource.latest().url).searchParams.get("after")).toBe("9");
  });
  it("follows the whole log when the server does not say where the snapshot stands", async () => {
    await store(server({ gates: [], total: 0 }).api).start();
    expect(new URL(FakeEventSource.latest().url).searchParams.get("after")).toBe("0");
  });

  it("adds and removes gates as events arrive, and remembers who closed them", async () => {
    const queue = store(server({ gates: [summary({ id: "g1", mode: "async" })], total: 1 }).api);
    await queue.start();
    const es = FakeEventSource.latest();
    es.open();
    expect(queue.connection).toBe("live");
    es.send(opened(gate({ id: "g2" })));
    expect(ids(queue.gates)).toEqual(["g2", "g1"]);
    expect(queue.total).toBe(2);
    es.send(resolved("g1", "carol", "2026-01-01T00:09:00Z"));
    es.send(cancelled("g2"));
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
    const es = FakeEventSource.latest();
    es.open();
    es.send(resolved("g2"));
    es.send(expired("g1"));
    es.send(expired("never-listed"));
    expect(heard).toEqual([["Which region?: no answer in 24 h"]]);
    stop();
    es.send(opened(gate({ id: "g3" })));
    es.send(expired("g3"));
    expect(heard).toHaveLength(1);
  });

  it("refetches after a gap and replays what arrived meanwhile on top", async () => {
    const s = server(
      { gates: [summary({ id: "g1" })], total: 1 },
      // The second snapshot was taken before g3 opened and before g1 was resolved.
      { gates: [summary({ id: "g1" }), summary({ id: "g2" })], total: 2 },
    );
    const queue = store(s.api);
    await queue.start();
    const es = FakeEventSource.latest();
    es.open();
    es.fail();
    expect(queue.connection).toBe("reconnecting");
    es.open();
    expect(queue.connection).toBe("live");
    es.send(opened(gate({ id: "g3", mode: "advisory" })));
    es.send(resolved("g1"));
    await settle();
    expect(s.requests).toHaveLength(2);
    expect(ids(queue.gates)).toEqual(["g2", "g3"]);
    expect(queue.total).toBe(2);
  });

  it("takes out a gate this reviewer decided without waiting for its event", async () => {
    const queue = store(server({ gates: [summary({ id: "g1" }), summary({ id: "g2" })], total: 2 }).api);
    await queue.start();
    queue.remove({ gateId: "g1", how: "resolved", by: "me", at: "2026-01-01T00:00:00Z" });
    expect(ids(queue.gates)).toEqual(["g2"]);
    expect(queue.total).toBe(1);
    FakeEventSource.latest().send(resolved("g1", "me"));
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
    expect(FakeEventSource.opened).toHaveLength(0);
  });
});

describe("the event stream", () => {
  it("reconnects by itself from the last event when the browser gives up, backing off", () => {
    vi.useFakeTimers();
    try {
      const seen: number[] = [];
      const gaps: boolean[] = [];
      const stream = openEventStream({
        url: (after) => `http://h/api/hitl/events?after=${after}`,
        after: 5,
        types: ["gate_opened", "gate_resolved"],
        open: (url) => new FakeEventSource(url),
        handlers: { onEvent: (e) => seen.push(e.seq), onOpen: (gap) => gaps.push(gap), onDown: () => {} },
      });
      const first = FakeEventSource.latest();
      first.open();
      const event = resolved("g1");
      first.send(event);
      first.send(event); // a duplicate is dropped
      first.fail(true);
      expect(FakeEventSource.opened).toHaveLength(1);
      vi.advanceTimersByTime(1_000);
      const second = FakeEventSource.latest();
      expect(second).not.toBe(first);
      expect(second.url).toBe(`http://h/api/hitl/events?after=${event.seq}`);
      second.fail(true);
      vi.advanceTimersByTime(1_999);
      expect(FakeEventSource.opened).toHaveLength(2);
      vi.advanceTimersByTime(1);
      FakeEventSource.latest().open();
      expect(seen).toEqual([event.seq]);
      expect(gaps).toEqual([false, true]);
      stream.close();
      expect(FakeEventSource.latest().closed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
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
