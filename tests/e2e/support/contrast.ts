// WCAG contrast of an element's text against its own background, read from
// the computed styles (solid colours; the buttons measured paint their own).

import type { Locator } from "@playwright/test";

/** The contrast ratio (1 to 21) of `el`'s text colour on its background colour. */
export async function contrastOf(el: Locator): Promise<number> {
  return el.evaluate((node) => {
    const style = getComputedStyle(node);
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const lum = (css: string) => {
      const [r, g, b] = rgb(css).map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const [a, b] = [lum(style.color), lum(style.backgroundColor)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}
