import { describe, expect, it } from "vitest";
import { changeSummary, diffText, diffTokens, side, splitLines, splitWords, type Segment } from "./textdiff";

const join = (segs: Segment[], keep: Segment["op"][]) =>
  segs
    .filter((s) => keep.includes(s.op))
    .map((s) => s.text)
    .join("");

describe("text differences", () => {
  it("finds the shortest edit between token lists", () => {
    expect(diffTokens([..."abcabba"], [..."cbabac"])).toEqual([
      { op: "del", text: "ab" },
      { op: "same", text: "c" },
      { op: "ins", text: "b" },
      { op: "same", text: "ab" },
      { op: "del", text: "b" },
      { op: "same", text: "a" },
      { op: "ins", text: "c" },
    ]);
  });

  it("marks the changed word inside a changed line, not the whole line", () => {
    const segs = diffText("The cat sat.\nSecond line\n", "The dog sat.\nSecond line\n");
    expect(segs).toEqual([
      { op: "same", text: "The " },
      { op: "del", text: "cat" },
      { op: "ins", text: "dog" },
      { op: "same", text: " sat.\nSecond line\n" },
    ]);
    expect(changeSummary(segs)).toEqual({ removed: 1, added: 1 });
  });

  it("rebuilds both texts exactly from their sides", () => {
    const before = "alpha beta\ngamma\n\ndelta epsilon zeta\nend";
    const after = "alpha BETA\n\ndelta zeta eta\nnew line\nend";
    const segs = diffText(before, after);
    expect(join(segs, ["same", "del"])).toBe(before);
    expect(join(segs, ["same", "ins"])).toBe(after);
    expect(join(side(segs, "before"), ["same", "del", "ins"])).toBe(before);
    expect(join(side(segs, "after"), ["same", "del", "ins"])).toBe(after);
  });

  it("says nothing changed for equal texts, and handles empty ones", () => {
    expect(diffText("same\n", "same\n")).toEqual([{ op: "same", text: "same\n" }]);
    expect(diffText("", "")).toEqual([]);
    expect(diffText("", "new")).toEqual([{ op: "ins", text: "new" }]);
    expect(diffText("old", "")).toEqual([{ op: "del", text: "old" }]);
  });

  it("splits without losing characters", () => {
    expect(splitLines("a\nb\n\nc")).toEqual(["a\n", "b\n", "\n", "c"]);
    expect(splitWords("Hi, you  there!")).toEqual(["Hi", ",", " ", "you", "  ", "there", "!"]);
  });

  it("gives up on a hopeless comparison instead of freezing, and still rebuilds both sides", () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}\n`);
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}\n`);
    expect(diffTokens(a, b, 100)).toBeNull();
    const started = performance.now();
    const segs = diffText(a.join(""), b.join(""));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(join(segs, ["same", "del"])).toBe(a.join(""));
    expect(join(segs, ["same", "ins"])).toBe(b.join(""));
  });

  it("compares a megabyte with a few edits quickly", () => {
    const before = Array.from({ length: 24_000 }, (_, i) => `${i} lorem ipsum dolor sit amet\n`).join("");
    const after = before.replace("12000 lorem ipsum dolor", "12000 lorem ipsum DOLOR") + "tail\n";
    expect(before.length).toBeGreaterThan(700_000);
    const started = performance.now();
    const segs = diffText(before, after);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(segs.filter((s) => s.op !== "same")).toEqual([
      { op: "del", text: "dolor" },
      { op: "ins", text: "DOLOR" },
      { op: "ins", text: "tail\n" },
    ]);
  });
});
