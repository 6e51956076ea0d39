// The next-agent field's choices: a team run's agents, free text otherwise.
import { describe, expect, it } from "vitest";
import { nextAgentChoices } from "./next-agent";

describe("next-agent choices", () => {
  it("offers a team run's agents, keeping one chosen who has left", () => {
    expect(nextAgentChoices(["coder", "tester", "deployer"], null)).toEqual(["coder", "tester", "deployer"]);
    expect(nextAgentChoices(["coder", "tester"], "tester")).toEqual(["coder", "tester"]);
    expect(nextAgentChoices(["coder", "tester"], "auditor")).toEqual(["coder", "tester", "auditor"]);
  });

  it("leaves free text for a run without a team", () => {
    expect(nextAgentChoices(null, "anyone")).toBeNull();
    expect(nextAgentChoices([], null)).toBeNull();
  });
});
