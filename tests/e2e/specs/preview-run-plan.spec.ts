// A plan review whose plan lives in its run, not in the gate's payload,
// reads in the preview pane as the run's plan at the revision the gate
// names: its tasks with what each waits for, without opening the gate.

import type { Json } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

test("a plan review naming a revision of its run's plan shows that revision's tasks in the preview", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const agentToken = await gatehouse.token("agent", "planner");
  const agent = gatehouse.agent(agentToken);
  const runId = await agent.startRun("Beta release notes");
  const plan = (op: Record<string, Json>) => gatehouse.call(agentToken, "POST", `/runs/${runId}/plan`, op);
  await plan({ op: "add_task", task_id: "collect", description: "Collect merged PRs" });
  await plan({ op: "add_task", task_id: "draft", description: "Draft the notes", dependencies: ["collect"] });
  // Revision 3 comes after the one under review: the preview shows revision 2.
  await plan({ op: "add_task", task_id: "publish", description: "Publish the notes", dependencies: ["draft"] });
  await agent.openGate(runId, { kind: "plan_review", mode: "async", text: "Approve the plan?", plan_revision: 2 });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const kind = page.getByTestId("gate-preview-pane").getByTestId("preview-kind");
  await expect(kind).toHaveAttribute("data-kind", "plan_review");
  await expect(kind.getByTestId("preview-plan-from-run")).toHaveText("The run's plan, revision 2:");
  await expect(kind.getByTestId("preview-task")).toHaveText([/collect Collect merged PRs$/, /draft Draft the notes · after collect/]);
  await expect(kind.getByTestId("preview-plan-elsewhere")).toHaveCount(0);
});
