import { describe, expect, it } from "vitest";
import { scrollToReveal, windowFor } from "./virtual";

describe("the virtual list's window", () => {
  it("renders only the rows on screen plus a few either side", () => {
    const w = windowFor(68 * 500, 680, 68, 10_000, 6);
    expect(w).toEqual({ start: 494, end: 516, offset: 494 * 68, total: 680_000 });
  });

  it("clamps at both ends", () => {
    expect(windowFor(0, 680, 68, 10_000, 6)).toMatchObject({ start: 0, end: 16 });
    expect(windowFor(10_000_000, 680, 68, 10_000, 6)).toMatchObject({ start: 9984, end: 10_000 });
    expect(windowFor(0, 680, 68, 3, 6)).toMatchObject({ start: 0, end: 3 });
    expect(windowFor(0, 680, 68, 0)).toEqual({ start: 0, end: 0, offset: 0, total: 0 });
  });

  it("scrolls just enough to reveal the selected row", () => {
    expect(scrollToReveal(5, 0, 680, 68)).toBeNull();
    expect(scrollToReveal(10, 0, 680, 68)).toBe(68);
    expect(scrollToReveal(2, 500, 680, 68)).toBe(136);
  });
});
