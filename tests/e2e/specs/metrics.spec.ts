// The Metrics view (key 5): the review metrics as charts, computed by
// the server over every gate. Agents open gates that a person decides, that
// a standing allow-rule passes and that expire; the view shows the HITL,
// auto-pass and expiry rates, latency and agent ratings from them, and
// follows a decision made elsewhere without a reload.

import { expect, signIn, test } from "../support/fixtures";

test("the metrics view charts HITL and auto-pass rates, latency, expiry, models, reviewers and ratings, and follows new decisions", async ({
  page,
  gatehouse,
}) => {
  const reviewer = await gatehouse.token("reviewer", "alice");
  const deployer = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const writer = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const deployRun = await deployer.startRun("Ship billing", { prompt: "Ship billing", model: "deploy-model-1" });
  const writeRun = await writer.startRun("Write the release notes");
  const deploy = { kind: "approval", action: "deploy", mode: "sync", text: "Deploy billing?", payload: { env: "staging" } };

  // A person approves the first deploy; a rule then passes the second on its own.
  const first = await deployer.openGate(deployRun, deploy);
  await gatehouse.call(reviewer, "POST", `/gates/${first.id}/resolve`, { action: "approve" });
  await gatehouse.call(reviewer, "POST", "/allow-rules", { agent: "deployer", action: "deploy", any_args: true }, [201]);
  const second = await deployer.openGate(deployRun, deploy);
  expect(second.status).toBe("resolved");
  // A question nobody answers in time expires (and ends its run); another one waits.
  const lapsed = await writer.openGate(await writer.startRun("Draft the announcement"), { kind: "question", text: "Mention the outage?", expires_in_secs: 1 });
  await expect.poll(async () => (await writer.wait(lapsed.id, 5)).status, { timeout: 15_000 }).toBe("expired");
  const waiting = await writer.openGate(writeRun, { kind: "question", text: "Which version number?" });

  await signIn(page, gatehouse, reviewer);
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("5");
  await expect(page.getByTestId("tab-metrics")).toHaveAttribute("aria-selected", "true");
  const view = page.getByTestId("metrics-view");
  await expect(view.getByRole("heading", { name: "Metrics" })).toBeFocused();

  // Four gates: three waited for a person (one decided, one expired, one
  // pending), one passed by the rule; one of the three closed gates expired.
  await expect(view.getByTestId("metric-hitl")).toHaveText("75 %");
  await expect(view.getByTestId("metric-auto-pass")).toHaveText("25 %");
  await expect(view.getByTestId("metric-expiry")).toHaveText("33 %");
  await expect(view.getByTestId("metrics-figures")).toContainText("3 of 4 gates waited for a person");
  await expect(view.getByTestId("metrics-figures")).toContainText("1 of 3 closed gates expired");

  // Per review type and per agent, as bars whose length is the share.
  const byKind = view.getByTestId("chart-hitl-kind").getByTestId("chart-bar");
  await expect(byKind).toHaveCount(2);
  await expect(byKind.filter({ hasText: "Approval" })).toHaveAttribute("aria-label", "Approval: 50 %, 2 gates, 1 passed on their own");
  await expect(byKind.filter({ hasText: "Question" })).toHaveAttribute("aria-label", "Question: 100 %, 2 gates, 0 passed on their own");
  await expect(byKind.filter({ hasText: "Approval" }).getByTestId("chart-fill")).toHaveAttribute("width", "50");
  await expect(byKind.filter({ hasText: "Question" }).getByTestId("chart-fill")).toHaveAttribute("width", "100");
  const byAgent = view.getByTestId("chart-hitl-agent").getByTestId("chart-bar");
  await expect(byAgent.nth(0)).toHaveAttribute("data-label", "writer");
  await expect(byAgent.nth(1)).toHaveAttribute("data-label", "deployer");

  // Only approvals have a person's decision yet, so only they have a latency.
  const latency = view.getByTestId("chart-latency").getByTestId("chart-bar");
  await expect(latency).toHaveCount(1);
  await expect(latency.nth(0)).toHaveAttribute("data-label", "Approval");
  // The deployer's one decision by a person approved: 1 + 4 × 1 = 5 of 5.
  const deployerRating = view.getByTestId("chart-ratings").locator('[data-label="deployer"]');
  await expect(deployerRating.getByTestId("chart-value")).toHaveText("5.0 of 5");

  // Per model: the deployer's run named one; half its gates passed on their own, alice approved the other.
  const byModel = view.getByTestId("chart-auto-pass-model").getByTestId("chart-bar");
  await expect(byModel).toHaveCount(1);
  await expect(byModel.nth(0)).toHaveAttribute(
    "aria-label",
    /^deploy-model-1: 50 %, 2 gates, 1 passed on their own; people approved 100 %, edited 0 % of 1 in /,
  );
  // Per reviewer: alice decided one gate, approving it.
  const byReviewer = view.getByTestId("chart-reviewers").getByTestId("chart-bar");
  await expect(byReviewer).toHaveCount(1);
  await expect(byReviewer.nth(0)).toHaveAttribute("data-label", "alice");
  await expect(byReviewer.nth(0)).toHaveAttribute("aria-label", /1 decided: 100 % approved, 0 % edited, 0 % rejected$/);

  // A decision made elsewhere reaches the charts through the event stream.
  await gatehouse.call(reviewer, "POST", `/gates/${waiting.id}/resolve`, { action: "respond", text: "1.4.2" });
  await expect(latency).toHaveCount(2);
  await expect(latency.filter({ hasText: "Question" })).toContainText("1 decided by a person");
  await expect(view.getByTestId("metrics-figures")).toContainText("1 of 4 closed gates expired");
  await expect(view.getByTestId("metric-expiry")).toHaveText("25 %");
  // Alice's answer counts as a decision that neither approved, edited nor rejected.
  await expect(byReviewer.nth(0)).toHaveAttribute("aria-label", /2 decided: 50 % approved, 0 % edited, 0 % rejected$/);
  // Answering the writer's question judged nothing about the writer: it is still not rated.
  await expect(view.getByTestId("chart-ratings").getByTestId("chart-bar")).toHaveCount(1);

  // Keyboard only: the refresh button is reachable and named; 1 goes back to the desk.
  await page.keyboard.press("Tab");
  await expect(view.getByTestId("metrics-refresh")).toBeFocused();
  await page.keyboard.press("1");
  await expect(page.getByTestId("tab-desk")).toHaveAttribute("aria-selected", "true");
});
