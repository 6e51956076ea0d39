import { describe, expect, it } from "vitest";
import { exchangeCode, signinCodeFromHash, takeSigninCode } from "./signin";

function page(hash: string) {
  const p = { hash, pathname: "/", search: "", url: null as string | null, replaceUrl: (url: string) => void (p.url = url) };
  return p;
}

function answering(status: number, body: unknown): { fetchFn: typeof fetch; sent: { url: string; body: string }[] } {
  const sent: { url: string; body: string }[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    sent.push({ url, body: String(init.body) });
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  }) as unknown as typeof fetch;
  return { fetchFn, sent };
}

describe("a one-time sign-in link", () => {
  it("is read from #signin=... and leaves the address at once, keeping the rest", () => {
    const p = page("#gate=g1&signin=abc123");
    expect(takeSigninCode(p)).toBe("abc123");
    expect(p.url).toBe("/#gate=g1");
    const none = page("#token=t");
    expect(takeSigninCode(none)).toBeNull();
    expect(none.url).toBeNull();
    expect(signinCodeFromHash("#signin=")).toBeNull();
  });

  it("is traded for a token by posting the code", async () => {
    const { fetchFn, sent } = answering(200, { token: "gh_new", name: "carol", role: "reviewer" });
    expect(await exchangeCode("abc", fetchFn)).toEqual({ ok: true, token: "gh_new", name: "carol" });
    expect(sent).toEqual([{ url: "/api/signin", body: JSON.stringify({ code: "abc" }) }]);
  });

  it("used or expired, says to ask for a new link", async () => {
    const { fetchFn } = answering(401, { code: "unauthorized", message: "this sign-in link is unknown or was already used" });
    const answer = await exchangeCode("abc", fetchFn);
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.message).toMatch(/already used or has expired.*Ask for a new sign-in link/);
  });

  it("when the server cannot be reached, says so", async () => {
    const fetchFn = (async () => {
      throw new Error("offline");
    }) as unknown as typeof fetch;
    expect(await exchangeCode("abc", fetchFn)).toEqual({ ok: false, message: "Cannot reach the server to sign in: offline" });
  });
});
