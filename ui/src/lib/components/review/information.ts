// An information review (the pre-run check): confidence, reasons,
// safety flags and recommended settings, then Proceed, Modify prompt or
// Change model. Both changes are one `edit` decision: the gate's payload
// (the request the agent is about to make) with `prompt` and `model`
// replaced by the reviewer's.

import type { ProvidersResponse } from "../../api/types";
import type { Json } from "../payload";

/** The request fields a reviewer may change. */
export interface RequestFields {
  prompt: string;
  model: string;
}

function asObject(value: unknown): Record<string, Json> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Json>) : null;
}

/** The prompt and model the agent proposes, from its payload (empty when absent). */
export function requestFields(payload: unknown): RequestFields {
  const obj = asObject(payload);
  const text = (v: Json | undefined) => (typeof v === "string" ? v : "");
  return { prompt: text(obj?.prompt), model: text(obj?.model) };
}

/** The model the agent's settings recommend, if they name one. */
export function recommendedModel(settings: unknown): string | null {
  const model = asObject(settings)?.model;
  return typeof model === "string" && model.trim() !== "" ? model : null;
}

/** Recommended settings as rows of name and value (values as JSON text unless they are strings). */
export function settingsRows(settings: unknown): { name: string; value: string }[] {
  const obj = asObject(settings);
  if (obj === null) return settings == null ? [] : [{ name: "settings", value: JSON.stringify(settings) }];
  return Object.entries(obj).map(([name, v]) => ({ name, value: typeof v === "string" ? v : JSON.stringify(v) }));
}

/**
 * The payload to send for the reviewer's changes, or undefined when
 * nothing changed. A field is only written when it changed, so an agent
 * that sent no `model` does not receive an empty one.
 */
export function informationEdit(payload: unknown, proposed: RequestFields, changed: RequestFields): Json | undefined {
  const edits: Record<string, Json> = {};
  if (changed.prompt !== proposed.prompt) edits.prompt = changed.prompt;
  if (changed.model.trim() !== proposed.model) edits.model = changed.model.trim();
  if (Object.keys(edits).length === 0) return undefined;
  return { ...(asObject(payload) ?? {}), ...edits };
}

/** What Gatehouse knows about a model: the provider that serves it and what it does. */
export interface ModelSummary {
  /** The tool name (`openai:gpt-4o-mini`). */
  tool: string;
  model: string;
  provider: string;
  /** The provider's wire protocol, in words ("openai compatible"). */
  kind: string;
  description: string;
}

/** Every model the configured providers serve. */
export function knownModels(providers: ProvidersResponse | null | undefined): ModelSummary[] {
  return (providers?.providers ?? []).flatMap((p) =>
    p.tool_details.map((t) => ({ tool: t.name, model: t.model, provider: p.name, kind: p.kind.replace(/_/g, " "), description: t.description })),
  );
}

/** The model a request names (by model id or tool name), if a provider serves it. */
export function summaryOf(models: readonly ModelSummary[], name: string): ModelSummary | null {
  const wanted = name.trim();
  if (wanted === "") return null;
  return models.find((m) => m.model === wanted || m.tool === wanted) ?? null;
}
