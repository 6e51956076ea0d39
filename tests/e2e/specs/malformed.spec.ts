// Malformed agent data never breaks a gate: anything the server accepts
// opens, shown raw (with a warning) where it cannot be rendered, and can
// still be turned down.

import { expect, signIn, test } from "../support/fixtures";

type Opened = { gate: { id: string; allowed_actions: string[] } };

/** Gates of every kind with data their review cannot render as intended. */
const MALFORMED: { name: string; gate: Record<string, unknown>; warns: boolean }[] = [
  {
    name: "a plan whose tasks lack task ids",
    gate: { kind: "plan_review", payload: { tasks: [{ description: "collect" }, { description: "draft" }] } },
    warns: true,
  },
  {
    name: "a plan with duplicate task ids",
    gate: { kind: "plan_review", payload: { tasks: [{ task_id: "x", description: "one" }, { task_id: "x", description: "two" }] } },
    warns: true,
  },
  { name: "a plan whose tasks are not objects", gate: { kind: "plan_review", payload: { tasks: ["do it", 3, null] } }, warns: true },
  { name: "a goal that is a string", gate: { kind: "goal_review", goal: "Ship the beta" }, warns: false },
  { name: "a goal that is an object", gate: { kind: "goal_review", goal: { steps: [1, { deep: [null] }] } }, warns: false },
  { name: "a payload that is an array", gate: { kind: "approval", action: "deploy", payload: [1, "two", { three: 3 }] }, warns: false },
  { name: "a payload that is a string", gate: { kind: "payload_review", payload: "just text" }, warns: false },
  { name: "a response review without text", gate: { kind: "response_review" }, warns: true },
  { name: "a response review whose payload is an array", gate: { kind: "response_review", raw: "r", audited: "a", payload: [1] }, warns: false },
  { name: "an information review with a string payload", gate: { kind: "information_review", payload: "model?", recommended_settings: "hot" }, warns: false },
  { name: "a quality score without a rubric", gate: { kind: "quality_score", required_score: 99 }, warns: false },
];

test("malformed gates of every kind open, say what is wrong, and can still be turned down", async ({ page, gatehouse }) => {
  const agentToken = await gatehouse.token("agent", "fuzzer");
  const agent = gatehouse.agent(agentToken);
  const runId = await agent.startRun("Malformed data");
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // Anything the server accepts must be shown: keep the accepted ones.
  const accepted: { name: string; id: string; allowed: string[]; warns: boolean }[] = [];
  for (const m of MALFORMED) {
    const body = { mode: "async", text: `Malformed: ${m.name}`, ...m.gate };
    const opened = await gatehouse.call<Opened | { error: unknown }>(agentToken, "POST", `/runs/${runId}/gates`, body, [200, 201, 400, 422]);
    if (opened && "gate" in opened) accepted.push({ name: m.name, id: opened.gate.id, allowed: opened.gate.allowed_actions, warns: m.warns });
  }
  expect(accepted.map((a) => a.name)).toContain("a plan whose tasks lack task ids");

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  // The preview reads each one first: its kind's view, or the raw data with a warning.
  const pane = page.getByTestId("gate-preview-pane");
  for (const gate of accepted) {
    await test.step(`preview: ${gate.name}`, async () => {
      await expect(pane.getByTestId("preview-text")).toContainText(`Malformed: ${gate.name}`);
      if (gate.warns) await expect(pane.getByTestId("malformed-raw")).toBeVisible();
      else await expect(pane.getByTestId("preview-kind")).toBeVisible();
      await page.keyboard.press("j");
    });
  }
  const modal = page.getByTestId("resolution-modal");
  for (const gate of accepted) {
    await test.step(gate.name, async () => {
      await page.locator(`[data-testid=blocker-row][data-gate-id='${gate.id}']`).click();
      await expect(modal).toHaveAttribute("data-gate-id", gate.id);
      await expect(modal.getByTestId("gate-text")).toContainText("Malformed");
      await expect(modal.getByText("Loading…")).toHaveCount(0);
      if (gate.warns) {
        await expect(modal.getByTestId("malformed-warning")).toBeVisible();
        await expect(modal.getByTestId("malformed-raw")).toBeVisible();
      }
      const turnDown = gate.allowed.includes("reject") ? "reject" : "needs_revision";
      await modal.getByTestId("answer-input").fill("cannot read this");
      await modal.getByTestId(`decide-${turnDown}`).click();
      await expect(modal).toHaveCount(0);
      const stored = await gatehouse.call<{ gate: { status: string; decision: { action: string } } }>(gatehouse.adminToken, "GET", `/gates/${gate.id}`);
      expect(stored.gate.decision.action).toBe(turnDown);
    });
  }
  expect(errors).toEqual([]);
});
