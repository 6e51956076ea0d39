// The preview stays on a gate another reviewer decided, and j/k leave it for the right neighbour.

import { describe, expect, it } from "vitest";
import { summary } from "../../test-fixtures";
import type { Closed } from "../../stores/queue-logic";
import { heldSentence, holdFor, leaveHeld } from "./held";

const resolved = (by: string, action = "reject"): Closed => ({ gateId: "g2", how: "resolved", by, at: "2026-01-01T00:00:00Z", action });

describe("holdFor", () => {
  const selected = summary({ id: "g2" });

  it("holds a gate another reviewer resolved", () => {
    expect(holdFor(selected, resolved("bob"), "alice")).toEqual({ gate: selected, closed: resolved("bob") });
    expect(holdFor(selected, resolved("bob"), null)).not.toBeNull();
  });

  it("does not hold the reviewer's own decision, an expiry or a withdrawal, or another gate's closing", () => {
    expect(holdFor(selected, resolved("alice"), "alice")).toBeNull();
    expect(holdFor(selected, { ...resolved("system"), how: "expired" }, "alice")).toBeNull();
    expect(holdFor(selected, { ...resolved("system"), how: "cancelled" }, "alice")).toBeNull();
    expect(holdFor(selected, { ...resolved("bob"), gateId: "g9" }, "alice")).toBeNull();
    expect(holdFor(undefined, resolved("bob"), "alice")).toBeNull();
  });
});

describe("leaveHeld", () => {
  const before = summary({ id: "a", created_at: "2026-01-01T00:00:00Z" });
  const held = summary({ id: "b", created_at: "2026-01-01T00:01:00Z" });
  const after = summary({ id: "c", created_at: "2026-01-01T00:02:00Z" });

  it("j stays on the gate that took the held one's place, k steps back over it", () => {
    expect(leaveHeld(held, after, 1)).toBe(0);
    expect(leaveHeld(held, after, -1)).toBe(-1);
  });

  it("when the held gate was the last, the panel sits before it: k stays, j moves", () => {
    expect(leaveHeld(held, before, -1)).toBe(0);
    expect(leaveHeld(held, before, 1)).toBe(1);
  });

  it("with nothing selected, moves as usual", () => {
    expect(leaveHeld(held, undefined, 1)).toBe(1);
    expect(leaveHeld(held, undefined, -1)).toBe(-1);
  });
});

describe("heldSentence", () => {
  it("says who decided and what, in words", () => {
    expect(heldSentence(resolved("bob"))).toBe("Rejected by bob.");
    expect(heldSentence(resolved("bob", "edit"))).toBe("Approved with edits by bob.");
  });
});
