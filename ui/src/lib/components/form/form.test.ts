import { describe, expect, it } from "vitest";
import type { Json } from "../payload";
import { answerOf, fieldsOf, initialEntries } from "./form";

const schema: Json = {
  type: "object",
  properties: {
    region: { type: "string", title: "Region", enum: ["eu-west-1", "us-east-1"], default: "eu-west-1" },
    percent: { type: "number", minimum: 1, maximum: 50, description: "Share of traffic" },
    replicas: { type: "integer" },
    notify: { type: "boolean", default: true },
    note: { type: "string", maxLength: 5 },
    owner: { type: "object", properties: { email: { type: "string", format: "email" } }, required: ["email"] },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["region", "percent"],
};

describe("a response form", () => {
  it("turns a schema into fields with their kinds, bounds and defaults", () => {
    const fields = fieldsOf(schema);
    expect(fields.map((f) => [f.path, f.kind, f.required])).toEqual([
      ["region", "enum", true],
      ["percent", "number", true],
      ["replicas", "integer", false],
      ["notify", "boolean", false],
      ["note", "string", false],
      ["owner", "object", false],
      ["tags", "json", false],
    ]);
    expect(fields[0]!.title).toBe("Region");
    expect(fields[1]).toMatchObject({ minimum: 1, maximum: 50, description: "Share of traffic" });
    expect(fields[5]!.fields!.map((f) => [f.path, f.required])).toEqual([["owner.email", true]]);
    expect(initialEntries(fields)).toEqual({ region: "0", percent: "", replicas: "", notify: true, note: "", "owner.email": "", tags: "" });
  });

  it("builds the answer with typed values and leaves out what was left empty", () => {
    const fields = fieldsOf(schema);
    const entries = { ...initialEntries(fields), region: "1", percent: "12.5", tags: '["a"]', "owner.email": "a@b.c" };
    expect(answerOf(fields, entries)).toEqual({
      ok: true,
      value: { region: "us-east-1", percent: 12.5, notify: true, owner: { email: "a@b.c" }, tags: ["a"] },
    });
  });

  it("names each field's problem", () => {
    const fields = fieldsOf(schema);
    const entries = { ...initialEntries(fields), region: "", percent: "80", replicas: "1.5", note: "toolong", "owner.email": "nope", tags: "[" };
    expect(answerOf(fields, entries)).toEqual({
      ok: false,
      problems: {
        region: "Required.",
        percent: "At most 50.",
        replicas: "A whole number is needed.",
        note: "At most 5 characters.",
        "owner.email": "Not an email address.",
        tags: "Not valid JSON.",
      },
    });
  });
});
