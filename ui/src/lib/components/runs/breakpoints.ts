// A live run's breakpoints as the Runs view edits them: each described in
// words, one built from a kind and a name (a tool call, optionally of one
// tool; a handoff, optionally to one agent; an error; an agent's turn; a
// named step), and the list saved with the run's step mode kept
// (`PUT /runs/{id}/control`). Nothing throws.

import { attempt, type Answer, type Api } from "../../api/client";
import type { components } from "../../api/schema";
import type { Run } from "../../api/types";

export type Breakpoint = components["schemas"]["Breakpoint"];
export type BreakpointKind = Breakpoint["on"];

export const BREAKPOINT_KINDS: { kind: BreakpointKind; label: string; name: "optional" | "required" | "none" }[] = [
  { kind: "tool_call", label: "A tool call", name: "optional" },
  { kind: "handoff", label: "A handoff", name: "optional" },
  { kind: "error", label: "An error", name: "none" },
  { kind: "agent", label: "An agent's turn", name: "required" },
  { kind: "step", label: "A named step", name: "required" },
];

/** What a breakpoint pauses on, in words. */
export function describeBreakpoint(b: Breakpoint): string {
  switch (b.on) {
    case "tool_call":
      return b.tool ? `a call of ${b.tool}` : "any tool call";
    case "handoff":
      return b.to ? `a handoff to ${b.to}` : "any handoff";
    case "error":
      return "an error";
    case "agent":
      return `${b.name}'s turn`;
    case "step":
      return `the step ${b.name}`;
  }
}

/** The breakpoint of `kind` with `name` (blank: any, where the kind allows), or what is missing. */
export function breakpointOf(kind: BreakpointKind, name: string): Breakpoint | string {
  const n = name.trim();
  switch (kind) {
    case "tool_call":
      return n ? { on: "tool_call", tool: n } : { on: "tool_call" };
    case "handoff":
      return n ? { on: "handoff", to: n } : { on: "handoff" };
    case "error":
      return { on: "error" };
    case "agent":
      return n ? { on: "agent", name: n } : "Name the agent whose turn it pauses on.";
    case "step":
      return n ? { on: "step", name: n } : "Name the step it pauses on.";
  }
}

/** `list` with `b` added at the end, unless the same one is there already. */
export function withBreakpoint(list: readonly Breakpoint[], b: Breakpoint): Breakpoint[] {
  const key = (x: Breakpoint) => JSON.stringify(x);
  return list.some((x) => key(x) === key(b)) ? [...list] : [...list, b];
}

/** Replaces the run's breakpoints, keeping how it steps. */
export function setBreakpoints(api: Api, run: Pick<Run, "id" | "step_mode">, breakpoints: Breakpoint[]): Promise<Answer<Run>> {
  return attempt("change the breakpoints", () =>
    api.PUT("/api/hitl/runs/{run_id}/control", {
      params: { path: { run_id: run.id } },
      body: { step_mode: run.step_mode, breakpoints },
    }),
  );
}
