// Fuzzing the modal's reviews and the preview pane with malformed agent
// data: every gate either renders through its kind's review (its kind's
// preview) or is named malformed and shown raw; none throws. Rendered on
// the server (svelte/server), which needs no DOM.

import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import type { Api } from "../../api/client";
import type { Gate } from "../../api/types";
import { createKeymap } from "../../keys";
import { gate } from "../../test-fixtures";
import SpecDetails from "../SpecDetails.svelte";
import KindReview from "./KindReview.svelte";
import { hasOwnReview } from "./kinds";
import { malformedParts } from "./malformed";
import RawGateData from "./RawGateData.svelte";
import PreviewKind from "../preview/PreviewKind.svelte";

const keymap = createKeymap("other");
const api = {} as Api;

/** Gates of every kind with data their review does not expect, as the server accepts them. */
const CASES: [string, Partial<Gate>][] = [
  ["a plan whose tasks lack task ids", { spec: { kind: "plan_review" }, payload: { tasks: [{ description: "a" }, { description: "b" }] } }],
  ["a plan with duplicate task ids", { spec: { kind: "plan_review" }, payload: { tasks: [{ task_id: "x" }, { task_id: "x" }] } }],
  ["a plan whose tasks are not objects", { spec: { kind: "plan_review" }, payload: { tasks: ["do it", 3, null] } }],
  ["a plan whose tasks are not a list", { spec: { kind: "plan_review" }, payload: { tasks: { a: 1 } } }],
  ["a plan payload that is an array", { spec: { kind: "plan_review" }, payload: [1, 2] }],
  ["a goal that is a string", { spec: { kind: "goal_review", goal: "Ship the beta" } }],
  ["a goal that is an object", { spec: { kind: "goal_review", goal: { steps: [1, { deep: [null] }] } } }],
  ["a goal that is null", { spec: { kind: "goal_review", goal: null } }],
  ["an approval whose payload is an array", { spec: { kind: "approval", action: "deploy" }, payload: [1, "two", { three: 3 }] }],
  ["a payload review whose payload is a string", { spec: { kind: "payload_review" }, payload: "just text" }],
  ["a response review without text", { spec: { kind: "response_review" } as never }],
  ["a response review whose payload is an array", { spec: { kind: "response_review", raw: "r", audited: "a" }, payload: [1] }],
  ["an information review with a string payload", { spec: { kind: "information_review", recommended_settings: "hot" }, payload: "model?" }],
  ["an information review with settings that are a list", { spec: { kind: "information_review", recommended_settings: [1, null] }, payload: { prompt: 3 } }],
  ["a quality score without a rubric", { spec: { kind: "quality_score", required_score: 99 } as never }],
  ["a quality score whose rubric is not criteria", { spec: { kind: "quality_score", rubric: [1, null] } as never }],
  ["a question whose payload is a number", { spec: { kind: "question" }, payload: 42 }],
  ["a question whose options are not objects", { spec: { kind: "question" }, options: [null, "yes", 3] as never }],
  ["a goal review whose deliverables are a number", { spec: { kind: "goal_review", goal: "g" }, payload: { deliverables: 7 } }],
  ["a quality score whose weights are strings", { spec: { kind: "quality_score", rubric: ["a"] }, payload: { weights: { a: "heavy" } } }],
  ["a plan review whose tasks' dependencies are a string", { spec: { kind: "plan_review" }, payload: { tasks: [{ task_id: "a", dependencies: "b" }] } }],
  ["a payload with a huge field", { spec: { kind: "approval" }, payload: { blob: "x".repeat(100_000) } }],
];

/** What the modal puts in the review's place for `g`. */
function renderReview(g: Gate): string {
  const problems = malformedParts(g);
  if (problems.length > 0) return render(RawGateData, { props: { gate: g, problems } }).body;
  if (hasOwnReview(g.spec.kind)) return render(KindReview, { props: { api, gate: g, keymap, onchange: () => {} } }).body;
  return render(SpecDetails, { props: { gate: g } }).body;
}

describe("malformed gates in the modal's review", () => {
  for (const [name, overrides] of CASES) {
    it(`${name}: renders, raw with a warning where its review cannot`, () => {
      const g = gate({ allowed_actions: ["approve", "reject"], ...overrides });
      const body = renderReview(g);
      expect(body.length).toBeGreaterThan(0);
      if (malformedParts(g).length > 0) {
        expect(body).toContain("malformed-warning");
        expect(body).toContain("malformed-raw");
      }
    });
  }

  for (const [name, overrides] of CASES) {
    it(`${name}: the preview renders it, raw with a warning where its kind cannot`, () => {
      const g = gate({ allowed_actions: ["approve", "reject"], ...overrides });
      const body = render(PreviewKind, { props: { gate: g } }).body;
      if (malformedParts(g).length > 0) {
        expect(body).toContain("malformed-warning");
        expect(body).toContain("malformed-raw");
      } else expect(body).toContain(`data-kind="${g.spec.kind === "approval" ? "approval" : g.spec.kind}"`);
      expect(body.length).toBeLessThan(60_000);
    });
  }

  it("a plan the review lists always has distinct task ids (random plans)", () => {
    // A small deterministic generator: the same plans every run.
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const ids = ["a", "b", "c", "", undefined, 3, null];
    for (let round = 0; round < 500; round++) {
      const tasks = Array.from({ length: next(5) }, () =>
        next(6) === 0 ? ids[next(ids.length)] : { task_id: ids[next(ids.length)], description: "t", dependencies: next(4) === 0 ? "a" : ["a"] },
      );
      const g = gate({ spec: { kind: "plan_review" }, payload: { tasks } as never });
      if (malformedParts(g).length > 0) continue;
      const listed = tasks.map((t) => (t as { task_id: string }).task_id);
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.every((id) => typeof id === "string" && id !== "")).toBe(true);
      expect(() => renderReview(g)).not.toThrow();
    }
  });
});
