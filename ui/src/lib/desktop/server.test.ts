import { describe, expect, it } from "vitest";
import type { Page } from "../session/token";
import { connectionPage, DESKTOP_KEY, desktopFromHash, dismissNotice, serverBadge, takeDesktop } from "./server";

function page(hash: string, stored: string | null = null): Page & { url: string | null; store: Map<string, string> } {
  const store = new Map<string, string>(stored === null ? [] : [[DESKTOP_KEY, stored]]);
  const p = {
    hash,
    pathname: "/",
    search: "",
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

const LOCAL = { host: "127.0.0.1:4321", hostname: "127.0.0.1" };
const TEAM = { host: "gh.example.com", hostname: "gh.example.com" };

describe("what the desktop app tells the page", () => {
  it("is read from the fragment, kept for the session and removed from the address", () => {
    const p = page("#gate=g1&server=team&connection=gatehouse%3A%2F%2Flocalhost%2F&notice=team-unavailable");
    const desktop = takeDesktop(p);
    expect(desktop).toEqual({ server: "team", connection: "gatehouse://localhost/", notice: "team-unavailable" });
    expect(p.url).toBe("/#gate=g1");
    expect(takeDesktop(page("", p.store.get(DESKTOP_KEY) ?? null))).toEqual(desktop);
  });

  it("is nothing in a browser tab", () => {
    expect(desktopFromHash("#token=abc")).toBeNull();
    expect(takeDesktop(page(""))).toBeNull();
    expect(takeDesktop(page("", "{not json"))).toBeNull();
  });

  it("links only to the app's own connection page and raises only its fixed notices", () => {
    expect(connectionPage("gatehouse://localhost/")).toBe("gatehouse://localhost/");
    expect(connectionPage("http://gatehouse.localhost/")).toBe("http://gatehouse.localhost/");
    for (const bad of ["javascript:alert(1)", "https://evil.example/", "gatehouse://evil/", "http://x@gatehouse.localhost/", "", null]) {
      expect(connectionPage(bad)).toBeNull();
    }
    const crafted = desktopFromHash("#server=team&connection=javascript%3Aalert(1)&notice=Paste%20your%20token%20at%20evil");
    expect(crafted).toEqual({ server: "team", connection: null, notice: null });
  });

  it("keeps a dismissed notice dismissed for the session", () => {
    const p = page("#server=this-computer&notice=team-unavailable");
    const desktop = takeDesktop(p);
    expect(desktop?.notice).toBe("team-unavailable");
    dismissNotice(p, desktop!);
    expect(takeDesktop(page("", p.store.get(DESKTOP_KEY) ?? null))?.notice).toBeNull();
  });
});

describe("the server badge", () => {
  const app = { connection: "gatehouse://localhost/", notice: null };

  it("names this computer's server, on a loopback address only", () => {
    const badge = serverBadge({ server: "this-computer", ...app }, LOCAL);
    expect(badge).toEqual({
      label: "This computer",
      link: "gatehouse://localhost/",
      name: "Connected to This computer. Change the connection",
    });
    expect(serverBadge({ server: "this-computer", ...app }, TEAM).label).toBe("Team: gh.example.com");
  });

  it("names a team server by the page's own host", () => {
    expect(serverBadge({ server: "team", ...app }, TEAM).label).toBe("Team: gh.example.com");
    expect(serverBadge({ server: "team", ...app }, LOCAL).label).toBe("Team: 127.0.0.1:4321");
  });

  it("shows the host without a link in a browser tab", () => {
    expect(serverBadge(null, TEAM)).toEqual({ label: "gh.example.com", link: null, name: "Connected to the server at gh.example.com" });
  });
});
