// Export then import of a recording: a run exported from one server and
// imported into another comes in as history, marked imported: its pending
// gates are closed there (no live blocker in the second server's panel)
// and its decided gate keeps its decision. Importing it again says it is
// already there and offers to show it. Once over the API
// (`GET /runs/{id}/recording`, `POST /recordings`), once as a reviewer
// does it in the Runs view (a download, then the file picker).

import { readFile } from "node:fs/promises";
import { Gatehouse } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

test("a run exported from one server and imported into another comes in as history, never as blockers", async ({
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
    // Importing the same run twice is refused whole, pointing at the run it already has.
    const again = await second.call<{ code: string; field: string; message: string }>(second.adminToken, "POST", "/recordings", recording, [409]);
    expect(again).toMatchObject({ code: "conflict", field: "runs[0].run.id" });
    expect(again.message).toContain(runId);

    await signIn(page, second, await second.token("reviewer", "bob"));
    await expect(page.getByTestId("blocker-count")).toHaveText("0");
    await expect(page.getByTestId("blocker-row")).toHaveCount(0);
    for (const g of pending) {
      const { gate } = await second.call<{ gate: { status: string; status_reason: string; imported: { by: string } } }>(
        second.adminToken,
        "GET",
        `/gates/${g.id}`,
      );
      expect(gate).toMatchObject({ status: "cancelled", imported: { by: "admin" } });
      expect(gate.status_reason).toContain("imported undecided");
    }
    const old = await second.call<{ gate: { status: string; decision: { decided_by: string; text: string } } }>(
      second.adminToken,
      "GET",
      `/gates/${decided.id}`,
    );
    expect(old.gate.status).toBe("resolved");
    expect(old.gate.decision).toMatchObject({ decided_by: "alice", text: "Yes, all of it." });

    // The run keeps its recorded status, but never as live work: no live list holds it.
    const { run: stored } = await second.call<{ run: { status: string } }>(second.adminToken, "GET", `/run/${runId}/state`);
    expect(stored.status).toBe("awaiting_human");
    const live = await second.call<{ runs: unknown[] }>(second.adminToken, "GET", "/runs/active");
    expect(live.runs).toHaveLength(0);
    const refused = await second.call<{ code: string; message: string }>(second.adminToken, "POST", `/run/${runId}/pause`, {}, [409]);
    expect(refused.message).toContain("imported from a recording");

    // The Runs view shows it as history: "Imported", not awaiting a reviewer, with no control to resume or steer it.
    await page.keyboard.press("2");
    const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    await row.click();
    await expect(row.getByTestId("run-status")).toHaveText("Imported");
    await expect(row.getByTestId("run-row-imported")).toHaveText("recorded as awaiting a reviewer");
    await expect(page.getByTestId("run-imported")).toContainText("Imported");
    await expect(page.getByTestId("run-history-note")).toContainText("cannot be paused, resumed, retried or steered");
    for (const control of ["run-pause", "run-resume", "run-step", "run-cancel"]) await expect(page.getByTestId(control)).toBeDisabled();
    await page.keyboard.press("p");
    await expect(page.getByTestId("runs-notice")).toHaveCount(0);
  } finally {
    await second.stop();
  }
});

test("a reviewer exports a run from the Runs view and imports the file into another server's", async ({
  page,
  browser,
  gatehouse,
}, testInfo) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "archivist"));
  const runId = await agent.startRun("Board minutes");
  const gate = await agent.openGate(runId, { kind: "approval", action: "send", mode: "sync", text: "Send the minutes?" });

  // Export: Runs view (key 2), the run selected, e downloads its recording.
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("2");
  const runRow = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
  await runRow.click();
  await expect(page.getByTestId("run-title")).toHaveText("Board minutes");
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("recording-export").click()]);
  const file = testInfo.outputPath(download.suggestedFilename());
  await download.saveAs(file);
  expect(download.suggestedFilename()).toMatch(/\.json$/);
  await expect(page.getByTestId("runs-notice")).toContainText(`Exported ${download.suggestedFilename()}`);
  const saved = JSON.parse(await readFile(file, "utf8")) as { runs: { run: { id: string } }[] };
  expect(saved.runs.map((r) => r.run.id)).toEqual([runId]);

  // Import: another server, another reviewer, the same file through the file picker.
  const second = await Gatehouse.start();
  try {
    const other = await browser.newPage();
    await signIn(other, second, await second.token("reviewer", "bob"));
    await expect(other.getByTestId("blocker-count")).toHaveText("0");
    await other.keyboard.press("2");
    await other.getByTestId("recording-file").setInputFiles(file);
    await expect(other.getByTestId("runs-notice")).toContainText("Imported 1 run, 1 gate and");
    const importedRow = other.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    await expect(importedRow).toBeVisible();
    await expect(importedRow.getByTestId("run-status")).toHaveText("Imported");
    await expect(importedRow.getByTestId("run-row-imported")).toHaveText("recorded as awaiting a reviewer");
    await expect(other.getByTestId("run-imported")).toContainText("Imported");

    // The same file again: already imported, with the run to show; the notice goes when dismissed.
    await other.locator(`[data-testid="run-row"]`).first().click();
    await other.getByTestId("recording-file").setInputFiles(file);
    const notice = other.getByTestId("runs-notice");
    await expect(notice).toContainText("already imported");
    await expect(notice).not.toContainText("409");
    await other.getByTestId("runs-notice-show").click();
    await expect(other.getByTestId("run-title")).toHaveText("Board minutes");
    await expect(notice).toHaveCount(0);
    await other.getByTestId("recording-file").setInputFiles(file);
    await expect(notice).toContainText("already imported");
    await other.getByTestId("runs-notice-dismiss").click();
    await expect(notice).toHaveCount(0);

    // Back on the desk, the imported gate is history: no blocker waits in the panel.
    await other.keyboard.press("1");
    await expect(other.getByTestId("blocker-count")).toHaveText("0");
    await expect(other.getByTestId("blocker-row")).toHaveCount(0);
    const { gate: there } = await second.call<{ gate: { status: string } }>(second.adminToken, "GET", `/gates/${gate.id}`);
    expect(there.status).toBe("cancelled");
  } finally {
    await second.stop();
  }
});

test("a reviewer exports a whole session, every run of it in one file, by keyboard", async ({ page, gatehouse }, testInfo) => {
  const agentToken = await gatehouse.token("agent", "planner");
  const start = (title: string) =>
    gatehouse.call<{ run_id: string }>(agentToken, "POST", "/run", { run_input: { prompt: title }, title, session_id: "sess-launch" });
  const first = (await start("Draft the launch plan")).run_id;
  const second = (await start("Review the launch plan")).run_id;
  const elsewhere = await gatehouse.agent(agentToken).startRun("Unrelated chores");

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("2");
  await page.locator(`[data-testid="run-row"][data-run-id="${second}"]`).click();
  await expect(page.getByTestId("run-title")).toHaveText("Review the launch plan");
  const button = page.getByTestId("recording-export-session");
  await expect(button).toHaveAttribute("title", "Every run of session sess-launch in one recording");
  await page.getByTestId("run-list").focus();
  const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("x")]);
  expect(download.suggestedFilename()).toMatch(/^gatehouse-session-sess-launch-\d{8}-\d{4}\.json$/);
  const file = testInfo.outputPath(download.suggestedFilename());
  await download.saveAs(file);
  const saved = JSON.parse(await readFile(file, "utf8")) as { runs: { run: { id: string; session_id: string } }[] };
  expect(saved.runs.map((r) => r.run.id).sort()).toEqual([first, second].sort());
  expect(saved.runs.every((r) => r.run.session_id === "sess-launch")).toBe(true);
  await expect(page.getByTestId("runs-notice")).toContainText("session sess-launch, 2 runs");

  // A run outside any session offers no session export.
  await page.locator(`[data-testid="run-row"][data-run-id="${elsewhere}"]`).click();
  await expect(page.getByTestId("run-title")).toHaveText("Unrelated chores");
  await expect(page.getByTestId("recording-export-session")).toHaveCount(0);
});
