// Master and detail: the selected gate's full content shows beside the
// panel, read-only, following j/k, with no window over the queue; Enter
// still opens the gate to decide. The header says how many agents are
// blocked waiting, apart from async and advisory gates; the count is
// neutral at 0. Rows name their run by title and show plain text; the
// filter's ↓ and Enter move into the results.

import { buildScene } from "../support/scene";
import { expect, signIn, test } from "../support/fixtures";

test("the selected gate is read beside the panel, follows j/k, and Enter opens it to decide", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const scene = await buildScene(gatehouse, 3);
  await signIn(page, gatehouse, scene.reviewer);
  const pane = page.getByTestId("gate-preview-pane");

  // The most urgent gate, selected at once: its text rendered, its payload, its context, its priority and deadline.
  await expect(pane.getByTestId("preview-title")).toHaveText("Approval from deployer");
  await expect(pane.getByTestId("preview-text").locator("strong")).toHaveText("Upload round 1");
  await expect(pane.getByTestId("preview-payload-table")).toContainText(/bucket\s*partner-exports/);
  await expect(pane.getByTestId("gate-context")).toContainText("Nightly data export");
  await expect(pane.getByTestId("preview-priority")).toHaveText("Urgent priority");
  await expect(pane.getByTestId("gate-deadline")).toContainText(/expires in 59m|expires in 1h/);
  await expect(page.getByRole("dialog")).toHaveCount(0);

  // j moves the selection and the preview with it; k comes back.
  await page.keyboard.press("j");
  await expect(pane.getByTestId("preview-title")).toHaveText("Question from writer");
  await expect(pane.getByTestId("preview-text").locator("em")).toHaveText("deprecated");
  await expect(pane.getByTestId("preview-run")).toHaveText(scene.runTitle);
  await page.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toContainText("lighter tone");
  await page.keyboard.press("k");
  await expect(pane.getByTestId("preview-title")).toHaveText("Question from writer");
  // Nothing in the preview decides: no decision bar, no editor.
  await expect(pane.getByRole("button")).toHaveText([/Open to decide/]);
  await expect(page.getByRole("dialog")).toHaveCount(0);

  // Enter opens the selected gate in the resolution window, as before.
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("resolution-modal")).toBeVisible();
  await expect(page.getByTestId("resolution-modal")).toContainText("deprecated");
});

test("the header counts agents blocked waiting apart from async and advisory gates; the count is neutral at 0", async ({ page, gatehouse }) => {
  const reviewer = await gatehouse.token("reviewer", "alice");
  await signIn(page, gatehouse, reviewer);
  const header = page.getByTestId("blocked-agents");
  const count = page.getByTestId("blocker-count");
  await expect(header).toHaveText("No agent blocked");
  await expect(count).toHaveText("0");
  const neutral = await count.evaluate((el) => getComputedStyle(el).backgroundColor);

  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Notes");
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which tone?" });
  await agent.openGate(runId, { kind: "question", mode: "advisory", text: "Any thoughts?" });
  await expect(header).toHaveText("No agent blocked · 1 async · 1 advisory");
  await expect(count).toHaveText("2");
  expect(await count.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(neutral);

  const other = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const opsRun = await other.startRun("Deploy");
  await other.openGate(opsRun, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy?" });
  await other.openGate(opsRun, { kind: "approval", action: "migrate", mode: "sync", text: "Migrate?" });
  await agent.openGate(runId, { kind: "approval", action: "publish", mode: "sync", text: "Publish?" });
  await expect(header).toHaveText("2 agents blocked waiting · 1 async · 1 advisory");
  await expect(count).toHaveText("5");
  expect(await count.evaluate((el) => getComputedStyle(el).backgroundColor)).not.toBe(neutral);
});

test("a row names its run by title, shows plain text, and the filter's ↓ and Enter move into the results", async ({ page, gatehouse }) => {
  const scene = await buildScene(gatehouse, 1);
  await signIn(page, gatehouse, scene.reviewer);
  const rows = page.getByTestId("blocker-row");
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0).getByTestId("gate-run")).toHaveText("Nightly data export");
  await expect(rows.nth(1).getByTestId("gate-run")).toHaveText(scene.runTitle);
  await expect(rows.nth(0).getByTestId("gate-preview")).toHaveText("Upload round 1: push export.csv to the partn…");
  await expect(rows.nth(1).getByTestId("gate-preview")).toHaveText("Should the notes mention the deprecated flags?");

  // / then text narrows; ↓ goes to the results, j moves there.
  await page.keyboard.press("/");
  await page.keyboard.type("writer");
  await expect(page.getByTestId("blocker-shown")).toHaveText("2 shown");
  await page.keyboard.press("ArrowDown");
  const list = page.getByTestId("blocker-list");
  await expect(list).toBeFocused();
  await expect(rows.nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("j");
  await expect(rows.nth(1)).toHaveAttribute("aria-selected", "true");
  // Enter from the filter does the same; the next Enter opens the gate.
  await page.keyboard.press("/");
  await page.keyboard.press("Enter");
  await expect(list).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("resolution-modal")).toContainText("lighter tone");
});
