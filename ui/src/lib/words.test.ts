// Every enum value in the server's OpenAPI document has a label for
// reviewers in `words.ts`: a new enum, or a new value of an old one, fails
// here until it is named.

import { describe, expect, it } from "vitest";
import openapi from "../../openapi.json";
import { humanize, labelOf, lowerWord, word, WORDS } from "./words";

/** Each enum in the document by the name `WORDS` files it under, with its values. */
function documentEnums(): Map<string, Set<string>> {
  const doc: unknown = openapi;
  const found = new Map<string, Set<string>>();
  const walk = (node: unknown, path: string[]): void => {
    if (node === null || typeof node !== "object") return;
    const values = (node as { enum?: unknown }).enum;
    if (Array.isArray(values)) {
      const name = enumName(path);
      found.set(name, new Set([...(found.get(name) ?? []), ...values.map(String)]));
    }
    for (const [key, child] of Object.entries(node)) walk(child, [...path, key]);
  };
  walk(doc, []);
  return found;
}

/** `components/schemas/X` → X; a property's inline enum (in a tagged union's variants too) → X.property; elsewhere the path itself. */
function enumName(path: string[]): string {
  if (path[0] !== "components" || path[1] !== "schemas" || path[2] === undefined) return path.join("/");
  if (path.length === 3) return path[2];
  const property = path.lastIndexOf("properties");
  return property > 0 && property === path.length - 2 ? `${path[2]}.${path[path.length - 1]}` : path.join("/");
}

describe("words", () => {
  const enums = documentEnums();

  it("finds the document's enums", () => {
    expect(enums.get("GateKind")).toContain("plan_review");
    expect(enums.get("EventKind.type")).toContain("gate_opened");
  });

  it.each([...enums].map(([name, values]) => [name, [...values]] as const))("labels every value of %s", (name, values) => {
    const table = (WORDS as Record<string, Record<string, string> | undefined>)[name];
    expect(table, `words.ts has no labels for the enum ${name}`).toBeDefined();
    for (const value of values) {
      const label = table?.[value];
      expect(label, `${name}.${value} has no label in words.ts`).toBeTruthy();
      expect(label).not.toMatch(/_/);
    }
  });

  it("labels a value, lower-cased for a sentence, and turns an unknown identifier into words", () => {
    expect(word("GateKind", "plan_review")).toBe("Plan review");
    expect(lowerWord("RunStatus", "awaiting_human")).toBe("awaiting a reviewer");
    expect(lowerWord("BlockingMode", "sync")).toBe("SYNC");
    expect(word("RunStatus", "brand_new_status")).toBe("Brand new status");
    expect(humanize("Deploy the service")).toBe("Deploy the service");
    expect(labelOf("plan_review")).toBe("Plan review");
    expect(labelOf("draft_copy")).toBe("Draft copy");
    expect(labelOf("Write the copy")).toBe("Write the copy");
  });
});
