import { describe, expect, it } from "vitest";
import { armedSentence, barActions, buildDecision, chooseFirst, confirmAction, EMPTY_DRAFT, optionSentence, primaryAction, textLabel } from "./decision";

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

  it("confirms with Ctrl+Enter only a decision the reviewer chose, never a default approval", () => {
    const approval = ["approve", "edit", "reject"] as const;
    expect(confirmAction(approval, EMPTY_DRAFT)).toBeNull();
    expect(confirmAction(approval, { ...EMPTY_DRAFT, text: "Looks bad" })).toBeNull();
    expect(confirmAction(approval, { ...EMPTY_DRAFT, armed: "approve" })).toBe("approve");
    expect(confirmAction(approval, { ...EMPTY_DRAFT, armed: "reject" })).toBe("reject");
    expect(confirmAction(approval, { ...EMPTY_DRAFT, editedPayload: { a: 1 } })).toBe("edit");
    expect(confirmAction(["respond", "defer"], EMPTY_DRAFT)).toBe("respond");
  });

  it("says which keys arm a decision when none is armed", () => {
    const keyOf = (a: string) => ({ "gate.approve": "a", "gate.reject": "r" })[a];
    expect(chooseFirst(["approve", "edit", "reject"], keyOf, "Ctrl+Enter")).toBe(
      "Choose a decision first: a approve, r reject; then Ctrl+Enter confirms it.",
    );
    expect(chooseFirst(["defer"], keyOf, "Ctrl+Enter")).toBe("Choose a decision first: use a button below; then Ctrl+Enter confirms it.");
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

describe("the armed decision, in words", () => {
  const drop = { agent: "deployer", spec: { kind: "approval", action: "DROP TABLE orders_2019" } };
  it("names the action, the agent and what the agent is told", () => {
    expect(armedSentence(drop, "approve", "", 0)).toBe("Approve DROP TABLE orders_2019 as proposed, for deployer.");
    expect(armedSentence(drop, "edit", "", 2)).toBe("Approve DROP TABLE orders_2019 with your edits (2), for deployer.");
    expect(armedSentence(drop, "reject", "", 0)).toBe("Reject DROP TABLE orders_2019: type the reason deployer is told.");
    expect(armedSentence(drop, "reject", "  Looks   bad ", 0)).toBe("Reject DROP TABLE orders_2019: deployer is told “Looks bad”.");
  });

  it("says what is reviewed when there is no action name, and shortens long text", () => {
    const goal = { agent: "writer", spec: { kind: "goal_review" } };
    expect(armedSentence(goal, "approve", "", 0)).toBe("Approve this goal as proposed, for writer.");
    expect(armedSentence(goal, "needs_revision", "", 0)).toBe("Ask writer to revise this goal: say what to change.");
    const long = armedSentence(goal, "needs_revision", "x".repeat(200), 0);
    expect(long).toContain("…”");
    expect(long.length).toBeLessThan(140);
    expect(armedSentence({ agent: "a", spec: { kind: "approval", action: "  " } }, "approve", "", 0)).toBe("Approve this action as proposed, for a.");
  });

  it("names a preset option chosen by its digit", () => {
    expect(optionSentence({ agent: "ops", spec: { kind: "question" } }, "respond", "Use us-east-1")).toBe("Answer ops with “Use us-east-1”.");
    expect(optionSentence(drop, "reject", "Too risky")).toBe("Reject DROP TABLE orders_2019 with “Too risky”.");
  });
});
