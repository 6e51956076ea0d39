// A gate of several proposed actions (an agent's parallel tool calls): the
// reviewer decides some now and the rest later, each on its own, and the
// agent gets every decision in the order of its actions, each by its id.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer decides a batch of tool calls in two sittings and the agent gets each decision in order", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "coder"));
  const runId = await agent.startRun("Refactor");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "tool_calls",
    mode: "sync",
    text: "Run these three tool calls?",
    actions: [
      { id: "call_1", name: "read_file", args: { path: "src/main.rs" } },
      { id: "call_2", name: "write_file", args: { path: "src/lib.rs", text: "pub fn old() {}" }, description: "Rewrite the library" },
      { id: "call_3", name: "shell", args: { cmd: "rm -rf target" }, allowed_actions: ["approve", "reject"] },
    ],
  });
  const waiting = agent.wait(gate.id, 60);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  const rows = modal.getByTestId("batch-action");
  await expect(rows).toHaveCount(3);
  await expect(modal.getByTestId("batch-progress")).toContainText("0 of 3 decided");
  const [first, second, third] = [rows.nth(0), rows.nth(1), rows.nth(2)];
  await expect(second).toContainText("Rewrite the library");
  // The shell call allows only approve and reject.
  await expect(third.getByRole("button")).toHaveText([/Approve/, /Reject/]);

  // First sitting: approve the read, reject the shell call with a reason.
  await first.getByTestId("batch-approve").click();
  await third.getByTestId("batch-reject").click();
  await third.getByTestId("batch-text-call_3").fill("never delete target here");
  await expect(modal.getByTestId("batch-submit")).toContainText("Send 2 decisions");
  await page.keyboard.press("Control+Enter");
  await expect(modal.getByTestId("batch-notice")).toContainText("Sent 2 decisions; 1 action still open.");
  await expect(modal.getByTestId("batch-progress")).toContainText("2 of 3 decided");
  await expect(first.getByTestId("batch-action-state")).toContainText("approved by alice");
  await expect(third.getByTestId("batch-action-state")).toContainText("rejected by alice");
  // Still pending: the panel keeps it and the agent still waits.
  await expect(page.locator(`[data-testid=blocker-row][data-gate-id='${gate.id}']`)).toHaveCount(1);

  // Second sitting: edit the write's arguments.
  await second.getByTestId("batch-edit").click();
  const editor = second.getByTestId("batch-args-call_2");
  await expect(editor).toBeVisible();
  await editor.click();
  await page.keyboard.press("Control+a");
  const edited = { path: "src/lib.rs", text: "pub fn new() {}" };
  await page.keyboard.insertText(JSON.stringify(edited));
  await page.keyboard.press("Control+Enter");

  const decided = await waiting;
  expect(decided.status).toBe("resolved");
  expect(decided.decision?.action).toBe("edit");
  const each = (decided.decision?.actions ?? []).map((a) => [a.id, a.action, a.decided_by]);
  expect(each).toEqual([
    ["call_1", "approve", "alice"],
    ["call_2", "edit", "alice"],
    ["call_3", "reject", "alice"],
  ]);
  expect(decided.decision?.actions?.[1]?.args).toEqual(edited);
  expect(decided.decision?.actions?.[2]?.text).toBe("never delete target here");
  await expect(modal).toHaveCount(0);
  await expect(page.locator(`[data-testid=blocker-row][data-gate-id='${gate.id}']`)).toHaveCount(0);
});

test("two reviewers share a batch: each sees the other's decisions live, and a clash names who decided first", async ({
  browser,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "coder"));
  const runId = await agent.startRun("Cleanup");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "tool_calls",
    mode: "sync",
    text: "Run these?",
    actions: [
      { id: "a", name: "list_dir", args: { path: "." } },
      { id: "b", name: "delete", args: { path: "tmp" } },
      { id: "c", name: "touch", args: { path: "x" } },
    ],
  });
  const waiting = agent.wait(gate.id, 60);
  const pages = [];
  for (const name of ["alice", "bob"]) {
    const context = await browser.newContext({ timezoneId: "UTC", locale: "en-GB" });
    const page = await context.newPage();
    await signIn(page, gatehouse, await gatehouse.token("reviewer", name));
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("batch-action")).toHaveCount(3);
    pages.push(page);
  }
  const [alice, bob] = pages as [(typeof pages)[0], (typeof pages)[0]];
  const row = (page: typeof alice, id: string) => page.locator(`[data-testid=batch-action][data-action-id='${id}']`);

  // Bob chooses for b and c but has not sent them yet; Alice decides b first.
  await row(bob, "b").getByTestId("batch-reject").click();
  await row(bob, "c").getByTestId("batch-approve").click();
  await row(alice, "b").getByTestId("batch-approve").click();
  await alice.keyboard.press("Control+Enter");
  await expect(row(alice, "b").getByTestId("batch-action-state")).toContainText("approved by alice");
  // Bob's open modal shows Alice's decision at once.
  await expect(row(bob, "b").getByTestId("batch-action-state")).toContainText("approved by alice");
  // His choice for b is dropped (it is decided); his choice for c still goes.
  await expect(bob.getByTestId("batch-submit")).toContainText("Send 2 decisions");
  await bob.keyboard.press("Control+Enter");
  await expect(bob.getByTestId("batch-notice")).toContainText("1 action still open");
  await expect(row(bob, "c").getByTestId("batch-action-state")).toContainText("approved by bob");

  // Alice approves the rest with `a` and Ctrl+Enter: only a is open.
  await alice.getByTestId("resolution-modal").focus();
  await alice.keyboard.press("a");
  await alice.keyboard.press("Control+Enter");
  const decided = await waiting;
  expect((decided.decision?.actions ?? []).map((x) => [x.id, x.action, x.decided_by])).toEqual([
    ["a", "approve", "alice"],
    ["b", "approve", "alice"],
    ["c", "approve", "bob"],
  ]);
});
