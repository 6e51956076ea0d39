// Restarting a plan task from the Runs view: on a plan collaboration run,
// paused with its first task under way, a reviewer picks the task, writes
// feedback, asks, and only the confirmation sends it; the task goes back to
// pending with a new attempt and the feedback, and the run then finishes.

import { expect, signIn, test } from "../support/fixtures";

type Task = { task_id: string; status: string; metadata: { attempt?: number; feedback?: string } };
type PlanView = { plan: { plan: { tasks: Task[] } } | null };
type Status = { status: string; pending_actions: { id: string; kind: string }[] };

test("a reviewer restarts a plan task in two steps and it runs again", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Beta launch plan",
    run_input: { tool: "scripted:chat", prompt: "Launch the beta", collaborate: { goal: false } },
  });
  const status = () => gatehouse.call<Status>(alice, "GET", `/run/${run}/status`);
  const planReview = async () => (await status()).pending_actions.find((g) => g.kind === "plan_review")?.id;
  await expect.poll(planReview).toBeTruthy();
  // Paused, the plan approved: the run holds before its first task's model call.
  await gatehouse.call(alice, "POST", `/run/${run}/pause`, {});
  await gatehouse.call(alice, "POST", `/run/${run}/approve`, { approval_id: await planReview(), action: "approve" });
  const first = async () => (await gatehouse.call<PlanView>(alice, "GET", `/runs/${run}/plan`)).plan?.plan.tasks[0];
  await expect.poll(async () => (await first())?.status).toBe("in_progress");

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const form = page.getByTestId("plan-task-restart");
  await expect(form.getByTestId("plan-task-restart-task")).toHaveValue("task_001");
  await form.getByTestId("plan-task-restart-instruction").fill("cite the launch checklist");
  await form.getByTestId("plan-task-restart-ask").click();
  await expect(form.getByTestId("plan-task-restart-confirm-box")).toContainText("Run task_001 and the tasks depending on it again: cite the launch checklist?");
  // Asking alone changed nothing.
  expect((await first())?.metadata.attempt ?? 0).toBe(0);
  await form.getByTestId("plan-task-restart-confirm").click();
  await expect(page.getByText("Task task_001 and the tasks depending on it run again.")).toBeVisible();
  const restarted = await first();
  expect([restarted?.status, restarted?.metadata.attempt, restarted?.metadata.feedback]).toEqual(["pending", 1, "cite the launch checklist"]);

  await gatehouse.call(alice, "POST", `/run/${run}/resume`, {});
  await expect.poll(async () => (await status()).status).toBe("completed");
});
