// Which server the page reviews, as the header shows it. The desktop app
// opens the page as `#token=...&server=this-computer|team&connection=URL`
// (and `&notice=CODE` after falling back at start); like the token, these
// move to sessionStorage and leave the address at once. Nothing in the
// address can put words on the page: a team is named by the page's own
// host, "This computer" only on a loopback address, a notice is one of a
// few fixed texts, and the link goes only to the app's own connection page.
// Without them (a browser tab) the badge shows the host.

import type { Page } from "../session/token";

/** The sessionStorage key holding what the desktop app said. */
export const DESKTOP_KEY = "gatehouse.desktop";

/** What the desktop app tells the page. */
export interface Desktop {
  server: "this-computer" | "team";
  /** The app's connection page, if a valid one was given. */
  connection: string | null;
  /** A notice code, if one is due. */
  notice: NoticeCode | null;
}

/** The notices the app may raise, by code. */
export const NOTICES = {
  "team-unavailable": "Could not connect to your team server at start: you are reviewing this computer's server. Connection says why.",
} as const;

export type NoticeCode = keyof typeof NOTICES;

const PARAMS = ["server", "connection", "notice"] as const;

/** The app's connection page, if `text` is its address (and nothing else). */
export function connectionPage(text: string | null | undefined): string | null {
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const custom = url.protocol === "gatehouse:" && url.host === "localhost";
  const windows = (url.protocol === "http:" || url.protocol === "https:") && url.host === "gatehouse.localhost";
  return (custom || windows) && url.username === "" && url.password === "" ? url.href : null;
}

/** What the desktop app said in the fragment, if it said anything. */
export function desktopFromHash(hash: string): Desktop | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const server = params.get("server");
  if (server !== "this-computer" && server !== "team") return null;
  const notice = params.get("notice");
  return {
    server,
    connection: connectionPage(params.get("connection")),
    notice: notice !== null && Object.hasOwn(NOTICES, notice) ? (notice as NoticeCode) : null,
  };
}

/**
 * What the desktop app said: in the address (stored, then removed from the
 * address, keeping other parameters), else stored earlier in this session.
 */
export function takeDesktop(page: Page): Desktop | null {
  const fromHash = desktopFromHash(page.hash);
  if (fromHash !== null) {
    page.storage.setItem(DESKTOP_KEY, JSON.stringify(fromHash));
    const rest = new URLSearchParams(page.hash.replace(/^#/, ""));
    for (const name of PARAMS) rest.delete(name);
    const fragment = rest.toString();
    page.replaceUrl(page.pathname + page.search + (fragment ? `#${fragment}` : ""));
    return fromHash;
  }
  try {
    const stored = page.storage.getItem(DESKTOP_KEY);
    return stored === null ? null : desktopFromStored(JSON.parse(stored));
  } catch {
    return null;
  }
}

function desktopFromStored(value: unknown): Desktop | null {
  const v = value as Partial<Desktop> | null;
  if (v?.server !== "this-computer" && v?.server !== "team") return null;
  const notice = typeof v.notice === "string" && Object.hasOwn(NOTICES, v.notice) ? v.notice : null;
  return { server: v.server, connection: connectionPage(v.connection), notice };
}

/** The notice dismissed: not shown again in this session. */
export function dismissNotice(page: Pick<Page, "storage">, desktop: Desktop): Desktop {
  const next = { ...desktop, notice: null };
  page.storage.setItem(DESKTOP_KEY, JSON.stringify(next));
  return next;
}

/** The header's badge for the server. */
export interface Badge {
  /** "This computer", "Team: host" or the host. */
  label: string;
  /** Its accessible name: what it is and, with a link, where it goes. */
  name: string;
  /** The connection page, when the badge is a link to it. */
  link: string | null;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** The badge for the page at `location`, as the desktop app described it (or not). */
export function serverBadge(desktop: Desktop | null, location: Pick<Location, "host" | "hostname">): Badge {
  const link = desktop?.connection ?? null;
  const label =
    desktop?.server === "this-computer" && LOOPBACK.has(location.hostname)
      ? "This computer"
      : desktop !== null
        ? `Team: ${location.host}`
        : location.host;
  const where = `Connected to ${label === location.host ? `the server at ${label}` : label}`;
  return { label, link, name: link ? `${where}. Change the connection` : where };
}
