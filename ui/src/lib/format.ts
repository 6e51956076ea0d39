// How times, previews and ids read in the panel and the modal.

import type { BlockingMode, DecisionAction, GateKind, GateStatus } from "./api/types";
import { lowerWord, WORDS } from "./words";

/** Characters of a gate's text shown in the blocker panel. */
export const PREVIEW_CHARS = 50;

/**
 * How long ago `then` was, as the panel shows it: "just now", "45s ago",
 * "5m ago", "2h ago", "3d ago". A time in the future (clock skew between
 * the server and this machine) reads as "just now".
 */
export function formatAge(then: string | number | Date, now: number = Date.now()): string {
  const at = then instanceof Date ? then.getTime() : typeof then === "number" ? then : Date.parse(then);
  if (Number.isNaN(at)) return "";
  const seconds = Math.floor((now - at) / 1000);
  if (seconds < 10) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ago`;
  return `${Math.floor(hours / 24)}d ago`;
}

/**
 * How long until `then`, for deadlines: "in 4m", "in 1h 20m", "in 3d";
 * "in under a minute" at the end (the page's clock ticks every few
 * seconds, so counting seconds would lag), and "now" once it has passed
 * (the server applies the deadline on its next sweep).
 */
export function formatUntil(then: string, now: number = Date.now()): string {
  const at = Date.parse(then);
  if (Number.isNaN(at)) return "";
  const seconds = Math.floor((at - now) / 1000);
  if (seconds <= 0) return "now";
  if (seconds < 60) return "in under a minute";
  return `in ${formatMinutes(Math.floor(seconds / 60))}`;
}

/** A span of whole minutes for people: "10m", "2h", "1h 30m", "3d" (whole days, rounded down). */
export function formatMinutes(minutes: number): string {
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours}h` : `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d`;
}

/** A time of day for people ("14:05"), with the date when it is not today. */
export function formatClock(iso: string, now: number = Date.now()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const today = at.toDateString() === new Date(now).toDateString();
  return today
    ? at.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/**
 * A gate's one-line preview, exactly as the server makes it: the first
 * non-blank line, cut to 50 characters (Unicode code points, not UTF-16
 * units, so an emoji is never split) with an ellipsis when cut.
 */
export function previewOf(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim().length > 0) ?? "";
  return truncate(line, PREVIEW_CHARS);
}

/** `text` cut to `max` code points, with "…" appended when cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? chars.slice(0, max).join("") + "…" : text;
}

/** The distinguishing tail of a long id (`run_0193…` → `…a1b2c3d4`). */
export function shortId(id: string, keep = 8): string {
  return id.length > keep + 1 ? `…${id.slice(-keep)}` : id;
}

/** A timestamp for people, in their locale and time zone. */
export function formatTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString();
}

/**
 * A sortable number for an RFC 3339 timestamp with microsecond precision
 * (the server's), since its fraction has a varying number of digits and
 * Date keeps only milliseconds.
 */
export function timeKey(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return 0;
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? "";
  const micros = Number((fraction + "000000").slice(3, 6));
  return ms * 1000 + micros;
}

/** How each kind of gate is named to reviewers (from `words.ts`). */
export const KIND_LABELS: Readonly<Record<GateKind, string>> = WORDS.GateKind;

/** The blocking mode's badge text: SYNC, ASYNC, and ADVISORY. */
export const MODE_LABELS: Readonly<Record<BlockingMode, string>> = WORDS.BlockingMode;

/** A decision as a past participle: "approved", "sent back for revision". */
export const DECIDED: Record<DecisionAction, string> = {
  approve: "approved",
  edit: "approved with edits",
  reject: "rejected",
  respond: "answered",
  needs_revision: "sent back for revision",
  defer: "deferred",
  retry: "retried",
};

/** Where a gate stands, in words: "pending", "rejected by alice", "expired", "cancelled". */
export function outcomeLabel(gate: {
  status: GateStatus;
  decision?: DecisionAction | null;
  decided_by?: string | null;
}): string {
  if (gate.status === "resolved" && gate.decision) {
    return gate.decided_by ? `${DECIDED[gate.decision]} by ${gate.decided_by}` : DECIDED[gate.decision];
  }
  return lowerWord("GateStatus", gate.status);
}

/** `outcomeLabel` standing alone (a status chip, a heading): "Pending", "Approved by alice". */
export function outcomeTitle(gate: Parameters<typeof outcomeLabel>[0]): string {
  const label = outcomeLabel(gate);
  return label.charAt(0).toUpperCase() + label.slice(1);
}
