import { describe, expect, it } from "vitest";
import { barActions, buildDecision, EMPTY_DRAFT, primaryAction, textLabel } from "./decision";

describe("the decision bar", () => {
  it("shows the allowed actions, going-ahead ones first, edit only with a payload", () => {
    expect(barActions(["reject", "edit", "approve"], true)).toEqual(["approve", "edit", "reject"]);
    expect(barActions(["reject", "edit", "approve"], false)).toEqual(["approve", "reject"]);
    expect(barActions(["defer", "respond"], false)).toEqual(["respond", "defer"]);
  });

  it("submits with Ctrl+Enter: the armed action, else edits, else the answer, else approval", () => {
    const approval = ["approve", "edit", "reject"] as const;
    expect(primaryAction(approval, EMPTY_DRAFT)).toBe("approve");
    expect(primaryAction(approval, { ...EMPTY_DRAFT, editedPayload: { a: 1 } })).toBe("edit");
    expect(primaryAction(approval, { ...EMPTY_DRAFT, payloadInvalid: true })).toBe("edit");
    expect(primaryAction(approval, { ...EMPTY_DRAFT, editedPayload: { a: 1 }, armed: "reject" })).toBe("reject");
    expect(primaryAction(["respond", "defer"], EMPTY_DRAFT)).toBe("respond");
    expect(primaryAction(["defer"], EMPTY_DRAFT)).toBeNull();
  });

  it("labels the text box by what it will be sent as", () => {
    expect(textLabel(["respond"], null)).toBe("Your answer");
    expect(textLabel(["approve", "reject"], "reject")).toBe("Reason for rejecting");
    expect(textLabel(["approve", "reject"], null)).toMatch(/optional/);
  });
});

describe("building a decision", () => {
  it("sends the answer of a question, trimmed", () => {
    expect(buildDecision("respond", { ...EMPTY_DRAFT, text: "  Postgres \n" })).toEqual({
      input: { action: "respond", text: "Postgres" },
    });
  });

  it("refuses an empty answer or an empty revision request", () => {
    expect(buildDecision("respond", EMPTY_DRAFT)).toEqual({ problem: "Type an answer first." });
    expect(buildDecision("needs_revision", EMPTY_DRAFT)).toHaveProperty("problem");
  });

  it("sends edits with the edited payload, and only valid ones", () => {
    expect(buildDecision("edit", { ...EMPTY_DRAFT, editedPayload: { branch: "release" }, text: "safer" })).toEqual({
      input: { action: "edit", payload: { branch: "release" }, text: "safer" },
    });
    expect(buildDecision("edit", { ...EMPTY_DRAFT, payloadInvalid: true })).toHaveProperty("problem");
    expect(buildDecision("edit", EMPTY_DRAFT)).toHaveProperty("problem");
  });

  it("sends a rejection with its reason, or without one", () => {
    expect(buildDecision("reject", { ...EMPTY_DRAFT, text: "too risky" })).toEqual({
      input: { action: "reject", text: "too risky" },
    });
    expect(buildDecision("reject", EMPTY_DRAFT)).toEqual({ input: { action: "reject" } });
    expect(buildDecision("approve", EMPTY_DRAFT)).toEqual({ input: { action: "approve" } });
  });

  it("sends a form's answer as the response, with the note as text, and refuses a form with a problem", () => {
    const filled = { ...EMPTY_DRAFT, text: " canary first ", form: { value: { region: "eu", percent: 5 } } };
    expect(buildDecision("respond", filled)).toEqual({
      input: { action: "respond", response: { region: "eu", percent: 5 }, text: "canary first" },
    });
    expect(buildDecision("respond", { ...EMPTY_DRAFT, form: { value: {} } })).toEqual({ input: { action: "respond", response: {} } });
    expect(buildDecision("respond", { ...EMPTY_DRAFT, form: { problem: "percent: At most 50." } })).toEqual({
      problem: "Fix the form first: percent: At most 50.",
    });
  });
});

describe("always allowing with an approval", () => {
  const rule = { for_secs: 3600, args: { env: "staging" } };

  it("sends the rule with approve and edit only", () => {
    const draft = { ...EMPTY_DRAFT, allow: { rule } };
    expect(buildDecision("approve", draft)).toEqual({ input: { action: "approve", allow_rule: rule } });
    expect(buildDecision("edit", { ...draft, editedPayload: { env: "staging" } })).toEqual({
      input: { action: "edit", payload: { env: "staging" }, allow_rule: rule },
    });
    expect(buildDecision("reject", { ...draft, text: "no" })).toEqual({ input: { action: "reject", text: "no" } });
  });

  it("holds the approval while the rule has a problem", () => {
    const draft = { ...EMPTY_DRAFT, allow: { problem: "The argument pattern is not valid JSON." } };
    expect(buildDecision("approve", draft)).toEqual({ problem: "Always allow: The argument pattern is not valid JSON." });
    expect(buildDecision("reject", draft)).toEqual({ input: { action: "reject" } });
  });
});
