// A gate asking for its answer in a form (a JSON Schema, as MCP elicitation
// and LangGraph's response_schema send): the reviewer fills typed fields
// with the keyboard, the page names a wrong field before sending, and the
// agent gets the answer as data.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer answers a form with the keyboard and the agent gets typed data", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Canary");
  const gate = await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    text: "Where should the canary go, and how much traffic?",
    response_schema: {
      type: "object",
      required: ["region", "percent"],
      properties: {
        region: { type: "string", title: "Region", enum: ["eu-west-1", "us-east-1"], default: "eu-west-1" },
        percent: { type: "integer", title: "Traffic %", minimum: 1, maximum: 50 },
        notify: { type: "boolean", title: "Notify the on-call", default: true },
        owner: { type: "object", title: "Owner", properties: { email: { type: "string", format: "email" } }, required: ["email"] },
      },
    },
  });
  const waiting = agent.wait(gate.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const form = page.getByTestId("response-form");
  await expect(form).toBeVisible();
  // The first field has the focus and the schema's default.
  await expect(form.getByTestId("form-field-region")).toBeFocused();
  await expect(form.getByTestId("form-field-region")).toHaveValue("0");
  await expect(form.getByTestId("form-field-notify")).toBeChecked();

  await page.keyboard.press("ArrowDown"); // us-east-1
  await page.keyboard.press("Tab");
  await page.keyboard.type("80");
  await expect(form.getByTestId("form-problem-percent")).toHaveText("At most 50.");
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("decision-problem")).toContainText("Fix the form first");
  await form.getByTestId("form-field-percent").fill("5");
  await expect(form.getByTestId("form-problem-percent")).toHaveCount(0);
  await form.getByTestId("form-field-notify").press("Space");
  await form.getByTestId("form-field-owner.email").fill("oncall@example.com");
  await page.getByTestId("answer-input").fill("Start small.");
  await page.keyboard.press("Control+Enter");

  const decided = await waiting;
  expect(decided.decision?.action).toBe("respond");
  expect(decided.decision?.response).toEqual({ region: "us-east-1", percent: 5, notify: false, owner: { email: "oncall@example.com" } });
  expect(decided.decision?.text).toBe("Start small.");
  await expect(page.getByTestId("resolution-modal")).toHaveCount(0);
});

test("a preset answer or rejection is one key press, and the agent learns which was chosen", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Presets");
  const options = [
    { name: "eu", title: "Use eu-west-1", text: "Go with eu-west-1." },
    { name: "us", title: "Use us-east-1", text: null }, // the title stands in
  ];
  const question = await agent.openGate(runId, { kind: "question", mode: "sync", text: "Which region?", options });
  const approval = await agent.openGate(runId, {
    kind: "approval",
    action: "drop_table",
    mode: "sync",
    text: "Drop the users table?",
    options: [{ name: "unsafe", title: "Too risky", description: "Refuse on safety grounds", action: "reject", text: "Never drop users." }],
  });
  const answered = agent.wait(question.id);
  const rejected = agent.wait(approval.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.locator(`[data-testid=blocker-row][data-gate-id='${question.id}']`).click();
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("preset-options")).toContainText("Use eu-west-1");
  await expect(modal.getByTestId("preset-us")).toHaveAttribute("aria-keyshortcuts", "2");
  await modal.focus();
  await page.keyboard.press("2");
  await page.keyboard.press("Control+Enter");
  const first = await answered;
  expect([first.decision?.action, first.decision?.text, first.decision?.option]).toEqual(["respond", "Use us-east-1", "us"]);

  await page.locator(`[data-testid=blocker-row][data-gate-id='${approval.id}']`).click();
  await expect(modal.getByTestId("preset-unsafe")).toContainText("Refuse on safety grounds");
  await modal.focus();
  await page.keyboard.press("1");
  await page.keyboard.press("Control+Enter");
  const second = await rejected;
  expect([second.decision?.action, second.decision?.text, second.decision?.option]).toEqual(["reject", "Never drop users.", "unsafe"]);
  await expect(page.getByTestId("blocker-row")).toHaveCount(0);
});
