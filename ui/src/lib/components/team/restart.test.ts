import { describe, expect, it } from "vitest";
import { syncLine } from "./restart";

describe("syncLine", () => {
  const branch = (status: string) => ({ agent: "a", task: "t", run_id: "r", status, answer: "" });
  it("says whether the lead still waits and how many branches ended", () => {
    expect(syncLine({ lead: "lead", synced: false, branches: [branch("completed"), branch("active")] })).toBe(
      "lead waits at the sync point: 1 of 2 branches ended",
    );
    expect(syncLine({ lead: "lead", synced: true, branches: [branch("completed"), branch("cancelled")] })).toBe(
      "lead passed the sync point: 2 of 2 branches ended",
    );
  });
});
