// The information review (before a run) in the window: the request's model
// summarised from the server's providers (who serves it, what it does),
// confidence, reasons and safety flags, then the model changed and the
// prompt modified by keyboard; the agent proceeds with the reviewer's
// request.

import { expect, signIn, test } from "../support/fixtures";

type Providers = { providers: { name: string; tool_details: { name: string; model: string; description: string }[] }[] };

test("an information review summarises the model, and the reviewer changes model and prompt by keyboard", async ({ page, gatehouse }) => {
  const reviewer = await gatehouse.token("reviewer", "alice");
  const { providers } = await gatehouse.call<Providers>(reviewer, "GET", "/providers");
  const models = providers.flatMap((p) => p.tool_details.map((t) => ({ ...t, provider: p.name })));
  expect(models.length).toBeGreaterThanOrEqual(2);
  const [proposed, other] = [models[0]!, models[1]!];

  const agent = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const runId = await agent.startRun("Poster copy");
  const gate = await agent.openGate(runId, {
    kind: "information_review",
    mode: "sync",
    text: "Run this request?",
    payload: { prompt: "Write a tagline", model: proposed.model, temperature: 0.9 },
    confidence: 0.42,
    reasons: ["the brief is ambiguous"],
    safety_flags: ["brand_terms"],
    recommended_settings: { temperature: 0.3 },
  });
  const waiting = agent.wait(gate.id);

  await signIn(page, gatehouse, reviewer);
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const review = modal.getByTestId("information-review");
  await expect(review).toBeVisible();
  const summary = review.getByTestId("model-summary");
  await expect(summary).toContainText(proposed.model);
  await expect(summary).toContainText(`Served by ${proposed.provider}`);
  await expect(summary.getByTestId("model-description")).toHaveText(proposed.description);
  await expect(review.getByTestId("information-reasons")).toContainText("the brief is ambiguous");
  await expect(review).toContainText("brand_terms");
  await expect(review.getByTestId("recommended-settings")).toContainText("temperature");

  // p (Alt+p from the note, where the cursor starts): modify the prompt; Tab
  // on to the model, where an unknown one is flagged and a known one summarised.
  await page.keyboard.press("Alt+p");
  await expect(review.getByTestId("information-prompt")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText("Write a short, friendly tagline");
  await page.keyboard.press("Tab");
  await expect(review.getByTestId("information-model")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText("no-such-model");
  await expect(review.getByTestId("model-unknown")).toContainText("No configured provider serves this model");
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(other.model);
  await expect(summary).toContainText(`${other.model} (your choice)`);
  await expect(review.getByTestId("model-unknown")).toHaveCount(0);
  await expect(summary).toContainText(`Served by ${other.provider}`);
  await expect(review.getByTestId("information-changed")).toContainText("prompt and model");
  // Closed and opened again, the gate keeps the reviewer's changes.
  await page.keyboard.press("Escape");
  await expect(modal).toHaveCount(0);
  await page.keyboard.press("Enter");
  await expect(review.getByTestId("information-model")).toHaveValue(other.model);
  await expect(review.getByTestId("information-prompt")).toHaveValue("Write a short, friendly tagline");
  await expect(review.getByTestId("information-changed")).toContainText("prompt and model");
  await page.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect(decided.decision).toMatchObject({
    action: "edit",
    decided_by: "alice",
    payload: { prompt: "Write a short, friendly tagline", model: other.model, temperature: 0.9 },
  });
});
