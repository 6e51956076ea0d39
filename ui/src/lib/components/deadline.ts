// A gate's deadline in plain words: what Gatehouse does when nobody
// answers in time (the gate's `on_timeout`, applied once by the server's
// expiry sweep), when it escalates to someone else, and whether the
// deadline is near enough for the panel to flag it.

import type { Gate } from "../api/types";
import { formatMinutes } from "../format";

/** How near a deadline must be for the panel's row to show it. */
export const NEAR_DEADLINE_MS = 15 * 60_000;

/** Whether `expiresAt` falls within `NEAR_DEADLINE_MS` of `now` (or has passed). */
export function isNear(expiresAt: string | null | undefined, now: number): boolean {
  if (!expiresAt) return false;
  const at = Date.parse(expiresAt);
  return !Number.isNaN(at) && at - now <= NEAR_DEADLINE_MS;
}

/** What happens at the deadline, and whether that decides the gate in the reviewer's place. */
export interface Fallback {
  text: string;
  decides: boolean;
}

/**
 * What happens when the deadline passes unanswered: "then it is approved
 * automatically", "then it expires and its run fails"...
 */
export function fallbackOf(gate: Pick<Gate, "on_timeout" | "mode" | "created_at" | "expires_at">): Fallback {
  switch (gate.on_timeout ?? "expire") {
    case "approve":
      return { text: "then it is approved automatically", decides: true };
    case "reject":
      return { text: "then it is rejected automatically", decides: true };
    case "escalate": {
      // It becomes urgent and gets its whole wait once more.
      const wait = gate.expires_at ? Date.parse(gate.expires_at) - Date.parse(gate.created_at) : 0;
      return { text: `then it escalates: urgent, with ${formatWait(wait)} more to answer`, decides: false };
    }
    case "fail":
      return { text: "then it expires and its run fails", decides: false };
    case "expire":
      // A sync gate's run is waiting on it: its expiry fails the run.
      return { text: gate.mode === "sync" ? "then it expires and its run fails" : "then it expires", decides: false };
  }
}

/** A wait for people: "45s", "10m", "2h", "1h 30m", "3d". */
function formatWait(ms: number): string {
  const seconds = Math.max(Math.round(ms / 1000), 1);
  return seconds < 60 ? `${seconds}s` : formatMinutes(Math.round(seconds / 60));
}

/**
 * The gate's escalation: "escalates to ops at 14:05" while it is to come,
 * "escalated to ops at 14:05" once it happened; null without one. Roles
 * read as "anyone with the role sre".
 */
export function escalationSentence(gate: Pick<Gate, "escalation">, when: (iso: string) => string): string | null {
  const e = gate.escalation;
  if (!e) return null;
  const to = (e.to ?? []).map((d) => (d.startsWith("role:") ? `anyone with the role ${d.slice(5)}` : d));
  // With no one named, escalating raises the gate's priority.
  const whom = to.length === 0 ? " to a higher priority" : ` to ${to.length === 1 ? to[0] : `${to.slice(0, -1).join(", ")} and ${to[to.length - 1]}`}`;
  return e.escalated_at ? `escalated${whom} at ${when(e.escalated_at)}` : `escalates${whom} at ${when(e.due_at)}`;
}
