// Long read-only panes in the resolution modal scroll by keyboard: the
// raw and audited text of a response review, the run's recent turns, the
// example JSON and a batch action's arguments each take focus with Tab
// (named, with a visible focus) and scroll with Page Down and the arrows.
// The example stays read-only.

import type { Locator, Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/** Presses Tab until `target` has focus (or fails after `max` presses). */
async function tabTo(page: Page, target: Locator, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

const lines = (what: string, n: number) => Array.from({ length: n }, (_, i) => `${what} line ${i + 1}`).join("\n");

test("a long raw response and the run's recent turns are reached by Tab and scrolled with Page Down", async ({ page, gatehouse }) => {
  const writer = await gatehouse.token("agent", "writer");
  const agent = gatehouse.agent(writer);
  const runId = await agent.startRun("Release notes");
  for (let i = 1; i <= 10; i++) {
    await gatehouse.call(writer, "POST", `/runs/${runId}/turns`, { role: "agent", content: lines(`turn ${i}`, 6) });
  }
  await agent.openGate(runId, {
    kind: "response_review",
    mode: "sync",
    text: "Review the release notes before they are published.",
    raw: lines("raw output", 200),
    audited: lines("audited output", 200),
  });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");

  const raw = modal.getByTestId("response-raw");
  await expect(raw).toHaveAccessibleName("Raw response, removed words marked");
  await tabTo(page, raw);
  expect(await raw.evaluate((el) => el.matches(":focus-visible"))).toBe(true);
  expect(await raw.evaluate((el) => el.scrollTop)).toBe(0);
  await page.keyboard.press("PageDown");
  await expect.poll(() => raw.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
  // Tab moves on to the audited side, which scrolls the same way.
  const audited = modal.getByTestId("response-audited");
  await tabTo(page, audited, 1);
  await page.keyboard.press("ArrowDown");
  await expect.poll(() => audited.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);

  // The recent turns: open them from the keyboard, Tab into the list, Page Down.
  const summary = modal.getByText(/^Recent turns \(\d+\)$/);
  await tabTo(page, summary);
  await page.keyboard.press("Enter");
  const turns = modal.getByTestId("recent-turns");
  await expect(turns).toBeVisible();
  await expect(turns).toHaveAccessibleName("Recent turns");
  await tabTo(page, turns, 1);
  expect(await turns.evaluate((el) => el.matches(":focus-visible"))).toBe(true);
  await page.keyboard.press("PageDown");
  await expect.poll(() => turns.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
});

test("the read-only example JSON is reached by Tab and scrolled by keys, and stays read-only", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "designer"));
  const runId = await agent.startRun("Thumbnails");
  const example = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`field_${i + 1}`, i + 1]));
  await agent.openGate(runId, {
    kind: "approval",
    action: "resize",
    mode: "sync",
    text: "Resize the thumbnails?",
    payload: { field_1: 2 },
    example_input: example,
  });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");

  const content = modal.getByTestId("payload-example");
  await expect(content).toHaveAccessibleName("Example input (read only)");
  await expect(content).toHaveAttribute("aria-readonly", "true");
  await tabTo(page, content);
  const editor = content.locator("xpath=ancestor::div[contains(@class, 'cm-editor')]");
  await expect(editor).toHaveClass(/cm-focused/);
  const scroller = content.locator("xpath=ancestor::div[contains(@class, 'cm-scroller')]");
  expect(await scroller.evaluate((el) => el.scrollTop)).toBe(0);
  await page.keyboard.press("PageDown");
  await expect.poll(() => scroller.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
  const before = await scroller.evaluate((el) => el.scrollTop);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("PageDown");
  await expect.poll(() => scroller.evaluate((el) => el.scrollTop)).toBeGreaterThan(before);

  // Typing changes nothing: it is the example, not the payload.
  const text = await content.innerText();
  await page.keyboard.type("xyz");
  await expect(content).not.toContainText("xyz");
  expect(await content.innerText()).toBe(text);
});

test("a long argument list of one of several actions is reached by Tab and scrolled", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "coder"));
  const runId = await agent.startRun("Batch");
  const files = Array.from({ length: 80 }, (_, i) => `src/module_${i + 1}.rs`);
  await agent.openGate(runId, {
    kind: "approval",
    mode: "sync",
    text: "Two tool calls",
    actions: [
      { id: "call_1", name: "write_files", args: { files }, allowed_actions: ["approve", "reject"] },
      { id: "call_2", name: "shell", args: { cmd: "cargo test" }, allowed_actions: ["approve", "reject"] },
    ],
  });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const args = page.getByTestId("resolution-modal").getByRole("region", { name: "Arguments of write_files" });
  await expect(args).toContainText("src/module_80.rs");
  await tabTo(page, args, 60);
  expect(await args.evaluate((el) => el.scrollTop)).toBe(0);
  await page.keyboard.press("PageDown");
  await expect.poll(() => args.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
});
