// Goals and deliverables read as text, not as escaped JSON.

import { describe, expect, it } from "vitest";
import { readableText } from "./readable";

describe("readable text", () => {
  it("keeps a plain string as it is", () => {
    expect(readableText("Ship the release notes")).toBe("Ship the release notes");
  });

  it("writes an object's keys in words and its lists as bullets, nested indented", () => {
    const goal = { objective: "Ship the notes", success_criteria: ["Every PR listed", "Reviewed by docs"], owner: { team: "docs", on_call: false } };
    expect(readableText(goal)).toBe(
      ["Objective: Ship the notes", "Success criteria:", "  • Every PR listed", "  • Reviewed by docs", "Owner:", "  Team: docs", "  On call: no"].join("\n"),
    );
  });

  it("decodes a string holding encoded JSON instead of showing its escapes", () => {
    expect(readableText(JSON.stringify({ title: "Notes", body: "line one\nline two" }))).toBe("Title: Notes\nBody: line one\n  line two");
    expect(readableText("{not json}")).toBe("{not json}");
  });
});
