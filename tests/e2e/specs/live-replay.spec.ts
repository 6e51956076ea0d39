// Live replay in the Runs view: the server plays the selected run's events
// again into a replay stream of its own. Step holds it at each event in
// turn; playing at 10x sends the rest; every frame is marked REPLAY, in the
// run's order, and the run itself is unchanged.

import { expect, signIn, test } from "../support/fixtures";

test("a stored run is replayed live, step by step then at 10x, each event marked as replay", async ({ page, gatehouse }) => {
  const reviewer = await gatehouse.token("reviewer", "alice");
  const deployer = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const run = await deployer.startRun("Ship billing");
  for (const text of ["Deploy to staging?", "Deploy to production?"]) {
    const gate = await deployer.openGate(run, { kind: "question", mode: "async", text });
    await gatehouse.call(reviewer, "POST", `/gates/${gate.id}/resolve`, { action: "respond", response: "yes" });
  }
  const events = await gatehouse.call<{ type: string }[]>(reviewer, "GET", `/runs/${run}/events?limit=1000`);
  const types = (Array.isArray(events) ? events : (events as unknown as { events: { type: string }[] }).events).map((e) => e.type);
  expect(types.length).toBeGreaterThan(3);

  await signIn(page, gatehouse, reviewer);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const replay = page.getByTestId("live-replay");
  const frames = replay.getByTestId("live-replay-frame");

  await replay.getByTestId("live-replay-step").click();
  await expect(frames).toHaveCount(1);
  await expect(replay.getByTestId("live-replay-status")).toHaveText(`Paused · 1 of ${types.length} events · 1×`);
  await replay.getByTestId("live-replay-step").click();
  await expect(frames).toHaveCount(2);

  await replay.getByTestId("live-replay-10x").click();
  await expect(frames).toHaveCount(types.length);
  await expect(replay.getByTestId("live-replay-status")).toHaveText(`Finished · ${types.length} of ${types.length} events · 10×`);
  await expect(frames.first()).toContainText("REPLAY");
  expect(await frames.evaluateAll((items) => items.map((i) => i.getAttribute("data-type")))).toEqual(types);

  // Nothing was stored: the run list still holds the one run.
  await expect(page.getByTestId("run-list").getByTestId("run-row")).toHaveCount(1);
});
