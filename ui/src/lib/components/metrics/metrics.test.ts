import { describe, expect, it } from "vitest";
import type { LogEvent, Metrics } from "../../api/types";
import { autoPassByModel, corrections, duration, hitlByAgent, hitlByKind, latencyByKind, percent, ratings, reviewers, touchesMetrics } from "./metrics";

const rates = (gates: number, auto: number, human: number) => ({
  gates,
  auto_passed: auto,
  waited_for_human: gates - auto,
  human_decided: human,
  self_decided: 0,
  hitl_rate: gates ? (gates - auto) / gates : null,
  auto_pass_rate: gates ? auto / gates : null,
});

const metrics: Metrics = {
  computed_at: "2026-11-25T10:00:00Z",
  overall: rates(10, 4, 5),
  avg_human_latency_ms: 90_000,
  by_agent: [
    { agent: "writer", ...rates(4, 0, 3) },
    { agent: "deployer", ...rates(6, 4, 2) },
    { agent: "idle", ...rates(0, 0, 0) },
  ],
  by_kind: [
    { kind: "approval", ...rates(6, 4, 2), avg_human_latency_ms: 1500 },
    { kind: "question", ...rates(4, 0, 3), avg_human_latency_ms: 150_000 },
    { kind: "quality_score", ...rates(0, 0, 0), avg_human_latency_ms: null },
  ],
  by_model: [
    {
      model: "scripted:chat",
      ...rates(4, 1, 3),
      decisions: { decided: 3, approved: 1, edited: 2, rejected: 0, approval_rate: 1 / 3, edit_rate: 2 / 3, rejection_rate: 0, avg_latency_ms: 2000 },
    },
    {
      model: "openai:gpt-4o-mini",
      ...rates(2, 2, 0),
      decisions: { decided: 0, approved: 0, edited: 0, rejected: 0, approval_rate: null, edit_rate: null, rejection_rate: null, avg_latency_ms: null },
    },
  ],
  by_reviewer: [
    { reviewer: "bob", decided: 1, approved: 0, edited: 0, rejected: 1, approval_rate: 0, edit_rate: 0, rejection_rate: 1, avg_latency_ms: 120_000, self_decided: 0 },
    { reviewer: "alice", decided: 4, approved: 3, edited: 1, rejected: 0, approval_rate: 0.75, edit_rate: 0.25, rejection_rate: 0, avg_latency_ms: 30_000, self_decided: 1 },
    { reviewer: "idle", decided: 0, approved: 0, edited: 0, rejected: 0, approval_rate: null, edit_rate: null, rejection_rate: null, avg_latency_ms: null, self_decided: 0 },
  ],
  expiry: { expired: 1, closed: 8, expiry_rate: 0.125 },
  common_corrections: [
    { path: "/args/env", count: 3 },
    { path: "", count: 1 },
  ],
  capability_ratings: [
    { agent: "writer", decisions: 3, approvals: 3, scores: 2, score_sum: 7, approval_rate: 1, average_score: 3.5, effective_rating: 4.25 },
    { agent: "deployer", decisions: 2, approvals: 1, scores: 0, score_sum: 0, approval_rate: 0.5, average_score: null, effective_rating: 3 },
    { agent: "new", decisions: 0, approvals: 0, scores: 0, score_sum: 0, approval_rate: null, average_score: null, effective_rating: null },
  ],
  webhooks: { delivered: 2, failed: 0 },
  sla: [],
};

describe("metrics as charts", () => {
  it("writes shares as whole percentages, a dash without any, <1 for a sliver", () => {
    expect(percent(0.6)).toBe("60 %");
    expect(percent(1)).toBe("100 %");
    expect(percent(0)).toBe("0 %");
    expect(percent(0.004)).toBe("<1 %");
    expect(percent(null)).toBe("–");
    expect(percent(Number.NaN)).toBe("–");
  });

  it("writes latencies in the unit a person reads", () => {
    expect(duration(850)).toBe("850 ms");
    expect(duration(12_500)).toBe("12.5 s");
    expect(duration(150_000)).toBe("2.5 min");
    expect(duration(3 * 3_600_000)).toBe("3 h");
    expect(duration(null)).toBe("–");
  });

  it("charts the HITL rate per review type, leaving out kinds without gates", () => {
    const bars = hitlByKind(metrics);
    expect(bars.map((b) => [b.label, b.value, b.text])).toEqual([
      ["Approval", 2 / 6, "33 %"],
      ["Question", 1, "100 %"],
    ]);
    expect(bars[0]?.detail).toBe("6 gates, 4 passed on their own");
  });

  it("charts agents by HITL rate, most first, without agents that opened nothing", () => {
    expect(hitlByAgent(metrics).map((b) => `${b.label} ${b.text}`)).toEqual(["writer 100 %", "deployer 33 %"]);
  });

  it("scales latency bars to the slowest type and leaves out types nobody decided", () => {
    const { bars, max } = latencyByKind(metrics);
    expect(max).toBe(150_000);
    expect(bars.map((b) => `${b.label} ${b.text}`)).toEqual(["Approval 1.5 s", "Question 2.5 min"]);
  });

  it("rates agents on the 1-to-5 scale, best first, the unrated last and said so", () => {
    const bars = ratings(metrics);
    expect(bars.map((b) => `${b.label} ${b.text}`)).toEqual(["writer 4.3 of 5", "deployer 3.0 of 5", "new not rated yet"]);
    expect(bars[0]?.detail).toBe("100 % of 3 decisions approved; mean score 3.5 over 2");
    expect(bars[2]?.detail).toBe("no decisions or scores yet");
  });

  it("names the whole payload when an edit replaced it", () => {
    const { bars, max } = corrections(metrics);
    expect(max).toBe(3);
    expect(bars.map((b) => `${b.label} ${b.text}`)).toEqual(["/args/env 3×", "(the whole payload) 1×"]);
  });

  it("loads again after gates open or close and scores, not after tokens or context", () => {
    const event = (type: string) => ({ type }) as unknown as LogEvent;
    expect(touchesMetrics([event("token_created"), event("context_set")])).toBe(false);
    expect(touchesMetrics([event("turn_added"), event("gate_resolved")])).toBe(true);
    expect(touchesMetrics([event("score_recorded")])).toBe(true);
    expect(touchesMetrics([])).toBe(false);
  });
});

describe("per model and per reviewer", () => {
  it("ranks models by how much passes on its own and says how people decided the rest", () => {
    const bars = autoPassByModel(metrics);
    expect(bars.map((b) => [b.label, b.text])).toEqual([
      ["openai:gpt-4o-mini", "100 %"],
      ["scripted:chat", "25 %"],
    ]);
    expect(bars[1]?.detail).toBe("4 gates, 1 passed on their own; people approved 33 %, edited 67 % of 3 in 2 s on average");
    expect(bars[0]?.detail).toBe("2 gates, 2 passed on their own");
  });

  it("lists reviewers who decided, quickest first, with their approval, edit and rejection shares", () => {
    const { bars, max } = reviewers(metrics);
    expect(bars.map((b) => [b.label, b.text])).toEqual([
      ["alice", "30 s"],
      ["bob", "2 min"],
    ]);
    expect(bars[0]?.detail).toBe("4 decided: 75 % approved, 25 % edited, 0 % rejected, 1 self-decided");
    expect(max).toBe(120_000);
  });
});
