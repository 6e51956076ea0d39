// The Runs view (key 2) steering live runs by keyboard: the list with each
// run's status, progress and pending gates (j/k); a step-mode run stepped
// (s), given an instruction (i) and a next agent (n), resumed (r) and
// paused (p), the agent's directive carrying what the reviewer said; the
// timeline's turns, gates and decisions with who and when, replayed step
// by step (v, '.', ','); and another run cancelled with c pressed twice,
// its pending gate withdrawn. Every control is checked on the server too.

import { expect, signIn, test } from "../support/fixtures";

type Directive = { action: string; run_status: string; instructions: { text: string; by: string }[]; next_agent?: string | null };
type RunState = {
  run: { status: string; step_mode: string; control?: { pending_instructions?: { text: string; by: string }[]; next_agent?: string | null } };
};

test("a reviewer steps, instructs, redirects, resumes, pauses, replays and cancels runs from the Runs view", async ({
  page,
  gatehouse,
}) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const bob = await gatehouse.token("reviewer", "bob");

  // An export run waiting on a sync gate.
  const exporterToken = await gatehouse.token("agent", "exporter");
  const exporter = gatehouse.agent(exporterToken);
  const exportRun = await exporter.startRun("Nightly data export");
  const upload = await exporter.openGate(exportRun, { kind: "approval", action: "upload", mode: "sync", text: "Upload the export to the partner bucket?" });

  // A release-notes run in step mode: a plan half done, a gate bob approved, one turn, then paused.
  const writerToken = await gatehouse.token("agent", "writer");
  const writer = gatehouse.agent(writerToken);
  const { run_id: notesRun } = await gatehouse.call<{ run_id: string }>(writerToken, "POST", "/run", {
    run_input: { prompt: "Beta release notes" },
    title: "Beta release notes",
    step_mode: "step",
  });
  await gatehouse.call(writerToken, "POST", `/runs/${notesRun}/plan`, { op: "add_task", task_id: "collect", description: "Collect merged PRs" });
  await gatehouse.call(writerToken, "POST", `/runs/${notesRun}/plan`, { op: "add_task", task_id: "draft", description: "Draft the notes" });
  await gatehouse.call(writerToken, "POST", `/runs/${notesRun}/plan`, { op: "update_task", task_id: "collect", status: "completed" });
  const template = await writer.openGate(notesRun, { kind: "approval", action: "use_template", mode: "sync", text: "Use the v2 changelog template?" });
  const approved = await gatehouse.call<{ decision: { decided_at: string } }>(bob, "POST", `/gates/${template.id}/resolve`, {
    action: "approve",
    text: "Yes, v2",
  });
  const turn = (content: string) =>
    gatehouse.call<{ directive: Directive }>(writerToken, "POST", `/runs/${notesRun}/turns?wait=0`, { role: "agent", content });
  expect((await turn("Collected 12 merged PRs")).directive.action).toBe("paused");
  const state = (id: string) => gatehouse.call<RunState>(alice, "GET", `/run/${id}/state`);
  const directive = (wait: number) => gatehouse.call<Directive>(writerToken, "GET", `/runs/${notesRun}/directive?wait=${wait}`);

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await expect(page.getByTestId("tab-runs")).toHaveAttribute("aria-selected", "true");
  const list = page.getByTestId("run-list");
  await expect(list).toBeFocused();
  const rows = list.getByTestId("run-row");
  await expect(rows).toHaveCount(2);
  const notesRow = list.locator(`[data-run-id="${notesRun}"]`);
  const exportRow = list.locator(`[data-run-id="${exportRun}"]`);
  // Newest first: status, progress (plan tasks, or gates closed) and pending gates.
  await expect(rows.nth(0)).toHaveAttribute("data-run-id", notesRun);
  await expect(notesRow.getByTestId("run-status")).toHaveText("Paused");
  await expect(notesRow.getByTestId("run-progress")).toHaveText("1 of 2 (50%)");
  await expect(notesRow.getByTestId("run-pending")).toHaveCount(0);
  await expect(exportRow.getByTestId("run-status")).toHaveText("Awaiting a reviewer");
  await expect(exportRow.getByTestId("run-progress")).toHaveText("0 of 1 (0%)");
  await expect(exportRow.getByTestId("run-pending")).toHaveText("1 pending");

  // j/k move the selection and the detail follows; only a paused run steps or resumes.
  const title = page.getByTestId("run-title");
  await expect(notesRow).toHaveAttribute("aria-selected", "true");
  await expect(title).toHaveText("Beta release notes");
  await page.keyboard.press("j");
  await expect(exportRow).toHaveAttribute("aria-selected", "true");
  await expect(title).toHaveText("Nightly data export");
  await expect(page.getByTestId("run-step")).toBeDisabled();
  await expect(page.getByTestId("run-pause")).toBeEnabled();
  await page.keyboard.press("k");
  await expect(notesRow).toHaveAttribute("aria-selected", "true");
  await expect(title).toHaveText("Beta release notes");
  await expect(page.getByTestId("run-detail")).toContainText("driven by writer");
  await expect(page.getByTestId("run-detail")).toContainText("step mode step");
  await expect(page.getByTestId("run-pause")).toBeDisabled();
  await expect(page.getByTestId("run-step")).toBeEnabled();

  // The timeline: the turn (agent), the gate (agent) and bob's decision (human), each with when.
  const entries = page.getByTestId("timeline-entry");
  const turnEntry = entries.filter({ hasText: "Turn 1: Collected 12 merged PRs" });
  await expect(turnEntry).toHaveAttribute("data-group", "turn");
  await expect(turnEntry).toHaveAttribute("data-who", "agent");
  await expect(turnEntry).toContainText("writer");
  const gateEntry = entries.filter({ hasText: "Gate opened (approval, SYNC): Use the v2 changelog template?" });
  await expect(gateEntry).toHaveAttribute("data-group", "gate");
  await expect(gateEntry).toHaveAttribute("data-who", "agent");
  const decisionEntry = entries.filter({ hasText: "Decided: approved: Yes, v2" });
  await expect(decisionEntry).toHaveAttribute("data-group", "decision");
  await expect(decisionEntry).toHaveAttribute("data-who", "human");
  await expect(decisionEntry).toContainText("bob");
  await expect(decisionEntry.locator("time")).toHaveAttribute("datetime", approved.decision.decided_at);

  // s: one step. The agent waiting for its directive goes on; its next turn pauses the run again.
  const held = directive(20);
  await page.keyboard.press("s");
  await expect(page.getByTestId("runs-notice")).toHaveText("Stepped: the run is active for one agent turn.");
  expect((await held).action).toBe("continue");
  expect((await state(notesRun)).run.status).toBe("active");
  expect((await turn("Drafted the notes")).directive.action).toBe("paused");
  await expect(notesRow.getByTestId("run-status")).toHaveText("Paused");
  await expect(entries.filter({ hasText: "Turn 2: Drafted the notes" })).toHaveCount(1);

  // i: an instruction, held on the server until an agent asks for its directive.
  await page.keyboard.press("i");
  const instruction = page.getByTestId("run-instruction");
  await expect(instruction).toBeFocused();
  await page.keyboard.type("Mention the renamed API flag first.");
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("runs-notice")).toHaveText("Instruction held for the run's agents.");
  await expect(instruction).toHaveValue("");
  await expect(page.getByTestId("run-held-instructions")).toHaveText("1 instruction waiting for the agent: Mention the renamed API flag first.");
  expect((await state(notesRun)).run.control?.pending_instructions).toMatchObject([{ text: "Mention the renamed API flag first.", by: "alice" }]);
  const instructionEntry = entries.filter({ hasText: "Instruction: Mention the renamed API flag first." });
  await expect(instructionEntry).toHaveAttribute("data-who", "human");
  await expect(instructionEntry).toContainText("alice");

  // n: the agent to act next.
  await list.focus();
  await page.keyboard.press("n");
  await expect(page.getByTestId("run-next-agent")).toBeFocused();
  await page.keyboard.type("editor");
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("runs-notice")).toHaveText("editor acts next.");
  await expect(page.getByTestId("run-next-agent-clear")).toBeVisible();
  expect((await state(notesRun)).run.control?.next_agent).toBe("editor");
  // Still paused: nothing reaches the agent yet.
  expect(await directive(0)).toMatchObject({ action: "paused", instructions: [], next_agent: null });

  // r: resumed. The waiting agent gets the instruction and the next agent, once.
  const resumed = directive(20);
  await list.focus();
  await page.keyboard.press("r");
  await expect(page.getByTestId("runs-notice")).toHaveText("Run active.");
  expect(await resumed).toMatchObject({
    action: "continue",
    run_status: "active",
    instructions: [{ text: "Mention the renamed API flag first.", by: "alice" }],
    next_agent: "editor",
  });
  await expect(notesRow.getByTestId("run-status")).toHaveText("Active");
  const after = await state(notesRun);
  expect(after.run.status).toBe("active");
  expect(after.run.control?.pending_instructions ?? []).toEqual([]);
  expect(after.run.control?.next_agent ?? null).toBeNull();
  await expect(entries.filter({ hasText: "Delivered to the agent: 1 instruction and next agent editor" })).toHaveCount(1);
  await expect(page.getByTestId("run-held-instructions")).toHaveCount(0);

  // p: paused by the reviewer; the agent is told to wait.
  await page.keyboard.press("p");
  await expect(page.getByTestId("runs-notice")).toHaveText("Run paused.");
  await expect(notesRow.getByTestId("run-status")).toHaveText("Paused");
  expect((await state(notesRun)).run.status).toBe("paused");
  expect((await directive(0)).action).toBe("paused");

  // The timeline holds every event of the run, once.
  const { events } = await gatehouse.call<{ events: { type: string }[] }>(alice, "GET", `/runs/${notesRun}/events?limit=1000`);
  const total = events.length;
  await expect(entries).toHaveCount(total);

  // v replays it from the start; '.' steps forward, ',' back; v again stops.
  await page.keyboard.press("v");
  const replay = page.getByTestId("replay-status");
  await expect(replay).toHaveText(`Replay: step 1 of ${total}`);
  await expect(entries).toHaveCount(1);
  await expect(entries.nth(0)).toContainText("Run created: Beta release notes");
  await page.keyboard.press(".");
  await page.keyboard.press(".");
  await expect(replay).toHaveText(`Replay: step 3 of ${total}`);
  await expect(entries).toHaveCount(3);
  await expect(entries.nth(2)).toHaveAttribute("data-group", "plan");
  await page.keyboard.press(",");
  await expect(replay).toHaveText(`Replay: step 2 of ${total}`);
  await expect(entries).toHaveCount(2);
  await page.keyboard.press("v");
  await expect(replay).toHaveCount(0);
  await expect(entries).toHaveCount(total);

  // c cancels the export run, but only on the second press; its gate is withdrawn.
  const withdrawn = exporter.wait(upload.id);
  await page.keyboard.press("j");
  await expect(title).toHaveText("Nightly data export");
  await page.keyboard.press("c");
  await expect(page.getByTestId("runs-notice")).toHaveText("Cancel this run and withdraw its pending gates? Press c again to confirm.");
  await expect(page.getByTestId("run-cancel")).toContainText("Confirm cancel");
  expect((await state(exportRun)).run.status).toBe("awaiting_human");
  await expect(page.getByTestId("blocker-count")).toHaveText("1");
  await page.keyboard.press("c");
  await expect(page.getByTestId("runs-notice")).toHaveText("Run cancelled.");
  expect((await state(exportRun)).run.status).toBe("cancelled");
  expect((await withdrawn).status).toBe("cancelled");
  await expect(exportRow.getByTestId("run-status")).toHaveText("Cancelled");
  await expect(exportRow.getByTestId("run-pending")).toHaveCount(0);
  await expect(page.getByTestId("blocker-count")).toHaveText("0");
  await expect(page.getByTestId("run-detail")).toContainText("This run has ended; its history stays.");
  await expect(page.getByTestId("run-cancel")).toBeDisabled();
  // The other run is untouched.
  expect((await state(notesRun)).run.status).toBe("paused");
});

test("a run created without starting is started from the Runs view, says when it expires, and a task shows how far along it is", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const writerToken = await gatehouse.token("agent", "writer");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(writerToken, "POST", "/run", {
    run_input: { prompt: "Quarterly report" },
    title: "Quarterly report",
    start: false,
    expires_in_secs: 3600,
  });
  await gatehouse.call(writerToken, "POST", `/runs/${run}/plan`, { op: "add_task", task_id: "figures", description: "Gather the figures" });
  await gatehouse.call(writerToken, "POST", `/runs/${run}/plan`, {
    op: "update_task",
    task_id: "figures",
    status: "in_progress",
    metadata: { progress: 40 },
  });

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  const row = page.getByTestId("run-list").getByTestId("run-row");
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("aria-selected", "true");
  const start = page.getByTestId("run-resume");
  await expect(start).toHaveText(/^Start/);
  await expect(start).toBeEnabled();
  await expect(page.getByTestId("run-expires")).toContainText("expires");
  const task = page.getByTestId("run-plan").locator('[data-task-id="figures"]');
  await expect(task.getByTestId("task-progress")).toHaveText("40 %");
  await expect(task.getByRole("progressbar", { name: "figures is 40 % done" })).toHaveAttribute("value", "40");

  // r starts it, as it resumes a paused run; the server agrees.
  await page.keyboard.press("r");
  await expect(page.getByText("Run active.")).toBeVisible();
  await expect(start).toHaveText(/^Resume/);
  const state = await gatehouse.call<{ run: { status: string } }>(alice, "GET", `/run/${run}/state`);
  expect(state.run.status).toBe("active");
});

test("a cancelled run is retried from the Runs view with a second press", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const writer = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const run = await writer.startRun("Migrate the wiki");
  await gatehouse.call(alice, "DELETE", `/run/${run}?reason=wrong+space`);

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  const row = page.getByTestId("run-list").locator(`[data-run-id="${run}"]`);
  await expect(row).toHaveAttribute("aria-selected", "true");
  const retry = page.getByTestId("run-resume");
  await expect(retry).toHaveText(/^Retry/);

  // One press only asks; the run is untouched until the second.
  await page.keyboard.press("r");
  await expect(page.getByText("Retry this run from its last good step? Press r again to confirm.")).toBeVisible();
  await expect(retry).toHaveText(/^Confirm retry/);
  expect((await gatehouse.call<{ run: { status: string } }>(alice, "GET", `/run/${run}/state`)).run.status).toBe("cancelled");
  await page.keyboard.press("r");
  await expect(page.getByText("Run active.")).toBeVisible();
  const state = await gatehouse.call<{ run: { status: string; status_reason: string } }>(alice, "GET", `/run/${run}/state`);
  expect([state.run.status, state.run.status_reason]).toEqual(["active", "retried by alice (retry 1)"]);
});
