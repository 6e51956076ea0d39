// Preset answers: only an allowed one is armed, and it sends its own name with the reviewer's text if any.

import { describe, expect, it } from "vitest";
import { gate } from "../../test-fixtures";
import { optionAt, optionDecision, optionWords } from "./options";

const asked = gate({
  agent: "deployer",
  options: [
    { name: "eu", title: "EU only", action: "respond" },
    { name: "no", title: "Too risky", action: "reject" },
  ],
});

describe("preset options", () => {
  it("a digit names an option only when the gate has it and allows its decision", () => {
    expect(optionAt(asked, 0, ["respond"])?.name).toBe("eu");
    expect(optionAt(asked, 1, ["respond"])).toBeNull();
    expect(optionAt(asked, 5, ["respond", "reject"])).toBeNull();
    expect(optionAt(asked, null, ["respond"])).toBeNull();
    expect(optionAt(undefined, 0, ["respond"])).toBeNull();
  });

  it("sends the option's name, with the reviewer's text when typed", () => {
    const eu = asked.options![0]!;
    expect(optionDecision(eu, "  ")).toEqual({ action: "respond", input: { action: "respond", option: "eu" } });
    expect(optionDecision(eu, " GDPR ")).toEqual({ action: "respond", input: { action: "respond", option: "eu", text: "GDPR" } });
    expect(optionWords(asked, eu)).toBe("Answer deployer with “EU only”.");
  });
});
