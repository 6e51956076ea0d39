// What a decided gate's record says beyond the decision itself: the payload
// the agent received (the edited one, or the proposal unchanged), its
// difference from the proposal, and how long the agent waited. Pure, so the
// rules are tested on their own.

import type { Gate } from "../../api/types";
import { pretty } from "../payload";
import { diffText, type Segment } from "../review/textdiff";

/** The payload the agent received with an approval, and its difference from the proposal. */
export interface Received {
  /** What the agent got, as indented JSON. */
  text: string;
  /** What it proposed, as indented JSON (the left side of the diff). */
  proposed: string;
  /** Whether it differs from the proposal (approved with edits). */
  changed: boolean;
  /** The proposal against what was received, for a red/green diff; empty when unchanged. */
  segments: Segment[];
}

/**
 * The payload the agent received, when the decision carried one: an edit's
 * payload, or for an approval the proposal as it was. Null for decisions
 * that carry no payload (rejections, answers) and gates without one.
 */
export function receivedPayload(gate: Pick<Gate, "payload" | "decision">): Received | null {
  const decision = gate.decision;
  if (!decision) return null;
  if (decision.action === "edit" && decision.payload !== undefined && decision.payload !== null) {
    const before = gate.payload == null ? "" : pretty(gate.payload);
    const text = pretty(decision.payload);
    const changed = before !== text;
    return { text, proposed: before, changed, segments: changed ? diffText(before, text) : [] };
  }
  if (decision.action === "approve" && gate.payload != null) {
    const text = pretty(gate.payload);
    return { text, proposed: text, changed: false, segments: [] };
  }
  return null;
}

/** A span of milliseconds in words: "40 s", "4 min", "1 h 5 min", "2 d 3 h". */
export function spanOf(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** How long the agent waited for the decision: "deployer waited 4 min (it was blocked)". */
export function waitedSentence(gate: Pick<Gate, "agent" | "mode" | "created_at" | "decision">): string | null {
  const decision = gate.decision;
  if (!decision) return null;
  const ms = Number.isFinite(decision.latency_ms) ? decision.latency_ms : Date.parse(decision.decided_at) - Date.parse(gate.created_at);
  if (!Number.isFinite(ms)) return null;
  const blocked = gate.mode === "sync" ? " (blocked until then)" : "";
  return `${gate.agent} waited ${spanOf(ms)} for this decision${blocked}.`;
}
