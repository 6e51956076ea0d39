// A team run's team over the API (`GET`/`POST /runs/{id}/team`), the
// names of a run's team read from its input, and the layout of the
// handoff graph: the agents on a circle, one arrow per pair that handed
// off, with how many times. Nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { components } from "../../api/schema";
import type { Plan, Run } from "../../api/types";

export type TeamState = components["schemas"]["TeamState"];
export type TeamChange = components["schemas"]["TeamChangeRequest"];
export type TeamHandoff = components["schemas"]["TeamHandoff"];
export type TeamProposal = components["schemas"]["TeamProposal"];
export type TeamWorkflow = components["schemas"]["TeamWorkflow"];

/** The names of the agents a run started with, or null for a run without a team. */
export function teamNames(run: Pick<Run, "input"> | null | undefined): string[] | null {
  const team = (run?.input as { team?: { agents?: { name?: unknown }[] } } | null | undefined)?.team;
  const agents = team?.agents;
  if (!Array.isArray(agents) || agents.length === 0) return null;
  return agents.map((a) => (typeof a?.name === "string" ? a.name : "")).filter((n) => n !== "");
}

/** The run's team, turn, handoffs and memory. */
export function loadTeam(api: Api, runId: string): Promise<Answer<TeamState>> {
  return attempt("load the team", () => api.GET("/api/hitl/runs/{run_id}/team", { params: { path: { run_id: runId } } }));
}

/** A reviewer's change to the team: add, remove or reassign an agent. */
export function changeTeam(api: Api, runId: string, change: TeamChange): Promise<Answer<TeamState>> {
  return attempt("change the team", () =>
    api.POST("/api/hitl/runs/{run_id}/team", { params: { path: { run_id: runId } }, body: change }),
  );
}

export interface GraphNode {
  name: string;
  x: number;
  y: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** How many handoffs went this way. */
  count: number;
  /** The SVG path of the arrow, stopping short of both nodes; bent when both ways are used. */
  path: string;
  /** Where its count is written. */
  label: { x: number; y: number };
  /** Work a coordinating agent handed out in parallel (`parallel_handoff`), drawn apart from handoffs. */
  parallel: boolean;
}

/** A parallel handoff as the graph needs it: the coordinating agent and its branches' agents. */
export interface ParallelHandout {
  lead: string;
  branches: readonly { agent: string }[];
}

/** The node radius the layout leaves room for. */
export const NODE_RADIUS = 22;

/**
 * The handoff graph of `agents` (and anyone handed to who has left) in a
 * square of `size`: an arrow per direction of `handoffs`, and one from each
 * coordinating agent to each agent it handed work to in `parallel`.
 */
export function graphLayout(
  agents: readonly string[],
  handoffs: readonly Pick<TeamHandoff, "from" | "to">[],
  size: number,
  parallel: readonly ParallelHandout[] = [],
): {
  nodes: GraphNode[];
  edges: GraphEdge[];
} {
  const handedOut = parallel.flatMap((g) => g.branches.map((b) => ({ from: g.lead, to: b.agent })));
  const names = [...agents];
  for (const h of [...handoffs, ...handedOut]) for (const n of [h.from, h.to]) if (!names.includes(n)) names.push(n);
  const c = size / 2;
  const r = names.length === 1 ? 0 : c - NODE_RADIUS - 8;
  const nodes = names.map((name, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / names.length;
    return { name, x: round(c + r * Math.cos(angle)), y: round(c + r * Math.sin(angle)) };
  });
  const at = new Map(nodes.map((n) => [n.name, n]));
  const tally = (list: readonly Pick<TeamHandoff, "from" | "to">[]): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const h of list) counts.set(`${h.from}\u0000${h.to}`, (counts.get(`${h.from}\u0000${h.to}`) ?? 0) + 1);
    return counts;
  };
  const [counts, outs] = [tally(handoffs), tally(handedOut)];
  const edges: GraphEdge[] = [];
  for (const [kind, tallied] of [[false, counts], [true, outs]] as const) {
    for (const [key, count] of tallied) {
      const [from, to] = key.split("\u0000") as [string, string];
      const back = `${to}\u0000${from}`;
      // Bent apart from the arrow back, and a parallel handout from a handoff the same way.
      const bent = counts.has(back) || outs.has(back) || (kind && counts.has(key));
      edges.push({ from, to, count, parallel: kind, ...arrow(at.get(from)!, at.get(to)!, bent) });
    }
  }
  return { nodes, edges };
}

function arrow(a: GraphNode, b: GraphNode, bent: boolean): { path: string; label: { x: number; y: number } } {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const [ux, uy] = [dx / len, dy / len];
  // Bent to its left when the pair hands off both ways, so the two arrows stay apart.
  const bend = bent ? 18 : 0;
  const [nx, ny] = [-uy * bend, ux * bend];
  const start = { x: round(a.x + ux * NODE_RADIUS + nx / 3), y: round(a.y + uy * NODE_RADIUS + ny / 3) };
  const end = { x: round(b.x - ux * (NODE_RADIUS + 4) + nx / 3), y: round(b.y - uy * (NODE_RADIUS + 4) + ny / 3) };
  const mid = { x: round((a.x + b.x) / 2 + nx), y: round((a.y + b.y) / 2 + ny) };
  return { path: `M ${start.x} ${start.y} Q ${mid.x} ${mid.y} ${end.x} ${end.y}`, label: mid };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The plan's tasks assigned to `agent`, as "task_001 (in progress)", in plan order. */
export function tasksOf(plan: Pick<Plan, "tasks"> | null | undefined, agent: string): string[] {
  const mine = (plan?.tasks ?? []).filter((t) => t.assigned_agent === agent);
  return mine.map((t) => `${t.task_id} (${(t.status ?? "pending").replace("_", " ")})`);
}
