// A quorum gate's tally in words. Such a gate waits for several distinct
// reviewers: each approval or rejection is one vote, and the gate stays
// pending (for everyone else) until enough approvals are in or enough
// rejections reject it. The engine counts; this only says where it stands.

import type { Gate, Vote } from "../../api/types";

/** Where a quorum gate's votes stand. */
export interface Tally {
  approvals: number;
  /** Approvals that decide it. */
  required: number;
  rejections: number;
  /** Rejections that reject it. */
  rejectionsToReject: number;
}

/** The tally of a quorum gate; null for a gate one reviewer decides. */
export function tallyOf(gate: Pick<Gate, "quorum" | "votes">): Tally | null {
  if (!gate.quorum) return null;
  const count = (action: Vote["action"]) => gate.votes.filter((v) => v.action === action).length;
  return {
    approvals: count("approve"),
    required: gate.quorum.required,
    rejections: count("reject"),
    rejectionsToReject: gate.quorum.rejections_to_reject ?? 1,
  };
}

/** "1 of 2 approvals". */
export function approvalsSentence(t: Tally): string {
  return `${t.approvals} of ${t.required} approval${t.required === 1 ? "" : "s"}`;
}

/** "any rejection rejects it", or "2 rejections reject it (1 so far)". */
export function rejectionRule(t: Tally): string {
  if (t.rejectionsToReject <= 1) return "any rejection rejects it";
  return `${t.rejectionsToReject} rejections reject it (${t.rejections} so far)`;
}

/** What the desk says after a vote that left the gate waiting (short: it sits in the header): "Vote counted: 1 of 2 approvals." */
export function voteCountedSentence(gate: Pick<Gate, "quorum" | "votes">): string {
  const t = tallyOf(gate);
  return t === null ? "Vote counted." : `Vote counted: ${approvalsSentence(t)}.`;
}

/** The vote `me` cast on this gate, if any. */
export function voteOf(gate: Pick<Gate, "votes">, me: string | null): Vote | undefined {
  return me === null ? undefined : gate.votes.find((v) => v.reviewer === me);
}

/** "alice approved", "bob rejected". */
export function voteSentence(vote: Pick<Vote, "reviewer" | "action">): string {
  return `${vote.reviewer} ${vote.action === "reject" ? "rejected" : "approved"}`;
}
