// "Always allow": what a reviewer chooses while approving (for how long,
// which arguments) and how the rules list reads. Arguments match as the
// engine matches them (crates/gatehouse-engine/src/allow_rule.rs), so a
// pattern is checked here before it is sent: an object needs exactly its
// keys, an array its length, a string may use `*` for any run of
// characters (`\*` and `\\` are a literal star and backslash), anything
// else must be equal. A pattern built from the gate's own arguments
// escapes their stars, so it allows those arguments and nothing more.

import { attempt, type Answer, type Api } from "../../api/client";
import type { AllowRule, AllowRuleRequest, AllowRuleStatus, Gate } from "../../api/types";
import { parseJson, type Json } from "../payload";

/** The durations offered, shortest first; `null` lasts until revoked. */
export const DURATIONS = [
  { id: "15m", label: "15 minutes", secs: 900 },
  { id: "1h", label: "1 hour", secs: 3600 },
  { id: "8h", label: "8 hours", secs: 8 * 3600 },
  { id: "24h", label: "24 hours", secs: 24 * 3600 },
  { id: "revoked", label: "Until revoked", secs: null },
] as const;

export type DurationId = (typeof DURATIONS)[number]["id"];
export const DEFAULT_DURATION: DurationId = "1h";

/** What the reviewer has chosen in the "always allow" section. */
export interface AllowDraft {
  /** Whether to make a rule with the approval. */
  on: boolean;
  duration: DurationId;
  /** Any arguments at all, instead of the pattern. */
  anyArgs: boolean;
  /** The argument pattern as typed (JSON); null until typed: exactly the arguments approved. */
  patternText: string | null;
}

/** A rule ready to send with the decision, or why it cannot be. */
export type AllowChoice = { rule: AllowRuleRequest } | { problem: string };

/** Whether a gate can come with "always allow": a pending approval of one named action, with nobody else required. */
export function canAllow(gate: Gate): boolean {
  return (
    gate.status === "pending" &&
    gate.spec.kind === "approval" &&
    (gate.spec.action ?? "").trim() !== "" &&
    (gate.actions ?? []).length === 0 &&
    gate.quorum == null &&
    !gate.requires_human &&
    (gate.deciders ?? []).length === 0 &&
    gate.allowed_actions.includes("approve")
  );
}

/** The arguments approved: the edited payload when there is one, else the gate's (`{}` without one). */
export function approvedArgs(payload: unknown, edited?: Json): Json {
  if (edited !== undefined && edited !== null) return edited;
  return payload === undefined || payload === null ? {} : (payload as Json);
}

/** A pattern matching exactly `args`: every string's `\` and `*` escaped. */
export function literalPattern(args: Json): Json {
  if (typeof args === "string") return args.replaceAll("\\", "\\\\").replaceAll("*", "\\*");
  if (Array.isArray(args)) return args.map(literalPattern);
  if (args !== null && typeof args === "object") {
    return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, literalPattern(v)]));
  }
  return args;
}

/** The pattern's text prefilled from the arguments. */
export function patternTextOf(args: Json): string {
  return JSON.stringify(literalPattern(args), null, 2);
}

type Piece = { star: true } | { char: string };

function pieces(pattern: string): Piece[] {
  const chars = Array.from(pattern);
  const out: Piece[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const next = chars[i + 1];
    if (c === "\\" && (next === "*" || next === "\\")) {
      out.push({ char: next });
      i++;
    } else if (c === "*") out.push({ star: true });
    else out.push({ char: c });
  }
  return out;
}

/** Whether `text` matches a string pattern (`*` any run of characters). */
export function globMatch(pattern: string, text: string): boolean {
  const p = pieces(pattern);
  const t = Array.from(text);
  let [pi, ti] = [0, 0];
  let star: [number, number] | null = null;
  while (ti < t.length) {
    const piece = p[pi];
    if (piece && "star" in piece) {
      star = [pi, ti];
      pi++;
    } else if (piece && piece.char === t[ti]) {
      pi++;
      ti++;
    } else if (star) {
      pi = star[0] + 1;
      ti = star[1] + 1;
      star = [star[0], star[1] + 1];
    } else return false;
  }
  return p.slice(pi).every((piece) => "star" in piece);
}

/** Whether `args` match `pattern`, as the engine decides. */
export function argsMatch(pattern: Json, args: Json): boolean {
  if (typeof pattern === "string") return typeof args === "string" && globMatch(pattern, args);
  if (Array.isArray(pattern)) {
    return Array.isArray(args) && pattern.length === args.length && pattern.every((p, i) => argsMatch(p, args[i]!));
  }
  if (pattern !== null && typeof pattern === "object") {
    if (args === null || typeof args !== "object" || Array.isArray(args)) return false;
    const keys = Object.keys(pattern);
    return keys.length === Object.keys(args).length && keys.every((k) => k in args && argsMatch(pattern[k]!, args[k]!));
  }
  return pattern === args;
}

/** The seconds a duration lasts (`null`: until revoked). */
export function secondsOf(id: DurationId): number | null {
  return DURATIONS.find((d) => d.id === id)?.secs ?? null;
}

/** The rule to send with an approval of `approved`, or why not; `null` when the reviewer did not ask for one. */
export function buildAllowRule(draft: AllowDraft, approved: Json): AllowChoice | null {
  if (!draft.on) return null;
  const for_secs = secondsOf(draft.duration);
  if (draft.anyArgs) return { rule: { for_secs, any_args: true } };
  // Not typed: the approved arguments' own pattern, which matches them by construction.
  if (draft.patternText === null) return { rule: { for_secs, args: literalPattern(approved) } };
  const parsed = parseJson(draft.patternText);
  if (!parsed.ok) return { problem: `The argument pattern is not valid JSON (line ${parsed.line}): ${parsed.message}.` };
  if (parsed.value === null) return { problem: "The argument pattern cannot be null: tick “Any arguments” instead." };
  if (!argsMatch(parsed.value, approved)) {
    return { problem: "The argument pattern does not match the arguments you are approving: a rule allows what you approve." };
  }
  return { rule: { for_secs, args: parsed.value } };
}

/** A rule's status now: a live rule past its expiry reads as expired. */
export function statusNow(rule: AllowRule, now: number): AllowRuleStatus {
  if (rule.status === "live" && rule.expires_at != null && Date.parse(rule.expires_at) <= now) return "expired";
  return rule.status ?? "live";
}

/** How long is left, roughly: "45m", "7h 59m", "2d 3h". */
export function remaining(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours}h` : `${hours}h ${minutes % 60}m`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days}d` : `${days}d ${hours % 24}h`;
}

/** Until when a rule lasts, as the list says it. */
export function untilLabel(rule: AllowRule, now: number, formatTime: (iso: string) => string): string {
  const status = statusNow(rule, now);
  if (status === "revoked") return `revoked${rule.revoked_by ? ` by ${rule.revoked_by}` : ""}${rule.revoked_at ? ` at ${formatTime(rule.revoked_at)}` : ""}`;
  if (rule.expires_at == null) return "until revoked";
  if (status === "expired") return `expired at ${formatTime(rule.expires_at)}`;
  return `until ${formatTime(rule.expires_at)} (${remaining(Date.parse(rule.expires_at) - now)} left)`;
}

/** A rule's arguments in one line. */
export function argsLabel(rule: AllowRule): string {
  return rule.args == null ? "any arguments" : JSON.stringify(rule.args);
}

/** How many gates a rule passed. */
export function usesLabel(uses: number | undefined): string {
  const n = uses ?? 0;
  return n === 0 ? "no gates passed yet" : `${n} gate${n === 1 ? "" : "s"} passed`;
}

/** Which rules the list shows. */
export type RuleFilter = { status: AllowRuleStatus | "all"; agent: string };

/** The rules matching `filter`, newest first. */
export function listRules(api: Api, filter: RuleFilter): Promise<Answer<AllowRule[]>> {
  const agent = filter.agent.trim();
  const query = { status: filter.status, limit: 500, ...(agent ? { agent } : {}) };
  return attempt("list the rules", async () => {
    const { data, error, response } = await api.GET("/api/hitl/allow-rules", { params: { query } });
    return { data: data?.rules, error, response };
  });
}

/** Revokes a rule at once (a rule already revoked comes back as it is). */
export function revokeRule(api: Api, id: string): Promise<Answer<AllowRule>> {
  return attempt("revoke the rule", () => api.DELETE("/api/hitl/allow-rules/{rule_id}", { params: { path: { rule_id: id } } }));
}
