// Starting a supervised model run from the UI: the form's fields, the
// tools `GET /api/hitl/providers` offers, and the `POST /api/hitl/run`
// body they make. Gatehouse then drives the tool itself (the
// information, payload and response reviews; goal and plan collaboration
// rounds when asked; a team's turns when a team is given), under the
// chosen policy, step mode and breakpoints. Mistakes are reported naming
// the field, before anything is sent; the server's 422 naming a field of
// the run input (`run_input.team[1].name`) is shown beside the form's field
// (`serverProblem`).

import type { ProvidersResponse, StartRunRequest } from "../../api/types";

export type PolicyChoice = "require_human" | "auto" | "auto_with_thresholds";
export type StepChoice = "continuous" | "step" | "breakpoint";

/** What the form holds, as typed. */
export interface NewRunFields {
  tool: string;
  prompt: string;
  system: string;
  /** Further payload fields, as JSON object text (may be empty). */
  inputs: string;
  title: string;
  policy: PolicyChoice;
  /** For `auto_with_thresholds`: 0..1 as text (may be empty). */
  confidenceMin: string;
  /** For `auto_with_thresholds`: flags that force review, comma separated. */
  safetyFlags: string;
  /** For `auto_with_thresholds`: a whole number as text (may be empty). */
  payloadChangesMax: string;
  /** Goal collaboration: agree the goal first. */
  goal: boolean;
  /** Plan collaboration: agree a plan first. */
  plan: boolean;
  stepMode: StepChoice;
  /** In breakpoint mode: pause before each model call. */
  breakOnCall: boolean;
  /** In breakpoint mode: pause after a failed call. */
  breakOnError: boolean;
  /** In breakpoint mode: pause at a handoff. */
  breakOnHandoff: boolean;
  /** ... only one to this agent (empty: any). */
  breakHandoffTo: string;
  /** In breakpoint mode: pause at these agents' turns, comma separated. */
  breakOnAgents: string;
  /** In breakpoint mode: pause at these named steps, comma separated. */
  breakOnSteps: string;
  /** A team of agents, as JSON (a list of {name, role, provider, model, tools}); empty for a single model. */
  team: string;
  /** A team's collaboration pattern, as JSON (optional). */
  pattern: string;
}

/** One tool to choose, with its provider. */
export interface ToolChoice {
  name: string;
  label: string;
  description: string;
}

/** Every tool the server's providers run, in the server's order. */
export function toolChoices(providers: ProvidersResponse | null | undefined): ToolChoice[] {
  const out: ToolChoice[] = [];
  for (const provider of providers?.providers ?? []) {
    for (const tool of provider.tool_details) {
      out.push({ name: tool.name, label: `${tool.name} (${provider.kind.replace("_", " ")})`, description: tool.description });
    }
  }
  return out;
}

/** A fresh form, on the first tool offered. */
export function emptyFields(tools: readonly ToolChoice[]): NewRunFields {
  return {
    tool: tools[0]?.name ?? "",
    prompt: "",
    system: "",
    inputs: "",
    title: "",
    policy: "require_human",
    confidenceMin: "0.8",
    safetyFlags: "pii, secret, content_filter",
    payloadChangesMax: "",
    goal: false,
    plan: false,
    stepMode: "continuous",
    breakOnCall: true,
    breakOnError: false,
    breakOnHandoff: false,
    breakHandoffTo: "",
    breakOnAgents: "",
    breakOnSteps: "",
    team: "",
    pattern: "",
  };
}

/** A field's mistake, for the form to show beside it. */
export interface Problem {
  field: keyof NewRunFields;
  message: string;
}

function fail(field: keyof NewRunFields, message: string): { problem: Problem } {
  return { problem: { field, message } };
}

/** The request to start the run, or the first mistake in the form. */
export function startRequest(f: NewRunFields): { body: StartRunRequest } | { problem: Problem } {
  const team = parseJson(f.team, "team");
  if ("problem" in team) return team;
  if (team.value !== undefined && (!Array.isArray(team.value) || team.value.length === 0)) {
    return fail("team", 'Give a list of agents, such as [{"name": "coder", "role": "writes code", "provider": "scripted", "model": "chat"}].');
  }
  if (f.tool.trim() === "" && team.value === undefined) return fail("tool", "Choose a tool.");
  if (f.prompt.trim() === "") return fail("prompt", "Write what the model should do.");
  const runInput: Record<string, unknown> = { prompt: f.prompt };
  // A team's agents name their own tools: the form's tool is for a single model.
  if (team.value === undefined) runInput.tool = f.tool.trim();
  else runInput.team = team.value;
  const pattern = parseJson(f.pattern, "pattern");
  if ("problem" in pattern) return pattern;
  if (pattern.value !== undefined) {
    if (team.value === undefined) return fail("pattern", "A pattern is for a team: give the team first.");
    runInput.pattern = pattern.value;
  }
  if (f.system.trim() !== "") runInput.system = f.system;
  if (f.inputs.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.inputs);
    } catch (e) {
      return fail("inputs", `Not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return fail("inputs", 'Give an object of payload fields, such as {"temperature": 0.2}.');
    }
    runInput.inputs = parsed;
  }
  if (f.goal || f.plan) runInput.collaborate = { goal: f.goal, plan: f.plan };

  const hitl: Record<string, unknown> = { run_policy: f.policy };
  if (f.policy === "auto_with_thresholds") {
    const thresholds: Record<string, unknown> = {};
    if (f.confidenceMin.trim() !== "") {
      const min = Number(f.confidenceMin);
      if (!Number.isFinite(min) || min < 0 || min > 1) return fail("confidenceMin", "A confidence between 0 and 1.");
      thresholds.confidence_min = min;
    }
    thresholds.safety_flags = f.safetyFlags
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (f.payloadChangesMax.trim() !== "") {
      const max = Number(f.payloadChangesMax);
      if (!Number.isInteger(max) || max < 0) return fail("payloadChangesMax", "A whole number of changed fields, 0 or more.");
      thresholds.payload_changes_max = max;
    }
    hitl.review_thresholds = thresholds;
  }

  const body: StartRunRequest = { run_input: runInput, hitl_config: hitl as StartRunRequest["hitl_config"], step_mode: f.stepMode };
  if (f.title.trim() !== "") body.title = f.title.trim();
  if (f.stepMode === "breakpoint") {
    const breakpoints: StartRunRequest["breakpoints"] = [];
    if (f.breakOnCall) breakpoints.push({ on: "tool_call" });
    if (f.breakOnError) breakpoints.push({ on: "error" });
    if (f.breakOnHandoff) breakpoints.push(f.breakHandoffTo.trim() ? { on: "handoff", to: f.breakHandoffTo.trim() } : { on: "handoff" });
    for (const name of names(f.breakOnAgents)) breakpoints.push({ on: "agent", name });
    for (const name of names(f.breakOnSteps)) breakpoints.push({ on: "step", name });
    if (breakpoints.length === 0) return fail("breakOnCall", "Breakpoint mode needs at least one breakpoint.");
    body.breakpoints = breakpoints;
  }
  return { body };
}

function names(list: string): string[] {
  return list
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
}

/** The JSON of `field`, absent when it is blank. */
function parseJson(text: string, field: keyof NewRunFields): { value: unknown } | { problem: Problem } {
  if (text.trim() === "") return { value: undefined };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return fail(field, `Not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The form's field a server's 422 names (`run_input.team[1].name` is the team's), or none. */
export function serverProblem(field: string | null, message: string): Problem | null {
  if (field === null) return null;
  const fields: [string, keyof NewRunFields][] = [
    ["run_input.team", "team"],
    ["run_input.pattern", "pattern"],
    ["run_input.tool", "tool"],
    ["run_input.prompt", "prompt"],
    ["run_input.collaborate", "goal"],
    ["breakpoints", "breakOnCall"],
  ];
  const found = fields.find(([prefix]) => field === prefix || field.startsWith(`${prefix}[`) || field.startsWith(`${prefix}.`));
  return found ? { field: found[1], message: `${field}: ${message}` } : null;
}
