// The payload editor's logic, free of the editor itself: parse the
// reviewer's JSON with a hint saying where it is wrong, diff it field by
// field (the same rules as the engine's `diff_values`, so what the reviewer
// sees before submitting is what the audit log records), check required
// fields, and find where each field sits in the text to highlight it.

import type { FieldChange } from "../api/types";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type Parsed = { ok: true; value: Json } | { ok: false; message: string; line: number; column: number; offset: number };

/** Parses JSON, or says what is wrong and where (1-based line and column). */
export function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch (e) {
    const raw = e instanceof Error ? e.message : String(e);
    const at = /at position (\d+)/.exec(raw);
    const offset = at ? Number(at[1]) : text.length;
    const before = text.slice(0, offset).split("\n");
    const line = before.length;
    const column = (before[before.length - 1]?.length ?? 0) + 1;
    const message = raw
      .replace(/^JSON\.parse: /, "")
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/^Unexpected end of JSON input$/, "Unexpected end of input: a bracket, brace or quote is not closed");
    return { ok: false, message, line, column, offset };
  }
}

/** Pretty-prints a value the way the editor shows it. */
export function pretty(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}

/** A JSON pointer segment, escaped (`~` → `~0`, `/` → `~1`). */
export function pointerSegment(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function equal(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]!));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k]!, b[k]!));
  }
  return false;
}

/**
 * Field-by-field changes from `before` to `after`, in document order:
 * objects by key (removed and changed first, then added), arrays of equal
 * length element-wise, anything else as one change.
 */
export function diffJson(before: Json, after: Json, path = ""): FieldChange[] {
  const out: FieldChange[] = [];
  if (isObject(before) && isObject(after)) {
    for (const [key, old] of Object.entries(before)) {
      const at = `${path}/${pointerSegment(key)}`;
      if (key in after) out.push(...diffJson(old, after[key]!, at));
      else out.push({ path: at, op: "removed", old });
    }
    for (const [key, value] of Object.entries(after)) {
      if (!(key in before)) out.push({ path: `${path}/${pointerSegment(key)}`, op: "added", new: value });
    }
  } else if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((old, i) => out.push(...diffJson(old, after[i]!, `${path}/${i}`)));
  } else if (!equal(before, after)) {
    out.push({ path, op: "changed", old: before, new: after });
  }
  return out;
}

/** The value at a JSON pointer, if present. */
export function valueAt(doc: Json, pointer: string): Json | undefined {
  if (pointer === "") return doc;
  let cur: Json | undefined = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObject(cur)) cur = Object.prototype.hasOwnProperty.call(cur, seg) ? cur[seg] : undefined;
    else return undefined;
  }
  return cur;
}

/** A required field as a pointer: `/a/b` as given, a bare name as a top-level key. */
export function requiredPointer(field: string): string {
  return field.startsWith("/") ? field : `/${pointerSegment(field)}`;
}

/** The required fields that are missing, null or empty strings in `doc`. */
export function missingRequired(doc: Json, required: readonly string[]): string[] {
  return required.filter((field) => {
    const v = valueAt(doc, requiredPointer(field));
    return v === undefined || v === null || v === "";
  });
}

export interface PayloadCheck {
  /** The parsed payload, when the text is valid JSON. */
  value?: Json;
  /** Why it cannot be submitted as an edit: bad JSON or missing required fields. */
  errors: string[];
  /** The reviewer's changes against the agent's proposal. */
  edits: FieldChange[];
}

/** Payload texts at least this long are checked once typing pauses. */
export const LARGE_TEXT = 50_000;
/** How long typing must pause before a large payload is checked, ms. */
export const CHECK_DELAY_MS = 200;

/**
 * Everything the editor shows about the reviewer's text. Given the
 * proposal's own text (`pretty(proposed)`), the text left as proposed is
 * neither parsed nor diffed: a large payload opens without either.
 */
export function checkPayload(text: string, proposed: Json, required: readonly string[], proposedText?: string): PayloadCheck {
  const asProposed = text === proposedText;
  let value = proposed;
  if (!asProposed) {
    const parsed = parseJson(text);
    if (!parsed.ok) {
      return { errors: [`Invalid JSON at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`], edits: [] };
    }
    value = parsed.value;
  }
  const errors = missingRequired(value, required).map((f) => `Required field ${f} is missing or empty`);
  return { value, errors, edits: asProposed ? [] : diffJson(proposed, value) };
}

/** A change as one line for people: `/args/branch: "main" → "release"`. */
export function describeChange(change: FieldChange): string {
  const show = (v: unknown) => {
    const s = JSON.stringify(v);
    return s.length > 60 ? `${s.slice(0, 59)}…` : s;
  };
  const path = change.path || "(whole payload)";
  switch (change.op) {
    case "added":
      return `${path}: added ${show(change.new)}`;
    case "removed":
      return `${path}: removed (was ${show(change.old)})`;
    default:
      return `${path}: ${show(change.old)} → ${show(change.new)}`;
  }
}

/**
 * Where each value sits in valid JSON text, by pointer: from the member's
 * key (or the element's start) to the end of its value. Used to highlight
 * fields in the editor. Returns an empty map for invalid JSON.
 */
export function fieldRanges(text: string): Map<string, { from: number; to: number }> {
  const ranges = new Map<string, { from: number; to: number }>();
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string, from: number): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      while (text[i] !== "}" && i < text.length) {
        ws();
        const keyStart = i;
        const key = str();
        ws();
        i++; // ':'
        value(`${path}/${pointerSegment(key)}`, keyStart);
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === "[") {
      i++;
      ws();
      let n = 0;
      while (text[i] !== "]" && i < text.length) {
        ws();
        value(`${path}/${n++}`, i);
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    }
    ranges.set(path, { from, to: i });
  };
  if (!parseJson(text).ok) return ranges;
  ws();
  value("", i);
  return ranges;
}

/** What the payload editor tells the modal. */
export interface PayloadState {
  /** The edited payload, when valid and different from the proposal. */
  edited?: Json;
  /** Whether the text is invalid JSON or misses required fields. */
  invalid: boolean;
  /** The reviewer's changes to the proposal. */
  edits: FieldChange[];
}

export interface FieldHighlight {
  from: number;
  to: number;
  className: string;
}

const CHANGE_CLASS = { added: "cm-field-added", removed: "cm-field-removed", changed: "cm-field-changed" } as const;

/**
 * Highlights for the two sides of the editor from field changes (example →
 * payload): removed and changed fields on the example's side, added and
 * changed ones on the payload's. A change of the whole document marks
 * nothing, since marking everything shows nothing.
 */
export function highlightsFor(
  changes: readonly FieldChange[],
  exampleText: string,
  payloadText: string,
): { example: FieldHighlight[]; payload: FieldHighlight[] } {
  const marked = changes.filter((c) => c.path !== "");
  // Nothing to mark: neither text is scanned (a large one takes a while).
  if (marked.length === 0) return { example: [], payload: [] };
  const left = fieldRanges(exampleText);
  const right = fieldRanges(payloadText);
  const example: FieldHighlight[] = [];
  const payload: FieldHighlight[] = [];
  for (const c of marked) {
    const className = CHANGE_CLASS[c.op];
    const l = left.get(c.path);
    const r = right.get(c.path);
    if (l && c.op !== "added") example.push({ ...l, className });
    if (r && c.op !== "removed") payload.push({ ...r, className });
  }
  return { example, payload };
}

/** One field the payload may have, from its JSON Schema and the gate's required fields. */
export interface FieldInfo {
  name: string;
  required: boolean;
  /** The schema's type, `string | null` for a union. */
  type?: string;
  description?: string;
  /** The schema's default, when it gives one. */
  default?: Json;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The payload's top-level fields: the schema's properties (required or
 * optional, with type, description and default) and the gate's required
 * fields besides; required ones first, each group in the schema's order.
 */
export function schemaFields(schema: unknown, required: readonly string[] = []): FieldInfo[] {
  const props = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const schemaRequired = isRecord(schema) && Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : [];
  const needed = new Set([...schemaRequired, ...required]);
  const fields: FieldInfo[] = Object.entries(props).map(([name, raw]) => {
    const p = isRecord(raw) ? raw : {};
    const type = typeof p.type === "string" ? p.type : Array.isArray(p.type) ? p.type.filter((t) => typeof t === "string").join(" | ") : undefined;
    return {
      name,
      required: needed.has(name),
      ...(type ? { type } : {}),
      ...(typeof p.description === "string" && p.description.trim() ? { description: p.description.trim() } : {}),
      ...("default" in p ? { default: p.default as Json } : {}),
    };
  });
  for (const name of needed) if (!(name in props)) fields.push({ name, required: true });
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

/** `text` with `name` set to `value` when the payload (an object) lacks it; `null` when it cannot be (bad JSON, not an object, already there). */
export function withField(text: string, name: string, value: Json): string | null {
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value) || name in parsed.value) return null;
  return pretty({ ...parsed.value, [name]: value });
}
