// Bulk review: a reviewer marks several pending gates with the keyboard
// and the mouse and decides them together; each gate gets its own
// decision, armed first and sent on confirmation; a gate that cannot take
// it is left out with what it takes instead, and one decided elsewhere is
// reported on its own, without hiding the others' success.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer marks gates and approves or rejects them together, each as its own decision", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "fleet"));
  const runId = await agent.startRun("Fleet");
  const approvals = [];
  for (const n of [1, 2, 3]) {
    approvals.push(await agent.openGate(runId, { kind: "approval", action: "restart", mode: "async", text: `Restart worker ${n}?` }));
  }
  const question = await agent.openGate(runId, { kind: "question", mode: "async", text: "Which worker first?" });
  const rejectMe = await agent.openGate(runId, { kind: "approval", action: "drop", mode: "async", text: "Drop cache 9?" });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(5);
  // x marks the selected row; Shift-click marks the range up to the question.
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("j");
  await page.keyboard.press("k"); // back on the first (oldest) gate
  await page.keyboard.press("x");
  await page.locator(`[data-testid=blocker-row][data-gate-id='${question.id}']`).click({ modifiers: ["Shift"] });
  await expect(page.getByTestId("bulk-count")).toHaveText("4 marked");
  // Someone else decides one of them meanwhile.
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${approvals[1]!.id}/resolve`, { action: "reject", text: "not this one" });
  await page.getByTestId("blocker-list").focus();
  // a arms the bulk approval; Enter on the focused Confirm sends it.
  await page.keyboard.press("a");
  await expect(page.getByTestId("bulk-confirm-send")).toBeFocused();
  await page.keyboard.press("Enter");
  const summary = page.getByTestId("bulk-summary");
  await expect(summary).toContainText("Approved 2 gates.");
  // The question cannot be approved: left out, saying what it takes, not refused by the server.
  await expect(summary).toContainText("left out");
  await expect(summary).toContainText("Which worker first?");
  await expect(summary).not.toContainText("refused");
  for (const g of [approvals[0]!, approvals[2]!]) {
    const stored = await gatehouse.call<{ gate: { decision: { action: string; decided_by: string } } }>(gatehouse.adminToken, "GET", `/gates/${g.id}`);
    expect(stored.gate.decision).toMatchObject({ action: "approve", decided_by: "alice" });
  }
  const bobs = await gatehouse.call<{ gate: { decision: { decided_by: string } } }>(gatehouse.adminToken, "GET", `/gates/${approvals[1]!.id}`);
  expect(bobs.gate.decision.decided_by).toBe("bob");
  // The question could not be approved: still pending, still in the panel.
  await expect(page.locator(`[data-testid=blocker-row][data-gate-id='${question.id}']`)).toHaveCount(1);

  // Ctrl-click marks one gate; r asks for the reason; Enter rejects.
  await page.locator(`[data-testid=blocker-row][data-gate-id='${rejectMe.id}']`).click({ modifiers: ["Control"] });
  await expect(page.getByTestId("bulk-count")).toHaveText("1 marked");
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("r");
  await expect(page.getByTestId("bulk-reason")).toBeFocused();
  await page.keyboard.type("caches stay");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("bulk-summary")).toContainText("Rejected 1 gate.");
  const rejected = await gatehouse.call<{ gate: { decision: { action: string; text: string } } }>(gatehouse.adminToken, "GET", `/gates/${rejectMe.id}`);
  expect(rejected.gate.decision).toMatchObject({ action: "reject", text: "caches stay" });
  await expect(rows).toHaveCount(1);
});

test("bulk approval offers only what each marked gate allows: a question is left out with the reason, nothing is sent before confirming", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "fleet"));
  const runId = await agent.startRun("Fleet");
  const restart = await agent.openGate(runId, { kind: "approval", action: "restart", mode: "async", text: "Restart worker 1?" });
  const question = await agent.openGate(runId, { kind: "question", mode: "async", text: "Which worker first?" });
  const status = async (id: string) => (await gatehouse.call<{ gate: { status: string } }>(gatehouse.adminToken, "GET", `/gates/${id}`)).gate.status;

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(2);
  for (const g of [restart, question]) await page.locator(`[data-testid=blocker-row][data-gate-id='${g.id}']`).click({ modifiers: ["Control"] });
  await expect(page.getByTestId("bulk-count")).toHaveText("2 marked");

  // a arms the bulk approval: what it will do, and the question left out with why.
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("a");
  const confirm = page.getByTestId("bulk-confirm");
  await expect(confirm).toContainText("Approve 1 gate?");
  await expect(confirm.getByTestId("bulk-left-out")).toHaveText(["“Which worker first?” takes an answer or a deferral, not an approval: open it to decide."]);
  expect(await status(restart.id)).toBe("pending");
  await expect(page.getByTestId("bulk-confirm-send")).toBeFocused();
  await page.keyboard.press("Enter");

  const summary = page.getByTestId("bulk-summary");
  await expect(summary).toContainText("Approved 1 gate.");
  await expect(summary).toContainText("1 left out: “Which worker first?”");
  await expect(summary).not.toContainText("does not allow");
  expect(await status(restart.id)).toBe("resolved");
  expect(await status(question.id)).toBe("pending");

  // Rejecting only a question: nothing to send, said per gate, no server error.
  await page.locator(`[data-testid=blocker-row][data-gate-id='${question.id}']`).click({ modifiers: ["Control"] });
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("r");
  await page.keyboard.type("not now");
  await page.keyboard.press("Enter");
  await expect(summary).toContainText("Rejected 0 gates. 1 left out: “Which worker first?” takes an answer or a deferral, not a rejection");
  await expect(summary).not.toContainText("does not allow");
  expect(await status(question.id)).toBe("pending");
});
