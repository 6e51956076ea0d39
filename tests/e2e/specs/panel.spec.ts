// Gates an agent opens over HTTP appear in the blocker panel: the count,
// the 50-character preview, the agent's name and the SYNC / ASYNC /
// ADVISORY badge, in panel order, live from the event stream; a gate that
// expires unanswered leaves with a notice.

import { expect, signIn, test } from "../support/fixtures";

test("gates an agent opens over HTTP appear in the blocker panel with count, preview, agent and badge", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "builder-bot"));
  const runId = await agent.startRun("Release 1.4");
  // One gate before the page loads (the snapshot), the rest after (the event stream).
  const advisory = await agent.openGate(runId, {
    kind: "question",
    mode: "advisory",
    text: "Should the changelog mention the renamed flag?",
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const panel = page.getByTestId("blocker-panel");
  await expect(panel.getByTestId("blocker-count")).toHaveText("1");

  const longText =
    "Deploy **release 1.4** to production now that every check passed on staging and the canary looks healthy?";
  const sync = await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: longText });
  const async_ = await agent.openGate(runId, {
    kind: "question",
    mode: "async",
    priority: "high",
    text: "Which region first?\nDetails follow on the next line.",
  });

  await expect(panel.getByTestId("blocker-count")).toHaveText("3");
  const rows = panel.getByTestId("blocker-row");
  await expect(rows).toHaveCount(3);
  // Sync first, then async, then advisory.
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", sync.id);
  await expect(rows.nth(1)).toHaveAttribute("data-gate-id", async_.id);
  await expect(rows.nth(2)).toHaveAttribute("data-gate-id", advisory.id);

  const syncRow = rows.nth(0);
  // The preview is the first 50 characters of the text, cut with an ellipsis, shown as plain text (no `**`).
  await expect(syncRow.getByTestId("gate-preview")).toHaveText(`${Array.from(longText).slice(0, 50).join("").replaceAll("**", "")}…`);
  await expect(syncRow.getByTestId("gate-agent")).toHaveText("builder-bot");
  await expect(syncRow.getByTestId("mode-badge")).toHaveText("SYNC");
  await expect(syncRow.getByTestId("gate-age")).toHaveText("just now");

  // Only the first non-blank line is previewed.
  await expect(rows.nth(1).getByTestId("gate-preview")).toHaveText("Which region first?");
  await expect(rows.nth(1).getByTestId("mode-badge")).toHaveText("ASYNC");
  await expect(rows.nth(2).getByTestId("mode-badge")).toHaveText("ADVISORY");
  await expect(rows.nth(2).getByTestId("gate-preview")).toHaveText(advisory.text);

  // The badges' colours differ: red sync, blue async, grey advisory.
  const colours = await rows
    .getByTestId("mode-badge")
    .evaluateAll((badges) => badges.map((b) => getComputedStyle(b).backgroundColor));
  expect(new Set(colours).size).toBe(3);

  // A gate decided elsewhere (here, over the API) leaves the panel live.
  const reviewer = await gatehouse.token("reviewer", "bob");
  await gatehouse.call(reviewer, "POST", `/gates/${async_.id}/resolve`, { action: "respond", text: "eu-west" });
  await expect(panel.getByTestId("blocker-count")).toHaveText("2");
  await expect(panel.locator(`[data-gate-id="${async_.id}"]`)).toHaveCount(0);
  await expect(page).toHaveTitle("(2) Gatehouse");
});

test("a gate that expires unanswered leaves the panel with a notice saying so", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "builder-bot"));
  const runId = await agent.startRun("Release 1.5");
  // On a run of its own: the sync gate's expiry fails its run, withdrawing that run's other gates.
  const keep = await agent.openGate(await agent.startRun("Docs"), { kind: "question", mode: "async", text: "Anything for the changelog?" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);

  const lapsing = await agent.openGate(runId, { kind: "question", mode: "sync", text: "Tag the release now?", expires_in_secs: 1 });
  await expect(page.locator(`[data-testid=blocker-row][data-gate-id='${lapsing.id}']`)).toHaveCount(1);
  await expect.poll(async () => (await agent.wait(lapsing.id, 5)).status, { timeout: 15_000 }).toBe("expired");

  await expect(page.getByTestId("notice")).toHaveText(/^“Tag the release now\?” expired after \d+s without resolution\.$/);
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await expect(page.locator(`[data-testid=blocker-row][data-gate-id='${keep.id}']`)).toHaveCount(1);
});
