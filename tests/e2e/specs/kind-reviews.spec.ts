// The reviews a gate's kind brings to the modal, decided by keyboard: a
// quality gate's rubric scored 1–5 with a justification each, against its
// required score (the agent gets the score with needs_revision, then with
// approve); a goal refined one round and accepted the next, the change
// between rounds shown; a plan shown as tasks with status and
// dependencies, modified (the agent gets the edited plan, which becomes the
// run's plan) and then approved.

import { expect, signIn, test } from "../support/fixtures";

type Score = { score: number; rubric_scores: Record<string, number>; justification: string; scorer: string; deliverable_id: string };
type Task = { task_id: string; description: string; status: string; dependencies: string[] };
type PlanRevision = { revision: number; actor: string; change_log: string[]; plan: { tasks: Task[] } };

test("a quality gate is scored criterion by criterion: below the required score it goes back, at or above it is accepted", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Beta release notes");
  const quality = { kind: "quality_score", mode: "sync", required_score: 3.5, rubric: ["Accuracy", "Clarity", "Tone"] };
  const first = await agent.openGate(runId, { ...quality, deliverable_id: "notes-v1", text: "Score the **release notes** draft." });
  const firstDecision = agent.wait(first.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", first.id);
  const review = modal.getByTestId("quality-review");
  const verdict = review.getByTestId("quality-verdict");
  await expect(review.getByTestId("required-score")).toHaveText("3.5");
  await expect(verdict).toHaveAttribute("data-passes", "unknown");
  await expect(verdict).toContainText("not scored yet");
  const criteria = review.getByTestId("criterion");
  await expect(criteria).toHaveCount(3);
  await expect(modal.getByTestId("decide-approve")).toContainText("Accept score");
  await expect(modal.getByTestId("decide-needs_revision")).toContainText("Request revision");

  // Each digit scores the highlighted criterion and moves to the next.
  await page.keyboard.press("2");
  await expect(criteria.nth(0).getByTestId("score-2")).toBeChecked();
  await expect(verdict).toContainText("overall 2 (so far)");
  await expect(verdict).toHaveAttribute("data-passes", "unknown");
  await expect(criteria.nth(1)).toHaveClass(/current/);
  await page.keyboard.press("3");
  await page.keyboard.press("4");
  await expect(criteria.nth(1).getByTestId("score-3")).toBeChecked();
  await expect(criteria.nth(2).getByTestId("score-4")).toBeChecked();
  await expect(review.getByTestId("overall-score")).toHaveText("3");
  await expect(verdict).toHaveAttribute("data-passes", "false");
  await expect(verdict).toContainText("below the required score");

  // Nothing is sent before every score is justified: a arms the approval, Ctrl+Enter confirms it, and it is refused.
  await page.keyboard.press("a");
  await expect(modal.getByTestId("armed-decision")).toHaveText("Approve this deliverable as proposed, for writer.");
  await page.keyboard.press("Control+Enter");
  await expect(modal.getByTestId("decision-problem")).toHaveText("Justify the score of Accuracy, Clarity, Tone.");
  const justifications = review.getByTestId("justification");
  const why = ["2 of 9 version numbers are wrong", "Mostly readable", "Friendly"];
  for (const [i, text] of why.entries()) {
    await justifications.nth(i).focus();
    await page.keyboard.type(text);
  }
  // Digits typed in a justification are text, not scores.
  await expect(justifications.nth(0)).toHaveValue(why[0]!);
  await expect(criteria.nth(0).getByTestId("score-2")).toBeChecked();
  await expect(review.getByTestId("overall-score")).toHaveText("3");

  // Below 3.5 an approval is refused; Ctrl+Enter requests the revision.
  await modal.getByTestId("decide-approve").click();
  await expect(modal.getByTestId("decision-problem")).toHaveText("The score 3 is below the required score: request a revision instead.");
  await expect(modal.getByTestId("decide-needs_revision")).toHaveAttribute("aria-keyshortcuts", /Control\+Enter/);
  await justifications.nth(2).focus();
  await page.keyboard.press("Control+Enter");
  const sentBack = await firstDecision;
  expect(sentBack.decision).toMatchObject({
    action: "needs_revision",
    decided_by: "alice",
    text: `Accuracy (2/5): ${why[0]}\nClarity (3/5): ${why[1]}\nTone (4/5): ${why[2]}`,
    score: {
      score: 3,
      rubric_scores: { Accuracy: 2, Clarity: 3, Tone: 4 },
      scorer: "alice",
      deliverable_id: "notes-v1",
    },
  });
  await expect(modal).toHaveCount(0);

  // The revised draft: scored 4, 4, 3 it passes (3.67 ≥ 3.5), and Ctrl+Enter accepts it.
  const second = await agent.openGate(runId, { ...quality, deliverable_id: "notes-v2", text: "Score the revised draft." });
  const secondDecision = agent.wait(second.id);
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", second.id);
  await expect(verdict).toContainText("not scored yet");
  for (const key of ["4", "4", "3"]) await page.keyboard.press(key);
  await expect(review.getByTestId("overall-score")).toHaveText("3.67");
  await expect(verdict).toHaveAttribute("data-passes", "true");
  await expect(verdict).toContainText("passes");
  await expect(modal.getByTestId("decide-approve")).toHaveAttribute("aria-keyshortcuts", /Control\+Enter/);
  for (const [i, text] of ["All versions right", "Clear", "A little dry"].entries()) {
    await justifications.nth(i).focus();
    await page.keyboard.type(text);
  }
  await page.keyboard.press("Control+Enter");
  const accepted = await secondDecision;
  expect(accepted.decision).toMatchObject({
    action: "approve",
    decided_by: "alice",
    score: { score: 3.67, rubric_scores: { Accuracy: 4, Clarity: 4, Tone: 3 }, scorer: "alice", deliverable_id: "notes-v2" },
  });

  // Both scores are on the run's record, for the agent.
  const { events } = await gatehouse.call<{ events: { type: string; agent?: string; score?: Score }[] }>(
    gatehouse.adminToken,
    "GET",
    `/runs/${runId}/events`,
  );
  const scores = events.filter((e) => e.type === "score_recorded");
  expect(scores.map((e) => [e.agent, e.score?.score, e.score?.deliverable_id])).toEqual([
    ["writer", 3, "notes-v1"],
    ["writer", 3.67, "notes-v2"],
  ]);
});

test("a goal is refined one round and accepted the next, with the change between rounds shown", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const runId = await agent.startRun("Beta launch");
  const firstGoal = "Write long release notes for the beta";
  const round1 = await agent.openGate(runId, { kind: "goal_review", mode: "sync", text: "Is this the goal?", goal: firstGoal });
  const refined = agent.wait(round1.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const review = modal.getByTestId("goal-review");
  await expect(review).toContainText("Goal, round 1");
  await expect(review.getByTestId("goal-current")).toHaveText(firstGoal);
  await expect(review).toContainText("First round: nothing to compare with.");
  await expect(review.getByTestId("goal-previous")).toHaveCount(0);
  await expect(modal.getByTestId("decide-approve")).toContainText("Accept goal");
  await expect(modal.getByTestId("decide-needs_revision")).toContainText("Refine");
  // A goal is refined or accepted, never rejected.
  await expect(modal.getByTestId("decide-reject")).toHaveCount(0);

  // v (Alt+v from the note, where the cursor starts): refine, saying what to change.
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await page.keyboard.press("Alt+v");
  await expect(modal.getByTestId("answer-input")).toBeFocused();
  await expect(modal.getByText("What should change")).toBeVisible();
  await expect(modal.getByTestId("decide-needs_revision")).toContainText("Confirm: refine");
  const feedback = "Keep it short, say it is the public beta, group by feature.";
  await page.keyboard.type(feedback);
  await page.keyboard.press("Control+Enter");
  expect((await refined).decision).toMatchObject({ action: "needs_revision", decided_by: "alice", text: feedback });
  await expect(modal).toHaveCount(0);

  // Round 2: the previous goal with what was dropped, this one with what was added, and what alice asked.
  const secondGoal = "Write short release notes for the public beta grouped by feature";
  const round2 = await agent.openGate(runId, { kind: "goal_review", mode: "sync", text: "Is this the goal now?", goal: secondGoal, round: 2 });
  const accepted = agent.wait(round2.id);
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", round2.id);
  await expect(review).toContainText("Goal, round 2");
  await expect(review.getByTestId("goal-previous")).toHaveText(firstGoal);
  await expect(review.getByTestId("goal-previous").locator("del")).toHaveText(["long"]);
  await expect(review.getByTestId("goal-current")).toHaveText(secondGoal);
  const added = (await review.getByTestId("goal-current").locator("ins").allTextContents()).join("|");
  expect(added).toContain("short");
  expect(added).toContain("public");
  expect(added).toContain("grouped by feature");
  expect(added).not.toContain("release notes");
  await expect(review.getByTestId("goal-previous-feedback")).toHaveText(`Asked last round (alice): ${feedback}`);

  // Alt+a arms the acceptance; Ctrl+Enter confirms it.
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("decide-approve")).toContainText("Confirm: accept goal");
  await page.keyboard.press("Control+Enter");
  expect((await accepted).decision).toMatchObject({ action: "approve", decided_by: "alice" });
  await expect(modal).toHaveCount(0);
  await expect(page.getByTestId("blocker-count")).toHaveText("0");
});

test("a plan is reviewed as tasks with status and dependencies, modified by keyboard, then approved", async ({ page, gatehouse }) => {
  const agentToken = await gatehouse.token("agent", "planner");
  const agent = gatehouse.agent(agentToken);
  const runId = await agent.startRun("Beta release notes");
  // The plan lives in Gatehouse: three tasks, the first done (revisions 1 to 4).
  const plan = (op: Record<string, unknown>) => gatehouse.call<PlanRevision>(agentToken, "POST", `/runs/${runId}/plan`, op);
  await plan({ op: "add_task", task_id: "collect", description: "Collect merged PRs" });
  await plan({ op: "add_task", task_id: "draft", description: "Draft the notes", dependencies: ["collect"] });
  await plan({ op: "add_task", task_id: "publish", description: "Publish the notes", dependencies: ["draft"] });
  const proposed = await plan({ op: "update_task", task_id: "collect", status: "completed" });
  expect(proposed.revision).toBe(4);
  const gate = await agent.openGate(runId, { kind: "plan_review", mode: "sync", text: "Approve the plan?", plan_revision: 4 });
  const modified = agent.wait(gate.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const review = modal.getByTestId("plan-review");
  await expect(review).toContainText("Plan revision 4");
  await expect(review).toContainText("1 of 3 tasks done");
  await expect(review).toContainText("by planner");
  await expect(review.getByTestId("plan-change-log")).toContainText("collect: status pending -> completed");
  await expect(review.getByTestId("plan-diff")).toContainText("status: Pending → Completed");
  const tasks = review.getByTestId("plan-task");
  await expect(tasks).toHaveCount(3);
  expect(await tasks.evaluateAll((li) => li.map((t) => t.getAttribute("data-task-id")))).toEqual(["collect", "draft", "publish"]);
  await expect(tasks.nth(0).getByTestId("task-status")).toHaveValue("completed");
  await expect(tasks.nth(1).getByTestId("task-status")).toHaveValue("pending");
  await expect(tasks.nth(1).getByTestId("task-dependencies")).toHaveValue("collect");
  await expect(tasks.nth(2).getByTestId("task-dependencies")).toHaveValue("draft");
  // What each task still waits for: draft's dependency is done, publish's is not.
  await expect(tasks.nth(1).getByTestId("task-waits")).toHaveCount(0);
  await expect(tasks.nth(2).getByTestId("task-waits")).toHaveText("waits for draft");
  await expect(modal.getByTestId("decide-approve")).toContainText("Approve plan");
  await expect(modal.getByTestId("decide-edit")).toContainText("Approve modified plan");
  await expect(modal.getByTestId("decide-reject")).toBeVisible();

  // n (Alt+n from the note, where the cursor starts) adds a task and puts the cursor in its
  // description; Tab on to its status and dependencies.
  await page.keyboard.press("Alt+n");
  await expect(tasks).toHaveCount(4);
  const added = tasks.nth(3);
  await expect(added).toHaveAttribute("data-task-id", "task-4");
  await expect(added.getByTestId("task-description")).toBeFocused();
  // An empty description is not a valid plan: named, and the edit held back.
  await expect(review.getByTestId("plan-problem")).toHaveText("a task description must not be empty");
  await page.keyboard.type("Announce on the forum");
  await expect(review.getByTestId("plan-problem")).toHaveCount(0);
  await page.keyboard.press("Tab");
  await expect(added.getByTestId("task-status")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(added.getByTestId("task-dependencies")).toBeFocused();
  // A dependency on a task that is not in the plan is refused before sending.
  await page.keyboard.type("publish, nowhere");
  await page.keyboard.press("Tab");
  await expect(review.getByTestId("plan-problem")).toHaveText("task `task-4` depends on `nowhere`, which is not in the plan");
  await page.keyboard.press("Control+Enter");
  await expect(modal.getByTestId("decision-problem")).toContainText("depends on `nowhere`");
  await added.getByTestId("task-dependencies").focus();
  await page.keyboard.press("Control+a");
  await page.keyboard.type("publish");
  await page.keyboard.press("Tab");
  await expect(review.getByTestId("plan-problem")).toHaveCount(0);
  // And draft is under way now.
  await tasks.nth(1).getByTestId("task-status").selectOption("in_progress");

  const edits = review.getByTestId("plan-edits");
  await expect(edits).toContainText("Your modifications (2)");
  await expect(edits).toContainText("draft changed; status: Pending → In progress");
  await expect(edits).toContainText("task-4 added");
  // Approving as proposed would drop the modifications: refused.
  await modal.getByTestId("decide-approve").click();
  await expect(modal.getByTestId("decision-problem")).toHaveText("You made changes: send them with the edit, or reset them first.");
  await added.getByTestId("task-description").focus();
  await page.keyboard.press("Control+Enter");

  const decided = await modified;
  expect(decided.decision?.action).toBe("edit");
  expect(decided.decision?.decided_by).toBe("alice");
  const sent = decided.decision?.payload as { tasks: Task[] };
  expect(sent.tasks.map((t) => [t.task_id, t.description, t.status, t.dependencies])).toEqual([
    ["collect", "Collect merged PRs", "completed", []],
    ["draft", "Draft the notes", "in_progress", ["collect"]],
    ["publish", "Publish the notes", "pending", ["draft"]],
    ["task-4", "Announce on the forum", "pending", ["publish"]],
  ]);
  await expect(modal).toHaveCount(0);

  // The modified plan is the run's plan now: revision 5, by alice.
  const stored = await gatehouse.call<{ plan: PlanRevision; revisions: PlanRevision[] }>(agentToken, "GET", `/runs/${runId}/plan`);
  expect(stored.plan.revision).toBe(5);
  expect(stored.plan.actor).toBe("alice");
  expect(stored.plan.plan.tasks.map((t) => t.task_id)).toEqual(["collect", "draft", "publish", "task-4"]);

  // Round 2 reviews revision 5: alice's changes are the change log; approved with a.
  const round2 = await agent.openGate(runId, { kind: "plan_review", mode: "sync", text: "Approve the revised plan?", plan_revision: 5, round: 2 });
  const approved = agent.wait(round2.id);
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", round2.id);
  await expect(review).toContainText("Plan revision 5");
  await expect(review).toContainText("round 2");
  await expect(review).toContainText("by alice");
  await expect(review.getByTestId("plan-diff")).toContainText("task-4 added");
  await expect(review.getByTestId("plan-edits")).toHaveCount(0);
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("armed-decision")).toHaveText("Approve this plan as proposed, for planner.");
  await page.keyboard.press("Control+Enter");
  const final = await approved;
  expect(final.decision).toMatchObject({ action: "approve", decided_by: "alice" });
  expect(final.decision?.payload ?? null).toBeNull();
  // Approving changes nothing: the plan stays at revision 5.
  expect((await gatehouse.call<{ plan: PlanRevision }>(agentToken, "GET", `/runs/${runId}/plan`)).plan.revision).toBe(5);
});
