// The preview pane reads each kind of gate the way a reviewer reads it,
// without opening anything: an approval's action and payload as a table, a
// question's preset answers, a plan's tasks with their dependencies, a goal
// and its deliverables in words, a quality gate's criteria, weights and
// required score, an information review's prompt, model and the agent's
// reasons, a response review's audited text beside what the audit found.

import AxeBuilder from "@axe-core/playwright";
import type { Json } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

test("each kind of gate reads in the preview as its kind, with j stepping through them", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const agent = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const runId = await agent.startRun("Launch");
  // Opened oldest first, all async and normal: the panel lists them in this order.
  const gates: Record<string, Json>[] = [
    { kind: "approval", action: "deploy", text: "Deploy?", payload: { service: "web", replicas: 3 } },
    {
      kind: "question",
      text: "Which region?",
      options: [
        { name: "eu", title: "EU only", description: "GDPR data stays in the EU", action: "respond", text: "eu" },
        { name: "later", title: "Later", action: "defer" },
      ],
    },
    {
      kind: "plan_review",
      text: "Approve the plan?",
      payload: { tasks: [{ task_id: "collect", description: "Collect the data" }, { task_id: "draft", description: "Draft the report", dependencies: ["collect"] }] },
    },
    { kind: "goal_review", text: "Is this the goal?", goal: { objective: "Ship the beta", success_criteria: ["tests pass"] }, payload: { deliverables: ["release notes"] } },
    { kind: "quality_score", text: "Score the draft", rubric: ["Accuracy", "Tone"], required_score: 4, deliverable_id: "notes-v1", payload: { weights: { Accuracy: 2 } } },
    { kind: "information_review", text: "Generate?", reasons: ["the prompt is vague"], payload: { prompt: "a cat on a mat", model: "sd15" } },
    { kind: "response_review", text: "Send this reply?", raw: "Card 4111 1111 1111 1111", audited: "Card [removed]", indicators: ["pii: card number removed"] },
  ];
  for (const g of gates) await agent.openGate(runId, { mode: "async", ...g });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const pane = page.getByTestId("gate-preview-pane");
  const kind = pane.getByTestId("preview-kind");
  await expect(page.getByTestId("blocker-row")).toHaveCount(gates.length);

  await expect(kind).toHaveAttribute("data-kind", "approval");
  await expect(kind.getByTestId("preview-action")).toHaveText("deploy");
  await expect(kind.getByTestId("preview-payload-table").locator("tr")).toHaveText([/service\s*web/, /replicas\s*3/]);

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "question");
  await expect(kind.getByTestId("preview-options").locator("li")).toHaveText([/EU only — GDPR data stays in the EU \(answered\)/, /Later \(deferred\)/]);

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "plan_review");
  await expect(kind.getByTestId("preview-task")).toHaveText([/collect Collect the data$/, /draft Draft the report · after collect/]);

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "goal_review");
  await expect(kind.getByTestId("preview-goal")).toHaveText("Objective: Ship the beta\nSuccess criteria:\n  • tests pass");
  await expect(kind.getByTestId("preview-deliverables")).toHaveText("• release notes");
  await expect(kind).not.toContainText("{");

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "quality_score");
  await expect(kind.getByTestId("preview-required")).toHaveText("Passes at 4 of 5 · deliverable notes-v1");
  await expect(kind.getByTestId("preview-criteria").locator("tbody tr")).toHaveText([/Accuracy\s*2/, /Tone\s*equal/]);

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "information_review");
  await expect(kind.getByTestId("preview-prompt")).toHaveText("a cat on a mat");
  await expect(kind.getByTestId("preview-model")).toHaveText("sd15");
  await expect(kind.getByTestId("preview-reasons")).toHaveText("the prompt is vague");

  await page.keyboard.press("j");
  await expect(kind).toHaveAttribute("data-kind", "response_review");
  await expect(kind.getByTestId("preview-audited")).toHaveText("Card [removed]");
  await expect(kind.getByTestId("audit-found")).toBeVisible();
  await expect(kind.getByTestId("no-safety-flags")).toHaveCount(0);
  await expect(pane).not.toContainText("4111");

  const { violations } = await new AxeBuilder({ page }).analyze();
  expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  // Nothing in the preview decides.
  await expect(pane.getByRole("button")).toHaveText([/Open to decide/]);
});
