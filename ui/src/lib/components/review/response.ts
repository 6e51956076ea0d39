// A response review (after the provider's call): the provider's raw output beside the
// audited text, and what the reviewer sends back. "Edit text" is an `edit`
// decision whose payload carries the reviewer's text as `audited` (merged
// over the gate's payload when it has an object one), so the agent reads
// the corrected text from the decision's payload.

import type { Json } from "../payload";

/** The edited response as the decision's payload, or undefined when the text was not changed. */
export function responseEdit(payload: unknown, audited: string, edited: string): Json | undefined {
  if (edited === audited) return undefined;
  const base = payload !== null && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, Json>) : {};
  return { ...base, audited: edited };
}

/** The audited text of an earlier edit (`responseEdit`'s result), if it holds one. */
export function editedText(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const text = (payload as Record<string, unknown>).audited;
  return typeof text === "string" ? text : undefined;
}
