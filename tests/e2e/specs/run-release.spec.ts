// The Runs view on a run with gates declared per workflow node, waiting on
// the one its agent reached: the detail lists what was declared beside what
// was opened, and Resume, pressed twice, lets the run go on without waiting.
// The gate stays open and undecided (released, async), the agent's wait is
// answered that it was released, and the timeline says who released it.

import { expect, signIn, test } from "../support/fixtures";

type Gate = { id: string; status: string; mode: string; decision: unknown; released?: { by: string; from_mode: string } | null };

test("a reviewer sees declared gates and lets a waiting run go on without deciding its gate", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  const writerToken = await gatehouse.token("agent", "writer");
  const writer = gatehouse.agent(writerToken);
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(writerToken, "POST", "/run", {
    run_input: { prompt: "Beta release notes" },
    title: "Beta release notes",
    declared_gates: [
      { workflow_node_id: "draft-review", kind: "quality_score", rubric: ["accuracy", "tone"], required_score: 4 },
      { workflow_node_id: "publish", kind: "approval" },
    ],
  });
  const { gate } = await gatehouse.call<{ gate: Gate }>(writerToken, "POST", `/run/${run}/nodes/draft-review`, {
    payload: { draft: "Faster sync, fewer conflicts." },
  });

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  const row = page.getByTestId("run-list").getByTestId("run-row");
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId("run-status")).toHaveText("Awaiting a reviewer");

  // Declared against opened: the reached node's gate is pending, the other not reached.
  const declared = page.getByTestId("declared-gate");
  await expect(declared).toHaveCount(2);
  const review = page.locator('[data-testid="declared-gate"][data-node="draft-review"]');
  await expect(review).toHaveAttribute("data-state", "opened");
  await expect(review).toContainText("score ≥ 4");
  await expect(review).toContainText("accuracy, tone");
  await expect(review.getByRole("button")).toHaveText("opened: pending");
  await expect(page.locator('[data-testid="declared-gate"][data-node="publish"]')).toContainText("not reached yet");

  // The agent waits; the first press only asks.
  const waiting = writer.wait(gate.id, 60) as Promise<Gate>;
  const resume = page.getByTestId("run-resume");
  await expect(resume).toContainText("Go on without waiting");
  await resume.click();
  await expect(page.getByTestId("runs-notice")).toContainText("Go on without waiting? Its waiting gates stay open for a decision; nothing is approved.");
  await expect(resume).toContainText("Confirm: go on");
  const before = await gatehouse.call<Gate>(alice, "GET", `/gates/${gate.id}/wait?timeout=0`);
  expect(before.released ?? null).toBeNull();

  await resume.click();
  await expect(page.getByTestId("runs-notice")).toHaveText("Run active.");
  await expect(row.getByTestId("run-status")).toHaveText("Active");
  const answered = await waiting;
  expect([answered.status, answered.decision ?? null, answered.mode]).toEqual(["pending", null, "async"]);
  expect(answered.released).toMatchObject({ by: "alice", from_mode: "sync" });
  await expect(review.getByRole("button")).toHaveText("opened: pending, released");
  const released = page.getByTestId("timeline-entry").filter({ hasText: "Gate released" });
  await expect(released).toHaveCount(1);
  await expect(released).toContainText("alice");
});
