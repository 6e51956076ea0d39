// Consensus and collaboration patterns in the Runs view's team panel: an
// architect's proposal with each agent's vote and its reasoning, waiting
// for the people it names at a quorum gate, then agreed with their votes;
// and a team following a workflow (code, a people's review, deploy) whose
// panel shows the steps, where each outcome leads and the step holding the
// turn, which moves on once a reviewer decides the review step.

import { expect, signIn, test } from "../support/fixtures";

type Proposal = { id: string; status: string };
type TeamState = { proposals: Proposal[]; workflow: { current: string | null; state: string } | null };
type GateList = { gates: { id: string }[] };

const agent = (name: string, role: string, tools: string[] = []) => ({ name, role, provider: "scripted", model: "chat", tools });
const CONSENSUS = ["propose_decision", "vote_on_proposal", "finalize_consensus"];

test("the team panel shows a proposal's votes and reasoning, then the people's decision at its quorum gate", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const bob = await gatehouse.token("reviewer", "bob");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Audit log store",
    run_input: {
      prompt: "Choose where the audit log is kept",
      team: [agent("architect", "architect", CONSENSUS), agent("backend", "backend developer", CONSENSUS), agent("security", "security reviewer", CONSENSUS)],
    },
  });
  await expect
    .poll(async () => (await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`)).proposals[0]?.status)
    .toBe("with_people");

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await expect(page.getByTestId("run-list").locator(`[data-run-id="${run}"]`)).toHaveAttribute("aria-selected", "true");
  const proposals = page.getByTestId("team-panel").getByTestId("team-proposals");
  await expect(proposals.getByTestId("team-proposal-p1")).toContainText("p1 by architect: Keep the audit log in PostgreSQL");
  await expect(proposals.getByTestId("team-proposal-status-p1")).toHaveText("With people");
  await expect(proposals.getByTestId("team-ballot-p1-backend")).toHaveText(
    "backend for: It is the database we already run, so there is nothing new to operate.",
  );
  await expect(proposals.getByTestId("team-ballot-p1-security")).toHaveText(
    "security for: Row-level access and encrypted backups are already in place there.",
  );
  await expect(proposals.getByTestId("team-proposal-waiting-p1")).toBeVisible();
  await expect(proposals.getByTestId("team-proposal-p1")).toContainText("decided by people: human:alice, human:bob");

  // Both people the proposal names must approve: alice with a reason, then bob.
  const { gates } = await gatehouse.call<GateList>(alice, "GET", `/gates?run_id=${run}&kind=approval&status=pending`);
  expect(gates).toHaveLength(1);
  await gatehouse.call(alice, "POST", `/gates/${gates[0]!.id}/resolve`, { action: "approve", text: "Backups are tested." });
  await gatehouse.call(bob, "POST", `/gates/${gates[0]!.id}/resolve`, { action: "approve" });
  await expect
    .poll(async () => (await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`)).proposals[0]?.status)
    .toBe("agreed");
  await page.reload();
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const agreed = page.getByTestId("team-panel").getByTestId("team-proposals");
  await expect(agreed.getByTestId("team-proposal-status-p1")).toHaveText("Agreed");
  await expect(agreed.getByTestId("team-people-vote-p1-alice")).toHaveText("alice approved: Backups are tested.");
  await expect(agreed.getByTestId("team-people-vote-p1-bob")).toHaveText("bob approved");
  await expect(agreed.getByTestId("team-proposal-waiting-p1")).toHaveCount(0);
});

test("the team panel shows a pattern run's workflow and the step holding the turn, which moves on after the people's review", async ({
  page,
  gatehouse,
}) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Dark mode",
    run_input: {
      prompt: "Add a dark mode toggle",
      team: [agent("coder", "coder"), agent("reviewer", "reviewer"), agent("deployer", "deployer")],
      pattern: {
        name: "code_review_deploy",
        workflow: [
          { step: "code", agent: "coder", next_on_success: "review" },
          { step: "review", agent: "reviewer", next_on_approve: "deploy", next_on_reject: "coder" },
          { step: "deploy", agent: "deployer", next_on_failure: "code" },
        ],
      },
    },
  });
  await expect
    .poll(async () => (await gatehouse.call<TeamState>(alice, "GET", `/runs/${run}/team`)).workflow?.current)
    .toBe("review");

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await expect(page.getByTestId("run-list").locator(`[data-run-id="${run}"]`)).toHaveAttribute("aria-selected", "true");
  const flow = page.getByTestId("team-panel").getByTestId("team-workflow");
  await expect(flow.getByTestId("team-workflow-current")).toHaveText("review");
  await expect(flow.getByTestId("team-workflow-state")).toHaveText("Under way");
  await expect(flow.getByTestId("team-step-review")).toHaveAttribute("aria-current", "step");
  await expect(flow.getByTestId("team-step-code")).not.toHaveAttribute("aria-current", "step");
  await expect(flow.getByTestId("team-step-review")).toContainText("reviewer · People's review · Approved → deploy, Rejected → code");
  await expect(flow.getByTestId("team-step-deploy")).toContainText("Success → end, Failure → code");

  // A reviewer rejects the review step: the workflow goes back to the coder, then to review again.
  const { gates } = await gatehouse.call<GateList>(alice, "GET", `/gates?run_id=${run}&kind=approval&status=pending`);
  await gatehouse.call(alice, "POST", `/gates/${gates[0]!.id}/resolve`, { action: "reject", text: "Add a test for the toggle." });
  await expect
    .poll(async () => {
      const team = await gatehouse.call<TeamState & { workflow: { moves: unknown[] } }>(alice, "GET", `/runs/${run}/team`);
      return team.workflow?.moves.length;
    })
    .toBe(3);
  await page.reload();
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const moved = page.getByTestId("team-panel").getByTestId("team-workflow");
  await expect(moved.getByTestId("team-workflow-current")).toHaveText("review");
  await moved.getByText("Moves (3)").click();
  await expect(moved.getByTestId("team-workflow-moves").locator("li")).toHaveText([
    "code: success → review (Wrote the change for: Add a dark mode toggle.)",
    "review: rejected → code (rejected by alice: Add a test for the toggle.)",
    "code: success → review (Reworked the change after the review: Add a dark mode toggle.)",
  ]);
});
