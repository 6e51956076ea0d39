// The theme choice: remembered, cycled, and resolved against the system's preference.

import { describe, expect, it } from "vitest";
import { nextChoice, readChoice, saveChoice, themeFor } from "./theme.svelte";

function memory(): Storage {
  const map = new Map<string, string>();
  return {
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
    clear: () => map.clear(),
    key: () => null,
    get length() {
      return map.size;
    },
  };
}

describe("the theme", () => {
  it("follows the system until the reviewer chooses", () => {
    expect(themeFor("system", true)).toBe("dark");
    expect(themeFor("system", false)).toBe("light");
    expect(themeFor("light", true)).toBe("light");
    expect(themeFor("dark", false)).toBe("dark");
  });

  it("remembers a choice, and forgets it when the system's is chosen again", () => {
    const storage = memory();
    expect(readChoice(storage)).toBe("system");
    saveChoice(storage, "dark");
    expect(readChoice(storage)).toBe("dark");
    saveChoice(storage, "system");
    expect(readChoice(storage)).toBe("system");
    expect(storage.length).toBe(0);
  });

  it("reads anything unexpected, or a storage that throws, as the system's", () => {
    const storage = memory();
    storage.setItem("gatehouse.theme", "purple");
    expect(readChoice(storage)).toBe("system");
    const throwing = { getItem: () => { throw new Error("denied"); } };
    expect(readChoice(throwing)).toBe("system");
  });

  it("cycles system, light, dark", () => {
    expect(nextChoice("system")).toBe("light");
    expect(nextChoice("light")).toBe("dark");
    expect(nextChoice("dark")).toBe("system");
  });
});
