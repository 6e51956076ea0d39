import { describe, expect, it } from "vitest";
import { cancelled, event, expired, gate, opened, resolved, summary, turnAdded } from "../test-fixtures";
import {
  applyEvents,
  changeOf,
  compareGates,
  expiredOf,
  expiryNotice,
  facets,
  filterGates,
  keepSelection,
  NO_FILTER,
  summaryOf,
} from "./queue-logic";

const ids = (list: { id: string }[]) => list.map((g) => g.id);

describe("panel order", () => {
  it("puts sync first, then the most urgent, then the oldest, then by id", () => {
    const list = [
      summary({ id: "advisory-urgent", mode: "advisory", priority: "urgent" }),
      summary({ id: "async-old", mode: "async", created_at: "2026-01-01T00:00:00Z" }),
      summary({ id: "sync-new", mode: "sync", created_at: "2026-01-01T01:00:00Z" }),
      summary({ id: "sync-old", mode: "sync", created_at: "2026-01-01T00:00:00Z" }),
      summary({ id: "sync-urgent-new", mode: "sync", priority: "urgent", created_at: "2026-01-01T02:00:00Z" }),
      summary({ id: "sync-low", mode: "sync", priority: "low" }),
      summary({ id: "sync-old-b", mode: "sync", created_at: "2026-01-01T00:00:00Z" }),
    ];
    expect(ids(list.sort(compareGates))).toEqual([
      "sync-urgent-new",
      "sync-old",
      "sync-old-b",
      "sync-new",
      "sync-low",
      "async-old",
      "advisory-urgent",
    ]);
  });

  it("compares ages to the microsecond even when the digits differ", () => {
    const a = summary({ id: "b", created_at: "2026-01-01T00:00:01.5Z" });
    const b = summary({ id: "a", created_at: "2026-01-01T00:00:01.573Z" });
    expect(ids([b, a].sort(compareGates))).toEqual(["b", "a"]);
  });
});

describe("live updates", () => {
  it("adds opened gates in panel order and removes resolved, expired, cancelled and auto-passed ones", () => {
    let queue = [summary({ id: "g1", mode: "async" })];
    const steps: [Parameters<typeof applyEvents>[1], string[]][] = [
      [[opened(gate({ id: "g2", mode: "sync" }))], ["g2", "g1"]],
      [[opened(gate({ id: "g3", mode: "advisory" }))], ["g2", "g1", "g3"]],
      [[opened(gate({ id: "g4", mode: "sync", priority: "urgent" }))], ["g4", "g2", "g1", "g3"]],
      [[resolved("g2")], ["g4", "g1", "g3"]],
      [[expired("g3"), turnAdded()], ["g4", "g1"]],
      [[cancelled("g4")], ["g1"]],
    ];
    for (const [events, expected] of steps) {
      queue = applyEvents(queue, events).queue;
      expect(ids(queue)).toEqual(expected);
    }
  });

  it("moves an escalated gate up, with its new priority and expiry", () => {
    const queue = [summary({ id: "a", priority: "high" }), summary({ id: "b", priority: "normal" })];
    const escalated = event({ type: "gate_escalated", gate_id: "b", priority: "urgent", expires_at: "2026-01-01T01:00:00Z", reason: "no answer" });
    const { queue: next } = applyEvents(queue, [escalated]);
    expect(next.map((g) => [g.id, g.priority, g.expires_at])).toEqual([
      ["b", "urgent", "2026-01-01T01:00:00Z"],
      ["a", "high", null],
    ]);
    expect(applyEvents(next, [escalated]).queue).toEqual(next);
    expect(applyEvents(queue, [resolved("b"), escalated]).queue.map((g) => g.id)).toEqual(["a"]);
  });

  it("keeps a released gate open, moved down among the async ones", () => {
    const queue = [summary({ id: "a", mode: "sync" }), summary({ id: "b", mode: "async" })];
    const released = event({ type: "gate_released", gate_id: "a", reason: "released by alice" });
    const { queue: next, closed } = applyEvents(queue, [released]);
    expect(next.map((g) => [g.id, g.mode])).toEqual([
      ["a", "async"],
      ["b", "async"],
    ]);
    expect(closed).toEqual([]);
  });

  it("reports who closed each gate and when", () => {
    const { closed } = applyEvents([summary({ id: "g1" })], [resolved("g1", "bob", "2026-01-01T00:07:00Z"), expired("g2")]);
    expect(closed).toEqual([
      { gateId: "g1", how: "resolved", by: "bob", at: "2026-01-01T00:07:00Z", action: "respond" },
      expect.objectContaining({ gateId: "g2", how: "expired", reason: "no answer in 24 h" }),
    ]);
  });

  it("is idempotent, so replaying events the queue already reflects changes nothing", () => {
    const events = [opened(gate({ id: "g1" })), opened(gate({ id: "g2" })), resolved("g1"), opened(gate({ id: "g3" }))];
    const once = applyEvents([], events).queue;
    const twice = applyEvents(once, events).queue;
    expect(ids(once)).toEqual(["g2", "g3"]);
    expect(ids(twice)).toEqual(["g2", "g3"]);
  });

  it("keeps a gate closed when it opens and closes within one batch", () => {
    const { queue } = applyEvents([], [opened(gate({ id: "g1" })), resolved("g1")]);
    expect(queue).toEqual([]);
  });

  it("ignores a gate that opened already decided, and does not change the queue it was given", () => {
    const before = [summary({ id: "g1" })];
    const { queue } = applyEvents(before, [opened(gate({ id: "g2", status: "resolved" })), resolved("g1")]);
    expect(queue).toEqual([]);
    expect(ids(before)).toEqual(["g1"]);
    expect(changeOf(turnAdded())).toBeNull();
  });

  it("summarises an opened gate as the server lists it", () => {
    const g = gate({ id: "g9", text: `${"q".repeat(70)}`, spec: { kind: "approval", action: "deploy" } });
    expect(summaryOf(g)).toEqual(
      summary({ id: "g9", kind: "approval", preview: `${"q".repeat(50)}…`, created_at: g.created_at }),
    );
  });

  it("stays fast with 10,000 gates", () => {
    const queue = Array.from({ length: 10_000 }, (_, i) =>
      summary({ id: `g${String(i).padStart(5, "0")}`, created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }),
    );
    const started = performance.now();
    let current = queue;
    for (let i = 0; i < 100; i++) {
      current = applyEvents(current, [opened(gate({ id: `new${i}` })), resolved(`g${String(i).padStart(5, "0")}`)]).queue;
    }
    expect(current).toHaveLength(10_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("filters", () => {
  const queue = [
    summary({ id: "g1", kind: "question", mode: "sync", agent: "alpha", run_id: "run_a", preview: "Which key?" }),
    summary({ id: "g2", kind: "approval", mode: "async", agent: "beta", run_id: "run_b", preview: "Deploy now" }),
    summary({ id: "g3", kind: "approval", mode: "sync", agent: "alpha", run_id: "run_b", preview: "Drop table" }),
  ];

  it("keeps everything without a filter", () => {
    expect(filterGates(queue, NO_FILTER)).toBe(queue);
  });

  it("narrows by kind, mode, agent, run and text together", () => {
    expect(ids([...filterGates(queue, { ...NO_FILTER, kind: "approval" })])).toEqual(["g2", "g3"]);
    expect(ids([...filterGates(queue, { ...NO_FILTER, mode: "sync" })])).toEqual(["g1", "g3"]);
    expect(ids([...filterGates(queue, { ...NO_FILTER, agent: "alpha", run: "run_b" })])).toEqual(["g3"]);
    expect(ids([...filterGates(queue, { ...NO_FILTER, text: "DEPLOY" })])).toEqual(["g2"]);
    expect(ids([...filterGates(queue, { ...NO_FILTER, text: "beta" })])).toEqual(["g2"]);
  });

  it("lists agents and runs with counts for the menus", () => {
    expect(facets(queue)).toEqual({
      agents: [
        ["alpha", 2],
        ["beta", 1],
      ],
      runs: [
        ["run_a", 1],
        ["run_b", 2],
      ],
    });
  });
});

describe("selection", () => {
  const a = summary({ id: "a" });
  const b = summary({ id: "b" });
  const c = summary({ id: "c" });

  it("stays on the same gate while it is listed", () => {
    expect(keepSelection([a, b, c], [c, b], "b")).toBe("b");
  });

  it("moves to the gate that took the place of a closed one", () => {
    expect(keepSelection([a, b, c], [a, c], "b")).toBe("c");
    expect(keepSelection([a, b, c], [a, b], "c")).toBe("b");
  });

  it("selects the first gate when none was selected, and none when the list is empty", () => {
    expect(keepSelection([], [a, b], null)).toBe("a");
    expect(keepSelection([a], [], "a")).toBeNull();
  });
});

describe("gates that lapse unanswered", () => {
  it("are named from the listed gates, with the server's reason, and nothing else closed counts", () => {
    const listed = [summary({ id: "g1", preview: "Which region?" }), summary({ id: "g2", preview: "Ship it?" }), summary({ id: "g3" })];
    const { closed } = applyEvents(listed, [expired("g2"), resolved("g1"), cancelled("g3"), expired("elsewhere")]);
    const lapsed = expiredOf(listed, closed);
    expect(lapsed.map((l) => l.gate.id)).toEqual(["g2"]);
    expect(expiryNotice(lapsed)).toBe("“Ship it?” no answer in 24 h.");
  });

  it("say one gate by its preview and several by their count", () => {
    const listed = [summary({ id: "g1" }), summary({ id: "g2" })];
    expect(expiryNotice(expiredOf(listed, applyEvents(listed, [expired("g1"), expired("g2")]).closed))).toBe(
      "2 gates expired without resolution.",
    );
    expect(expiryNotice([])).toBeNull();
  });
});
