// Agents' structured data (a goal, a deliverable) as text a reviewer reads
// rather than JSON: objects as "Key: value" lines with their keys in
// words, lists as bullets, nesting indented; a string that is itself
// encoded JSON ("{\"objective\": ...}") is decoded first. Text only: it is
// rendered as text, never as HTML.

import { humanize } from "../../words";

/** A key in words: "success_criteria" → "Success criteria", "owner" → "Owner". */
function keyLabel(key: string): string {
  const words = humanize(key);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A string holding an encoded object or list, decoded; anything else as it is. */
function decoded(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (!(text.startsWith("{") && text.endsWith("}")) && !(text.startsWith("[") && text.endsWith("]"))) return value;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return value;
  }
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

function lines(value: unknown, indent: string): string[] {
  const v = decoded(value);
  if (Array.isArray(v)) {
    if (v.length === 0) return [`${indent}(none)`];
    return v.flatMap((item) => {
      const inner = lines(item, `${indent}  `);
      return [`${indent}• ${inner[0]?.trimStart() ?? ""}`, ...inner.slice(1)];
    });
  }
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v);
    if (entries.length === 0) return [`${indent}(empty)`];
    return entries.flatMap(([key, child]) => {
      const c = decoded(child);
      const nested = c !== null && typeof c === "object";
      if (!nested) return prefixed(`${indent}${keyLabel(key)}: `, scalar(c), indent);
      return [`${indent}${keyLabel(key)}:`, ...lines(c, `${indent}  `)];
    });
  }
  return prefixed(indent, scalar(v), indent);
}

/** A possibly multi-line scalar after `head`, its later lines indented to match. */
function prefixed(head: string, text: string, indent: string): string[] {
  const [first = "", ...rest] = text.split("\n");
  return [head + first, ...rest.map((l) => `${indent}  ${l}`)];
}

/** `value` as readable text (see the module's header). */
export function readableText(value: unknown): string {
  return lines(value, "").join("\n");
}
