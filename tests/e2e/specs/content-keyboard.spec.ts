// Keyboard friction on the reviewer's desk, each as a reviewer met it: the
// view key 4 left focus in the rules' dropdown (the view keys then did
// nothing until Esc); a digit scoring a quality criterion sent Tab past
// that criterion's justification; the "Decided" word named no gate and
// stayed; the search lost its form when the reviewer looked elsewhere and
// did not see a gate decided meanwhile; the shortcuts list was one long
// column with no way to find a key; the modal's header did not say the
// gate's priority.

import { expect, signIn, test } from "../support/fixtures";

test("after the view key 4 the view keys go on working: 5 shows the metrics, 1 the desk", async ({ page, gatehouse }) => {
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("4");
  await expect(page.getByTestId("rules-view")).toBeVisible();
  await expect(page.getByTestId("rules-status-filter")).not.toBeFocused();
  await page.keyboard.press("5");
  await expect(page.getByTestId("metrics-view")).toBeVisible();
  await page.keyboard.press("4");
  await expect(page.getByTestId("rules-view")).toBeVisible();
  await page.keyboard.press("1");
  await expect(page.getByTestId("rules-view")).toHaveCount(0);
  await expect(page.getByTestId("tab-desk")).toHaveAttribute("aria-selected", "true");
});

test("scoring a criterion with a digit keeps the cursor on it: Tab goes to its own justification", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Beta release notes");
  await agent.openGate(runId, { kind: "quality_score", mode: "sync", required_score: 3, rubric: ["Accuracy", "Clarity"], text: "Score the notes." });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const review = page.getByTestId("resolution-modal").getByTestId("quality-review");
  const criteria = review.getByTestId("criterion");
  await expect(criteria.nth(0).getByTestId("score-1")).toBeFocused();

  await page.keyboard.press("4");
  await expect(criteria.nth(0).getByTestId("score-4")).toBeChecked();
  await expect(criteria.nth(0).getByTestId("score-4")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(criteria.nth(0).getByTestId("justification")).toBeFocused();
  await page.keyboard.type("Every figure checked");
  // On to the next criterion, scored by its digit, then its justification.
  await page.keyboard.press("Tab");
  await expect(criteria.nth(1).getByTestId("score-1")).toBeFocused();
  await page.keyboard.press("3");
  await expect(criteria.nth(1).getByTestId("score-3")).toBeChecked();
  await page.keyboard.press("Tab");
  await expect(criteria.nth(1).getByTestId("justification")).toBeFocused();
  await expect(criteria.nth(0).getByTestId("justification")).toHaveValue("Every figure checked");
});

test("the word after a decision names the gate and goes at the next key, or by itself after a few seconds", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops"));
  const runId = await agent.startRun("Maintenance");
  await agent.openGate(runId, { kind: "approval", action: "restart", mode: "sync", text: "Restart the cache?" });
  await agent.openGate(runId, { kind: "approval", action: "flush", mode: "sync", text: "Flush the queue?" });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const text = await modal.getByTestId("gate-text").innerText();
  await page.keyboard.press("Alt+a");
  await page.keyboard.press("Control+Enter");
  await expect(modal).toHaveCount(0);
  const notice = page.getByTestId("notice");
  await expect(notice).toHaveText(`Approved: “${text.trim()}”.`);
  // The next action (j in the panel) clears it.
  await page.keyboard.press("j");
  await expect(notice).toHaveCount(0);

  // The second one, left alone, clears itself.
  await page.keyboard.press("Enter");
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.press("Alt+r");
  await page.keyboard.type("not now");
  await page.keyboard.press("Control+Enter");
  await expect(notice).toHaveText(/^Rejected: “.+”\.$/);
  await expect(notice).toHaveCount(0, { timeout: 10_000 });
});

test("the search keeps its form across views and follows gates decided elsewhere", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "release-bot"));
  const runId = await agent.startRun("Billing release");
  const deploy = await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy the billing service?" });
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which region?" });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("3");
  const view = page.getByTestId("search-view");
  await view.getByTestId("search-input").fill("deploy");
  await view.getByTestId("search-status-filter").selectOption("pending");
  const hits = view.getByTestId("search-hit");
  await expect(hits).toHaveCount(1);

  // Away and back: the form and its hits are as they were.
  await page.getByTestId("tab-runs").click();
  await expect(view).toHaveCount(0);
  await page.getByTestId("tab-search").click();
  await expect(view.getByTestId("search-input")).toHaveValue("deploy");
  await expect(view.getByTestId("search-status-filter")).toHaveValue("pending");
  await expect(hits).toHaveCount(1);

  // Another reviewer decides it: the hit follows, without a keystroke here.
  await view.getByTestId("search-status-filter").selectOption("");
  await expect(hits.nth(0).getByTestId("hit-status")).toHaveText("Pending");
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${deploy.id}/resolve`, { action: "approve" });
  await expect(hits.nth(0).getByTestId("hit-status")).toHaveText("Approved by bob");
});

test("the shortcuts list is filtered by a word or a key, and fits a 1440×900 window in columns", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("?");
  const dialog = page.getByTestId("shortcuts-dialog");
  const groups = dialog.getByTestId("shortcut-groups");
  const rows = dialog.getByTestId("shortcut-row");
  const all = await rows.count();
  expect(all).toBeGreaterThan(40);
  const fits = await groups.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, bottom: el.getBoundingClientRect().bottom }));
  expect(fits.scroll).toBeLessThanOrEqual(fits.client + 1);
  expect(fits.bottom).toBeLessThanOrEqual(900);

  const filter = dialog.getByTestId("shortcuts-filter");
  await filter.focus();
  await page.keyboard.type("replay");
  await expect(rows).toHaveCount(3);
  await expect(rows.first()).toContainText("Replay");
  await filter.fill("ctrl+enter");
  await expect(rows.and(page.locator("[data-action='gate.submit']"))).toHaveCount(1);
  await filter.fill("no such shortcut");
  await expect(dialog.getByTestId("shortcuts-none")).toBeVisible();
  // Esc clears the filter first (every shortcut back), then closes the list.
  await page.keyboard.press("Escape");
  await expect(filter).toHaveValue("");
  await expect(dialog.getByTestId("shortcuts-count")).toHaveText(`${all} shown`);
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
});

test("the modal's header says the gate's priority, how long it has waited and when it runs out", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "ops"));
  const runId = await agent.startRun("Maintenance");
  await agent.openGate(runId, { kind: "approval", action: "restart", mode: "sync", priority: "urgent", text: "Restart the cache?", expires_in_secs: 900 });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const header = page.getByTestId("resolution-modal").locator("header");
  await expect(header.getByTestId("gate-priority")).toHaveText("Urgent priority");
  await expect(header.getByTestId("gate-age")).toHaveText("opened just now");
  await expect(header.getByTestId("gate-deadline")).toContainText(/expires in 1[45]m/);
});
