// A gate that needs a quorum of reviewers, in the browser: each approval
// is one vote, counted and said with the tally, and the gate stays in the
// panel (pending for everyone else) until the quorum is met; a reviewer
// who voted sees their vote, not an invitation to vote again.

import { expect, signIn, test } from "../support/fixtures";

test("a quorum gate counts each approval, waits in the panel until the quorum is met, then the agent gets it", async ({
  browser,
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Release 7");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: "Deploy release 7 to production?",
    quorum: { required: 2 },
  });
  const waiting = agent.wait(gate.id, 60);

  // Alice sees that two approvals are needed, and approves.
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(1);
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("quorum-tally")).toHaveText("0 of 2 approvals");
  await page.keyboard.press("Alt+a");
  await page.keyboard.press("Control+Enter");

  // Her vote is counted, not taken for the decision: the gate is still listed and the desk says 1 of 2.
  await expect(modal).toHaveCount(0);
  await expect(page.getByTestId("notice")).toHaveText("Vote counted: 1 of 2 approvals.");
  await expect(rows).toHaveCount(1);
  await expect(page.getByTestId("blocker-count")).toHaveText("1");
  const stored = await gatehouse.call<{ gate: { status: string } }>(gatehouse.adminToken, "GET", `/gates/${gate.id}`);
  expect(stored.gate.status).toBe("pending");

  // Opened again, it shows her vote and offers her no second one.
  await page.keyboard.press("Enter");
  await expect(modal.getByTestId("quorum-tally")).toHaveText("1 of 2 approvals");
  await expect(modal.getByTestId("quorum-vote")).toContainText("alice approved");
  await expect(modal.getByTestId("voted-notice")).toContainText("You approved");
  await expect(modal.getByTestId("conflict-notice")).toHaveCount(0);
  await expect(modal.getByTestId("decide-approve")).toBeDisabled();

  // Bob sees Alice's vote and approves: the quorum is met, the gate is decided.
  const bobPage = await browser.newPage();
  await signIn(bobPage, gatehouse, await gatehouse.token("reviewer", "bob"));
  await bobPage.keyboard.press("Enter");
  const bobModal = bobPage.getByTestId("resolution-modal");
  await expect(bobModal.getByTestId("quorum-tally")).toHaveText("1 of 2 approvals");
  await expect(bobModal.getByTestId("quorum-vote")).toContainText("alice approved");
  await bobPage.keyboard.press("Alt+a");
  await bobPage.keyboard.press("Control+Enter");
  await expect(bobModal).toHaveCount(0);
  await expect(bobPage.getByTestId("notice")).toHaveText("Approved: “Deploy release 7 to production?”.");

  const decided = await waiting;
  expect(decided.status).toBe("resolved");
  expect(decided.decision?.action).toBe("approve");
  expect(decided.decision?.decided_by).toBe("bob");
  // Alice's open modal sees it decided; both panels are empty.
  await expect(modal.getByTestId("closed-notice")).toContainText("resolved by bob");
  await expect(rows).toHaveCount(0);
  await expect(bobPage.getByTestId("blocker-row")).toHaveCount(0);
});
