// The preview shows a payload's beginning only when it is large.

import { describe, expect, it } from "vitest";
import { payloadExcerpt } from "./details";

describe("payloadExcerpt", () => {
  it("shows a small payload whole, indented", () => {
    expect(payloadExcerpt({ a: 1 })).toEqual({ text: '{\n  "a": 1\n}', cut: false, size: "1 KB" });
  });

  it("cuts a large one and says how large it is", () => {
    const big = { rows: "x".repeat(2 * 1024 * 1024) };
    const shown = payloadExcerpt(big, 100);
    expect(shown.cut).toBe(true);
    expect(shown.text).toHaveLength(101);
    expect(shown.size).toBe("2.0 MB");
  });
});
