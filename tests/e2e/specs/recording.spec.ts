// Export then import of a recording: a run exported from one server
// (`GET /runs/{id}/recording`) and imported into another (`POST
// /recordings`) shows its pending gates in the second server's panel, and
// its decided gate keeps its decision.

import { Gatehouse } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

test("a run exported from one server and imported into another shows its gates in the second panel", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "archivist"));
  const runId = await agent.startRun("Quarterly report");
  const pending = [
    await agent.openGate(runId, { kind: "approval", action: "publish", mode: "sync", text: "Publish the Q3 report?" }),
    await agent.openGate(runId, { kind: "question", mode: "async", text: "Which chart style for revenue?" }),
  ];
  const decided = await agent.openGate(runId, { kind: "question", text: "Include the appendix?" });
  const reviewer = await gatehouse.token("reviewer", "alice");
  await gatehouse.call(reviewer, "POST", `/gates/${decided.id}/resolve`, { action: "respond", text: "Yes, all of it." });

  const recording = await gatehouse.call<{ runs: unknown[] }>(reviewer, "GET", `/runs/${runId}/recording`);
  expect(recording.runs).toHaveLength(1);

  const second = await Gatehouse.start();
  try {
    const imported = await second.call<{ runs: string[]; gates: number }>(second.adminToken, "POST", "/recordings", recording);
    expect(imported).toMatchObject({ runs: [runId], gates: 3 });
    // Importing the same run twice is refused whole.
    await second.call(second.adminToken, "POST", "/recordings", recording, [409]);

    await signIn(page, second, await second.token("reviewer", "bob"));
    await expect(page.getByTestId("blocker-count")).toHaveText("2");
    const rows = page.getByTestId("blocker-row");
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toHaveAttribute("data-gate-id", pending[0]!.id);
    await expect(rows.nth(0).getByTestId("gate-preview")).toHaveText("Publish the Q3 report?");
    await expect(rows.nth(0).getByTestId("gate-agent")).toHaveText("archivist");
    await expect(rows.nth(0).getByTestId("mode-badge")).toHaveText("SYNC");
    await expect(rows.nth(1)).toHaveAttribute("data-gate-id", pending[1]!.id);
    await expect(rows.nth(1).getByTestId("mode-badge")).toHaveText("ASYNC");

    // The imported gate opens with its text; the decided one kept its decision.
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("resolution-modal").getByTestId("gate-text")).toHaveText("Publish the Q3 report?");
    const old = await second.call<{ gate: { status: string; decision: { decided_by: string; text: string } } }>(
      second.adminToken,
      "GET",
      `/gates/${decided.id}`,
    );
    expect(old.gate.status).toBe("resolved");
    expect(old.gate.decision).toMatchObject({ decided_by: "alice", text: "Yes, all of it." });
  } finally {
    await second.stop();
  }
});
