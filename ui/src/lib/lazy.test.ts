// The lazy component: fetched once however often it is asked for, and
// fetched again after a failure, which it reports.

import { describe, expect, it } from "vitest";
import { Lazy } from "./lazy.svelte";

describe("Lazy", () => {
  it("fetches its module once and keeps the component", async () => {
    let fetched = 0;
    const lazy = new Lazy(async () => {
      fetched += 1;
      return { default: "the component" };
    });
    expect(lazy.component).toBeNull();
    await Promise.all([lazy.load(), lazy.load()]);
    await lazy.load();
    expect(fetched).toBe(1);
    expect(lazy.component).toBe("the component");
    expect(lazy.error).toBeNull();
  });

  it("says why a fetch failed and tries again on the next load", async () => {
    let fail = true;
    const lazy = new Lazy(async () => {
      if (fail) throw new Error("network down");
      return { default: "the component" };
    });
    await lazy.load();
    expect(lazy.component).toBeNull();
    expect(lazy.error).toContain("network down");
    fail = false;
    await lazy.load();
    expect(lazy.component).toBe("the component");
    expect(lazy.error).toBeNull();
  });
});
