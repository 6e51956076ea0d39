// One gate for an agent's tool calls awaiting approval, whatever framework
// proposed them: each call becomes one of the approval gate's proposed
// actions (decided on its own, by the tool-call id), and the reviewer's
// decisions come back as one verdict per call. The adapters share it.

import type { Client, GateOptions, WaitOptions } from "./client.js";
import { GatehouseError } from "./errors.js";
import type { DecisionAction, Gate, Json } from "./types.js";

/** A tool call a framework wants approved. */
export interface ToolCall {
  /** The framework's tool-call id (unique within the gate). */
  id: string;
  name: string;
  args: Json;
  /** What it does and why, markdown. */
  description?: string;
}

/** What the reviewer decided for one tool call. */
export interface ToolCallVerdict {
  approved: boolean;
  /** The arguments to run it with: the reviewer's edit, else the proposed ones. */
  args: Json;
  /** Whether the reviewer changed the arguments. */
  edited: boolean;
  /** A rejection's reason. */
  reason: string | undefined;
  /** Who decided. */
  decidedBy: string;
}

export interface ReviewOptions extends WaitOptions {
  /** The gate's text; by default names the calls. */
  text?: string;
  /** Decisions a reviewer may take on each call (default approve, edit, reject). */
  allowed?: DecisionAction[];
  /** Further fields of the gate (priority, expiry, agent state, an idempotency key...). */
  gate?: Omit<GateOptions<"approval">, "actions" | "spec">;
}

/** The verdicts, by tool-call id, and the gate that decided them. */
export interface Review {
  gate: Gate;
  verdicts: Map<string, ToolCallVerdict>;
}

/** Opens one approval gate for `calls` and waits for the reviewer's verdict on each. */
export async function reviewToolCalls(client: Client, runId: string, calls: ToolCall[], options: ReviewOptions = {}): Promise<Review> {
  const allowed = options.allowed ?? ["approve", "edit", "reject"];
  const text = options.text ?? `Run ${calls.map((c) => `\`${c.name}\``).join(", ")}?`;
  const wait: WaitOptions = {};
  if (options.timeoutMs !== undefined) wait.timeoutMs = options.timeoutMs;
  if (options.pollSeconds !== undefined) wait.pollSeconds = options.pollSeconds;
  if (options.signal !== undefined) wait.signal = options.signal;
  const gate = await client.openAndWait(
    runId,
    "approval",
    text,
    {
      ...options.gate,
      spec: { action: calls.length === 1 ? (calls[0]?.name ?? "tool") : "tool calls" },
      actions: calls.map((c) => ({ id: c.id, name: c.name, args: c.args, description: c.description ?? null, allowed_actions: allowed })),
    },
    wait,
  );
  return { gate, verdicts: verdictsOf(gate, calls) };
}

/** Each call's verdict from a closed gate; an expired or cancelled gate rejects every call. */
export function verdictsOf(gate: Gate, calls: ToolCall[]): Map<string, ToolCallVerdict> {
  const verdicts = new Map<string, ToolCallVerdict>();
  const decided = new Map((gate.decision?.actions ?? []).map((a) => [a.id, a]));
  for (const call of calls) {
    const one = decided.get(call.id);
    const action = one?.action ?? gate.decision?.action;
    if (gate.status !== "resolved" || action === undefined) {
      verdicts.set(call.id, { approved: false, args: call.args, edited: false, reason: `the gate was ${gate.status} undecided`, decidedBy: "system" });
      continue;
    }
    if (action !== "approve" && action !== "edit" && action !== "reject") {
      throw new GatehouseError(`gate ${gate.id}: a tool call cannot be decided with \`${action}\``);
    }
    const edited = action === "edit" && one?.args !== undefined;
    verdicts.set(call.id, {
      approved: action !== "reject",
      args: edited ? (one?.args as Json) : call.args,
      edited,
      reason: (one?.text ?? gate.decision?.text) || undefined,
      decidedBy: one?.decided_by ?? gate.decision?.decided_by ?? "unknown",
    });
  }
  return verdicts;
}
