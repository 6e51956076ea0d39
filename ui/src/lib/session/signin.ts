// One-time sign-in links: `gatehouse serve` prints `ORIGIN/#signin=CODE`.
// The page takes the code out of the address at once (the fragment never
// reaches the server or its logs), posts it to `POST /api/signin`, which
// accepts it once, for ten minutes, and answers with a reviewer token the
// page keeps like any other (session/token.ts). A used, expired or unknown
// code is refused with a message saying how to get a new link.

import type { Page } from "./token";

/** Where a code is exchanged (beside the API, needing no token). */
export const SIGNIN_PATH = "/api/signin";

/** The code in a `#signin=...` fragment, if any. */
export function signinCodeFromHash(hash: string): string | null {
  const code = new URLSearchParams(hash.replace(/^#/, "")).get("signin")?.trim();
  return code ? code : null;
}

/**
 * The sign-in code in the address, removed from it at once (keeping any
 * other fragment parameters), or null when there is none.
 */
export function takeSigninCode(page: Pick<Page, "hash" | "pathname" | "search" | "replaceUrl">): string | null {
  const code = signinCodeFromHash(page.hash);
  if (code === null) return null;
  const rest = new URLSearchParams(page.hash.replace(/^#/, ""));
  rest.delete("signin");
  const fragment = rest.toString();
  page.replaceUrl(page.pathname + page.search + (fragment ? `#${fragment}` : ""));
  return code;
}

/** What exchanging a code gave: a token and whose it is, or what to tell the reviewer. */
export type Exchange = { ok: true; token: string; name: string } | { ok: false; message: string };

/** What to do when a link does not work. */
export const NEW_LINK_HINT = "Ask for a new sign-in link: `gatehouse signin-link` prints one (or restart `gatehouse serve`).";

/** Trades a one-time code for a reviewer token. Never throws. */
export async function exchangeCode(code: string, fetchFn: typeof fetch = fetch): Promise<Exchange> {
  let response: Response;
  try {
    response = await fetchFn(SIGNIN_PATH, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
  } catch (e) {
    return { ok: false, message: `Cannot reach the server to sign in: ${e instanceof Error ? e.message : String(e)}` };
  }
  const body = (await response.json().catch(() => null)) as { token?: unknown; name?: unknown; message?: unknown } | null;
  if (response.ok && typeof body?.token === "string" && body.token) {
    return { ok: true, token: body.token, name: typeof body.name === "string" ? body.name : "" };
  }
  if (response.status >= 400 && response.status < 500) {
    return { ok: false, message: "This sign-in link was already used or has expired (each link works once, for ten minutes). " + NEW_LINK_HINT };
  }
  const said = typeof body?.message === "string" ? body.message : `the server answered ${response.status}`;
  return { ok: false, message: `Cannot sign in with this link: ${said}` };
}
