// The Vercel AI SDK adapter (`ai` 6): a tool marked `needsApproval` makes
// generateText/streamText stop with `tool-approval-request` parts; this turns
// a step's requests into one Gatehouse gate and answers them with the
// reviewer's decisions as `tool-approval-response` parts, ready for the next
// call. An edit rewrites the tool call's input before the SDK runs the tool.

import type { AssistantModelMessage, ModelMessage, ToolApprovalResponse, ToolCallPart, ToolModelMessage } from "ai";

import type { Client } from "./client.js";
import { type Review, type ReviewOptions, type ToolCall, reviewToolCalls } from "./tool-calls.js";
import type { Json } from "./types.js";

/** What this reads of a generateText result (or an awaited streamText's). */
export interface ApprovalStep {
  content: ReadonlyArray<{ type: string }>;
  response: { messages: ModelMessage[] };
}

/** The messages to send on, and the gate that decided (none when nothing asked for approval). */
export interface Decided {
  /** The step's response messages (with edited inputs) and a tool message of approval responses. */
  messages: ModelMessage[];
  review: Review | undefined;
}

interface ApprovalRequestPart {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown };
}

function isApprovalRequest(part: { type: string }): part is ApprovalRequestPart {
  return part.type === "tool-approval-request";
}

/**
 * Asks Gatehouse about every tool approval request of `step` (one gate, one
 * proposed action per tool call) and answers them: append the returned
 * messages to the conversation and call the model again.
 */
export async function decideToolApprovals(client: Client, runId: string, step: ApprovalStep, options: ReviewOptions = {}): Promise<Decided> {
  const requests = step.content.filter(isApprovalRequest);
  if (requests.length === 0) return { messages: [...step.response.messages], review: undefined };
  const calls: ToolCall[] = requests.map((r) => ({ id: r.toolCall.toolCallId, name: r.toolCall.toolName, args: r.toolCall.input as Json }));
  const review = await reviewToolCalls(client, runId, calls, options);

  const messages = step.response.messages.map((message) => withEditedInputs(message, review));
  const responses: ToolApprovalResponse[] = requests.map((r) => {
    const verdict = review.verdicts.get(r.toolCall.toolCallId);
    const response: ToolApprovalResponse = { type: "tool-approval-response", approvalId: r.approvalId, approved: verdict?.approved ?? false };
    if (verdict?.reason) response.reason = verdict.reason;
    return response;
  });
  const answer: ToolModelMessage = { role: "tool", content: responses };
  return { messages: [...messages, answer], review };
}

/** `message` with each edited tool call's input replaced by the reviewer's. */
function withEditedInputs(message: ModelMessage, review: Review): ModelMessage {
  if (message.role !== "assistant" || typeof message.content === "string") return message;
  const content = message.content.map((part) => {
    if (part.type !== "tool-call") return part;
    const verdict = review.verdicts.get(part.toolCallId);
    return verdict?.edited ? ({ ...part, input: verdict.args } satisfies ToolCallPart) : part;
  });
  return { ...message, content } satisfies AssistantModelMessage;
}
