// Handoffs stand apart from other turns in the timeline, with their destination.

import { describe, expect, it } from "vitest";
import { event } from "../../test-fixtures";
import type { TimelineEvent } from "../../stores/run-log";
import { callsOf, entryOf, GROUP_MARKS, handoffOf } from "./timeline";

describe("handoffs", () => {
  it("are read from a turn's metadata however the agent described them", () => {
    expect(handoffOf({ handoff: { destination_agent: "Reviewer" } })).toBe("Reviewer");
    expect(handoffOf({ tool_call: { tool_name: "handoff", arguments: { destination_agent: "Writer" } } })).toBe("Writer");
    expect(handoffOf({ tool_calls: [{ tool_name: "search" }, { tool_name: "parallel_handoff", arguments: { destination_agent: ["A", "B"] } }] })).toBe("A, B");
    expect(handoffOf({ handoff: {} })).toBe("");
    expect(handoffOf({ tool_call: { tool_name: "search" } })).toBeNull();
    expect(handoffOf(undefined)).toBeNull();
  });

  it("make their own kind of entry, named and marked apart from turns", () => {
    const turn = (metadata: unknown) =>
      event({ type: "turn_added", turn: { id: "t1", index: 3, actor: "Planner", role: "agent", content: "Over to you", metadata } }) as TimelineEvent;
    const handoff = entryOf(turn({ handoff: { destination_agent: "Coder" } }), new Map());
    expect(handoff.group).toBe("handoff");
    expect(handoff.summary).toBe("Handoff to Coder (turn 3): Over to you");
    expect(entryOf(turn(undefined), new Map()).group).toBe("turn");
    const marks = Object.values(GROUP_MARKS);
    expect(new Set(marks.map((m) => m.icon)).size).toBe(marks.length);
  });
});

describe("tool calls", () => {
  it("are shown with their arguments, however the turn recorded them", () => {
    const args = { key: "test_report", value: { failing: 2 }, scope: "team" };
    expect(callsOf({ tool_call: { tool_name: "store_memory", args } })).toEqual(['store_memory {"key":"test_report","value":{"failing":2},"scope":"team"}']);
    expect(callsOf({ team_calls: [{ tool_name: "plan_update_task", args: { task_id: "t1" } }, { tool_name: "handoff", args: { destination_agent: "coder" } }] })).toEqual([
      'plan_update_task {"task_id":"t1"}',
      'handoff {"destination_agent":"coder"}',
    ]);
    expect(callsOf({ tool_calls: [{ tool_name: "search", arguments: { q: "x" } }, { tool_name: "ping" }, "junk", null] })).toEqual(['search {"q":"x"}', "ping {}"]);
    expect(callsOf({ step: "agent_turn" })).toEqual([]);
    expect(callsOf(null)).toEqual([]);
  });

  it("follow a turn's text in its entry's detail", () => {
    const turn = event({
      type: "turn_added",
      turn: { id: "t8", index: 8, actor: "gatehouse", role: "agent", content: "**tester** called `store_memory`: kept it", metadata: { tool_call: { tool_name: "store_memory", args: { key: "k" } } } },
    }) as TimelineEvent;
    expect(entryOf(turn, new Map()).detail).toBe('**tester** called `store_memory`: kept it\n\nCalls with their arguments:\nstore_memory {"key":"k"}');
    const plain = event({ type: "turn_added", turn: { id: "t9", index: 9, actor: "a", role: "agent", content: "Done." } }) as TimelineEvent;
    expect(entryOf(plain, new Map()).detail).toBe("Done.");
  });
});
