// An information review (the pre-run check): confidence, reasons,
// safety flags and recommended settings, then Proceed, Modify prompt or
// Change model. Both changes are one `edit` decision: the gate's payload
// (the request the agent is about to make) with `prompt` and `model`
// replaced by the reviewer's.

import type { ProvidersResponse } from "../../api/types";
import type { Json } from "../payload";
import { humanize } from "../../words";

/** The request fields a reviewer may change. */
export interface RequestFields {
  prompt: string;
  model: string;
}

/** Where the request keeps each field: a key of the payload, or of an object under it (`request`, `params`). */
export interface RequestPlaces {
  prompt: string[];
  model: string[];
}

/** The names agents give the prompt and the model, most usual first. */
const PROMPT_KEYS = ["prompt", "input", "query", "instructions", "user_prompt"];
const MODEL_KEYS = ["model", "model_name", "model_id", "engine"];
/** Objects under the payload that may hold the request. */
const NESTS = ["request", "params", "parameters", "settings", "config"];

function asObject(value: unknown): Record<string, Json> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Json>) : null;
}

/** The first of `keys` holding a string, at the top of the payload or in one of its nests. */
function placeOf(payload: unknown, keys: readonly string[]): string[] | null {
  const top = asObject(payload);
  if (top === null) return null;
  for (const key of keys) if (typeof top[key] === "string") return [key];
  for (const nest of NESTS) {
    const inner = asObject(top[nest]);
    for (const key of keys) if (inner && typeof inner[key] === "string") return [nest, key];
  }
  return null;
}

function at(payload: unknown, path: readonly string[]): string {
  let value: unknown = payload;
  for (const key of path) value = asObject(value)?.[key];
  return typeof value === "string" ? value : "";
}

/** Where the request's prompt and model are (the usual `prompt` and `model` when it names neither). */
export function requestPlaces(payload: unknown): RequestPlaces {
  return { prompt: placeOf(payload, PROMPT_KEYS) ?? ["prompt"], model: placeOf(payload, MODEL_KEYS) ?? ["model"] };
}

/**
 * The prompt and model the agent proposes, from its payload: `prompt` and
 * `model`, or the names agents also use (`input`, `model_name`, ...), at the
 * top or under `request` or `params`; empty when it names none.
 */
export function requestFields(payload: unknown): RequestFields {
  const places = requestPlaces(payload);
  return { prompt: at(payload, places.prompt), model: at(payload, places.model) };
}

/** `payload` with the string at `path` set to `value`. */
function withField(payload: Record<string, Json>, path: readonly string[], value: string): Record<string, Json> {
  const [key, ...rest] = path;
  if (key === undefined) return payload;
  if (rest.length === 0) return { ...payload, [key]: value };
  return { ...payload, [key]: withField(asObject(payload[key]) ?? {}, rest, value) };
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
  const promptChanged = changed.prompt !== proposed.prompt;
  const modelChanged = changed.model.trim() !== proposed.model;
  if (!promptChanged && !modelChanged) return undefined;
  // Each field goes back where the agent put it.
  const places = requestPlaces(payload);
  let edited = asObject(payload) ?? {};
  if (promptChanged) edited = withField(edited, places.prompt, changed.prompt);
  if (modelChanged) edited = withField(edited, places.model, changed.model.trim());
  return edited;
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
    p.tool_details.map((t) => ({ tool: t.name, model: t.model, provider: p.name, kind: humanize(p.kind).toLowerCase(), description: t.description })),
  );
}

/** The model a request names (by model id or tool name), if a provider serves it. */
export function summaryOf(models: readonly ModelSummary[], name: string): ModelSummary | null {
  const wanted = name.trim();
  if (wanted === "") return null;
  return models.find((m) => m.model === wanted || m.tool === wanted) ?? null;
}
