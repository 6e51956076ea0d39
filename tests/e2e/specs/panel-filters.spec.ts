// The blocker panel's filters: the kind, mode, agent and run menus and the
// '/' text filter narrow the list (in panel order) and the "N shown" count
// beside the total, combine with each other, keep narrowing gates that
// arrive live, decide what Enter opens, and clearing them restores the
// whole queue.

import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";
import type { Gatehouse } from "../support/gatehouse.mjs";

/** The gate ids the panel lists, top to bottom. */
const listed = (page: Page) =>
  page.getByTestId("blocker-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-gate-id")));

async function queue(gatehouse: Gatehouse) {
  const deployer = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const writer = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const billing = await deployer.startRun("Ship billing");
  const notes = await writer.startRun("Release notes");
  const search = await deployer.startRun("Ship search");
  const gates = {
    billingDeploy: await deployer.openGate(billing, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy billing to staging?" }),
    region: await deployer.openGate(billing, { kind: "question", mode: "async", text: "Which region should go first?" }),
    score: await writer.openGate(notes, { kind: "quality_score", mode: "async", text: "Score the changelog draft", rubric: ["Clarity"] }),
    audience: await writer.openGate(notes, { kind: "question", mode: "sync", text: "Is the changelog for internal readers?" }),
    searchDeploy: await deployer.openGate(search, { kind: "approval", action: "deploy", mode: "advisory", text: "Deploy search to staging?" }),
  };
  return { deployer, runs: { billing, notes, search }, gates };
}

test("the kind, mode, agent and run menus narrow the panel, combine, and clear back to the whole queue", async ({ page, gatehouse }) => {
  const { runs, gates } = await queue(gatehouse);
  const { billingDeploy, region, score, audience, searchDeploy } = gates;
  const all = [billingDeploy.id, audience.id, region.id, score.id, searchDeploy.id];

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const count = page.getByTestId("blocker-count");
  const shown = page.getByTestId("blocker-shown");
  await expect(page.getByTestId("blocker-row")).toHaveCount(5);
  await expect.poll(() => listed(page)).toEqual(all);
  await expect(shown).toHaveCount(0);

  // Kind: the two questions, sync first; the total stays, "2 shown" beside it.
  const kind = page.getByTestId("filter-kind");
  await kind.selectOption("question");
  await expect(shown).toHaveText("2 shown");
  await expect(count).toHaveText("5");
  await expect.poll(() => listed(page)).toEqual([audience.id, region.id]);
  // Mode narrows further: the async question.
  const mode = page.getByTestId("filter-mode");
  await mode.selectOption("async");
  await expect(shown).toHaveText("1 shown");
  await expect.poll(() => listed(page)).toEqual([region.id]);
  await kind.selectOption("");
  await expect(shown).toHaveText("2 shown");
  await expect.poll(() => listed(page)).toEqual([region.id, score.id]);
  await mode.selectOption({ label: "ADVISORY" });
  await expect(shown).toHaveText("1 shown");
  await expect.poll(() => listed(page)).toEqual([searchDeploy.id]);
  await mode.selectOption("");
  await expect(shown).toHaveCount(0);
  await expect(page.getByTestId("blocker-row")).toHaveCount(5);

  // Agent and run menus list what is in the queue, with counts.
  const agent = page.getByTestId("filter-agent");
  await expect(agent.locator("option")).toHaveText(["Any agent", "deployer (3)", "writer (2)"]);
  const run = page.getByTestId("filter-run");
  await expect(run.locator("option")).toHaveCount(4);
  // Runs are named by their titles.
  await expect(run.locator(`option[value="${runs.billing}"]`)).toHaveText("Ship billing (2)");
  await expect(run.locator(`option[value="${runs.search}"]`)).toHaveText("Ship search (1)");
  await agent.selectOption("writer");
  await expect(shown).toHaveText("2 shown");
  await expect.poll(() => listed(page)).toEqual([audience.id, score.id]);
  // writer has no gate in the billing run: nothing matches, and the panel says so.
  await run.selectOption(runs.billing);
  await expect(shown).toHaveText("0 shown");
  await expect(page.getByTestId("blocker-row")).toHaveCount(0);
  await expect(page.getByTestId("blocker-empty")).toHaveText("No gate matches the filters.");
  await agent.selectOption("");
  await expect(shown).toHaveText("2 shown");
  await expect.poll(() => listed(page)).toEqual([billingDeploy.id, region.id]);

  // Enter opens the selected gate of the filtered list, not the queue's first.
  await run.selectOption("");
  await kind.selectOption("quality_score");
  await expect(shown).toHaveText("1 shown");
  await expect.poll(() => listed(page)).toEqual([score.id]);
  await page.getByTestId("blocker-list").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("resolution-modal")).toHaveAttribute("data-gate-id", score.id);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("resolution-modal")).toHaveCount(0);

  // Clear filters: every menu back to "any", the whole queue again.
  await mode.selectOption("async");
  await agent.selectOption("writer");
  await run.selectOption(runs.notes);
  await expect(shown).toHaveText("1 shown");
  await page.getByTestId("filter-clear").click();
  await expect(shown).toHaveCount(0);
  await expect(page.getByTestId("filter-clear")).toHaveCount(0);
  for (const menu of [kind, mode, agent, run]) await expect(menu).toHaveValue("");
  await expect.poll(() => listed(page)).toEqual(all);
  await expect(count).toHaveText("5");
});

test("'/' filters by text (preview, agent, kind), new gates are narrowed as they arrive, and clearing the text restores the list", async ({
  page,
  gatehouse,
}) => {
  const { deployer, runs, gates } = await queue(gatehouse);
  const { billingDeploy, score, audience, searchDeploy } = gates;

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const count = page.getByTestId("blocker-count");
  const shown = page.getByTestId("blocker-shown");
  await expect(page.getByTestId("blocker-row")).toHaveCount(5);

  await page.keyboard.press("/");
  const filter = page.getByTestId("panel-filter");
  await expect(filter).toBeFocused();
  await page.keyboard.type("STAGING");
  await expect(shown).toHaveText("2 shown");
  await expect.poll(() => listed(page)).toEqual([billingDeploy.id, searchDeploy.id]);

  // Gates opened while filtering: only those that match are listed; the total counts them all.
  const docs = await deployer.openGate(runs.search, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy docs to staging?" });
  await deployer.openGate(runs.search, { kind: "approval", action: "rotate", mode: "sync", text: "Rotate the API keys?" });
  await expect(count).toHaveText("7");
  await expect(shown).toHaveText("3 shown");
  await expect.poll(() => listed(page)).toEqual([billingDeploy.id, docs.id, searchDeploy.id]);

  // The text matches the agent's name and the gate's kind too.
  await page.keyboard.press("Control+a");
  await page.keyboard.type("writer");
  await expect(shown).toHaveText("2 shown");
  await expect.poll(() => listed(page)).toEqual([audience.id, score.id]);
  await page.keyboard.press("Control+a");
  await page.keyboard.type("quality");
  await expect(shown).toHaveText("1 shown");
  await expect.poll(() => listed(page)).toEqual([score.id]);
  await page.keyboard.press("Control+a");
  await page.keyboard.type("no such gate");
  await expect(page.getByTestId("blocker-empty")).toHaveText("No gate matches the filters.");

  // Clearing the text brings every gate back; Esc on the empty field leaves it.
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Backspace");
  await expect(filter).toHaveValue("");
  await expect(shown).toHaveCount(0);
  await expect(page.getByTestId("blocker-row")).toHaveCount(7);
  await page.keyboard.press("Escape");
  await expect(filter).not.toBeFocused();
  // Keys work on the panel again: j moves the selection.
  await page.getByTestId("blocker-list").focus();
  const rows = page.getByTestId("blocker-row");
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("j");
  await expect(rows.nth(1)).toHaveAttribute("aria-selected", "true");
});
