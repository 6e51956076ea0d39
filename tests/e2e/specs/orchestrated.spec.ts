// A reviewer starts a supervised model run from the Runs view (Gatehouse
// drives the scripted provider itself), then reviews its payload and its
// answer in the panel like any agent's gates; the run ends with the
// accepted text as its result. A team run is started from the form too.

import { expect, signIn, test } from "../support/fixtures";

test("a supervised model run is started from the UI and reviewed to its result", async ({ page, gatehouse }) => {
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("2");
  await expect(page.getByTestId("runs-view")).toBeVisible();
  await page.keyboard.press("g");
  const form = page.getByTestId("new-run");
  await expect(form).toBeVisible();
  await expect(form.getByTestId("new-run-prompt")).toBeFocused();
  // The scripted demo provider's tools are offered, the first chosen.
  await expect(form.getByTestId("new-run-tool")).toHaveValue("scripted:chat");
  await expect(form.getByTestId("new-run-tool").locator("option")).toHaveText([
    "scripted:chat (scripted)",
    "scripted:caption (scripted)",
    "scripted:flaky (scripted)",
  ]);
  // A mistake is named beside its field before anything is sent.
  await page.keyboard.press("Control+Enter");
  await expect(form.getByRole("alert")).toHaveText("Write what the model should do.");
  await page.keyboard.type("Draft the release notes for the beta from the merged changes");
  await page.keyboard.press("Control+Enter");

  await expect(form).toHaveCount(0);
  await expect(page.getByTestId("runs-notice")).toContainText("Run started");
  await expect(page.getByTestId("run-title")).toHaveText("scripted:chat: Draft the release notes for the beta from the merged changes");

  // The payload review reaches the panel, from the agent "gatehouse".
  await page.keyboard.press("1");
  const row = page.getByTestId("blocker-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("gatehouse");
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal.getByTestId("gate-text")).toContainText("Send this payload to scripted:chat?");
  await modal.getByTestId("decide-approve").click();
  await expect(modal).toHaveCount(0);

  // Then the answer: accepted as the audit cleaned it.
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Review the answer from");
  await page.keyboard.press("Enter");
  await expect(modal.getByTestId("response-review")).toBeVisible();
  await modal.getByTestId("decide-approve").click();
  await expect(row).toHaveCount(0);

  const runs = await gatehouse.call<{ runs: { id: string; status: string; agent: string }[] }>(
    gatehouse.adminToken,
    "GET",
    "/runs",
  );
  const run = runs.runs[0]!;
  expect(run.agent).toBe("gatehouse");
  await expect
    .poll(async () => (await gatehouse.call<{ run: { status: string } }>(gatehouse.adminToken, "GET", `/run/${run.id}/state`)).run.status)
    .toBe("completed");
  const state = await gatehouse.call<{ run: { result: { text: string } } }>(gatehouse.adminToken, "GET", `/run/${run.id}/state`);
  expect(state.run.result.text).toContain("Draft the release notes for the beta");
});

test("a team run is started from the New Run form, the server's 422 shown beside the team", async ({ page, gatehouse }) => {
  const alice = await gatehouse.token("reviewer", "alice");
  await signIn(page, gatehouse, alice);
  await page.keyboard.press("2");
  await expect(page.getByTestId("runs-view")).toBeVisible();
  await page.keyboard.press("g");
  const form = page.getByTestId("new-run");
  await expect(form.getByTestId("new-run-prompt")).toBeFocused();
  await form.getByTestId("new-run-prompt").fill("Add a logout button");
  const member = (name: string) => ({ name, role: name, provider: "scripted", model: "chat" });
  await form.getByText("A team of agents (optional)").click();
  // The server checks the team: a name twice is a 422 naming the field, shown beside the team.
  await form.getByTestId("new-run-team").fill(JSON.stringify([member("coder"), member("coder")]));
  await form.getByTestId("new-run-step-mode").selectOption("breakpoint");
  await form.getByTestId("new-run-break-handoff").check();
  await form.getByTestId("new-run-break-handoff-to").fill("tester");
  await form.getByTestId("new-run-break-agents").fill("deployer");
  await form.getByTestId("new-run-start").click();
  await expect(form.getByTestId("new-run-team-error")).toContainText("run_input.team[1].name");
  await expect(form.getByTestId("new-run-error")).toHaveCount(0);

  await form.getByTestId("new-run-team").fill(JSON.stringify([member("coder"), member("tester"), member("deployer")]));
  await form.getByTestId("new-run-start").click();
  await expect(form).toHaveCount(0);
  await expect(page.getByTestId("runs-notice")).toContainText("Run started");
  await expect(page.getByTestId("team-panel")).toBeVisible();
  const run = await page.getByTestId("run-list").locator('[aria-selected="true"]').getAttribute("data-run-id");
  const state = await gatehouse.call<{ run: { control?: { breakpoints?: unknown[] } } }>(alice, "GET", `/run/${run}/state`);
  expect(state.run.control?.breakpoints).toEqual([{ on: "tool_call", tool: null }, { on: "handoff", to: "tester" }, { on: "agent", name: "deployer" }]);
});
