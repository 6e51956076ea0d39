// A reviewer resolves gates with the keyboard alone (j/k, Enter, typing,
// Alt+r from the note, Ctrl+Enter, Esc) and the agents' pending long polls get the decisions.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer answers and rejects with only the keyboard and the waiting agents get the decisions", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const runId = await agent.startRun("Migrate the billing tables");
  const question = await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    priority: "urgent",
    text: "Which **database** should the migration target?",
  });
  const approval = await agent.openGate(runId, {
    kind: "approval",
    action: "drop_table",
    mode: "sync",
    text: "Drop the `legacy_invoices` table?",
  });
  // The agents wait on both, as an SDK would, before anyone decides.
  const answered = agent.wait(question.id);
  const rejected = agent.wait(approval.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(2);

  // The most urgent gate starts selected; j moves down, k back up.
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("j");
  await expect(rows.nth(1)).toHaveAttribute("aria-selected", "true");
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "false");
  await page.keyboard.press("k");
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "true");
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", question.id);

  // Enter opens it; a question starts with the cursor in the answer box.
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", question.id);
  await expect(modal.getByTestId("gate-text")).toContainText("Which database should the migration target?");
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.type("Use the replica first, then primary.");
  await page.keyboard.press("Control+Enter");

  const decided = await answered;
  expect(decided.status).toBe("resolved");
  expect(decided.decision?.action).toBe("respond");
  expect(decided.decision?.text).toBe("Use the replica first, then primary.");
  expect(decided.decision?.decided_by).toBe("alice");
  await expect(modal).toHaveCount(0);
  await expect(page.getByTestId("notice")).toHaveText(/^Answered: “Which .*database.* target\?”\.$/);
  await expect(page.getByTestId("blocker-count")).toHaveText("1");

  // Back in the panel: the approval is all that is left. Enter, r, a reason, Ctrl+Enter.
  await expect(page.getByTestId("blocker-list")).toBeFocused();
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", approval.id);
  // Esc closes without deciding; Enter opens it again.
  await page.keyboard.press("Escape");
  await expect(modal).toHaveCount(0);
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", approval.id);
  await expect(modal.getByTestId("decide-approve")).toBeEnabled();
  // The cursor starts in the note, where r is a letter: Alt+r arms the rejection from there.
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.press("Alt+r");
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await expect(modal.getByTestId("answer-input")).toHaveValue("");
  await expect(modal.getByText("Reason for rejecting")).toBeVisible();
  await page.keyboard.type("Invoices from 2019 are still audited.");
  await page.keyboard.press("Control+Enter");

  const refused = await rejected;
  expect(refused.decision?.action).toBe("reject");
  expect(refused.decision?.text).toBe("Invoices from 2019 are still audited.");
  await expect(page.getByTestId("blocker-count")).toHaveText("0");
  await expect(page.getByTestId("blocker-empty")).toBeVisible();
});

test("? lists every shortcut and / focuses the filter", async ({ page, gatehouse }) => {
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("?");
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("Submit the decision");
  await expect(dialog).toContainText("Ctrl+Enter");
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await page.keyboard.press("/");
  await expect(page.getByTestId("panel-filter")).toBeFocused();
});

test("? lists the shortcuts from an open gate too, without the view keys, and closing the list returns to the gate", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops"));
  const runId = await agent.startRun("Weekly maintenance");
  const gate = await agent.openGate(runId, { kind: "approval", action: "restart", mode: "sync", text: "Restart the cache?" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  await expect(modal.getByTestId("decide-approve")).toBeEnabled();

  // ? in the gate (from the dialog; in the note, where the cursor starts, ? is a character):
  // the list, headed truthfully (the view keys are not for an open gate).
  await modal.focus();
  await page.keyboard.press("?");
  const shortcuts = page.getByTestId("shortcuts-dialog");
  await expect(shortcuts).toBeVisible();
  await expect(shortcuts.getByRole("heading", { name: "Anywhere, an open gate included" })).toBeVisible();
  await expect(shortcuts.getByRole("heading", { name: "In every view (not in an open gate)" })).toBeVisible();
  await expect(shortcuts.getByRole("heading", { name: "In an open gate", exact: true })).toBeVisible();

  // Esc closes the list, not the gate; focus is back in the gate, so its keys work.
  await page.keyboard.press("Escape");
  await expect(shortcuts).toHaveCount(0);
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);
  await expect(modal).toBeFocused();
  // A digit stays the gate's (no option here, so nothing): the view does not switch.
  await page.keyboard.press("2");
  await expect(modal).toBeVisible();
  await expect(page.getByTestId("tab-desk")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("r");
  await expect(modal.getByTestId("answer-input")).toBeFocused();

  // Typed in a field, ? is just a character.
  await page.keyboard.type("why?");
  await expect(modal.getByTestId("answer-input")).toHaveValue("why?");
  await expect(shortcuts).toHaveCount(0);
});

test("a, r and e in the panel open the selected gate ready for that decision", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops"));
  const runId = await agent.startRun("Weekly maintenance");
  const approval = { kind: "approval", mode: "sync", text: "Restart the cache?", payload: { service: "cache" } } as const;
  const first = await agent.openGate(runId, { ...approval, action: "restart" });
  const second = await agent.openGate(runId, { ...approval, action: "rotate", text: "Rotate the keys?" });
  const third = await agent.openGate(runId, { ...approval, action: "resize", text: "Resize the pool?", payload: { size: 4 } });
  const decisions = [agent.wait(first.id), agent.wait(second.id), agent.wait(third.id)];

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(3);
  const modal = page.getByTestId("resolution-modal");

  // a: the gate opens with approval armed; nothing is sent until the reviewer confirms.
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", first.id);
  await page.keyboard.press("a");
  await expect(modal).toHaveAttribute("data-gate-id", first.id);
  await expect(modal.getByTestId("decide-approve")).toContainText("Confirm: approve");
  expect((await gatehouse.call<{ gate: { status: string } }>(gatehouse.adminToken, "GET", `/gates/${first.id}`)).gate.status).toBe("pending");
  await page.keyboard.press("Control+Enter");
  expect((await decisions[0]!).decision).toMatchObject({ action: "approve", decided_by: "alice" });

  // r: the reason box, then Ctrl+Enter rejects with the reason.
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", second.id);
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("r");
  await expect(modal).toHaveAttribute("data-gate-id", second.id);
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.insertText("keys were rotated yesterday");
  await page.keyboard.press("Control+Enter");
  expect((await decisions[1]!).decision).toMatchObject({ action: "reject", text: "keys were rotated yesterday" });

  // e: the payload editor, then approve with the edit.
  await expect(rows).toHaveCount(1);
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("e");
  await expect(modal).toHaveAttribute("data-gate-id", third.id);
  await expect(modal.getByTestId("payload-input")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"size": 8}');
  await page.keyboard.press("Control+Enter");
  expect((await decisions[2]!).decision).toMatchObject({ action: "edit", payload: { size: 8 } });
});

test("Esc leaves a field outside a gate, so the view keys work again; a search field is cleared first", async ({ page, gatehouse }) => {
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));

  // The rules view puts focus on its heading, so the view keys go on working;
  // its first menu, reached by Tab, keeps digits (they pick options) until Esc.
  await page.keyboard.press("4");
  await expect(page.getByRole("heading", { name: "Allow-rules" })).toBeFocused();
  await page.keyboard.press("Tab");
  const which = page.getByTestId("rules-status-filter");
  await expect(which).toBeFocused();
  await page.keyboard.press("5");
  await expect(page.getByTestId("rules-view")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(which).not.toBeFocused();
  await page.keyboard.press("5");
  await expect(page.getByTestId("metrics-view")).toBeVisible();

  // The search field: the first Esc clears the text, the second leaves the field.
  await page.keyboard.press("3");
  const field = page.getByTestId("search-input");
  await expect(field).toBeFocused();
  await page.keyboard.type("deploy 1");
  await page.keyboard.press("Escape");
  await expect(field).toHaveValue("");
  await expect(field).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(field).not.toBeFocused();
  await page.keyboard.press("1");
  await expect(page.getByTestId("search-view")).toHaveCount(0);

  // The panel's filter: Esc clears it, Esc again leaves it, and j/k move in the panel.
  await page.keyboard.press("/");
  const filter = page.getByTestId("panel-filter");
  await page.keyboard.type("nothing matches this");
  await page.keyboard.press("Escape");
  await expect(filter).toHaveValue("");
  await page.keyboard.press("Escape");
  await expect(filter).not.toBeFocused();

  // The shortcuts list says so.
  await page.keyboard.press("?");
  await expect(page.getByTestId("shortcut-row").and(page.locator("[data-action='field.leave']"))).toContainText("Leave the field");
});
