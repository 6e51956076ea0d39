// The team specs' shared start: the demo's team (a coder, a tester with
// `store_memory`, a deployer) on a run Gatehouse drives with the scripted
// provider, left where the deployer's answer waits for a reviewer (four
// handoffs on, the tester having handed back to the coder once), and a
// reviewer signed in on the Runs view with that run selected.

import type { Locator, Page } from "@playwright/test";
import { expect, signIn } from "./fixtures";
import type { Gatehouse } from "./gatehouse.mjs";

/** A member of a run input's team, on the scripted provider. */
export function member(name: string, role: string, tools: string[] = []) {
  return { name, role, provider: "scripted", model: "chat", tools };
}

/** What the started team gives a spec: the reviewer's token, the run and its team panel. */
export interface TeamAtReview {
  alice: string;
  run: string;
  panel: Locator;
}

/** Starts the team run, waits for it to stand at the deployer's answer, and opens it in the Runs view as alice. */
export async function teamAtReview(page: Page, gatehouse: Gatehouse): Promise<TeamAtReview> {
  const alice = await gatehouse.token("reviewer", "alice");
  const { run_id: run } = await gatehouse.call<{ run_id: string }>(alice, "POST", "/run", {
    title: "Logout button",
    run_input: {
      prompt: "Add a logout button to the account page",
      team: [member("coder", "coder"), member("tester", "tester", ["store_memory"]), member("deployer", "deployer")],
    },
  });
  await expect
    .poll(async () => (await gatehouse.call<{ handoffs: unknown[] }>(alice, "GET", `/runs/${run}/team`)).handoffs.length)
    .toBe(4);
  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await expect(page.getByTestId("run-list").locator(`[data-run-id="${run}"]`)).toHaveAttribute("aria-selected", "true");
  return { alice, run, panel: page.getByTestId("team-panel") };
}
