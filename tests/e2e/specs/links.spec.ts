// A link in an agent's text opens in a new tab: following it never takes
// the reviewer's page away, and the answer they were writing stays where it
// was. (The desktop window hands the same link to the browser; its own
// test covers that.)

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { expect, signIn, test } from "../support/fixtures";

test("an agent's link opens in a new tab and the reviewer's page and unsent answer stay", async ({ page, context, gatehouse }) => {
  // The page the link points at: a real one, on loopback.
  const site = createServer((_, response) => response.end("<!doctype html><title>Runbook</title><p>Fail over to eu-west.</p>"));
  await new Promise<void>((ready) => site.listen(0, "127.0.0.1", ready));
  const runbook = `http://127.0.0.1:${(site.address() as AddressInfo).port}/runbook`;
  const agent = gatehouse.agent(await gatehouse.token("agent", "builder"));
  const runId = await agent.startRun("Links");
  await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    text: `Read [the runbook](${runbook}) first. Which region?`,
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const link = modal.getByTestId("gate-text").getByRole("link", { name: "the runbook" });
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(link).toHaveAttribute("rel", "noopener noreferrer nofollow");

  const answer = modal.getByRole("textbox").first();
  await answer.fill("eu-west, unless the runbook");
  const here = page.url();
  const [tab] = await Promise.all([context.waitForEvent("page"), link.click()]);
  await expect(tab).toHaveTitle("Runbook");
  expect(tab.url()).toBe(runbook);

  expect(page.url()).toBe(here);
  await expect(modal).toBeVisible();
  await expect(answer).toHaveValue("eu-west, unless the runbook");
  site.close();
});
