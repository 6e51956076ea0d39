// The memory snapshots' labels and entries in words, never raw identifiers.

import { describe, expect, it } from "vitest";
import { entryPlace, snapshotReason } from "./memory";

describe("a memory snapshot's reason", () => {
  it("names the handoff's turn, or the run's end", () => {
    expect(snapshotReason("handoff:4")).toBe("At a handoff (turn 4)");
    expect(snapshotReason("end")).toBe("At the run's end");
  });

  it("shows a label it does not know as it is", () => {
    expect(snapshotReason("checkpoint:2")).toBe("checkpoint:2");
  });
});

describe("a snapshot entry's place", () => {
  it("is its scope in words and its key, which may hold a colon", () => {
    expect(entryPlace("team:test_report")).toEqual({ scope: "The team's memory", key: "test_report" });
    expect(entryPlace("run:handoff:3")).toEqual({ scope: "This run's memory", key: "handoff:3" });
    expect(entryPlace("loose")).toEqual({ scope: "", key: "loose" });
  });
});
