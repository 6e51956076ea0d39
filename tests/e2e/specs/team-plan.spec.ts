// A team run with a plan in the Runs view: a planner writes one task per
// member, each task follows its agent's turns, and the run stops before
// the deployment as the plan says; the team panel shows each agent's tasks
// with their status, and the deployer's goes on once a person approves.

import { expect, signIn, test } from "../support/fixtures";

type Task = { task_id: string; status: string };
type PlanView = { plan: { plan: { tasks: Task[] } } | null };
type GateList = { gates: { id: string }[] };

const agent = (name: string, role: string, tools: string[] = []) => ({ name, role, provider: "scripted", model: "chat", tools });

test("the team panel shows each agent's plan tasks as they follow the work", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Planned logout button",
    run_input: {
      prompt: "Add a logout button",
      plan: { human_intervention_points: ["before_deployment"] },
      team: [
        agent("planner", "planner", ["plan_add_task", "plan_read"]),
        agent("coder", "coder"),
        agent("tester", "tester", ["store_memory", "plan_update_task"]),
        agent("deployer", "deployer"),
      ],
    },
  });
  // It waits before the deployment, the coder's and tester's tasks done.
  const gates = async () => (await gatehouse.call<GateList>(alice, "GET", `/gates?run_id=${run}&kind=approval&status=pending`)).gates;
  await expect.poll(async () => (await gates()).length).toBe(1);

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  const panel = page.getByTestId("team-panel");
  await expect(panel.getByTestId("team-agent-tasks-coder")).toHaveText("· tasks: task_001 (completed)");
  await expect(panel.getByTestId("team-agent-tasks-tester")).toHaveText("· tasks: task_002 (completed)");
  await expect(panel.getByTestId("team-agent-tasks-deployer")).toHaveText("· tasks: task_003 (pending)");
  await expect(panel.getByTestId("team-agent-tasks-planner")).toHaveCount(0);

  const [before] = await gates();
  await gatehouse.call(alice, "POST", `/gates/${before!.id}/resolve`, { action: "approve" });
  await expect
    .poll(async () => (await gatehouse.call<PlanView>(alice, "GET", `/runs/${run}/plan`)).plan?.plan.tasks[2]?.status)
    .toBe("in_progress");
  await page.reload();
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${run}"]`).click();
  await expect(page.getByTestId("team-panel").getByTestId("team-agent-tasks-deployer")).toHaveText("· tasks: task_003 (in progress)");
});
