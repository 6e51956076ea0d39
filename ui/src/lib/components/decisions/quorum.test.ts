import { describe, expect, it } from "vitest";
import { gate } from "../../test-fixtures";
import { approvalsSentence, rejectionRule, tallyOf, voteCountedSentence, voteOf, voteSentence } from "./quorum";

const at = "2026-01-01T00:02:00Z";

describe("a quorum gate's tally", () => {
  it("counts approvals against the quorum", () => {
    const waiting = gate({ quorum: { required: 2, rejections_to_reject: 1 }, votes: [{ reviewer: "alice", action: "approve", at }] });
    const tally = tallyOf(waiting)!;
    expect(approvalsSentence(tally)).toBe("1 of 2 approvals");
    expect(rejectionRule(tally)).toBe("any rejection rejects it");
    expect(voteCountedSentence(waiting)).toBe("Vote counted: 1 of 2 approvals.");
  });

  it("counts rejections when several are needed to reject", () => {
    const votes = [
      { reviewer: "alice", action: "approve" as const, at },
      { reviewer: "bob", action: "reject" as const, at },
    ];
    const tally = tallyOf(gate({ quorum: { required: 3, rejections_to_reject: 2 }, votes }))!;
    expect(tally).toEqual({ approvals: 1, required: 3, rejections: 1, rejectionsToReject: 2 });
    expect(rejectionRule(tally)).toBe("2 rejections reject it (1 so far)");
    expect(votes.map(voteSentence)).toEqual(["alice approved", "bob rejected"]);
  });

  it("has no tally for a gate one reviewer decides, and finds the signed-in reviewer's own vote", () => {
    expect(tallyOf(gate())).toBeNull();
    const voted = gate({ quorum: { required: 2 }, votes: [{ reviewer: "alice", action: "approve", at }] });
    expect(voteOf(voted, "alice")?.at).toBe(at);
    expect(voteOf(voted, "bob")).toBeUndefined();
    expect(voteOf(voted, null)).toBeUndefined();
  });
});
