// The desk's header stays one line at 1440×900 with the longest realistic
// content: many agents blocked, async and advisory gates waiting, the
// "Decided" notice naming a gate, and the notification button.

import { expect, signIn, test } from "../support/fixtures";

test("the header stays on one line at 1440×900 with busy counts and a decided notice", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const reviewer = await gatehouse.token("reviewer", "alexandra.montgomery-whitfield");
  for (let i = 0; i < 12; i++) {
    const agent = gatehouse.agent(await gatehouse.token("agent", `release-agent-${i}`));
    const run = await agent.startRun(`Release train ${i}`);
    await agent.openGate(run, { kind: "approval", action: "deploy", mode: "sync", text: `Deploy service ${i} to production?` });
    await agent.openGate(run, { kind: "question", mode: "async", text: `Which changelog style for service ${i}?` });
    await agent.openGate(run, { kind: "question", mode: "advisory", text: `Any concerns about service ${i}?` });
  }
  await signIn(page, gatehouse, reviewer);
  await expect(page.getByTestId("blocked-agents")).toHaveText("12 agents blocked waiting · 12 async · 12 advisory");

  // Decide one: the header says so, naming the gate.
  // Each key waits for what the one before it opened, so a slow machine cannot drop one.
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("gate-text")).toContainText("Deploy service");
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("armed-decision")).toContainText("Approve");
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("notice")).toContainText("Deploy service");

  const header = page.locator("header.top");
  const line = await header.evaluate((el) => {
    const centres = [...el.children].map((c) => {
      const r = c.getBoundingClientRect();
      return r.top + r.height / 2;
    });
    return { spread: Math.max(...centres) - Math.min(...centres), overflow: el.scrollWidth - el.clientWidth };
  });
  expect(line.overflow, "nothing in the header overflows it").toBeLessThanOrEqual(0);
  expect(line.spread, "every item of the header is on the same line").toBeLessThan(2);
  const signOut = (await page.getByTestId("sign-out").boundingBox())!;
  expect(signOut.x + signOut.width).toBeLessThanOrEqual(1440);
});
