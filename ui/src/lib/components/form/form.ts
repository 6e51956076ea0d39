// A gate's response form: the JSON Schema of the answer it wants (MCP
// elicitation, LangGraph's response_schema) turned into fields, the
// reviewer's input turned back into the answer, and the checks the
// server will make, so most mistakes are named before sending. The server
// checks again against the full schema and names the field it refuses.

import type { Json } from "../payload";

export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "object" | "json";

export interface Field {
  /** The property name. */
  key: string;
  /** Where it is in the answer, e.g. "owner.email". */
  path: string;
  title: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  default?: Json;
  /** An enum's values, in the schema's order. */
  options?: Json[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  /** An object's fields. */
  fields?: Field[];
}

/** What the reviewer has entered, by path: text for most fields, a flag for booleans. */
export type Entries = Record<string, string | boolean>;

type Schema = { [key: string]: Json };

function isSchema(v: Json | undefined): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum)) return "enum";
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return type;
    case "object":
      return isSchema(schema.properties) ? "object" : "json";
    default:
      return "json";
  }
}

function num(v: Json | undefined): number | undefined {
  return typeof v === "number" ? v : undefined;
}

/** The fields of an object schema, in the order of its properties. */
export function fieldsOf(schema: Json, prefix = ""): Field[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  return Object.entries(schema.properties).map(([key, raw]) => {
    const s: Schema = isSchema(raw) ? raw : {};
    const kind = kindOf(s);
    const path = prefix ? `${prefix}.${key}` : key;
    const field: Field = { key, path, title: typeof s.title === "string" ? s.title : key, kind, required: required.has(key) };
    if (typeof s.description === "string") field.description = s.description;
    if (s.default !== undefined) field.default = s.default;
    if (kind === "enum") field.options = s.enum as Json[];
    for (const bound of ["minimum", "maximum", "minLength", "maxLength"] as const) {
      const value = num(s[bound]);
      if (value !== undefined) field[bound] = value;
    }
    if (typeof s.pattern === "string") field.pattern = s.pattern;
    if (typeof s.format === "string") field.format = s.format;
    if (kind === "object") field.fields = fieldsOf(s, path);
    return field;
  });
}

/** The entries a new form starts with: the schema's defaults. */
export function initialEntries(fields: readonly Field[]): Entries {
  const entries: Entries = {};
  for (const f of fields) {
    if (f.kind === "object") Object.assign(entries, initialEntries(f.fields ?? []));
    else if (f.kind === "boolean") entries[f.path] = f.default === true;
    else if (f.kind === "enum") entries[f.path] = f.default === undefined ? "" : String((f.options ?? []).indexOf(f.default));
    else if (f.kind === "json") entries[f.path] = f.default === undefined ? "" : JSON.stringify(f.default);
    else entries[f.path] = f.default === undefined || f.default === null ? "" : String(f.default);
  }
  return entries;
}

/** The answer the entries make, or each field's problem by path. */
export function answerOf(fields: readonly Field[], entries: Entries): { ok: true; value: { [key: string]: Json } } | { ok: false; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const value = collect(fields, entries, problems);
  return Object.keys(problems).length === 0 ? { ok: true, value: value ?? {} } : { ok: false, problems };
}

function collect(fields: readonly Field[], entries: Entries, problems: Record<string, string>): { [key: string]: Json } | undefined {
  const out: { [key: string]: Json } = {};
  for (const f of fields) {
    if (f.kind === "object") {
      const inner = collect(f.fields ?? [], entries, problems);
      if (inner !== undefined) out[f.key] = inner;
      else if (f.required) out[f.key] = {};
      continue;
    }
    const entry = entries[f.path];
    if (f.kind === "boolean") {
      out[f.key] = entry === true;
      continue;
    }
    const text = typeof entry === "string" ? entry : "";
    if (text.trim() === "" && !(f.kind === "string" && text !== "")) {
      if (f.required) problems[f.path] = "Required.";
      continue;
    }
    const parsed = parseField(f, text);
    if ("problem" in parsed) problems[f.path] = parsed.problem;
    else out[f.key] = parsed.value;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function parseField(f: Field, text: string): { value: Json } | { problem: string } {
  switch (f.kind) {
    case "enum": {
      const option = (f.options ?? [])[Number(text)];
      return option === undefined ? { problem: "Choose one of the options." } : { value: option };
    }
    case "number":
    case "integer": {
      const n = Number(text.trim());
      if (!Number.isFinite(n)) return { problem: "Not a number." };
      if (f.kind === "integer" && !Number.isInteger(n)) return { problem: "A whole number is needed." };
      if (f.minimum !== undefined && n < f.minimum) return { problem: `At least ${f.minimum}.` };
      if (f.maximum !== undefined && n > f.maximum) return { problem: `At most ${f.maximum}.` };
      return { value: n };
    }
    case "json":
      try {
        return { value: JSON.parse(text) as Json };
      } catch {
        return { problem: "Not valid JSON." };
      }
    default: {
      const length = [...text].length;
      if (f.minLength !== undefined && length < f.minLength) return { problem: `At least ${f.minLength} characters.` };
      if (f.maxLength !== undefined && length > f.maxLength) return { problem: `At most ${f.maxLength} characters.` };
      if (f.pattern !== undefined) {
        try {
          if (!new RegExp(f.pattern, "u").test(text)) return { problem: `Must match ${f.pattern}.` };
        } catch {
          // A pattern this browser cannot compile is left to the server.
        }
      }
      if (f.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(text)) return { problem: "Not an email address." };
      return { value: text };
    }
  }
}

/** The server's field name for a path ("response.owner.email" for "owner.email"). */
export function pathOfServerField(field: string): string | null {
  return field.startsWith("response.") ? field.slice("response.".length) : null;
}
