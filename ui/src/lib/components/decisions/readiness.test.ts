// A confirmed decision goes only when it can: otherwise it says why, or asks for what it lacks.

import { describe, expect, it } from "vitest";
import { draftOf, type Draft } from "./decision";
import { readiness } from "./readiness";

const draft = (extra: Partial<Draft> = {}): Draft => ({ text: "", armed: null, payloadInvalid: false, ...extra });

describe("readiness", () => {
  it("an approval with unsent edits is refused, in the words of the editor used", () => {
    expect(readiness("approve", draft({ editedPayload: { a: 1 } }), false)).toEqual({
      kind: "refuse",
      why: "You edited the payload: approve with edits, or reset to the proposal first.",
    });
    expect(readiness("approve", draft({ editedPayload: { a: 1 } }), true)).toMatchObject({ kind: "refuse", why: expect.stringContaining("You made changes") });
  });

  it("a rejection without a reason is armed and asks for it; confirmed again once armed, it goes", () => {
    expect(readiness("reject", draft(), false)).toEqual({ kind: "ask-text" });
    expect(readiness("reject", draft({ armed: "reject" }), false)).toMatchObject({ kind: "send", input: { action: "reject" } });
    expect(readiness("reject", draft({ text: "too risky" }), false)).toEqual({ kind: "send", input: { action: "reject", text: "too risky" } });
  });

  it("an edit with nothing edited opens the editor; a review's problem blocks it", () => {
    expect(readiness("edit", draft(), false)).toEqual({ kind: "open-editor" });
    expect(readiness("edit", draft({ editedPayload: { a: 2 } }), true, "The plan has a cycle")).toEqual({ kind: "refuse", why: "The plan has a cycle" });
  });

  it("a plain approval is sent", () => {
    expect(readiness("approve", draft(), false)).toMatchObject({ kind: "send", input: { action: "approve" } });
  });
});

describe("draftOf", () => {
  const parts = {
    text: "ok",
    armed: null,
    ownEditor: false,
    review: { invalid: false },
    payload: { invalid: false, edits: [], edited: { a: 2 } },
    formEntries: undefined,
    choices: new Map(),
    form: undefined,
    allow: null,
  };

  it("takes the edit from the JSON editor, or from the kind's own review", () => {
    expect(draftOf(parts)).toEqual({ text: "ok", armed: null, payloadInvalid: false, editedPayload: { a: 2 } });
    const own = draftOf({ ...parts, ownEditor: true, review: { invalid: true, editedPayload: { plan: 1 } } });
    expect(own).toMatchObject({ payloadInvalid: true, editedPayload: { plan: 1 } });
  });

  it("leaves out the parts not given", () => {
    expect(Object.keys(draftOf({ ...parts, payload: { invalid: false, edits: [] } }))).toEqual(["text", "armed", "payloadInvalid"]);
  });
});
