// The preview reads each kind of gate the way a reviewer reads it.

import { describe, expect, it } from "vitest";
import { gate } from "../../test-fixtures";
import { kindView, payloadView, TABLE_FIELDS } from "./kind-view";

describe("kindView", () => {
  it("an approval: its action and its payload as a table of fields", () => {
    const view = kindView(gate({ spec: { kind: "approval", action: "DROP TABLE orders_2019" }, payload: { table: "orders_2019", cascade: true, keep: [1, 2] } }));
    expect(view).toEqual({
      kind: "approval",
      action: "DROP TABLE orders_2019",
      payload: { rows: [{ key: "table", value: "orders_2019" }, { key: "cascade", value: "true" }, { key: "keep", value: "[1,2]" }] },
    });
  });

  it("a team's command tool approval: the exact argv and working directory are rows of the table", () => {
    const argv = ["pytest", "-q", "-k", "x; rm -rf ~"];
    const view = kindView(gate({ spec: { kind: "approval", action: "run `run_tests`" }, payload: { tool: "run_tests", argv, workdir: "/srv/ws/run-1", agent: "tester", args: { filter: "x; rm -rf ~" } } }));
    expect(view).toMatchObject({ kind: "approval", action: "run `run_tests`" });
    const rows = view.kind === "approval" && view.payload !== null && "rows" in view.payload ? view.payload.rows : [];
    expect(rows).toContainEqual({ key: "argv", value: JSON.stringify(argv) });
    expect(rows).toContainEqual({ key: "workdir", value: "/srv/ws/run-1" });
  });

  it("a payload too wide for a table, or not an object, is shown as JSON", () => {
    const wide = Object.fromEntries(Array.from({ length: TABLE_FIELDS + 1 }, (_, i) => [`f${i}`, i]));
    expect(payloadView(wide)).toMatchObject({ cut: false });
    expect(payloadView([1, 2])).toMatchObject({ json: "[\n  1,\n  2\n]" });
    expect(payloadView(null)).toBeNull();
  });

  it("a question: its preset answers with what each decides", () => {
    const view = kindView(gate({ spec: { kind: "question" }, options: [{ name: "eu", title: "EU only", description: "GDPR", action: "respond" }, { name: "no", title: "Stop", action: "reject" }] }));
    expect(view).toMatchObject({ kind: "question", options: [{ title: "EU only", description: "GDPR", outcome: "answered" }, { title: "Stop", description: null, outcome: "rejected" }] });
  });

  it("a plan: its tasks in order with what each waits for", () => {
    const view = kindView(gate({ spec: { kind: "plan_review", round: 2 }, payload: { tasks: [{ task_id: "a", description: "collect" }, { task_id: "b", description: "draft", dependencies: ["a"] }] } }));
    expect(view).toEqual({
      kind: "plan_review",
      round: 2,
      revision: null,
      tasks: [
        { id: "a", description: "collect", after: [], status: null },
        { id: "b", description: "draft", after: ["a"], status: null },
      ],
    });
    expect(kindView(gate({ spec: { kind: "plan_review", plan_revision: 3 } }))).toMatchObject({ revision: 3, tasks: null });
    const runPlan = { tasks: [{ task_id: "c", description: "ship", dependencies: ["b"], status: "in_progress" }] };
    expect(kindView(gate({ spec: { kind: "plan_review", plan_revision: 3 } }), runPlan)).toMatchObject({
      revision: 3,
      tasks: [{ id: "c", description: "ship", after: ["b"], status: "in_progress" }],
    });
  });

  it("a goal and its deliverables in words, not JSON", () => {
    const view = kindView(gate({ spec: { kind: "goal_review", goal: { objective: "Ship the beta", success_criteria: ["tests pass"] }, round: 1 }, payload: { deliverables: ["release notes"] } }));
    expect(view).toEqual({ kind: "goal_review", round: 1, goal: "Objective: Ship the beta\nSuccess criteria:\n  • tests pass", deliverables: "• release notes" });
  });

  it("a quality gate: its criteria with their weights and the score it needs", () => {
    const view = kindView(gate({ spec: { kind: "quality_score", rubric: ["accuracy", "tone"], required_score: 4, deliverable_id: "d1" }, payload: { weights: { accuracy: 2 } } }));
    expect(view).toMatchObject({ kind: "quality_score", required: 4, deliverable: "d1", criteria: [{ name: "accuracy", weight: "2" }, { name: "tone", weight: null }] });
    const listed = kindView(gate({ spec: { kind: "quality_score", rubric: ["a"] }, payload: { criteria: [{ name: "a", weight: 0.5 }] } }));
    expect(listed).toMatchObject({ criteria: [{ name: "a", weight: "0.5" }], required: 3 });
  });

  it("an information review: the prompt and model proposed, the recommended settings and the agent's reasons", () => {
    const view = kindView(gate({ spec: { kind: "information_review", reasons: ["prompt is vague"], recommended_settings: { model: "sdxl" } }, payload: { request: { prompt: "a cat", model: "sd15" } } }));
    expect(view).toEqual({ kind: "information_review", prompt: "a cat", model: "sd15", settings: [{ name: "model", value: "sdxl" }], reasons: ["prompt is vague"] });
  });

  it("a response review: the audited text and its indicators", () => {
    const view = kindView(gate({ spec: { kind: "response_review", raw: "card 4111", audited: "card [removed]", indicators: ["pii: card number removed"] } }));
    expect(view).toEqual({ kind: "response_review", audited: "card [removed]", edited: false, indicators: ["pii: card number removed"] });
  });
});
