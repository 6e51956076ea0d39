// Parallel work and restarting a task in the Runs view. A lead hands three
// researchers their topics as sub-runs of its run: the team panel shows the
// branches with their status and the sync point the lead passed. A reviewer
// sends the coder of a run paused at a breakpoint back to redo its turn:
// "Restart task…" only asks, the confirm sends it, and the restart is on the
// server's timeline under the reviewer's name.

import { expect, signIn, test } from "../support/fixtures";
import { member } from "../support/team";

type TeamState = { active: string; parallel: { synced: boolean; branches: { status: string }[] }[] };
type Turns = { turns: { actor: string; metadata: { restart_task?: { agent?: string; instruction?: string } } }[] };
const agent = member;

test("the team panel shows the parallel branches and the sync point the lead passed", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Caching research sweep",
    run_input: {
      prompt: "Caching",
      team: [agent("lead", "lead", ["parallel_handoff"]), agent("ana", "researcher"), agent("ben", "researcher"), agent("cy", "researcher")],
    },
  });
  // The lead's summary waits for a reviewer once every branch has answered.
  await expect
    .poll(async () => (await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`)).parallel[0]?.synced ?? false)
    .toBe(true);

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const panel = page.getByTestId("team-panel");
  const parallel = panel.getByTestId("team-parallel");
  await expect(parallel.getByTestId("team-sync-point")).toHaveText(
    "lead passed the sync point: 3 of 3 branches ended · waits for every branch",
  );
  for (const name of ["ana", "ben", "cy"]) {
    await expect(parallel.getByTestId(`team-branch-${name}`)).toContainText("Completed");
  }
  await expect(parallel.getByTestId("team-branch-ben")).toContainText("open-source tools for Caching");
  // The picture of who handed to whom shows the work handed out: a dashed arrow from the lead to each researcher.
  await expect(panel.getByTestId("team-graph")).toHaveAttribute(
    "aria-label",
    "Handoffs: lead to ana in parallel once, lead to ben in parallel once, lead to cy in parallel once",
  );
  for (const name of ["ana", "ben", "cy"]) await expect(panel.getByTestId(`team-edge-lead-${name}-parallel`)).toHaveClass(/\bparallel\b/);
});

test("a reviewer restarts the coder's task after confirming, and the restart is on the record", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Logout button, step by step",
    step_mode: "breakpoint",
    breakpoints: [{ on: "step", name: "agent_turn" }],
    run_input: {
      prompt: "Add a logout button",
      team: [agent("coder", "coder"), agent("tester", "tester"), agent("deployer", "deployer")],
    },
  });
  await expect.poll(async () => (await gatehouse.call<{ status: string }>(alice, "GET", `/run/${run}/status`)).status).toBe("paused");

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const restart = page.getByTestId("team-panel").getByTestId("restart-task");
  await restart.getByTestId("restart-task-instruction").fill("write the tests first");
  // Enter in the instruction only asks; nothing is sent before the confirm.
  await restart.getByTestId("restart-task-instruction").press("Enter");
  await expect(restart.getByTestId("restart-task-confirm-box")).toContainText("Send coder back to redo its turn: write the tests first?");
  const before = await gatehouse.call<Turns>(alice, "GET", `/run/${run}/state`);
  expect(before.turns.filter((t) => t.metadata.restart_task)).toHaveLength(0);

  await restart.getByTestId("restart-task-confirm").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("coder goes back to redo its turn.");
  const after = await gatehouse.call<Turns>(alice, "GET", `/run/${run}/state`);
  const recorded = after.turns.filter((t) => t.metadata.restart_task);
  expect(recorded.map((t) => [t.actor, t.metadata.restart_task?.instruction])).toEqual([["alice", "write the tests first"]]);
});
