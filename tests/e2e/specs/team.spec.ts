// A team run in the Runs view: a coder, a tester and a deployer Gatehouse
// drives with the scripted provider. The team panel shows who holds the
// turn, the handoff graph (the tester handed back to the coder once) and
// the team's memory with its history; a reviewer adds an agent to the live
// team from the panel, and the change is on the server and the timeline,
// then picks it from the team's agents as the next to act;
// a reviewer creates a sub-team in two steps and dissolves it, and
// changes the live run's breakpoints in two steps.

import { expect, test } from "../support/fixtures";
import { teamAtReview } from "../support/team";

type TeamState = { agents: { name: string }[]; active: string; handoffs: { from: string; to: string }[] };

test("the team panel shows the turn, the handoffs and the memory, and a reviewer adds an agent", async ({ page, gatehouse }) => {
  // The deployer's answer waits for a reviewer: the team stands still there, four handoffs on.
  const { alice, run, panel } = await teamAtReview(page, gatehouse);
  await expect(panel.getByTestId("team-active")).toHaveText("deployer");
  await expect(panel.getByTestId("team-agent-deployer")).toHaveAttribute("aria-current", "true");
  await expect(panel.getByTestId("team-agent-coder")).not.toHaveAttribute("aria-current", "true");

  // Who handed to whom: one arrow per direction, the pair handing off both ways drawn twice.
  const graph = panel.getByTestId("team-graph");
  await expect(graph).toHaveAttribute("aria-label", "Handoffs: coder to tester 2 times, tester to coder once, tester to deployer once");
  await expect(graph.locator("path.edge")).toHaveCount(3);
  await expect(panel.getByTestId("team-edge-tester-coder")).toBeVisible();
  await expect(panel.getByTestId("team-handoffs").locator("li")).toHaveText([
    "coder → tester: The change is written, ready for testing.",
    "tester → coder: Two tests fail.",
    "coder → tester: The failing tests are fixed, please test again.",
    "tester → deployer: All tests pass.",
  ]);

  // The memory: the tester's report and each handoff's context, with the history.
  const memory = panel.getByTestId("team-memory");
  await expect(memory).toContainText("team:test_report");
  await expect(memory).toContainText("login_rejects_a_bad_password");
  await memory.getByText(/^History \(\d+ changes\)$/).click();
  await expect(memory.locator("details li")).toHaveCount(5);

  // The reviewer's intervention: an auditor joins the live team.
  await panel.getByTestId("team-change-name").fill("auditor");
  await panel.getByTestId("team-change-role").fill("audits the deploy");
  await panel.getByTestId("team-change-apply").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("auditor added; the team takes it at its next turn.");
  await expect(panel.getByTestId("team-agent-auditor")).toContainText("audits the deploy");
  const team = await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`);
  expect(team.agents.map((a) => a.name)).toEqual(["coder", "tester", "deployer", "auditor"]);
  const state = await gatehouse.call<{ turns: { actor: string; metadata: { team_change?: { action: string } } }[] }>(
    alice,
    "GET",
    `/run/${run}/state`,
  );
  const recorded = state.turns.filter((t) => t.metadata.team_change?.action === "add");
  expect(recorded.map((t) => t.actor)).toEqual(["alice"]);

  // The next agent is one of the team's, the auditor included, picked from a list.
  const next = page.getByTestId("run-next-agent");
  await expect(next.locator("option")).toHaveText(["the run decides", "coder", "tester", "deployer", "auditor"]);
  await next.selectOption("auditor");
  await page.getByTestId("run-next-agent-send").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("auditor acts next.");
  const chosen = await gatehouse.call<{ run: { control?: { next_agent?: string } } }>(alice, "GET", `/run/${run}/state`);
  expect(chosen.run.control?.next_agent).toBe("auditor");

  // A mistake is named by the server, nothing changes.
  await panel.getByTestId("team-change-action").selectOption("remove");
  await panel.getByTestId("team-change-name").fill("nobody");
  await panel.getByTestId("team-change-apply").click();
  await expect(panel.getByTestId("team-problem")).toContainText("name: no agent `nobody` in the team");
});

test("a reviewer creates a sub-team from the team panel, in two steps, and dissolves it", async ({ page, gatehouse }) => {
  const { alice, run, panel } = await teamAtReview(page, gatehouse);
  const form = panel.getByTestId("sub-team-form");

  // Nothing is sent while the form is missing something.
  await form.getByTestId("sub-team-name").fill("audit");
  await form.getByTestId("sub-team-ask").click();
  await expect(form.getByTestId("sub-team-missing")).toHaveText("List at least one new agent.");

  // Two auditors join as sub-team `audit`: asked, then confirmed.
  await form.getByTestId("sub-team-purpose").fill("check the release");
  await form.getByTestId("sub-team-agents").fill("ann, auditor\nbob, auditor, scripted, chat");
  await form.getByTestId("sub-team-ask").click();
  await expect(form.getByTestId("sub-team-confirm-box")).toContainText("Create sub-team audit?");
  await form.getByTestId("sub-team-confirm").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("Sub-team audit created; the team takes it at its next turn.");
  await expect(panel.getByTestId("sub-team-audit")).toContainText("by alice · check the release · ann, bob");
  await expect(panel.getByTestId("team-agent-bob")).toContainText("auditor");

  // The server names a mistake: the sub-team exists already.
  await form.getByTestId("sub-team-agents").fill("carl, auditor");
  await form.getByTestId("sub-team-ask").click();
  await form.getByTestId("sub-team-confirm").click();
  await expect(form.getByTestId("sub-team-problem")).toContainText("team_name: a sub-team `audit` exists already");

  // Dissolved: its agents leave the team.
  await form.getByTestId("sub-team-action").selectOption("dissolve_team");
  await form.getByTestId("sub-team-reason").fill("done");
  await form.getByTestId("sub-team-ask").click();
  await form.getByTestId("sub-team-confirm").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("Sub-team audit dissolved; the team takes it at its next turn.");
  await expect(panel.getByTestId("sub-team-audit")).toHaveCount(0);
  const team = await gatehouse.call<TeamState & { sub_teams: unknown[] }>(alice, "GET", `/runs/${run}/team`);
  expect(team.agents.map((a) => a.name)).toEqual(["coder", "tester", "deployer"]);
  expect(team.sub_teams).toEqual([]);
});

test("a reviewer changes a live team run's breakpoints, in two steps", async ({ page, gatehouse }) => {
  const { alice, run } = await teamAtReview(page, gatehouse);
  const form = page.getByTestId("run-breakpoints");
  await expect(form).toContainText("none");

  // A handoff to the tester, an error, and the deployer's turn; the error taken out again.
  await form.getByTestId("run-breakpoint-kind").selectOption("handoff");
  await form.getByTestId("run-breakpoint-name").fill("tester");
  await form.getByTestId("run-breakpoint-add").click();
  await form.getByTestId("run-breakpoint-kind").selectOption("error");
  await form.getByTestId("run-breakpoint-add").click();
  await form.getByTestId("run-breakpoint-kind").selectOption("agent");
  await form.getByTestId("run-breakpoint-add").click();
  await expect(form.getByTestId("run-breakpoint-missing")).toHaveText("Name the agent whose turn it pauses on.");
  await form.getByTestId("run-breakpoint-name").fill("deployer");
  await form.getByTestId("run-breakpoint-add").click();
  await form.getByTestId("run-breakpoint-remove-1").click();
  await expect(form.getByTestId("run-breakpoint")).toHaveText(["a handoff to tester ×", "deployer's turn ×"]);

  // Nothing is sent before the confirmation.
  await form.getByTestId("run-breakpoints-ask").click();
  await expect(form.getByTestId("run-breakpoints-confirm-box")).toContainText("Pause this run on a handoff to tester, deployer's turn");
  const before = await gatehouse.call<{ run: { control?: { breakpoints?: unknown[] } } }>(alice, "GET", `/run/${run}/state`);
  expect(before.run.control?.breakpoints ?? []).toEqual([]);
  await form.getByTestId("run-breakpoints-confirm").click();
  await expect(page.getByTestId("runs-notice")).toHaveText("Breakpoints saved: a handoff to tester, deployer's turn.");
  const after = await gatehouse.call<{ run: { control?: { breakpoints?: unknown[] } } }>(alice, "GET", `/run/${run}/state`);
  expect(after.run.control?.breakpoints).toEqual([{ on: "handoff", to: "tester" }, { on: "agent", name: "deployer" }]);
});
