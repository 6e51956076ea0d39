// The resolution modal's task context: the run the gate belongs to and its
// status in words, the task and the current step the agent named, and the
// run's recent turns in the order they were said, with who said them.

import { expect, signIn, test } from "../support/fixtures";

test("the modal shows the gate's run, task, step and the run's recent turns", async ({ page, gatehouse }) => {
  const builder = await gatehouse.token("agent", "builder");
  const agent = gatehouse.agent(builder);
  const runId = await agent.startRun("Ship the billing page");
  for (const content of ["Reading the spec for the billing page.", "Wrote `checkout.py`; totals next."]) {
    await gatehouse.call(builder, "POST", `/runs/${runId}/turns`, { role: "agent", content });
  }
  await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    text: "Which tax table applies to EU customers?",
    context: { task_id: "task_007", task_description: "Wire the tax table into checkout", step: "3 of 5: compute totals" },
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  const context = page.getByTestId("resolution-modal").getByTestId("gate-context");

  await expect(context).toContainText("Ship the billing page");
  // The run waits for a person, said in words rather than as the API's enum.
  await expect(context.getByTestId("context-run-status")).toHaveText("(awaiting a reviewer)");
  await expect(context.getByTestId("context-task")).toHaveText("Wire the tax table into checkout task_007");
  await expect(context.getByTestId("context-step")).toHaveText("3 of 5: compute totals");

  // The turns fold away behind their count; opened, the newest is last.
  const turns = context.getByTestId("recent-turns");
  await expect(turns).toBeHidden();
  await context.getByText(/^Recent turns \(\d+\)$/).click();
  const items = turns.locator("li");
  const said = await items.allInnerTexts();
  const spec = said.findIndex((text) => text.includes("Reading the spec for the billing page."));
  const wrote = said.findIndex((text) => text.includes("Wrote `checkout.py`; totals next."));
  expect(spec).toBeGreaterThanOrEqual(0);
  expect(wrote).toBe(said.length - 1);
  expect(spec).toBeLessThan(wrote);
  await expect(items.nth(wrote).locator(".who strong")).toHaveText("builder");
});
