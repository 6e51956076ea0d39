// The OpenAI Agents JS adapter: a run stopped on `needsApproval` tool calls
// (its `interruptions`) is decided in Gatehouse, one gate per stop with one
// proposed action per tool call, and the decisions are applied to the run's
// RunState (approve, or reject with the reviewer's reason as the message the
// model sees). The gate is keyed by the tool calls' ids, so a process that
// serialized the RunState, died and resumed it from the string finds the
// same gate, decided or not, instead of asking twice.

import { createHash } from "node:crypto";

import type { Agent, RunState, RunToolApprovalItem } from "@openai/agents";

import type { Client } from "./client.js";
import { type Review, type ReviewOptions, type ToolCall, reviewToolCalls } from "./tool-calls.js";
import type { Json } from "./types.js";

/** What this reads of a stopped run: a RunResult, or a RunState read back with `RunState.fromString`. */
export type Interrupted = { interruptions: RunToolApprovalItem[]; state: RunState<any, Agent<any, any>> } | RunState<any, Agent<any, any>>;

function callOf(item: RunToolApprovalItem): ToolCall {
  const raw = item.rawItem as { callId?: string; id?: string };
  const text = item.arguments ?? "";
  let args: Json;
  try {
    args = text ? (JSON.parse(text) as Json) : {};
  } catch {
    args = text; // not JSON: shown to the reviewer as it came
  }
  return { id: raw.callId ?? raw.id ?? item.name ?? "tool", name: item.name ?? "tool", args };
}

/** The gate key for a stop's tool calls: the same in every process that resumes the run. */
export function idempotencyKey(calls: ToolCall[]): string {
  const ids = calls.map((c) => c.id).join("\n");
  return `oa:${createHash("sha256").update(ids).digest("hex").slice(0, 48)}`;
}

/**
 * Decides a stopped run's interruptions in Gatehouse and applies the
 * decisions to its state; resume with `run(agent, state)`. Undefined (and
 * no gate) when nothing waits for approval.
 */
export async function decideInterruptions(client: Client, runId: string, stopped: Interrupted, options: ReviewOptions = {}): Promise<Review | undefined> {
  const state = "state" in stopped ? stopped.state : stopped;
  const items = "state" in stopped ? stopped.interruptions : stopped.getInterruptions();
  if (items.length === 0) return undefined;
  const calls = items.map(callOf);
  const review = await reviewToolCalls(client, runId, calls, {
    allowed: ["approve", "reject"],
    ...options,
    gate: { idempotencyKey: idempotencyKey(calls), requires_human: true, ...options.gate },
  });
  items.forEach((item, i) => {
    const verdict = review.verdicts.get(calls[i]?.id ?? "");
    if (verdict?.approved) state.approve(item);
    else state.reject(item, { message: `Rejected by ${verdict?.decidedBy ?? "the reviewer"}: ${verdict?.reason ?? "no reason given"}` });
  });
  return review;
}
