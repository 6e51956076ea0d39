import { describe, expect, it } from "vitest";
import { gateFromHash, viewFromHash, withoutGate } from "./gate-link";

describe("a link to one gate", () => {
  it("names the gate in #gate=...", () => {
    expect(gateFromHash("#gate=gate_01")).toBe("gate_01");
    expect(gateFromHash("#x=1&gate=gate_02")).toBe("gate_02");
  });

  it("names none when the fragment has no gate", () => {
    expect(gateFromHash("")).toBeNull();
    expect(gateFromHash("#gate=")).toBeNull();
    expect(gateFromHash("#token=abc")).toBeNull();
  });

  it("is removed from the fragment, keeping the rest", () => {
    expect(withoutGate("#gate=g1")).toBe("");
    expect(withoutGate("#gate=g1&x=1")).toBe("#x=1");
    expect(withoutGate("#view=metrics&x=1")).toBe("#x=1");
  });

  it("names a view only when it is one of the desk's", () => {
    expect(viewFromHash("#view=metrics")).toBe("metrics");
    expect(viewFromHash("#x=1&view=runs")).toBe("runs");
    expect(viewFromHash("#view=admin")).toBeNull();
    expect(viewFromHash("#gate=g1")).toBeNull();
  });
});
