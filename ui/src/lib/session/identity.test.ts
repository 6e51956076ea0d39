import { describe, expect, it } from "vitest";
import { decidersSentence, mayDecide } from "./identity";

const carol = { name: "carol", roles: ["reviewer", "security"] };

describe("who may decide a gate", () => {
  it("lets anyone decide a gate that names no deciders", () => {
    expect(mayDecide({ deciders: [] }, carol)).toBe(true);
    expect(mayDecide({}, carol)).toBe(true);
  });

  it("matches reviewers by name and roles by role:NAME, as the engine does", () => {
    expect(mayDecide({ deciders: ["carol"] }, carol)).toBe(true);
    expect(mayDecide({ deciders: ["role:security"] }, carol)).toBe(true);
    expect(mayDecide({ deciders: ["alice", "role:sre"] }, carol)).toBe(false);
    // A name is not a role, nor a role a name.
    expect(mayDecide({ deciders: ["security"] }, carol)).toBe(false);
    expect(mayDecide({ deciders: ["role:carol"] }, carol)).toBe(false);
  });

  it("leaves the judgement to the server when the identity is unknown", () => {
    expect(mayDecide({ deciders: ["alice"] }, null)).toBe(true);
  });

  it("says who may decide in words", () => {
    expect(decidersSentence(["alice"])).toBe("alice");
    expect(decidersSentence(["alice", "role:sre", "bob"])).toBe("alice, anyone with the role sre or bob");
  });
});
