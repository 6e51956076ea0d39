// The preview follows the server: when the selected gate changes (another
// reviewer's vote, a new turn in its run) the pane shows the new content
// without a key pressed; when someone else decides it, the pane stays on it
// and says so, and j moves on to a gate still waiting.

import { expect, signIn, test } from "../support/fixtures";

test("the preview shows another reviewer's vote and the run's new turn live, and holds a gate decided elsewhere until j", async ({
  page,
  gatehouse,
}) => {
  const agentToken = await gatehouse.token("agent", "deployer");
  const agent = gatehouse.agent(agentToken);
  const runId = await agent.startRun("Release 7");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: "Deploy release 7 to production?",
    quorum: { required: 2 },
  });
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Rotate the logs?" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const pane = page.getByTestId("gate-preview-pane");
  await expect(pane.getByTestId("preview-text")).toHaveText("Deploy release 7 to production?");
  await expect(pane.getByTestId("quorum-tally")).toHaveText("0 of 2 approvals");

  // Bob votes elsewhere: the tally moves here with no key pressed.
  const bob = await gatehouse.token("reviewer", "bob");
  await gatehouse.call(bob, "POST", `/gates/${gate.id}/resolve`, { action: "approve", text: "staging is green" });
  await expect(pane.getByTestId("quorum-tally")).toHaveText("1 of 2 approvals");
  await expect(pane.getByTestId("quorum-vote")).toContainText("bob");

  // The agent says something in the run: the recent turns show it.
  await gatehouse.call(agentToken, "POST", `/runs/${runId}/turns?wait=0`, { role: "agent", content: "Canary at 5%, error rate flat." });
  await expect(pane.getByTestId("gate-context")).toContainText("Canary at 5%, error rate flat.");

  // Carol's approval meets the quorum: the pane stays on the gate and says so; j moves on to what still waits.
  await gatehouse.call(await gatehouse.token("reviewer", "carol"), "POST", `/gates/${gate.id}/resolve`, { action: "approve" });
  await expect(pane.getByTestId("preview-decided-by")).toHaveText("Approved by carol.");
  await page.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toHaveText("Rotate the logs?");
  await expect(pane.getByTestId("quorum-tally")).toHaveCount(0);
});
