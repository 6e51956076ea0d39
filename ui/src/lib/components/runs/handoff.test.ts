// Handoffs stand apart from other turns in the timeline, with their destination.

import { describe, expect, it } from "vitest";
import { event } from "../../test-fixtures";
import type { TimelineEvent } from "../../stores/run-log";
import { entryOf, GROUP_MARKS, handoffOf } from "./timeline";

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
