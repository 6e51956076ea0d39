import { describe, expect, it } from "vitest";
import {
  checkPayload,
  describeChange,
  diffJson,
  fieldRanges,
  highlightsFor,
  missingRequired,
  parseJson,
  pretty,
  valueAt,
  schemaFields,
  withField,
} from "./payload";

describe("JSON validation", () => {
  it("accepts valid JSON", () => {
    expect(parseJson('{"a": [1, 2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
  });

  it("says where invalid JSON breaks, by line and column", () => {
    const result = parseJson('{\n  "a": 1,\n  "b": 2,\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.line).toBe(4);
    expect(result.column).toBe(1);
    expect(result.message).not.toMatch(/position/);
  });

  it("explains an unclosed document", () => {
    const result = parseJson('{"a": [1, 2');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message.length).toBeGreaterThan(0);
  });
});

describe("edit diff", () => {
  it("lists changed, removed and added fields by JSON pointer, like the engine", () => {
    const before = { model: "a", args: { branch: "main", force: false, "a/b": 1 }, tags: ["x", "y"] };
    const after = { model: "a", args: { branch: "release", "a/b": 2 }, tags: ["x", "z"], dry_run: true };
    expect(diffJson(before, after)).toEqual([
      { path: "/args/branch", op: "changed", old: "main", new: "release" },
      { path: "/args/force", op: "removed", old: false },
      { path: "/args/a~1b", op: "changed", old: 1, new: 2 },
      { path: "/tags/1", op: "changed", old: "y", new: "z" },
      { path: "/dry_run", op: "added", new: true },
    ]);
  });

  it("treats arrays of different lengths as one change, and equal documents as none", () => {
    expect(diffJson({ a: [1] }, { a: [1, 2] })).toEqual([{ path: "/a", op: "changed", old: [1], new: [1, 2] }]);
    expect(diffJson({ a: { b: [1, { c: null }] } }, { a: { b: [1, { c: null }] } })).toEqual([]);
    expect(diffJson(1, "1")).toEqual([{ path: "", op: "changed", old: 1, new: "1" }]);
  });

  it("describes changes for people", () => {
    expect(describeChange({ path: "/a", op: "changed", old: 1, new: 2 })).toBe("/a: 1 → 2");
    expect(describeChange({ path: "/b", op: "added", new: "x" })).toBe('/b: added "x"');
    expect(describeChange({ path: "/c", op: "removed", old: true })).toBe("/c: removed (was true)");
    expect(describeChange({ path: "", op: "changed", old: 1, new: 2 })).toBe("(whole payload): 1 → 2");
  });
});

describe("required fields", () => {
  it("finds top-level names and pointers that are missing, null or empty", () => {
    const doc = { prompt: "a cat", input_image: "", nested: { seed: 1 }, width: null };
    expect(missingRequired(doc, ["prompt", "input_image", "/nested/seed", "/nested/steps", "width"])).toEqual([
      "input_image",
      "/nested/steps",
      "width",
    ]);
    expect(valueAt(doc, "/nested/seed")).toBe(1);
    expect(valueAt([10, 20], "/1")).toBe(20);
  });
});

describe("checking the reviewer's text", () => {
  const proposed = { prompt: "a cat", steps: 20 };

  it("reports no edits for the untouched proposal", () => {
    expect(checkPayload(pretty(proposed), proposed, ["prompt"])).toEqual({ value: proposed, errors: [], edits: [] });
  });

  it("takes the proposal's own text as the proposal itself, without reading it again", () => {
    const text = pretty(proposed);
    const check = checkPayload(text, proposed, ["prompt", "seed"], text);
    // The very object proposed: nothing was parsed.
    expect(check.value).toBe(proposed);
    expect(check).toEqual({ value: proposed, errors: ["Required field seed is missing or empty"], edits: [] });
    // Any other text is read and compared as ever.
    const edited = checkPayload('{"prompt": "a dog", "steps": 20}', proposed, [], text);
    expect(edited.edits).toEqual([{ path: "/prompt", op: "changed", old: "a cat", new: "a dog" }]);
    expect(checkPayload('{"prompt": }', proposed, [], text).errors[0]).toMatch(/^Invalid JSON/);
  });

  it("lists the edits before they are submitted", () => {
    const check = checkPayload('{"prompt": "a dog", "steps": 20}', proposed, []);
    expect(check.errors).toEqual([]);
    expect(check.edits).toEqual([{ path: "/prompt", op: "changed", old: "a cat", new: "a dog" }]);
  });

  it("turns invalid JSON and missing required fields into hints", () => {
    expect(checkPayload('{"prompt": }', proposed, []).errors[0]).toMatch(/^Invalid JSON at line 1, column \d+/);
    expect(checkPayload('{"steps": 20}', proposed, ["prompt"]).errors).toEqual([
      "Required field prompt is missing or empty",
    ]);
  });
});

describe("field positions", () => {
  it("finds each field from its key to the end of its value", () => {
    const text = pretty({ a: 1, b: { c: "x" }, d: [true, null] });
    const ranges = fieldRanges(text);
    const at = (p: string) => {
      const r = ranges.get(p);
      return r ? text.slice(r.from, r.to) : undefined;
    };
    expect(at("/a")).toBe('"a": 1');
    expect(at("/b/c")).toBe('"c": "x"');
    expect(at("/d/1")).toBe("null");
    expect(at("")).toBe(text);
  });

  it("handles escapes in keys and strings", () => {
    const text = '{"a\\"/b": "x\\"}", "c": 2}';
    const ranges = fieldRanges(text);
    expect(ranges.get("/c")).toBeDefined();
    expect(text.slice(ranges.get("/a\"~1b")!.from, ranges.get("/a\"~1b")!.to)).toBe('"a\\"/b": "x\\"}"');
  });

  it("finds nothing in invalid JSON", () => {
    expect(fieldRanges("{").size).toBe(0);
  });

  it("highlights the server's changed fields on both sides", () => {
    const example = pretty({ prompt: "", image: "x" });
    const payload = pretty({ prompt: "a cat", seed: 1 });
    const marks = highlightsFor(
      [
        { path: "/prompt", op: "changed", old: "", new: "a cat" },
        { path: "/image", op: "removed", old: "x" },
        { path: "/seed", op: "added", new: 1 },
        { path: "", op: "changed" },
      ],
      example,
      payload,
    );
    expect(marks.example.map((m) => example.slice(m.from, m.to))).toEqual(['"prompt": ""', '"image": "x"']);
    expect(marks.payload.map((m) => [payload.slice(m.from, m.to), m.className])).toEqual([
      ['"prompt": "a cat"', "cm-field-changed"],
      ['"seed": 1', "cm-field-added"],
    ]);
  });

  it("marks nothing without changes, or for a change of the whole document", () => {
    const text = pretty({ prompt: "a cat" });
    expect(highlightsFor([], text, text)).toEqual({ example: [], payload: [] });
    expect(highlightsFor([{ path: "", op: "changed" }], text, text)).toEqual({ example: [], payload: [] });
  });
});

describe("the payload's fields from its schema", () => {
  const schema = {
    type: "object",
    properties: {
      prompt: { type: "string", description: "What to draw" },
      width: { type: "integer", default: 512 },
      seed: { type: ["integer", "null"] },
      steps: { type: "integer" },
    },
    required: ["steps"],
  };

  it("lists required fields first (the schema's and the gate's), then optional ones, with type, description and default", () => {
    expect(schemaFields(schema, ["prompt"])).toEqual([
      { name: "prompt", required: true, type: "string", description: "What to draw" },
      { name: "steps", required: true, type: "integer" },
      { name: "width", required: false, type: "integer", default: 512 },
      { name: "seed", required: false, type: "integer | null" },
    ]);
  });

  it("keeps a required field the schema does not describe, and copes without a schema", () => {
    expect(schemaFields(undefined, ["env"])).toEqual([{ name: "env", required: true }]);
    expect(schemaFields({ type: "string" }, [])).toEqual([]);
    expect(schemaFields({ properties: { a: true }, required: "a" }, [])).toEqual([{ name: "a", required: false }]);
  });

  it("adds a missing field with its default, and only to an object that lacks it", () => {
    expect(JSON.parse(withField('{"prompt": "cat"}', "width", 512) ?? "null")).toEqual({ prompt: "cat", width: 512 });
    expect(withField('{"width": 64}', "width", 512)).toBeNull();
    expect(withField("[1, 2]", "width", 512)).toBeNull();
    expect(withField("{not json", "width", 512)).toBeNull();
  });
});
