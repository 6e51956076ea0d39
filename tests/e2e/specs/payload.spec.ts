// The payload diff editor: a reviewer edits the agent's proposed payload in
// place, sees the diff of their edits before submitting, and the agent
// receives the edited payload while the decision records the diff.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer edits a payload and the agent gets the edited payload with the diff recorded", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "image-tool"));
  const runId = await agent.startRun("Thumbnails");
  const proposed = { tool: "resize", args: { image_file: "cat.png", width: 4096, quality: 90 } };
  const gate = await agent.openGate(runId, {
    kind: "payload_review",
    mode: "sync",
    text: "Call `resize` with this payload?",
    payload: proposed,
    example_input: { tool: "resize", args: { input_image: "dog.png", width: 512, quality: 90 } },
    required_fields: ["tool", "args"],
    suggestions: ["map image_file to input_image"],
  });
  const waiting = agent.wait(gate.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  const editorPanel = modal.getByTestId("payload-editor");
  await expect(editorPanel.getByTestId("payload-example")).toContainText("dog.png");
  await expect(editorPanel.getByTestId("payload-input")).toContainText("cat.png");
  await expect(editorPanel.getByTestId("required-field")).toHaveCount(2);
  // The fields that differ from the example are listed (and highlighted in the editors).
  await expect(editorPanel.getByTestId("example-changes")).toContainText("differ from the example");
  await expect(editorPanel.getByTestId("payload-edits")).toHaveCount(0);

  // e (Alt+e from the note, where the cursor starts) puts the cursor in the payload; replace it, first with broken JSON.
  await page.keyboard.press("Alt+e");
  await expect(editorPanel.getByTestId("payload-input")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"tool": "resize", "args": {');
  await expect(editorPanel.getByTestId("payload-errors")).toBeVisible();
  await expect(modal.getByTestId("decide-edit")).toBeEnabled();

  const edited = { tool: "resize", args: { input_image: "cat.png", width: 1024, quality: 90 } };
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(JSON.stringify(edited, null, 2));
  await expect(editorPanel.getByTestId("payload-errors")).toHaveCount(0);
  // The reviewer's edits are shown before anything is sent.
  const edits = editorPanel.getByTestId("payload-edits");
  await expect(edits).toContainText("Your edits (3)");
  await expect(edits).toContainText("/args/image_file");
  await expect(edits).toContainText("/args/input_image");
  await expect(edits).toContainText("/args/width");
  await expect(modal.getByTestId("decide-edit")).toContainText("Approve with edits (3)");
  // Plain approval would drop the edits: refused with a hint.
  await modal.getByTestId("decide-approve").click();
  await expect(modal.getByTestId("decision-problem")).toContainText("approve with edits");
  await editorPanel.getByTestId("payload-input").focus();
  await page.keyboard.press("Control+Enter");

  const decided = await waiting;
  expect(decided.status).toBe("resolved");
  expect(decided.decision?.action).toBe("edit");
  expect(decided.decision?.payload).toEqual(edited);
  await expect(modal).toHaveCount(0);

  // The diff against the agent's proposal is recorded with the decision.
  const stored = await gatehouse.call<{ gate: typeof decided }>(gatehouse.adminToken, "GET", `/gates/${gate.id}`);
  const changes = stored.gate.decision?.diff?.changes ?? [];
  expect(changes).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ path: "/args/image_file", op: "removed", old: "cat.png" }),
      expect.objectContaining({ path: "/args/input_image", op: "added", new: "cat.png" }),
      expect.objectContaining({ path: "/args/width", op: "changed", old: 4096, new: 1024 }),
    ]),
  );
  expect(changes).toHaveLength(3);
  expect(stored.gate.decision?.diff?.unified).toContain('-    "width": 4096');
  expect(stored.gate.decision?.diff?.unified).toContain('+    "width": 1024');
});

test("reset to proposed undoes the reviewer's edits", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Deploy");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    text: "Deploy?",
    payload: { env: "prod", replicas: 3 },
  });
  const waiting = agent.wait(gate.id);
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("payload-input")).toContainText('"prod"');
  await page.keyboard.press("Alt+e");
  await expect(modal.getByTestId("payload-input")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"env": "staging", "replicas": 3}');
  await expect(modal.getByTestId("payload-edits")).toContainText("/env");
  await modal.getByTestId("payload-reset").click();
  await expect(modal.getByTestId("payload-edits")).toHaveCount(0);
  // Nothing edited any more: armed, Ctrl+Enter approves the proposal as sent.
  await modal.getByTestId("payload-input").focus();
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("armed-decision")).toContainText("as proposed");
  await page.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect(decided.decision?.action).toBe("approve");
  expect(decided.decision?.payload ?? null).toBeNull();
});

test("the payload's fields come from its schema: required and optional marked, a default added, reset to the example", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "painter"));
  const runId = await agent.startRun("Posters");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "generate_image",
    mode: "sync",
    text: "Generate this image?",
    payload: { prompt: "a lighthouse at dusk", steps: 30 },
    example_input: { prompt: "a cat", steps: 20, width: 512 },
    payload_schema: {
      type: "object",
      properties: {
        prompt: { type: "string", description: "What to draw" },
        steps: { type: "integer" },
        width: { type: "integer", default: 768, description: "Pixels across" },
        seed: { type: ["integer", "null"] },
      },
      required: ["prompt", "steps"],
    },
  });
  const waiting = agent.wait(gate.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  const fields = modal.getByTestId("payload-fields");
  // An approval gate's schema marks its fields too: required ones first, present or not.
  await expect(fields.getByTestId("required-field")).toHaveCount(2);
  await expect(fields.locator('[data-field="prompt"]')).toContainText("required");
  await expect(fields.locator('[data-field="prompt"]')).toContainText("What to draw");
  await expect(fields.locator('[data-field="prompt"]')).toHaveAttribute("data-missing", "false");
  await expect(fields.getByTestId("optional-field")).toHaveCount(2);
  await expect(fields.locator('[data-field="seed"]')).toContainText("integer | null");
  await expect(fields.locator('[data-field="width"]')).toHaveAttribute("data-missing", "true");

  // The default of an optional field is one button away, by keyboard.
  const addDefault = fields.getByTestId("field-add-default");
  await expect(addDefault).toHaveCount(1);
  await expect(addDefault).toHaveAccessibleName("Add width with its default, 768");
  await addDefault.focus();
  await page.keyboard.press("Enter");
  await expect(fields.locator('[data-field="width"]')).toHaveAttribute("data-missing", "false");
  await expect(modal.getByTestId("payload-edits")).toContainText("/width");

  // Reset to the example, then to the proposal.
  await modal.getByTestId("payload-reset-example").click();
  await expect(modal.getByTestId("payload-input")).toContainText("a cat");
  await expect(modal.getByTestId("payload-reset-example")).toBeDisabled();
  await modal.getByTestId("payload-reset").click();
  await expect(modal.getByTestId("payload-input")).toContainText("a lighthouse at dusk");
  await expect(modal.getByTestId("payload-edits")).toHaveCount(0);

  // A required field removed in an edit holds the approval back.
  await page.keyboard.press("e");
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"prompt": "a lighthouse at dusk"}');
  await expect(modal.getByTestId("payload-errors")).toContainText("steps");
  await expect(fields.locator('[data-field="steps"]')).toHaveAttribute("data-missing", "true");
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"prompt": "a lighthouse at dusk", "steps": 30, "width": 768}');
  await page.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect(decided.decision).toMatchObject({ action: "edit", decided_by: "alice", payload: { width: 768 } });
});
