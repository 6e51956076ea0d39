import { describe, expect, it } from "vitest";
import { forgetToken, saveToken, takeToken, TOKEN_KEY, tokenFromHash, type Page } from "./token";

function page(hash: string, stored: string | null = null): Page & { url: string | null; store: Map<string, string> } {
  const store = new Map<string, string>(stored === null ? [] : [[TOKEN_KEY, stored]]);
  const p = {
    hash,
    pathname: "/",
    search: "?x=1",
    url: null as string | null,
    store,
    storage: {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
      removeItem: (k: string) => void store.delete(k),
    },
    replaceUrl: (url: string) => {
      p.url = url;
    },
  };
  return p;
}

describe("the page's token", () => {
  it("is read from #token=..., stored for the session and removed from the address", () => {
    const p = page("#token=gh_secret");
    expect(takeToken(p)).toBe("gh_secret");
    expect(p.store.get(TOKEN_KEY)).toBe("gh_secret");
    expect(p.url).toBe("/?x=1");
  });

  it("keeps other fragment parameters", () => {
    const p = page("#gate=g1&token=abc");
    expect(takeToken(p)).toBe("abc");
    expect(p.url).toBe("/?x=1#gate=g1");
  });

  it("falls back to the stored token, and to none", () => {
    expect(takeToken(page("", "stored"))).toBe("stored");
    expect(takeToken(page(""))).toBeNull();
    expect(tokenFromHash("#token=")).toBeNull();
  });

  it("is saved from the sign-in form and forgotten on sign-out", () => {
    const p = page("");
    saveToken(p, "  pasted \n");
    expect(p.store.get(TOKEN_KEY)).toBe("pasted");
    forgetToken(p);
    expect(p.store.has(TOKEN_KEY)).toBe(false);
  });
});
