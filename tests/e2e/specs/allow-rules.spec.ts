// "Approve and always allow": a reviewer approves an agent's deploy and
// allows it for an hour; the agent's next identical gate comes back
// already approved by the rule (its wait returns at once) while other
// arguments still wait; the Rules view lists the rule with its use, and
// revoking it there makes the next identical gate wait for a human again.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer always allows a deploy for an hour, the next one passes at once, and revoking it brings the wait back", async ({
  page,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Ship the billing service");
  const deploy = { kind: "approval", action: "deploy", mode: "sync", text: "Deploy billing to **staging**?" };
  const args = { service: "billing", env: "staging", tag: "v1.4.2" };
  const first = await agent.openGate(runId, { ...deploy, payload: args });
  const firstDecision = agent.wait(first.id);

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(1);
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", first.id);

  // "Always allow" is reached by keyboard; the pattern is prefilled from the payload.
  const toggle = modal.getByTestId("allow-rule-toggle");
  await toggle.focus();
  await page.keyboard.press("Space");
  await expect(toggle).toBeChecked();
  await expect(modal.getByTestId("allow-rule-duration-1h")).toBeChecked();
  const pattern = modal.getByTestId("allow-rule-pattern");
  expect(JSON.parse(await pattern.inputValue())).toEqual(args);
  // A pattern that would not allow what is approved holds the approval back, naming why.
  await pattern.fill('{"service": "billing", "env": "prod", "tag": "*"}');
  await expect(modal.getByTestId("allow-rule-problem")).toContainText("does not match");
  await modal.getByTestId("allow-rule-reset").click();
  await expect(modal.getByTestId("allow-rule-problem")).toHaveCount(0);
  await modal.getByTestId("allow-rule-duration-1h").check();
  const approve = modal.getByTestId("decide-approve");
  await expect(approve).toContainText("Approve and always allow");
  await approve.click();
  await expect(modal).toHaveCount(0);
  expect((await firstDecision).decision).toMatchObject({ action: "approve", decided_by: "alice" });

  // The same deploy again: already approved, by the rule, and the wait returns at once.
  const second = await agent.openGate(runId, { ...deploy, payload: args });
  expect(second.status).toBe("resolved");
  expect(second.decision?.decided_by).toMatch(/^rule:allow_/);
  expect(second.decision).toMatchObject({ origin: { by: "auto" } });
  const started = Date.now();
  const waited = await agent.wait(second.id);
  expect(waited.status).toBe("resolved");
  expect(Date.now() - started).toBeLessThan(2_000);
  // Another tag is not what alice allowed: it waits in the panel.
  const other = await agent.openGate(runId, { ...deploy, payload: { ...args, tag: "v2.0.0" } });
  expect(other.status).toBe("pending");
  await expect(rows).toHaveCount(1);
  await expect(rows.nth(0)).toHaveAttribute("data-gate-id", other.id);

  // The Rules view (key 4): who made it, for what, until when, how often it passed.
  await page.keyboard.press("4");
  const view = page.getByTestId("rules-view");
  await expect(page.getByTestId("tab-rules")).toHaveAttribute("aria-selected", "true");
  const rule = view.getByTestId("rule-row");
  await expect(rule).toHaveCount(1);
  await expect(rule).toHaveAttribute("data-status", "live");
  await expect(rule).toContainText("deployer");
  await expect(rule).toContainText("deploy");
  await expect(rule).toContainText("alice");
  await expect(rule).toContainText('"tag":"v1.4.2"');
  await expect(rule.getByTestId("rule-until")).toContainText("left");
  await expect(rule.getByTestId("rule-uses")).toHaveText("1 gate passed");
  expect(`rule:${await rule.getAttribute("data-rule-id")}`).toBe(second.decision?.decided_by);

  // Revoked at once, by keyboard: the next identical deploy waits for a human again.
  const revoke = rule.getByTestId("rule-revoke");
  await expect(revoke).toHaveAccessibleName("Revoke: always allow deploy for deployer");
  await revoke.focus();
  await page.keyboard.press("Enter");
  await expect(rule).toHaveAttribute("data-status", "revoked");
  await expect(rule.getByTestId("rule-until")).toHaveText(/^revoked by alice/);
  await expect(revoke).toHaveCount(0);
  const third = await agent.openGate(runId, { ...deploy, payload: args });
  expect(third.status).toBe("pending");
  expect((await agent.wait(third.id, 1)).status).toBe("pending");
  await expect(rows).toHaveCount(2);
});
