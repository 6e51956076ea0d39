// A gate's deadline, in the browser: the modal says how long is left (the
// exact time on hover), what happens then (emphasised when Gatehouse
// decides in the reviewer's place) and when it escalates to whom; the
// panel flags only a near deadline. Both follow the page's clock.

import { expect, signIn, test } from "../support/fixtures";

test("a gate approved automatically at its deadline says so, and the panel flags the near deadline, live", async ({
  page,
  gatehouse,
}) => {
  // Approving unanswered is refused on a run that requires a human: this one passes only confident gates.
  // People set such a policy and fallback; an agent may ask for more review, never for less.
  const token = await gatehouse.token("admin", "release-manager");
  const agent = gatehouse.agent(token);
  const started = await gatehouse.call<{ run_id: string }>(token, "POST", "/run", {
    run_input: { prompt: "nightly deploy" },
    title: "Nightly deploy",
    agent: "deployer",
    hitl_config: { run_policy: "auto_with_thresholds", review_thresholds: { confidence_min: 0.9 } },
  });
  const soon = await agent.openGate(started.run_id, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: "Deploy build 42?",
    expires_in_secs: 300,
    on_timeout: "approve",
    escalate_after_secs: 120,
    escalate_to: ["ops"],
  });
  const later = await agent.openGate(started.run_id, {
    kind: "approval",
    action: "notify",
    mode: "sync",
    text: "Tell the team?",
    expires_in_secs: 3600,
  });

  // The page's clock is Playwright's, so time can be moved on.
  await page.clock.install();
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const row = (id: string) => page.locator(`[data-testid=blocker-row][data-gate-id='${id}']`);
  await expect(row(soon.id).getByTestId("gate-deadline")).toHaveText("expires in 4m");
  await expect(row(later.id).getByTestId("gate-deadline")).toHaveCount(0);

  await row(soon.id).click();
  const modal = page.getByTestId("resolution-modal");
  const deadline = modal.getByTestId("gate-deadline");
  await expect(deadline).toHaveText("expires in 4m, then it is approved automatically");
  // The fallback decides for the reviewer: it stands out.
  await expect(modal.locator("strong[data-testid=gate-fallback]")).toHaveText("then it is approved automatically");
  await expect(deadline.locator("time")).toHaveAttribute("title", /\d/);
  await expect(modal.getByTestId("gate-escalation")).toHaveText(/^escalates to ops at .*\d/);

  // Two minutes on, both count down.
  await page.clock.fastForward("02:00");
  await expect(deadline).toHaveText("expires in 2m, then it is approved automatically");
  await page.keyboard.press("Escape");
  await expect(row(soon.id).getByTestId("gate-deadline")).toHaveText("expires in 2m");

  // The gate one opened for an hour has no fallback of its own: it expires, failing its run.
  await row(later.id).click();
  await expect(modal.getByTestId("gate-deadline")).toHaveText(/^expires in 5[78]m, then it expires and its run fails$/);
  await expect(modal.locator("strong[data-testid=gate-fallback]")).toHaveCount(0);
});
