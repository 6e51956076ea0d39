import { describe, expect, it } from "vitest";
import type { ProposedAction } from "../../api/types";
import { allowedChoices, buildChoices, progressText, type Choice } from "./batch";

const action = (id: string, extra: Partial<ProposedAction> = {}): ProposedAction => ({
  id,
  name: `tool_${id}`,
  args: { n: 1 },
  allowed_actions: [],
  ...extra,
});
const decided = (id: string): ProposedAction =>
  action(id, { decision: { id, action: "approve", decided_by: "alice", decided_at: "2026-01-01T00:00:00Z" } });

describe("a batch of proposed actions", () => {
  it("sends the chosen open actions in the gate's order, edits parsed, texts trimmed", () => {
    const actions = [action("a"), action("b"), decided("c"), action("d")];
    const choices = new Map<string, Choice>([
      ["d", { action: "reject", text: "  too risky " }],
      ["a", { action: "edit", argsText: '{"n": 2}' }],
      ["c", { action: "reject" }], // decided meanwhile: dropped
    ]);
    expect(buildChoices(actions, choices)).toEqual({
      ok: [
        { id: "a", action: "edit", args: { n: 2 } },
        { id: "d", action: "reject", text: "too risky" },
      ],
    });
    expect(progressText(actions)).toBe("1 of 4 decided");
  });

  it("names the action whose choice cannot be sent", () => {
    const actions = [action("a"), action("b", { allowed_actions: ["approve", "reject"] })];
    expect(buildChoices(actions, new Map([["a", { action: "edit", argsText: "{oops" } as Choice]]))).toEqual({
      problem: expect.stringContaining("tool_a (a): Not valid JSON"),
    });
    expect(buildChoices(actions, new Map([["a", { action: "respond", text: " " } as Choice]]))).toEqual({
      problem: "tool_a (a): a response needs its text.",
    });
    expect(buildChoices(actions, new Map([["b", { action: "edit" } as Choice]]))).toEqual({
      problem: "tool_b (b) does not allow edit.",
    });
    expect(buildChoices(actions, new Map())).toEqual({ problem: "Choose a decision for at least one open action." });
  });

  it("offers each action only the decisions its agent allowed", () => {
    expect(allowedChoices(action("a"))).toEqual(["approve", "edit", "reject", "respond"]);
    expect(allowedChoices(action("b", { allowed_actions: ["reject", "approve"] }))).toEqual(["approve", "reject"]);
  });
});
