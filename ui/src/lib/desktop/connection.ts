// The connection page's calls to the desktop app (Tauri IPC, granted to
// this page only, never to a server's page) and the form's rules. The app
// checks a team server itself (`GET /api/hitl/whoami` with the token),
// keeps the token in the OS keychain and the address in its settings, then
// moves the window to the server's UI.

/** What the app's `invoke` looks like; `window.__TAURI_INTERNALS__.invoke` in the app. */
export type Invoke = (command: string, args?: Record<string, unknown>) => Promise<unknown>;

/** Where the window is connected (the app's `Status`). */
export interface Status {
  place: "this_computer" | "team";
  /** "This computer" or "Team: host". */
  label: string;
  origin: string;
  /** Who decisions are recorded as there. */
  reviewer: string;
  /** The team server last connected to. */
  team_url: string | null;
  /** Whether the keychain holds a token for `team_url`. */
  saved_token: boolean;
  /** Why the app is on this computer although its settings name a team server. */
  notice: string | null;
}

/** The ways connecting fails (the app's `CheckCode`). */
export type FailureCode =
  | "bad_url"
  | "no_token"
  | "unreachable"
  | "not_gatehouse"
  | "bad_token"
  | "not_reviewer"
  | "refused"
  | "keychain"
  | "settings"
  | "this_computer"
  | "not_in_app";

export interface Failure {
  code: FailureCode;
  message: string;
}

/** The app's `invoke`, when this page runs in the desktop app. */
export function appInvoke(scope: unknown = globalThis): Invoke | null {
  const internals = (scope as { __TAURI_INTERNALS__?: { invoke?: unknown } }).__TAURI_INTERNALS__;
  return typeof internals?.invoke === "function" ? (internals.invoke as Invoke) : null;
}

/** Whether the page at `location` is the app's connection page (served on the app's own scheme). */
export function isConnectionPage(location: Pick<Location, "protocol" | "hostname">): boolean {
  return location.protocol === "gatehouse:" || location.hostname === "gatehouse.localhost";
}

/** A failure from whatever the app rejected with. */
export function failure(error: unknown): Failure {
  const e = error as Partial<Failure> | null;
  if (typeof e?.code === "string" && typeof e.message === "string") return e as Failure;
  const text = typeof error === "string" ? error : error instanceof Error ? error.message : "";
  return { code: "not_in_app", message: text || "The desktop app did not answer." };
}

/** The field a failure is about, to focus it. */
export function fieldOf(code: FailureCode): "url" | "token" | null {
  switch (code) {
    case "bad_url":
    case "unreachable":
    case "not_gatehouse":
    case "refused":
      return "url";
    case "no_token":
    case "bad_token":
    case "not_reviewer":
      return "token";
    default:
      return null;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Whether the token would cross the network unencrypted: http to another computer. */
export function plainHttp(address: string): boolean {
  const text = address.trim();
  if (!/^http:\/\//i.test(text)) return false;
  try {
    return !LOOPBACK.has(new URL(text).hostname);
  } catch {
    return false;
  }
}

/** The app's connection commands. */
export class Connection {
  constructor(private readonly invoke: Invoke | null) {}

  private async call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.invoke === null) {
      throw { code: "not_in_app", message: "This page belongs to the Gatehouse desktop app; open it there." } satisfies Failure;
    }
    try {
      return (await this.invoke(command, args)) as T;
    } catch (e) {
      throw failure(e);
    }
  }

  status(): Promise<Status> {
    return this.call("connection_status");
  }

  /** Checks the team server with `token` (blank: the saved one) and moves the window there. */
  connectTeam(url: string, token: string): Promise<Status> {
    return this.call("connect_team", { url: url.trim(), token: token.trim() });
  }

  useThisComputer(): Promise<Status> {
    return this.call("use_this_computer");
  }

  forgetTeam(): Promise<Status> {
    return this.call("forget_team");
  }

  showReviews(): Promise<void> {
    return this.call("show_reviews");
  }
}
