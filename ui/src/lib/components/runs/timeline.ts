// A run's timeline: every event of its log as one line a reviewer reads:
// what happened, who did it (agent, human or system) and when. Who is
// which comes from the event itself where it says (a turn's role, a
// decision's origin), else from the run (its agent, its participants, the
// agents of its gates, the reviewers who decided them).

import type { Role, Run, RunState } from "../../api/types";
import type { TimelineEvent } from "../../stores/run-log";
import { DECIDED, truncate } from "../../format";
import { remaining } from "../allow/allow";
import { lowerWord, word } from "../../words";
import { plainText } from "../../plain-text";

export type Who = Role | "unknown";

export type Group = "turn" | "handoff" | "gate" | "decision" | "context" | "plan" | "run" | "control" | "score" | "other";

/** Each kind of entry as the timeline marks it: a symbol and a word (never colour alone). */
export const GROUP_MARKS: Record<Group, { icon: string; label: string }> = {
  turn: { icon: "●", label: "turn" },
  handoff: { icon: "⇄", label: "handoff" },
  gate: { icon: "◆", label: "gate" },
  decision: { icon: "✓", label: "decision" },
  context: { icon: "≡", label: "context" },
  plan: { icon: "☰", label: "plan" },
  run: { icon: "▶", label: "run" },
  control: { icon: "⚙", label: "control" },
  score: { icon: "★", label: "score" },
  other: { icon: "·", label: "other" },
};

/**
 * Where a turn hands the work on, from its metadata as agents describe it:
 * `handoff: {destination_agent}`, or a tool call named `handoff` or
 * `parallel_handoff`. The destination, "" when unnamed; null when none.
 */
export function handoffOf(metadata: unknown): string | null {
  if (typeof metadata !== "object" || metadata === null) return null;
  const m = metadata as Record<string, unknown>;
  const named = (v: unknown): string => {
    const o = typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
    const args = typeof o.arguments === "object" && o.arguments !== null ? (o.arguments as Record<string, unknown>) : {};
    const to = o.destination_agent ?? args.destination_agent ?? args.agent;
    return typeof to === "string" ? to : Array.isArray(to) ? to.filter((x) => typeof x === "string").join(", ") : "";
  };
  if (m.handoff !== undefined && m.handoff !== null) return named(m.handoff);
  const calls = [m.tool_call, ...(Array.isArray(m.tool_calls) ? m.tool_calls : [])];
  for (const c of calls) {
    const name = typeof c === "object" && c !== null ? (c as Record<string, unknown>).tool_name : undefined;
    if (name === "handoff" || name === "parallel_handoff") return named(c);
  }
  return null;
}

/**
 * The tool calls a turn records, with their arguments, one line each
 * (`store_memory {"key":"k","value":1}`): a tool call's own turn
 * (`tool_call`), a team agent's turn (`team_calls`), an agent's
 * (`tool_calls`), arguments as `args` or `arguments`. None when it records none.
 */
export function callsOf(metadata: unknown): string[] {
  if (typeof metadata !== "object" || metadata === null) return [];
  const m = metadata as Record<string, unknown>;
  const listed = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  return [m.tool_call, ...listed(m.team_calls), ...listed(m.tool_calls)].flatMap((c) => {
    const o = typeof c === "object" && c !== null ? (c as Record<string, unknown>) : {};
    if (typeof o.tool_name !== "string") return [];
    const args = o.args ?? o.arguments;
    return [truncate(`${o.tool_name} ${args === undefined || args === null ? "{}" : JSON.stringify(args)}`, 2000)];
  });
}

export interface Entry {
  /** Stable across reloads (`identityOf`). */
  key: string;
  at: string;
  actor: string;
  who: Who;
  /** turn, handoff (a turn passing the work to another agent), gate, decision, context, plan, run, control (reviewers steering), score, other: for filtering, icon and colour. */
  group: Group;
  /** One line, plain text (rendered as text, never HTML). */
  summary: string;
  /** More text to show when expanded (a turn's content, a decision's text), plain. */
  detail?: string;
  /** The gate it concerns, to open it. */
  gateId?: string;
}

/** Names whose role the run tells: its agent, participants, turns' speakers, gates' agents, human deciders. */
export function knownRoles(run: Run | null, state: RunState | null): Map<string, Role> {
  const roles = new Map<string, Role>();
  roles.set("system", "system");
  // The engine acts as `gatehouse` (step and breakpoint pauses, expiries).
  roles.set("gatehouse", "system");
  if (run) {
    roles.set(run.agent, "agent");
    for (const p of run.participants) roles.set(p.name, p.role);
  }
  for (const t of state?.turns ?? []) if (!roles.has(t.actor)) roles.set(t.actor, t.role);
  for (const g of state?.gates ?? []) {
    if (!roles.has(g.agent)) roles.set(g.agent, "agent");
    const d = g.decision;
    if (d && !roles.has(d.decided_by)) roles.set(d.decided_by, d.origin.by === "human" ? "human" : "system");
  }
  return roles;
}

/** People's and agents' words on one line, as a reader sees them: markdown's marks left out (the whole text is under "More"). */
const short = (text: string | null | undefined, n = 120): string => truncate(plainText(text ?? ""), n);

/** A turn's text, then the calls it records with their arguments. */
function withCalls(content: string, calls: string[]): string {
  return calls.length === 0 ? content : `${content}\n\nCalls with their arguments:\n${calls.join("\n")}`;
}

function value(v: unknown): string {
  return v === undefined || v === null ? "nothing" : truncate(typeof v === "string" ? v : JSON.stringify(v), 80);
}

/**
 * What makes an event itself, with or without its sequence number (a
 * recording's events have none): its time, kind, actor and subject.
 */
export function identityOf(e: TimelineEvent): string {
  const r = e as unknown as Record<string, unknown>;
  const subject =
    r.gate_id ??
    (r.gate as { id?: string } | undefined)?.id ??
    (r.turn as { id?: string } | undefined)?.id ??
    r.key ??
    (r.revision as { revision?: number } | undefined)?.revision ??
    (r.instruction as { id?: string } | undefined)?.id ??
    (e.type === "run_status_changed" ? `${e.from}>${e.to}` : "");
  return `${e.at}|${e.type}|${e.actor}|${String(subject)}`;
}

/** One event as a timeline entry. */
export function entryOf(e: TimelineEvent, roles: ReadonlyMap<string, Role>): Entry {
  const key = identityOf(e);
  const base = { key, at: e.at, actor: e.actor, who: (roles.get(e.actor) ?? "unknown") as Who };
  switch (e.type) {
    case "run_created":
      return { ...base, group: "run", summary: `Run created: ${short(e.run.title) || e.run.id}` };
    case "run_status_changed":
      return { ...base, group: "run", summary: `Run ${lowerWord("RunStatus", e.from)} → ${lowerWord("RunStatus", e.to)}${e.reason ? `: ${short(e.reason)}` : ""}` };
    case "turn_added": {
      const to = handoffOf(e.turn.metadata);
      return {
        ...base,
        actor: e.turn.actor,
        who: e.turn.role,
        group: to === null ? "turn" : "handoff",
        summary: to === null ? `Turn ${e.turn.index}: ${short(e.turn.content)}` : `Handoff${to ? ` to ${to}` : ""} (turn ${e.turn.index}): ${short(e.turn.content)}`,
        detail: withCalls(e.turn.content, callsOf(e.turn.metadata)),
      };
    }
    case "gate_opened":
      return {
        ...base,
        actor: e.gate.agent,
        who: "agent",
        group: "gate",
        summary: `Gate opened (${lowerWord("GateKind", e.gate.spec.kind)}, ${word("BlockingMode", e.gate.mode)}): ${short(e.gate.text)}`,
        detail: e.gate.text,
        gateId: e.gate.id,
      };
    case "gate_auto_passed":
      return {
        ...base,
        who: "system",
        group: "decision",
        summary: `Gate passed by ${(e.decision?.decided_by ?? "").startsWith("rule:") ? "an allow-rule" : "policy"} (${lowerWord("GateKind", e.gate.spec.kind)}): ${short(e.gate.text)}`,
        gateId: e.gate.id,
      };
    case "gate_resolved": {
      const d = e.decision;
      const who: Who = d.origin.by === "human" ? "human" : "system";
      const how = DECIDED[d.action];
      const score = d.score ? `, score ${d.score.score}` : "";
      const edits = d.diff ? `, ${d.diff.changes.length} field${d.diff.changes.length === 1 ? "" : "s"} edited` : "";
      return {
        ...base,
        actor: d.decided_by,
        who,
        group: "decision",
        summary: `Decided: ${how}${score}${edits}${d.text ? `: ${short(d.text)}` : ""}`,
        ...(d.text ? { detail: d.text } : {}),
        gateId: e.gate_id,
      };
    }
    case "allow_rule_created": {
      const until = e.rule.expires_at ? `for ${remaining(Date.parse(e.rule.expires_at) - Date.parse(e.rule.created_at))}` : "until revoked";
      return { ...base, who: "human", group: "decision", summary: `Always allow ${e.rule.action} for ${e.rule.agent}, ${until}` };
    }
    case "gate_escalated":
      return { ...base, group: "gate", summary: `Gate escalated to ${lowerWord("Priority", e.priority)}: ${short(e.reason)}`, gateId: e.gate_id };
    case "gate_released":
      return {
        ...base,
        who: "human",
        group: "gate",
        summary: "Gate released: the run went on without waiting; still open for a decision",
        gateId: e.gate_id,
      };
    case "actions_decided": {
      const each = e.decisions.map((d) => `${d.id} ${DECIDED[d.action]}`).join(", ");
      return { ...base, actor: e.decisions[0]?.decided_by ?? e.actor, who: "human", group: "decision", summary: `Actions decided: ${short(each)}`, gateId: e.gate_id };
    }
    case "vote_recorded":
      return { ...base, actor: e.vote.reviewer, who: "human", group: "decision", summary: `Vote: ${DECIDED[e.vote.action]}`, gateId: e.gate_id };
    case "resolution_refused":
      return { ...base, actor: e.attempted_by, group: "decision", summary: `Late decision refused (already ${lowerWord("GateStatus", e.status)})`, gateId: e.gate_id };
    case "gate_expired":
      return { ...base, group: "gate", summary: `Gate expired: ${short(e.reason)}`, gateId: e.gate_id };
    case "gate_cancelled":
      return { ...base, group: "gate", summary: `Gate cancelled: ${short(e.reason)}`, gateId: e.gate_id };
    case "context_set":
      return { ...base, group: "context", summary: `Context ${e.key}: ${value(e.old)} → ${value(e.new)}` };
    case "context_deleted":
      return { ...base, group: "context", summary: `Context ${e.key} removed (was ${value(e.old)})` };
    case "plan_revised":
      return {
        ...base,
        group: "plan",
        summary: `Plan revision ${e.revision.revision}${e.revision.change_log.length > 0 ? `: ${short(e.revision.change_log.join("; "))}` : ""}`,
        detail: e.revision.change_log.join("\n"),
      };
    case "run_control_changed": {
      const n = e.breakpoints.length;
      return { ...base, group: "control", summary: `Step mode ${lowerWord("StepMode", e.step_mode)}${n > 0 ? `, ${n} breakpoint${n === 1 ? "" : "s"}` : ""}` };
    }
    case "instruction_injected":
      return {
        ...base,
        actor: e.instruction.by,
        group: "control",
        summary: `Instruction: ${short(e.instruction.text)}`,
        detail: e.instruction.text,
      };
    case "next_agent_set":
      return { ...base, group: "control", summary: e.agent ? `Next agent: ${e.agent}` : "Next agent: no longer chosen" };
    case "directive_delivered": {
      const n = e.instructions.length;
      const what = [n > 0 ? `${n} instruction${n === 1 ? "" : "s"}` : "", e.next_agent ? `next agent ${e.next_agent}` : ""].filter(Boolean);
      return { ...base, group: "control", summary: `Delivered to the agent: ${what.join(" and ") || "nothing new"}` };
    }
    case "score_recorded":
      return { ...base, group: "score", summary: `Score ${e.score.score} for ${e.agent}${e.score.justification ? `: ${short(e.score.justification)}` : ""}` };
    default:
      return { ...base, group: "other", summary: word("EventKind.type", e.type) };
  }
}

/** Only reviewers (people) can do these, so whoever did one is human. */
const REVIEWER_ONLY: readonly TimelineEvent["type"][] = ["instruction_injected", "next_agent_set", "run_control_changed"];

/** `roles`, plus what the events themselves show: reviewers' interventions and human decisions. */
export function learnRoles(events: readonly TimelineEvent[], roles: ReadonlyMap<string, Role>): Map<string, Role> {
  const learned = new Map(roles);
  for (const e of events) {
    const human =
      REVIEWER_ONLY.includes(e.type) ? e.actor : e.type === "gate_resolved" && e.decision.origin.by === "human" ? e.decision.decided_by : null;
    if (human !== null && !learned.has(human)) learned.set(human, "human");
  }
  return learned;
}

/** The timeline, oldest first, each event once (a live event may repeat one already loaded). */
export function timeline(events: readonly TimelineEvent[], known: ReadonlyMap<string, Role>): Entry[] {
  const roles = learnRoles(events, known);
  const seen = new Set<string>();
  const out: Entry[] = [];
  for (const e of events) {
    const identity = identityOf(e);
    if (seen.has(identity)) continue;
    seen.add(identity);
    out.push(entryOf(e, roles));
  }
  return out;
}

/**
 * Replaying a run step by step: how many entries show after moving
 * `delta` steps from `step`, never fewer than one nor more than there are.
 */
export function replayStep(step: number, delta: number, total: number): number {
  if (total === 0) return 0;
  return Math.min(total, Math.max(1, step + delta));
}
