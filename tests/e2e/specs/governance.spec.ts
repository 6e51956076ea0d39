// Who may answer, escalation, sub-agents, payloads off their schema and
// echoed state, in the browser: a gate restricted to a team opens
// read-only for anyone else and is decided by a member; a waiting gate
// escalates and rises in the panel; a sub-agent's gate names its chain of
// agents; a payload that does not fit its schema is shown with its
// problems and cannot be approved as sent; the agent gets its state back.

import { expect, signIn, test } from "../support/fixtures";

test("a gate restricted to a team is read-only for others and decided by a member", async ({ browser, page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops-bot"));
  const runId = await agent.startRun("Key rotation");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "rotate_keys",
    mode: "sync",
    text: "Rotate the production signing keys?",
    payload: { env: "prod" },
    deciders: ["role:security"],
    agent_state: { step: 7, cursor: "k-19" },
  });
  const waiting = agent.wait(gate.id);

  // alice is a reviewer, not in security: she may read it, not decide it.
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const row = page.getByTestId("blocker-row");
  await expect(row.getByTestId("gate-deciders")).toHaveText("only role:security");
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("deciders-notice")).toHaveText(
    "Only anyone with the role security may decide this gate; you can read it.",
  );
  await expect(modal.getByTestId("decide-approve")).toBeDisabled();
  await page.keyboard.press("a");
  await expect(modal).toBeVisible();
  await page.keyboard.press("Escape");

  // carol is in security: she approves, and the agent gets its state back.
  const carolPage = await browser.newPage();
  await signIn(carolPage, gatehouse, await gatehouse.token("reviewer", "carol", ["security"]));
  await carolPage.keyboard.press("Enter");
  const carolModal = carolPage.getByTestId("resolution-modal");
  await expect(carolModal.getByTestId("deciders-notice")).toHaveCount(0);
  await carolModal.getByTestId("decide-approve").click();
  const decided = await waiting;
  expect(decided.decision?.decided_by).toBe("carol");
  expect(decided.agent_state).toEqual({ step: 7, cursor: "k-19" });
  await expect(page.getByTestId("blocker-row")).toHaveCount(0);
});

test("a waiting gate escalates once its wait is over, rising to the top of the panel", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops-bot"));
  const runId = await agent.startRun("Cache restart");
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which region first?", priority: "low" });
  const urgent = await agent.openGate(runId, {
    kind: "approval",
    action: "restart",
    mode: "async",
    text: "Restart the cache fleet?",
    priority: "low",
    escalate_after_secs: 1,
    escalate_to: ["dave"],
  });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(2);
  // The server's sweep escalates it (within seconds): high priority, first in the panel.
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", urgent.id, { timeout: 15_000 });
  await expect(rows.nth(0)).toContainText("High");
  const stored = await gatehouse.call<{ gate: { priority: string; escalation: { escalated_at: string | null } } }>(
    gatehouse.adminToken,
    "GET",
    `/gates/${urgent.id}`,
  );
  expect(stored.gate.priority).toBe("high");
  expect(stored.gate.escalation.escalated_at).not.toBeNull();
});

test("a sub-agent's gate names the chain of agents that led to it", async ({ page, gatehouse }) => {
  const planner = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const parent = await planner.startRun("Ship the beta");
  const coderToken = await gatehouse.token("agent", "coder");
  // The coder's run, a sub-agent's run of the planner's (a reviewer's or admin's token may name its agent).
  const started = await gatehouse.call<{ run_id: string }>(gatehouse.adminToken, "POST", "/run", {
    run_input: { prompt: "write the migration" },
    agent: "coder",
    parent_run_id: parent,
  });
  const coder = gatehouse.agent(coderToken);
  await coder.openGate(started.run_id, { kind: "question", mode: "sync", text: "Which database first?" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row").getByTestId("gate-agent")).toHaveText("planner › coder");
});

test("a payload off its schema is shown with its problems and must be edited to fit", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "designer"));
  const runId = await agent.startRun("Hero image");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "resize",
    mode: "sync",
    text: "Resize the hero image?",
    payload: { image_file: "hero.png", width: 9000 },
    payload_schema: {
      type: "object",
      required: ["input_image"],
      properties: { input_image: { type: "string" }, width: { type: "integer", maximum: 4096 } },
    },
  });
  const waiting = agent.wait(gate.id);
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const problems = modal.getByTestId("payload-problems");
  await expect(problems).toContainText("payload.width:");
  await expect(problems).toContainText("input_image");
  await expect(modal.getByTestId("decide-approve")).toHaveCount(0);
  await expect(modal.getByTestId("decide-reject")).toBeVisible();
  const editor = modal.getByTestId("payload-input");
  await editor.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(JSON.stringify({ input_image: "hero.png", width: 2048 }));
  await page.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect(decided.decision?.action).toBe("edit");
  expect(decided.decision?.payload).toEqual({ input_image: "hero.png", width: 2048 });
});

test("a gate nobody answers in time takes its fallback once, and the open modal says so", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Night deploy");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: "Deploy build 42 tonight?",
    expires_in_secs: 1,
    on_timeout: "reject",
  });
  const waiting = agent.wait(gate.id);
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  await page.getByTestId("answer-input").fill("I was about to say yes");
  // The server's sweep applies the fallback: the system rejects it, with the reason.
  const decided = await waiting;
  expect(decided.decision?.action).toBe("reject");
  expect(decided.decision?.decided_by).toBe("system");
  expect(decided.decision?.text).toContain("no answer within");
  await expect(modal.getByTestId("closed-notice")).toContainText("by system", { timeout: 15_000 });
  // The reviewer's unsent text is still there, and nothing can be sent any more.
  await expect(page.getByTestId("answer-input")).toHaveValue("I was about to say yes");
  await expect(modal.getByTestId("decide-approve")).toBeDisabled();
  await expect(page.getByTestId("blocker-row")).toHaveCount(0);
});
