// How the page gets its reviewer token without anything injected into the
// HTML (the content security policy allows no inline script): the desktop
// app or a person opens `/#token=...`; the token is kept in sessionStorage
// (gone when the tab closes) and removed from the address bar at once, so it
// is not left in history or shown on screen. Otherwise the reviewer pastes
// one into the sign-in form.

/** The sessionStorage key holding the token. */
export const TOKEN_KEY = "gatehouse.token";

/** What the token lookup needs from the page; the real page by default. */
export interface Page {
  hash: string;
  pathname: string;
  search: string;
  storage: Pick<Storage, "getItem" | "setItem" | "removeItem">;
  /** Replaces the current address without reloading. */
  replaceUrl: (url: string) => void;
}

/** The token in a `#token=...` fragment, if any. */
export function tokenFromHash(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const token = params.get("token")?.trim();
  return token ? token : null;
}

/**
 * The token to use: one in the address (stored, then removed from the
 * address, keeping any other fragment parameters), else the stored one.
 */
export function takeToken(page: Page): string | null {
  const fromHash = tokenFromHash(page.hash);
  if (fromHash !== null) {
    page.storage.setItem(TOKEN_KEY, fromHash);
    const rest = new URLSearchParams(page.hash.replace(/^#/, ""));
    rest.delete("token");
    const fragment = rest.toString();
    page.replaceUrl(page.pathname + page.search + (fragment ? `#${fragment}` : ""));
    return fromHash;
  }
  return page.storage.getItem(TOKEN_KEY);
}

/** Remembers a token the reviewer pasted. */
export function saveToken(page: Pick<Page, "storage">, token: string): void {
  page.storage.setItem(TOKEN_KEY, token.trim());
}

/** Forgets the token (signed out, or the server refused it). */
export function forgetToken(page: Pick<Page, "storage">): void {
  page.storage.removeItem(TOKEN_KEY);
}

/** The browser page. */
export function browserPage(): Page {
  return {
    get hash() {
      return window.location.hash;
    },
    get pathname() {
      return window.location.pathname;
    },
    get search() {
      return window.location.search;
    },
    storage: window.sessionStorage,
    replaceUrl: (url) => window.history.replaceState(window.history.state, "", url),
  };
}
