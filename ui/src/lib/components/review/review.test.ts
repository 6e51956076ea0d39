import { describe, expect, it } from "vitest";
import { gate } from "../../test-fixtures";
import type { Gate, GateSpec, RunState } from "../../api/types";
import { buildDecision, EMPTY_DRAFT, primaryAction } from "../decisions/decision";
import { goalText, previousRound } from "./goal";
import { informationEdit, knownModels, recommendedModel, requestFields, settingsRows, summaryOf } from "./information";
import { actionLabels, allSafetyFlags, confidenceLevel, editsOwnPayload, hasOwnReview } from "./kinds";
import { criteriaOf, overallScore, passes, requiredScore, scoreDraft, scoreOfKey, withSaved, type CriterionDraft } from "./quality";
import { editedText, responseEdit } from "./response";

const NOW = new Date("2026-01-01T00:00:00Z");

describe("per-kind names and editors", () => {
  it("names decisions the way each kind's reviewer expects", () => {
    expect(actionLabels("response_review")).toMatchObject({ approve: "Accept", retry: "Retry with changes" });
    expect(actionLabels("information_review").approve).toBe("Proceed");
    expect(actionLabels("goal_review")).toMatchObject({ approve: "Accept goal", needs_revision: "Refine" });
    expect(actionLabels("plan_review")).toMatchObject({ approve: "Approve plan", edit: "Approve modified plan" });
    expect(actionLabels("payload_review").approve).toBe("Approve");
  });

  it("gives response, information and plan reviews their own editor", () => {
    expect(["response_review", "information_review", "plan_review"].every((k) => editsOwnPayload(k as never))).toBe(true);
    expect(editsOwnPayload("payload_review")).toBe(false);
    expect(hasOwnReview("quality_score")).toBe(true);
    expect(hasOwnReview("question")).toBe(false);
  });

  it("grades confidence and merges safety flags once each", () => {
    expect(confidenceLevel(0.42)).toEqual({ label: "42%", level: "low" });
    expect(confidenceLevel(0.5)?.level).toBe("medium");
    expect(confidenceLevel(0.8)?.level).toBe("high");
    expect(confidenceLevel(null)).toBeNull();
    expect(allSafetyFlags(["pii", " "], ["pii", "violence"])).toEqual(["pii", "violence"]);
  });
});

describe("response review", () => {
  it("sends the edited text as `audited`, over an object payload", () => {
    expect(responseEdit(null, "same", "same")).toBeUndefined();
    expect(responseEdit(null, "old", "new")).toEqual({ audited: "new" });
    // A reopened gate picks its earlier edit up again.
    expect(editedText(responseEdit({ raw: "r" }, "old", "new"))).toBe("new");
    expect(editedText(undefined)).toBeUndefined();
    expect(editedText({ audited: 3 })).toBeUndefined();
    expect(responseEdit({ id: 7, audited: "old" }, "old", "new")).toEqual({ id: 7, audited: "new" });
    expect(responseEdit(["not", "an", "object"], "old", "new")).toEqual({ audited: "new" });
  });

  it("needs the changes before a retry is sent", () => {
    expect(buildDecision("retry", EMPTY_DRAFT)).toEqual({ problem: "Say what to change for the retry." });
    expect(buildDecision("retry", { ...EMPTY_DRAFT, text: " shorter " })).toEqual({ input: { action: "retry", text: "shorter" } });
  });
});

describe("information review", () => {
  const payload = { prompt: "Summarise the report", model: "small-1", temperature: 0.2 };

  it("reads the prompt, the model and the recommended settings", () => {
    expect(requestFields(payload)).toEqual({ prompt: "Summarise the report", model: "small-1" });
    expect(requestFields(null)).toEqual({ prompt: "", model: "" });
    expect(recommendedModel({ model: "large-2", temperature: 0 })).toBe("large-2");
    expect(recommendedModel("large")).toBeNull();
    expect(settingsRows({ model: "large-2", temperature: 0 })).toEqual([
      { name: "model", value: "large-2" },
      { name: "temperature", value: "0" },
    ]);
    expect(settingsRows(null)).toEqual([]);
  });

  it("modifies the prompt or changes the model as one edit, keeping the other fields", () => {
    const proposed = requestFields(payload);
    expect(informationEdit(payload, proposed, proposed)).toBeUndefined();
    expect(informationEdit(payload, proposed, { ...proposed, model: " large-2 " })).toEqual({ ...payload, model: "large-2" });
    expect(informationEdit(payload, proposed, { ...proposed, prompt: "Summarise in 3 lines" })).toEqual({
      ...payload,
      prompt: "Summarise in 3 lines",
    });
    expect(informationEdit(null, { prompt: "", model: "" }, { prompt: "", model: "m" })).toEqual({ model: "m" });
  });
});

describe("quality gate", () => {
  const spec: GateSpec = { kind: "quality_score", rubric: ["Accuracy", "Clarity"], required_score: 3.5, deliverable_id: "d1" };
  const scored = (a: number | null, b: number | null, why = "ok"): CriterionDraft[] => [
    { name: "Accuracy", score: a, justification: why },
    { name: "Clarity", score: b, justification: why },
  ];

  it("scores each rubric criterion, or one overall score without a rubric", () => {
    expect(criteriaOf(spec).map((c) => c.name)).toEqual(["Accuracy", "Clarity"]);
    expect(criteriaOf({ kind: "quality_score" }).map((c) => c.name)).toEqual(["Overall"]);
    expect(requiredScore(spec)).toBe(3.5);
    expect(requiredScore({ kind: "quality_score" })).toBe(3);
    expect(scoreOfKey("4")).toBe(4);
    expect(scoreOfKey("6")).toBeNull();
  });

  it("averages the criteria and passes at the required score exactly", () => {
    expect(overallScore(scored(null, null))).toBeNull();
    expect(overallScore(scored(4, 3))).toBe(3.5);
    expect(passes(3.5, 3.5)).toBe(true);
    expect(passes(3.49, 3.5)).toBe(false);
  });

  it("asks for every score and every justification before sending", () => {
    expect(scoreDraft(scored(4, null), spec, NOW).problem).toBe("Score Clarity first (1 to 5).");
    expect(scoreDraft(scored(4, 3, " "), spec, NOW).problem).toBe("Justify the score of Accuracy, Clarity.");
    const ok = scoreDraft(scored(4, 3), spec, NOW);
    expect(ok).toMatchObject({ passes: true, problem: null });
    expect(ok.score).toMatchObject({
      score: 3.5,
      rubric_scores: { Accuracy: 4, Clarity: 3 },
      justification: "Accuracy (4/5): ok\nClarity (3/5): ok",
      deliverable_id: "d1",
      at: NOW.toISOString(),
    });
  });

  it("approves a passing score and asks for a revision with a failing one, sending the score", () => {
    const pass = scoreDraft(scored(4, 3), spec, NOW);
    const fail = scoreDraft(scored(2, 3, "too vague"), spec, NOW);
    const allowed = ["approve", "needs_revision", "reject"] as const;
    expect(primaryAction(allowed, { ...EMPTY_DRAFT, quality: pass })).toBe("approve");
    expect(primaryAction(allowed, { ...EMPTY_DRAFT, quality: fail })).toBe("needs_revision");
    // Before the justifications are in, a failing score already points at a revision.
    expect(primaryAction(allowed, { ...EMPTY_DRAFT, quality: scoreDraft(scored(1, 2, ""), spec, NOW) })).toBe("needs_revision");
    expect(primaryAction(allowed, { ...EMPTY_DRAFT, quality: scoreDraft(scored(null, null), spec, NOW) })).toBe("needs_revision");
    expect(buildDecision("approve", { ...EMPTY_DRAFT, quality: pass })).toEqual({ input: { action: "approve", score: pass.score, text: pass.score!.justification } });
    expect(buildDecision("approve", { ...EMPTY_DRAFT, quality: fail })).toHaveProperty("problem");
    expect(buildDecision("needs_revision", { ...EMPTY_DRAFT, text: "add sources", quality: fail })).toEqual({
      input: { action: "needs_revision", score: fail.score, text: "add sources" },
    });
    expect(buildDecision("approve", { ...EMPTY_DRAFT, quality: scoreDraft(scored(4, null), spec, NOW) })).toEqual({
      problem: "Score Clarity first (1 to 5).",
    });
    expect(buildDecision("reject", { ...EMPTY_DRAFT, text: "off topic", quality: scoreDraft(scored(null, null), spec, NOW) })).toEqual({
      input: { action: "reject", text: "off topic" },
    });
  });
});

describe("goal review", () => {
  const goalGate = (id: string, round: number, goal: unknown, at: string, decision: Gate["decision"] = null): Gate =>
    gate({ id, spec: { kind: "goal_review", goal, round }, created_at: at, decision, allowed_actions: ["approve", "needs_revision"] });
  const state = (gates: Gate[]) => ({ gates, plan_revisions: [] }) as unknown as RunState;

  it("shows a goal as text", () => {
    expect(goalText("Ship it")).toBe("Ship it");
    expect(goalText({ a: 1 })).toBe("A: 1");
  });

  it("finds the previous round and what the reviewer asked then", () => {
    const asked = { text: "narrow the scope" } as Gate["decision"];
    const r1 = goalGate("g1", 1, "Build everything", "2026-01-01T00:00:00Z", asked);
    const r2 = goalGate("g2", 2, "Build the API", "2026-01-01T01:00:00Z");
    const other = gate({ id: "q", created_at: "2026-01-01T00:30:00Z" });
    expect(previousRound(r2, state([r1, other, r2]))).toEqual({ gate: r1, goal: "Build everything", decision: asked });
    expect(previousRound(r1, state([r1, r2]))).toBeNull();
    expect(previousRound(r2, null)).toBeNull();
  });
});


describe("information review: a request with other names", () => {
  it("finds the prompt and model under the names agents use, and sends the changes back there", () => {
    const payload = { request: { input: "Write a tagline", model_name: "small-1" }, temperature: 0.2 };
    const proposed = requestFields(payload);
    expect(proposed).toEqual({ prompt: "Write a tagline", model: "small-1" });
    expect(informationEdit(payload, proposed, { prompt: "Write two", model: "large-2" })).toEqual({
      request: { input: "Write two", model_name: "large-2" },
      temperature: 0.2,
    });
    expect(requestFields({ query: "q", engine: "e" })).toEqual({ prompt: "q", model: "e" });
  });
});

describe("information review: the model summary", () => {
  const providers = {
    providers: [
      { name: "scripted", kind: "scripted", tools: ["echo"], tool_details: [{ name: "echo", description: "Repeats the prompt", model: "echo-1" }] },
      {
        name: "openai",
        kind: "openai_compatible",
        endpoint: "https://api.example.com/v1",
        tools: ["openai:gpt-4o-mini"],
        tool_details: [{ name: "openai:gpt-4o-mini", description: "Chat completions", model: "gpt-4o-mini" }],
      },
    ],
  };

  it("lists every model the providers serve, with the provider and its protocol in words", () => {
    expect(knownModels(providers)).toEqual([
      { tool: "echo", model: "echo-1", provider: "scripted", kind: "scripted", description: "Repeats the prompt" },
      { tool: "openai:gpt-4o-mini", model: "gpt-4o-mini", provider: "openai", kind: "openai compatible", description: "Chat completions" },
    ]);
    expect(knownModels(null)).toEqual([]);
  });

  it("finds a model by its id or its tool name, and nothing for an unknown or empty name", () => {
    const models = knownModels(providers);
    expect(summaryOf(models, "gpt-4o-mini")?.provider).toBe("openai");
    expect(summaryOf(models, " openai:gpt-4o-mini ")?.model).toBe("gpt-4o-mini");
    expect(summaryOf(models, "gpt-5")).toBeNull();
    expect(summaryOf(models, "  ")).toBeNull();
  });
});

describe("a quality gate reopened", () => {
  it("takes back the scores and justifications given to criteria of the same name, and no others", () => {
    const fresh: CriterionDraft[] = [
      { name: "Accuracy", score: null, justification: "" },
      { name: "Clarity", score: null, justification: "" },
    ];
    const saved: CriterionDraft[] = [
      { name: "Accuracy", score: 4, justification: "checked" },
      { name: "Tone", score: 1, justification: "not in this rubric" },
    ];
    expect(withSaved(fresh, saved)).toEqual([
      { name: "Accuracy", score: 4, justification: "checked" },
      { name: "Clarity", score: null, justification: "" },
    ]);
    expect(withSaved(fresh, undefined)).toEqual(fresh);
  });
});
