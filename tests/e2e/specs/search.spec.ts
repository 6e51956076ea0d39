// Searching every gate, pending and past: Ctrl+K brings up the search,
// typing finds gates an agent opened over HTTP by their text, payload and
// who decided them, the matched words are marked in the snippet (agent
// markup stays text), Enter opens a pending gate to decide and a past one
// to read, and the filters narrow the hits.

import { expect, signIn, test } from "../support/fixtures";

test("a reviewer searches pending and past gates, sees the match and opens it", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "release-bot"));
  const runId = await agent.startRun("Quarterly billing release");
  const deploy = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy_service",
    mode: "sync",
    text: 'Deploy the <img src=x onerror="document.title=\'pwned\'"> billing service to production?',
    payload: { service: "billing-api", replicas: 3 },
  });
  const question = await agent.openGate(runId, {
    kind: "question",
    mode: "async",
    text: "Which region should the Zürich customers use?",
  });
  const unrelated = await agent.openGate(runId, { kind: "question", mode: "advisory", text: "Rename the changelog?" });
  // Another reviewer answers the question over the API before the page loads.
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${question.id}/resolve`, {
    action: "respond",
    text: "eu-central-2, close to the customers",
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Control+k");
  const view = page.getByTestId("search-view");
  const input = view.getByTestId("search-input");
  await expect(input).toBeFocused();
  // With nothing typed: the newest gates, pending and past.
  const hits = view.getByTestId("search-hit");
  await expect(hits).toHaveCount(3);
  await expect(hits.nth(0)).toHaveAttribute("data-gate-id", unrelated.id);

  // Typing searches as it goes: a prefix of the payload's value finds the deploy.
  await input.pressSequentially("billing-a");
  await expect(hits).toHaveCount(1);
  const hit = hits.nth(0);
  await expect(hit).toHaveAttribute("data-gate-id", deploy.id);
  await expect(hit.getByTestId("mode-badge")).toHaveText("SYNC");
  await expect(hit.getByTestId("hit-kind")).toHaveText("Approval");
  await expect(hit.getByTestId("hit-status")).toHaveText("Pending");
  await expect(hit.getByTestId("hit-agent")).toHaveText("release-bot");
  await expect(hit.getByTestId("hit-run")).toHaveText("Quarterly billing release");
  await expect(hit.locator("mark").first()).toHaveText(/billing/i);

  // Words in the question text: the agent's markup is shown as text, never run.
  await input.fill("billing service");
  await expect(hits).toHaveCount(1);
  const snippet = hit.getByTestId("hit-snippet");
  await expect(snippet).toContainText("<img src=x");
  await expect(snippet.locator("mark")).toHaveText(["billing", "service"]);
  await expect(snippet.locator("img")).toHaveCount(0);
  expect(await page.title()).not.toBe("pwned");

  // Enter opens the pending gate to decide; approving it closes it and the hit says so.
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", deploy.id);
  // Decision keys act once the gate is shown (a key pressed while it loads decides nothing).
  await expect(modal.getByTestId("decide-approve")).toBeEnabled();
  await page.keyboard.press("Alt+a");
  await page.keyboard.press("Control+Enter");
  await expect(modal).toHaveCount(0);
  await expect(hit.getByTestId("hit-status")).toHaveText("Approved by alice");

  // A past gate, by who decided it and what they said: opened to read.
  await page.keyboard.press("Control+k");
  await expect(input).toBeFocused();
  await input.fill("bob eu-central");
  await expect(hits).toHaveCount(1);
  await expect(hit).toHaveAttribute("data-gate-id", question.id);
  await expect(hit.getByTestId("hit-status")).toHaveText("Answered by bob");
  await expect(hit.locator("mark")).toHaveText(["eu-central"]);
  await page.keyboard.press("Enter");
  await expect(modal).toHaveAttribute("data-gate-id", question.id);
  await expect(modal.getByTestId("decision-outcome")).toContainText("Answered by bob");
  await expect(modal.getByTestId("decision-text")).toHaveText("eu-central-2, close to the customers");
  await expect(modal.getByTestId("answer-input")).toHaveCount(0);
  await page.keyboard.press("Escape");
  await expect(modal).toHaveCount(0);

  // Filters: only what is still pending, with no text.
  await input.fill("");
  await view.getByTestId("search-status-filter").selectOption("pending");
  await expect(hits).toHaveCount(1);
  await expect(hit).toHaveAttribute("data-gate-id", unrelated.id);
  await view.getByTestId("search-status-filter").selectOption("resolved");
  await view.getByTestId("search-decided-by-filter").fill("alice");
  await expect(hits).toHaveCount(1);
  await expect(hit).toHaveAttribute("data-gate-id", deploy.id);
  // Nothing matches: said so, no error.
  await input.fill('"AND( zzz*');
  await expect(hits).toHaveCount(0);
  await expect(view.getByTestId("search-count")).toHaveText("No gate matches.");
  await expect(view.getByTestId("search-error")).toHaveCount(0);
});
