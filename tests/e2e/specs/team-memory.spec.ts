// A team run's memory as a reviewer tends it in the Runs view: the
// snapshots kept at each handoff (when and why, and one opened shows its
// entries), and deleting a remembered value, which takes two steps (one
// click only asks) and is recorded under the reviewer's name.

import { expect, test } from "../support/fixtures";
import { teamAtReview } from "../support/team";

type TeamState = {
  handoffs: unknown[];
  memory: { scope: string; key: string }[];
  memory_history: { key: string; actor: string; new?: unknown }[];
};

test("the memory snapshots open to their entries, and a reviewer deletes a value in two steps", async ({ page, gatehouse }) => {
  // The deployer's answer waits for a reviewer: the team stands still there, four handoffs on.
  const { alice, run, panel } = await teamAtReview(page, gatehouse);

  // One snapshot per handoff, said in words; the last one opened holds the tester's report.
  const snapshots = panel.getByTestId("memory-snapshots");
  await expect(snapshots.getByText("Memory snapshots (4)")).toBeVisible();
  await expect(snapshots.locator("li button")).toHaveText(Array.from({ length: 4 }, () => /^At a handoff \(turn \d+\)$/));
  await expect(snapshots).not.toContainText("handoff:");
  const last = snapshots.locator("> ol > li").last();
  await last.getByRole("button").click();
  await expect(last.getByRole("button")).toHaveAttribute("aria-expanded", "true");
  await expect(last.getByTestId("memory-snapshot-entries")).toContainText("The team's memory: test_report");
  await expect(last.getByTestId("memory-snapshot-entries")).toContainText("by tester");

  // The global memory every run's agents share shows beside it (none kept here).
  await expect(panel.getByTestId("global-memory")).toContainText("Global memory (0)");

  // Deleting asks first; keeping it changes nothing.
  await panel.getByTestId("memory-delete-team-test_report").click();
  await expect(panel.getByTestId("memory-delete-box-team-test_report")).toBeVisible();
  await panel.getByTestId("memory-delete-cancel-team-test_report").click();
  let team = await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`);
  expect(team.memory.some((m) => m.key === "test_report")).toBe(true);

  // Asked and confirmed: gone, in the history under alice's name.
  await panel.getByTestId("memory-delete-team-test_report").click();
  await panel.getByTestId("memory-delete-confirm-team-test_report").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("team:test_report deleted from the team's memory.");
  await expect(panel.getByTestId("team-memory").getByText("Memory (4)")).toBeVisible();
  await expect(panel.getByTestId("memory-delete-team-test_report")).toHaveCount(0);
  team = await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`);
  expect(team.memory.some((m) => m.key === "test_report")).toBe(false);
  const deleted = team.memory_history.at(-1)!;
  expect([deleted.key, deleted.actor, deleted.new ?? null]).toEqual(["test_report", "alice", null]);
});
