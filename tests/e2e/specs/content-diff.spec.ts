// The payload editor shows the reviewer's own edits as a red/green diff
// against the proposal, not only as a list, beside the differences from
// the example (which stay highlighted in the editors); resetting to the
// proposal takes the diff away.

import { expect, signIn, test } from "../support/fixtures";

test("the reviewer's own edits are a red/green diff against the proposal, apart from the example's differences", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "image-bot"));
  const runId = await agent.startRun("Thumbnails");
  await agent.openGate(runId, {
    kind: "payload_review",
    mode: "sync",
    text: "Resize this image?",
    payload: { tool: "resize", args: { input_image: "cat.png", width: 1024 } },
    example_input: { tool: "resize", args: { input_image: "dog.png", width: 512 } },
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const editor = page.getByTestId("resolution-modal").getByTestId("payload-editor");
  await expect(editor.getByTestId("example-changes")).toContainText("2 fields differ from the example");
  await expect(editor.getByTestId("payload-own-diff")).toHaveCount(0);

  await page.keyboard.press("Alt+e");
  await expect(editor.getByTestId("payload-input")).toBeFocused();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(JSON.stringify({ tool: "resize", args: { input_image: "cat.png", width: 640 } }, null, 2));

  const diff = editor.getByTestId("payload-own-diff");
  await expect(diff).toBeVisible();
  // Red: what the edit removed from the proposal; green: what it added. Nothing about the example.
  const merge = diff.getByTestId("payload-own-diff-merge");
  await expect(merge.locator(".cm-merge-a .cm-changedText")).toHaveText(["1024"]);
  await expect(merge.locator(".cm-merge-b .cm-changedText")).toHaveText(["640"]);
  await expect(diff).not.toContainText("dog.png");
  const colours = await merge.evaluate((el) => ({
    removed: getComputedStyle(el.querySelector(".cm-merge-a .cm-changedText")!).backgroundColor,
    added: getComputedStyle(el.querySelector(".cm-merge-b .cm-changedText")!).backgroundColor,
  }));
  expect(colours.removed).not.toBe(colours.added);
  expect(colours.removed).not.toBe("rgba(0, 0, 0, 0)");
  // The same toggle as a decided gate's: inline shows the removed line above the edited one.
  await diff.getByTestId("diff-layout-inline").click();
  await expect(merge.locator(".cm-deletedChunk")).toContainText("1024");
  await expect(merge.locator(".cm-content")).toContainText("640");
  // Editing on: the diff follows.
  await editor.getByTestId("payload-input").click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(JSON.stringify({ tool: "resize", args: { input_image: "cat.png", width: 320 } }, null, 2));
  await expect(merge.locator(".cm-content")).toContainText("320");
  await expect(merge.locator(".cm-content")).not.toContainText("640");

  await editor.getByTestId("payload-reset").click();
  await expect(editor.getByTestId("payload-own-diff")).toHaveCount(0);
});
