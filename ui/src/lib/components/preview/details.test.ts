// The preview shows a payload's beginning only when it is large.

import { describe, expect, it } from "vitest";
import { event } from "../../test-fixtures";
import { changesPreview, payloadExcerpt } from "./details";

describe("payloadExcerpt", () => {
  it("shows a small payload whole, indented", () => {
    expect(payloadExcerpt({ a: 1 })).toEqual({ text: '{\n  "a": 1\n}', cut: false, size: "1 KB" });
  });

  it("cuts a large one and says how large it is", () => {
    const big = { rows: "x".repeat(2 * 1024 * 1024) };
    const shown = payloadExcerpt(big, 100);
    expect(shown.cut).toBe(true);
    expect(shown.text).toHaveLength(101);
    expect(shown.size).toBe("2.0 MB");
  });
});

describe("changesPreview", () => {
  const shown = { id: "g1", run_id: "r1" };

  it("is true for an event about the gate or its run's context, plan or status", () => {
    expect(changesPreview([event({ type: "vote_recorded", gate_id: "g1" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "gate_escalated", gate_id: "g1", priority: "urgent" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "context_set", key: "k" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "plan_revised" }, { run_id: "r1" })], shown)).toBe(true);
    expect(changesPreview([event({ type: "turn_added" }, { run_id: "r1" })], shown)).toBe(true);
  });

  it("is false for other gates, other runs and events that show nothing here", () => {
    expect(changesPreview([event({ type: "vote_recorded", gate_id: "g2" }, { run_id: "r1" })], shown)).toBe(false);
    expect(changesPreview([event({ type: "context_set", key: "k" }, { run_id: "r2" })], shown)).toBe(false);
    expect(changesPreview([event({ type: "instruction_injected" }, { run_id: "r1" })], shown)).toBe(false);
    expect(changesPreview([], shown)).toBe(false);
  });
});
