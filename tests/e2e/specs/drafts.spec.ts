// Nothing a reviewer has entered is lost by closing a gate: Esc, even
// from inside a field, closes the gate, and
// reopening it brings back a quality gate's scores and justifications, a
// response form's fields and the choices made on a gate of several actions.

import { expect, signIn, test } from "../support/fixtures";

test("a reopened gate shows the scores, form fields and action choices entered before it was closed", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Drafts");
  const quality = await agent.openGate(runId, {
    kind: "quality_score",
    mode: "sync",
    text: "Score the release notes",
    rubric: ["Accuracy", "Clarity"],
    required_score: 3,
  });
  const form = await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    text: "How much traffic for the canary?",
    response_schema: { type: "object", properties: { percent: { type: "integer", title: "Traffic %" }, note: { type: "string", title: "Note" } } },
  });
  const batch = await agent.openGate(runId, {
    kind: "approval",
    mode: "sync",
    text: "Two tool calls",
    actions: [
      { id: "call_1", name: "read_file", args: { path: "src/main.rs" } },
      { id: "call_2", name: "shell", args: { cmd: "rm -rf target" }, allowed_actions: ["approve", "reject"] },
    ],
  });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const modal = page.getByTestId("resolution-modal");
  const open = async (id: string) => {
    await page.locator(`[data-testid=blocker-row][data-gate-id='${id}']`).click();
    await expect(modal).toHaveAttribute("data-gate-id", id);
  };

  // A quality gate: one criterion scored and justified, Esc from inside the justification.
  await open(quality.id);
  let criteria = modal.getByTestId("criterion");
  // The digit scores once the gate has loaded (before, there is nothing to score).
  await expect(criteria.nth(0).getByTestId("score-4")).toBeVisible();
  await page.keyboard.press("4");
  await expect(criteria.nth(0).getByTestId("score-4")).toBeChecked();
  await modal.getByTestId("justification").nth(0).fill("Every version number checked");
  await page.keyboard.press("Escape");
  await expect(modal).toHaveCount(0);
  await open(quality.id);
  criteria = modal.getByTestId("criterion");
  await expect(criteria.nth(0).getByTestId("score-4")).toBeChecked();
  await expect(modal.getByTestId("justification").nth(0)).toHaveValue("Every version number checked");
  await expect(criteria.nth(1).locator("input[type=radio]:checked")).toHaveCount(0);
  await page.keyboard.press("Escape");

  // A response form: the fields as typed.
  await open(form.id);
  await modal.getByTestId("form-field-percent").fill("15");
  await modal.getByTestId("form-field-note").fill("watch the error rate");
  await page.keyboard.press("Escape");
  await open(form.id);
  await expect(modal.getByTestId("form-field-percent")).toHaveValue("15");
  await expect(modal.getByTestId("form-field-note")).toHaveValue("watch the error rate");
  await page.keyboard.press("Escape");

  // A gate of several actions: the choices not yet sent, with a rejection's reason.
  await open(batch.id);
  let rows = modal.getByTestId("batch-action");
  await rows.nth(0).getByTestId("batch-approve").click();
  await rows.nth(1).getByTestId("batch-reject").click();
  await rows.nth(1).getByTestId("batch-text-call_2").fill("never delete target here");
  await expect(modal.getByTestId("batch-submit")).toContainText("Send 2 decisions");
  await page.keyboard.press("Escape");
  await open(batch.id);
  rows = modal.getByTestId("batch-action");
  await expect(modal.getByTestId("batch-submit")).toContainText("Send 2 decisions");
  await expect(rows.nth(1).getByTestId("batch-text-call_2")).toHaveValue("never delete target here");

  // And they are what gets sent.
  const waiting = agent.wait(batch.id, 30);
  await page.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect(decided.status).toBe("resolved");
  const byId = Object.fromEntries((decided.decision?.actions ?? []).map((a) => [a.id, a]));
  expect(byId.call_1?.action).toBe("approve");
  expect(byId.call_2).toMatchObject({ action: "reject", text: "never delete target here" });
});
