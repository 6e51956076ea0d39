// The colour pairs the armed decision uses, read from app.css, meet WCAG AA
// (4.5:1) in the light and the dark scheme, at rest and under the pointer;
// so do the panel's counts, badges and the timeline's kinds of entry.

import { describe, expect, it } from "vitest";
import css from "./app.css?raw";

const dark = css.slice(css.indexOf(':root[data-theme="dark"]'));

/** The value of `--name` in the light root, or in the dark one when `inDark`. */
function colour(name: string, inDark: boolean): string {
  const found = (text: string) => text.match(new RegExp(`--${name}:\\s*(#[0-9a-fA-F]{6})`))?.[1];
  const value = (inDark ? found(dark) : undefined) ?? found(css);
  if (!value) throw new Error(`--${name} is not a #rrggbb colour in app.css`);
  return value;
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

describe("the decision buttons' colours", () => {
  const pairs: [string, string][] = [
    ["accent-text", "accent"],
    ["accent-text", "accent-hover"],
    ["danger-text", "danger"],
    ["danger-text", "danger-hover"],
    ["danger", "surface"],
    ["danger", "danger-bg"],
  ];
  for (const inDark of [false, true]) {
    for (const [text, background] of pairs) {
      it(`--${text} on --${background} reads at 4.5:1 or more (${inDark ? "dark" : "light"})`, () => {
        expect(contrast(colour(text, inDark), colour(background, inDark))).toBeGreaterThanOrEqual(4.5);
      });
    }
  }

  const more: [string, string][] = [
    ["neutral-text", "neutral-bg"],
    ["badge-text", "sync"],
    ["badge-text", "async"],
    ["badge-text", "advisory"],
    ["text-muted", "surface"],
    ["text-muted", "selected"],
    ["danger", "selected"],
    ["warn", "selected"],
    ["accent", "selected"],
    ["warn", "surface"],
    ["ok", "surface"],
    ["accent", "surface"],
    ...(["turn", "gate", "decision", "handoff", "control", "other"].map((k) => [`kind-${k}`, "surface"]) as [string, string][]),
  ];
  for (const inDark of [false, true]) {
    for (const [text, background] of more) {
      it(`--${text} on --${background} reads at 4.5:1 or more (${inDark ? "dark" : "light"})`, () => {
        expect(contrast(colour(text, inDark), colour(background, inDark))).toBeGreaterThanOrEqual(4.5);
      });
    }
  }

  it("measures as WCAG does", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21);
    // Red on blue: the armed rejection as it was.
    expect(contrast("#b42318", "#1f5fbf")).toBeLessThan(1.2);
  });
});
