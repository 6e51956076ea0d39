// Two reviewers in two browser contexts (two tokens) on one gate: the first
// decision wins; the second reviewer is told who resolved it and when, and
// what they had typed stays on screen.

import type { Browser, Page } from "@playwright/test";
import type { Gatehouse } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

/** A reviewer's page in a context of its own; `deaf` holds back its event stream, as on a slow network. */
async function reviewerPage(browser: Browser, server: Gatehouse, name: string, deaf = false): Promise<Page> {
  const context = await browser.newContext({ timezoneId: "UTC", locale: "en-GB" });
  const page = await context.newPage();
  const token = await server.token("reviewer", name);
  if (!deaf) {
    await signIn(page, server, token);
    return page;
  }
  await page.route("**/api/hitl/events**", (route) => route.abort());
  await page.goto(server.signInUrl(token));
  await expect(page.getByTestId("connection")).toHaveText("Reconnecting…");
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  return page;
}

async function openQuestion(server: Gatehouse): Promise<{ gateId: string; waiting: Promise<unknown> }> {
  const agent = server.agent(await server.token("agent", "researcher"));
  const runId = await agent.startRun("Survey");
  const gate = await agent.openGate(runId, { kind: "question", mode: "sync", text: "Which sources count as primary?" });
  return { gateId: gate.id, waiting: agent.wait(gate.id) };
}

/** What `formatTime` shows for `iso` in the pages' locale and time zone. */
function shown(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", { timeZone: "UTC" });
}

test("the slower reviewer's submission is refused naming who resolved it and when, and keeps their text", async ({
  browser,
  gatehouse,
}) => {
  const { gateId, waiting } = await openQuestion(gatehouse);
  const alice = await reviewerPage(browser, gatehouse, "alice");
  // Bob's page does not hear of Alice's decision before he submits.
  const bob = await reviewerPage(browser, gatehouse, "bob", true);

  for (const page of [alice, bob]) await page.keyboard.press("Enter");
  const bobText = "Peer-reviewed papers and the original datasets only.";
  await bob.getByTestId("answer-input").fill(bobText);
  await alice.getByTestId("answer-input").fill("Only the datasets.");
  await alice.keyboard.press("Control+Enter");
  const decided = (await waiting) as { decision: { decided_by: string; decided_at: string; text: string } };
  expect(decided.decision.decided_by).toBe("alice");
  expect(decided.decision.text).toBe("Only the datasets.");

  await bob.keyboard.press("Control+Enter");
  const notice = bob.getByTestId("conflict-notice");
  await expect(notice).toContainText(`alice resolved this gate at ${shown(decided.decision.decided_at)}.`);
  await expect(notice).toContainText("Your unsent text is kept below.");
  await expect(bob.getByTestId("answer-input")).toHaveValue(bobText);
  await expect(bob.getByTestId("answer-input")).toBeVisible();
  await expect(bob.getByTestId("decide-respond")).toBeDisabled();
  // The gate is out of Bob's queue, and the record still names Alice.
  await expect(bob.getByTestId(`blocker-row`)).toHaveCount(0);
  const stored = await gatehouse.call<{ gate: { decision: { decided_by: string; text: string } } }>(
    gatehouse.adminToken,
    "GET",
    `/gates/${gateId}`,
  );
  expect(stored.gate.decision).toMatchObject({ decided_by: "alice", text: "Only the datasets." });
});

test("a reviewer watching a gate that someone else resolves sees who and when at once, with their text kept", async ({
  browser,
  gatehouse,
}) => {
  const { waiting } = await openQuestion(gatehouse);
  const alice = await reviewerPage(browser, gatehouse, "alice");
  const bob = await reviewerPage(browser, gatehouse, "bob");
  for (const page of [alice, bob]) await page.keyboard.press("Enter");
  const bobText = "Anything with a DOI.";
  await bob.getByTestId("answer-input").fill(bobText);

  await alice.getByTestId("answer-input").fill("Only the datasets.");
  await alice.keyboard.press("Control+Enter");
  const decided = (await waiting) as { decision: { decided_at: string } };

  // The event stream tells Bob's open modal before he submits anything.
  const notice = bob.getByTestId("closed-notice");
  await expect(notice).toContainText(`This gate was just resolved by alice at ${shown(decided.decision.decided_at)}.`);
  await expect(bob.getByTestId("answer-input")).toHaveValue(bobText);
  await expect(bob.getByTestId("decide-respond")).toBeDisabled();
  await expect(bob.getByTestId("blocker-count")).toHaveText("0");
});

async function openApproval(server: Gatehouse): Promise<string> {
  const agent = server.agent(await server.token("agent", "deployer"));
  const runId = await agent.startRun("Cleanup");
  const gate = await agent.openGate(runId, { kind: "approval", action: "DROP TABLE orders_2019", mode: "sync", text: "Drop the 2019 orders?" });
  return gate.id;
}

test("the reviewer who lost sees live whether the other approved or rejected, and why, with their own text kept", async ({
  browser,
  gatehouse,
}) => {
  const gateId = await openApproval(gatehouse);
  const bob = await reviewerPage(browser, gatehouse, "bob");
  await bob.keyboard.press("Enter");
  const modal = bob.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gateId);
  const bobText = "Looks fine to me, but check the backups";
  await modal.getByTestId("answer-input").fill(bobText);

  await gatehouse.call(await gatehouse.token("reviewer", "alice"), "POST", `/gates/${gateId}/resolve`, {
    action: "reject",
    text: "2019 is still audited",
  });

  await expect(modal.getByTestId("closed-notice")).toContainText("This gate was just resolved by alice");
  const record = modal.getByTestId("decision-record");
  await expect(record.getByTestId("decision-outcome")).toContainText("Rejected by alice");
  await expect(record.getByTestId("decision-text")).toHaveText("2019 is still audited");
  await expect(modal.getByTestId("answer-input")).toHaveValue(bobText);
  await expect(modal.getByTestId("decide-approve")).toBeDisabled();
});

test("the slower reviewer's refused submission says what the first decided and why", async ({ browser, gatehouse }) => {
  const gateId = await openApproval(gatehouse);
  const bob = await reviewerPage(browser, gatehouse, "bob", true);
  await bob.keyboard.press("Enter");
  const modal = bob.getByTestId("resolution-modal");
  await expect(modal.getByTestId("decide-approve")).toBeEnabled();
  await modal.getByTestId("answer-input").fill("ship it");
  await gatehouse.call(await gatehouse.token("reviewer", "alice"), "POST", `/gates/${gateId}/resolve`, { action: "approve", text: "backups verified" });

  await bob.keyboard.press("Alt+a");
  await bob.keyboard.press("Control+Enter");
  await expect(modal.getByTestId("conflict-notice")).toContainText("alice resolved this gate at");
  const record = modal.getByTestId("decision-record");
  await expect(record.getByTestId("decision-outcome")).toContainText("Approved by alice");
  await expect(record.getByTestId("decision-text")).toHaveText("backups verified");
  await expect(modal.getByTestId("answer-input")).toHaveValue("ship it");
});
