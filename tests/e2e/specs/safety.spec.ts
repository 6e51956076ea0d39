// No single keystroke decides: a gate opens with the cursor where the
// reviewer starts work (the note, the first form field), typing there never
// triggers a shortcut, keys only arm a decision that says in words what will
// happen, and Ctrl+Enter (or the primary button) confirms it.

import { expect, signIn, test } from "../support/fixtures";

type Stored = { gate: { status: string; decision?: { action: string; text?: string | null } | null } };

test("typing a note on an urgent DROP TABLE gate decides nothing; the reviewer arms a rejection, reads it, and confirms", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Clean up the archive");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "DROP TABLE orders_2019",
    mode: "sync",
    priority: "urgent",
    text: "Drop the 2019 orders?",
  });
  const decided = agent.wait(gate.id);
  const status = async () => (await gatehouse.call<Stored>(gatehouse.adminToken, "GET", `/gates/${gate.id}`)).gate.status;

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  // The cursor starts in the note: what the reviewer types is the note.
  const note = modal.getByTestId("answer-input");
  await expect(note).toBeFocused();
  await page.keyboard.type("Looks bad");
  await expect(note).toHaveValue("Looks bad");
  await expect(modal).toBeVisible();
  expect(await status()).toBe("pending");

  // From the dialog itself a still arms, and only arms: the armed decision says what it will do.
  await modal.focus();
  await page.keyboard.press("a");
  const armed = modal.getByTestId("armed-decision");
  await expect(armed).toHaveText("Approve DROP TABLE orders_2019 as proposed, for deployer.");
  await expect(modal.getByTestId("decide-approve")).toContainText("Confirm: approve");
  expect(await status()).toBe("pending");

  // r from the note (Alt+r there, since r is a letter of the note) arms the rejection instead.
  await note.focus();
  await page.keyboard.press("Alt+r");
  await expect(note).toHaveValue("Looks bad");
  await expect(armed).toHaveText("Reject DROP TABLE orders_2019: deployer is told “Looks bad”.");
  expect(await status()).toBe("pending");
  await page.keyboard.press("Control+Enter");
  expect((await decided).decision).toMatchObject({ action: "reject", text: "Looks bad" });
});

test("text typed into a goal review stays text: no letter decides and no digit switches the view", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Release notes");
  const goal = await agent.openGate(runId, { kind: "goal_review", mode: "sync", text: "Is this the goal?", goal: "Write release notes", round: 1 });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", goal.id);
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.type("a 2 approve, v 3 revise");
  await expect(modal.getByTestId("answer-input")).toHaveValue("a 2 approve, v 3 revise");
  await expect(modal).toBeVisible();
  await expect(page.getByTestId("tab-desk")).toHaveAttribute("aria-selected", "true");
  const stored = await gatehouse.call<Stored>(gatehouse.adminToken, "GET", `/gates/${goal.id}`);
  expect(stored.gate.status).toBe("pending");
  // Nothing is armed until the reviewer chooses; Ctrl+Enter is the one that decides.
  await expect(modal.getByTestId("armed-decision")).toHaveCount(0);
});

test("a preset option chosen with its digit is armed and named, and sent only on confirmation", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops"));
  const runId = await agent.startRun("Regions");
  const options = [
    { name: "eu", title: "Use eu-west-1", text: "Go with eu-west-1." },
    { name: "us", title: "Use us-east-1", text: null },
  ];
  const question = await agent.openGate(runId, { kind: "question", mode: "sync", text: "Which region?", options });
  const answered = agent.wait(question.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("preset-options")).toBeVisible();
  await modal.focus();
  await page.keyboard.press("2");
  await expect(modal.getByTestId("armed-decision")).toHaveText("Answer ops with “Use us-east-1”.");
  const stored = await gatehouse.call<Stored>(gatehouse.adminToken, "GET", `/gates/${question.id}`);
  expect(stored.gate.status).toBe("pending");
  await page.keyboard.press("Control+Enter");
  const first = await answered;
  expect([first.decision?.action, first.decision?.option]).toEqual(["respond", "us"]);
});

test("Ctrl+Enter with no decision armed sends nothing and says how to choose one", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Deploy");
  const gate = await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy build 42?" });
  const decided = agent.wait(gate.id);
  const status = async () => (await gatehouse.call<Stored>(gatehouse.adminToken, "GET", `/gates/${gate.id}`)).gate.status;

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  // Nothing armed: the primary button does not offer Ctrl+Enter, and Ctrl+Enter only explains.
  await expect(modal.getByTestId("decide-approve")).not.toContainText("Ctrl");
  await page.keyboard.press("Control+Enter");
  const hint = modal.getByTestId("decision-problem");
  await expect(hint).toHaveText("Choose a decision first: a approve, r reject; then Ctrl+Enter confirms it.");
  await expect(modal).toBeVisible();
  expect(await status()).toBe("pending");
  // A note typed is not a decision either.
  await page.keyboard.type("ship it");
  await page.keyboard.press("Control+Enter");
  await expect(modal).toBeVisible();
  expect(await status()).toBe("pending");

  // Armed, the same keys confirm.
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("armed-decision")).toContainText("Approve deploy");
  await page.keyboard.press("Control+Enter");
  expect((await decided).decision).toMatchObject({ action: "approve", text: "ship it" });
});
