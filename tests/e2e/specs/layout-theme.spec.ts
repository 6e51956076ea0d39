// The theme follows the system until the reviewer chooses one with the
// header's button, which the page then remembers; the desk's text (header,
// rows, badges, preview, timeline kinds) reads at WCAG AA, 4.5:1, in both.

import type { Locator, Page } from "@playwright/test";
import { contrastOf } from "../support/contrast";
import { buildScene } from "../support/scene";
import { expect, signIn, test } from "../support/fixtures";

const theme = (page: Page) => page.locator("html").getAttribute("data-theme");

test("the theme follows the system, and a chosen one is kept across reloads", async ({ page, gatehouse }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const toggle = page.getByTestId("theme-toggle");
  expect(await theme(page)).toBe("dark");
  await page.emulateMedia({ colorScheme: "light" });
  await expect.poll(() => theme(page)).toBe("light");
  const lightBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);

  await toggle.click(); // light
  await toggle.click(); // dark
  await expect(toggle).toHaveAttribute("data-theme-choice", "dark");
  expect(await theme(page)).toBe("dark");
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(lightBg);
  await page.reload();
  await expect(page.getByTestId("connection")).toHaveText("Live");
  expect(await theme(page)).toBe("dark");
  await expect(page.getByTestId("theme-toggle")).toHaveAttribute("data-theme-choice", "dark");
});

/** The contrast of `el`'s text on the nearest background painted behind it. */
async function contrastOnPage(el: Locator): Promise<number> {
  return el.evaluate((node) => {
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number);
    let bg: number[] = [];
    for (let at: Element | null = node; at; at = at.parentElement) {
      const c = rgb(getComputedStyle(at).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3]! >= 1)) {
        bg = c.slice(0, 3);
        break;
      }
    }
    const lum = ([r, g, b]: number[]) =>
      [r!, g!, b!]
        .map((v) => {
          const c = v / 255;
          return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        })
        .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
    const [a, b] = [lum(rgb(getComputedStyle(node).color)), lum(bg.length ? bg : [255, 255, 255])];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}

for (const scheme of ["light", "dark"] as const) {
  test(`the desk's text reads at 4.5:1 or more (${scheme})`, async ({ page, gatehouse }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const scene = await buildScene(gatehouse, 6);
    await signIn(page, gatehouse, scene.reviewer);
    await expect(page.getByTestId("preview-text")).toBeVisible();
    const checks: Locator[] = [
      page.getByTestId("blocked-agents"),
      page.getByTestId("connection"),
      page.getByTestId("blocker-count"),
      page.getByTestId("theme-toggle"),
      ...(await page.getByTestId("mode-badge").all()),
      ...(await page.getByTestId("gate-priority").all()),
      ...(await page.getByTestId("gate-agent").all()),
      ...(await page.getByTestId("gate-run").all()),
      page.getByTestId("preview-priority"),
      page.getByTestId("preview-facts"),
    ];
    for (const el of checks) {
      const ratio = el === checks[2] || (await el.getAttribute("data-testid")) === "mode-badge" ? await contrastOf(el) : await contrastOnPage(el);
      expect(ratio, `${await el.getAttribute("data-testid")}: ${await el.innerText()}`).toBeGreaterThanOrEqual(4.5);
    }

    await page.keyboard.press("2");
    await page.getByTestId("run-list").locator(`[data-run-id="${scene.runId}"]`).click();
    for (const kind of await page.getByTestId("timeline-kind").all()) {
      expect(await contrastOnPage(kind), await kind.innerText()).toBeGreaterThanOrEqual(4.5);
    }
  });
}

test("the payload editor follows the dark theme: a dark editor whose JSON reads at 4.5:1", async ({ page, gatehouse }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Deploy");
  await agent.openGate(runId, { kind: "approval", action: "deploy", text: "Deploy?", payload: { env: "prod", replicas: 3, canary: true } });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Enter");
  const content = page.getByTestId("resolution-modal").getByTestId("payload-input");
  await expect(content).toContainText('"prod"');

  const luminance = (css: string) => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const editor = content.locator("xpath=ancestor::div[contains(@class,'cm-editor')]");
  const colours = await editor.evaluate((el) => ({
    gutters: getComputedStyle(el.querySelector(".cm-gutters")!).backgroundColor,
    host: getComputedStyle(el.parentElement!).backgroundColor,
    text: getComputedStyle(el.querySelector(".cm-content")!).color,
  }));
  expect(luminance(colours.gutters), `gutters ${colours.gutters}`).toBeLessThan(0.05);
  expect(luminance(colours.host), `editor ${colours.host}`).toBeLessThan(0.05);
  expect(luminance(colours.text), `text ${colours.text}`).toBeGreaterThan(0.5);
  for (const token of await content.locator("span").all()) {
    expect(await contrastOnPage(token), await token.innerText()).toBeGreaterThanOrEqual(4.5);
  }
});
