// The diff layout: side by side unless the reviewer chose inline, and the
// choice remembered in this browser; the diff itself renders read-only.

import { render } from "svelte/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LAYOUT_KEY, parseLayout } from "./layout";
import PayloadDiff from "./PayloadDiff.svelte";

/** A localStorage stand-in holding `initial`. */
function storage(initial: Record<string, string> = {}): Storage {
  const data = new Map(Object.entries(initial));
  return {
    getItem: (k: string) => data.get(k) ?? null,
    setItem: (k: string, v: string) => void data.set(k, v),
    removeItem: (k: string) => void data.delete(k),
    clear: () => data.clear(),
    key: () => null,
    get length() {
      return data.size;
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe("parseLayout", () => {
  it("reads inline as inline and anything else as side by side", () => {
    expect(parseLayout("inline")).toBe("inline");
    expect(parseLayout("split")).toBe("split");
    expect(parseLayout(null)).toBe("split");
    expect(parseLayout("sideways")).toBe("split");
  });
});

describe("the remembered choice", () => {
  it("starts from what this browser stored and stores what the reviewer chooses", async () => {
    const kept = storage({ [LAYOUT_KEY]: "inline" });
    vi.stubGlobal("localStorage", kept);
    const { diffLayout } = await import("./layout.svelte");
    expect(diffLayout.current).toBe("inline");
    diffLayout.choose("split");
    expect(diffLayout.current).toBe("split");
    expect(kept.getItem(LAYOUT_KEY)).toBe("split");
  });

  it("still holds a choice when storage refuses it", async () => {
    const refusing = { ...storage(), setItem: () => { throw new Error("quota"); }, getItem: () => { throw new Error("denied"); } };
    vi.stubGlobal("localStorage", refusing);
    const { diffLayout } = await import("./layout.svelte");
    expect(diffLayout.current).toBe("split");
    diffLayout.choose("inline");
    expect(diffLayout.current).toBe("inline");
  });
});

describe("PayloadDiff", () => {
  it("shows both sides marked until the merge view mounts, with the layout toggle, and nothing editable", () => {
    const { body: marked } = render(PayloadDiff, {
      props: { before: '{\n  "table": "orders_2019"\n}', after: '{\n  "table": "orders_2018"\n}', beforeLabel: "Proposed", afterLabel: "Received", label: "diff", testid: "d" },
    });
    const body = marked.replace(/<!--.*?-->/g, "");
    expect(body).toContain('data-testid="diff-layout-split"');
    expect(body).toContain('aria-pressed="true"');
    expect(body).toMatch(/<del[^>]*>[^<]*2019[^<]*<\/del>/);

    expect(body).toMatch(/<ins[^>]*>[^<]*2018[^<]*<\/ins>/);
    expect(body).not.toMatch(/<textarea|contenteditable="true"/);
  });
});
