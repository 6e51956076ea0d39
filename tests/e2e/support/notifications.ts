// Browser notifications under test: records every notification a page
// raises (title, body, and its click), and lets a test say whether the page
// is hidden, since notifications are raised only for a page out of sight.

import type { Page } from "@playwright/test";

/** Records every notification the page raises, and lets the test say whether the page is hidden. */
export async function recordNotifications(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __notes: { title: string; body: string; click: () => void }[]; __hidden: boolean; __asked: number };
    w.__notes = [];
    w.__hidden = false;
    w.__asked = 0;
    Object.defineProperty(document, "visibilityState", { get: () => (w.__hidden ? "hidden" : "visible") });
    const Real = window.Notification;
    class Recorded {
      static get permission() {
        return Real.permission;
      }
      static requestPermission() {
        w.__asked++;
        return Real.requestPermission();
      }
      onclick: (() => void) | null = null;
      constructor(title: string, options: NotificationOptions = {}) {
        w.__notes.push({ title, body: options.body ?? "", click: () => this.onclick?.() });
      }
      close() {}
    }
    Object.defineProperty(window, "Notification", { value: Recorded, configurable: true, writable: true });
  });
}

export const notes = (page: Page) => page.evaluate(() => (window as unknown as { __notes: { title: string; body: string }[] }).__notes.map(({ title, body }) => ({ title, body })));
export const hidden = (page: Page, value: boolean) => page.evaluate((v) => ((window as unknown as { __hidden: boolean }).__hidden = v), value);

/** Clicks the `index`th notification the page raised. */
export const clickNote = (page: Page, index: number) =>
  page.evaluate((i) => (window as unknown as { __notes: { click: () => void }[] }).__notes[i]!.click(), index);
