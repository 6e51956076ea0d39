import { describe, expect, it } from "vitest";
import { createApi } from "../api/client";
import type { LogEvent } from "../api/types";
import { event, jsonResponse, opened, gate, run, runSummary } from "../test-fixtures";
import { RunsStore } from "./runs.svelte";

function setup() {
  const requests: string[] = [];
  let listed = [runSummary({ id: "run_1" }), runSummary({ id: "run_2", status: "paused" })];
  const history = [event({ type: "run_created", run: run() }, { at: "2026-01-01T00:00:01Z" })];
  const api = createApi("tok", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      const url = new URL(request.url);
      requests.push(`${request.method} ${url.pathname}${url.search}`);
      if (url.pathname === "/api/hitl/runs") {
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const limit = Number(url.searchParams.get("limit") ?? 50);
        return jsonResponse(200, { runs: listed.slice(offset, offset + limit) });
      }
      if (url.pathname.endsWith("/state")) return jsonResponse(200, { run: run(), turns: [], gates: [], context: {}, plan_revisions: [], progress: { total: 0, completed: 0, status: "pending" } });
      if (url.pathname.endsWith("/events")) {
        const mine = history.filter((e) => url.pathname.includes(`/${e.run_id}/`));
        return jsonResponse(200, { events: mine, next_after: mine.at(-1)?.seq ?? 0 });
      }
      return jsonResponse(404, { code: "not_found", message: "no" });
    },
  });
  let listener: ((events: readonly LogEvent[]) => void) | null = null;
  const timers: (() => void)[] = [];
  const store = new RunsStore({
    api,
    follow: (l) => {
      listener = l;
      return () => (listener = null);
    },
    later: (fn) => timers.push(fn),
  });
  return {
    store,
    requests,
    timers,
    emit: (events: LogEvent[]) => listener?.(events),
    hasListener: () => listener !== null,
    setListed: (runs: typeof listed) => (listed = runs),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the runs store", () => {
  it("lists the runs, shows the newest with its state and event log, and follows the page's stream", async () => {
    const s = setup();
    await s.store.start();
    await settle();
    expect(s.requests).toEqual([
      "GET /api/hitl/runs?limit=500",
      "GET /api/hitl/run/run_1/state",
      "GET /api/hitl/runs/run_1/events?after=0&limit=5000",
    ]);
    expect(s.store.runs.map((r) => r.id)).toEqual(["run_1", "run_2"]);
    expect(s.store.selectedId).toBe("run_1");
    expect(s.store.state?.run.id).toBe("run_1");
    expect(s.store.events.map((e) => e.type)).toEqual(["run_created"]);
    expect(s.hasListener()).toBe(true);
    s.store.stop();
    expect(s.hasListener()).toBe(false);
  });

  it("applies live events at once, adds the selected run's to its timeline, and reloads counts once", async () => {
    const s = setup();
    await s.store.start();
    await settle();
    s.requests.length = 0;
    s.emit([
      event({ type: "run_status_changed", from: "active", to: "paused", reason: null }),
      opened(gate({ id: "g5" })),
      event({ type: "turn_added", turn: {} }, { run_id: "run_2" }),
    ]);
    expect(s.store.runs[0]!.status).toBe("paused");
    expect(s.store.events.map((e) => e.type)).toEqual(["run_created", "run_status_changed", "gate_opened"]);
    s.emit([opened(gate({ id: "g6" }))]);
    expect(s.timers).toHaveLength(2); // one list reload, one state reload, however many events
    s.setListed([runSummary({ id: "run_3" }), runSummary({ id: "run_1", pending_gates: 2 })]);
    for (const t of s.timers.splice(0)) t();
    await settle();
    expect(s.requests.sort()).toEqual(["GET /api/hitl/run/run_1/state", "GET /api/hitl/runs?limit=500"]);
    expect(s.store.runs.map((r) => r.id)).toEqual(["run_3", "run_1"]);
  });

  it("pages back through older runs, keeps the pages it shows on reload, and lists a shifted run once", async () => {
    const s = setup();
    const many = (n: number, from = 0) => Array.from({ length: n }, (_, i) => runSummary({ id: `run_${from + i}` }));
    s.setListed(many(1200));
    await s.store.start();
    await settle();
    expect(s.store.runs).toHaveLength(500);
    expect(s.store.hasOlder).toBe(true);
    s.requests.length = 0;
    await s.store.loadOlder();
    expect(s.requests).toEqual(["GET /api/hitl/runs?limit=500&offset=500"]);
    expect(s.store.runs.map((r) => r.id).slice(498, 502)).toEqual(["run_498", "run_499", "run_500", "run_501"]);
    expect(s.store.hasOlder).toBe(true);
    // A new run pushes every other one a place down: run_999 comes again on the next page.
    s.setListed([runSummary({ id: "run_new" }), ...many(1200)]);
    await s.store.loadOlder();
    expect(s.store.runs).toHaveLength(1200);
    expect(new Set(s.store.runs.map((r) => r.id)).size).toBe(1200);
    expect(s.store.hasOlder).toBe(false);
    await s.store.loadOlder(); // nothing older: no request
    s.requests.length = 0;
    await s.store.reload();
    expect(s.requests).toEqual([
      "GET /api/hitl/runs?limit=500",
      "GET /api/hitl/runs?limit=500&offset=500",
      "GET /api/hitl/runs?limit=500&offset=1000",
    ]);
    expect(s.store.runs.map((r) => r.id).slice(0, 2)).toEqual(["run_new", "run_0"]);
    expect(s.store.runs).toHaveLength(1201);
  });

  it("switches to another run and forgets the previous one's timeline", async () => {
    const s = setup();
    await s.store.start();
    await settle();
    await s.store.select("run_2");
    expect(s.store.selectedId).toBe("run_2");
    expect(s.requests.slice(-2)).toEqual(["GET /api/hitl/run/run_2/state", "GET /api/hitl/runs/run_2/events?after=0&limit=5000"]);
    expect(s.store.events.map((e) => e.type)).toEqual([]);
    s.store.setStatus("run_2", "active");
    expect(s.store.summary("run_2")?.status).toBe("active");
  });
});
