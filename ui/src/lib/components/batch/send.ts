// Sending the choices made on a gate of several actions, and what came of
// it: every action decided (the gate closes like any decision), some still
// open (the modal shows what was sent and keeps going), or another reviewer
// decided one of them first while the gate stays open (it is shown as it is
// now, the other choices kept).

import type { Api } from "../../api/client";
import type { DecisionAction, Gate, GateDetail } from "../../api/types";
import { submitDecision, type Outcome } from "../decisions/resolution";
import { buildChoices, openActions, type Choice } from "./batch";

export type BatchSent =
  /** The choices cannot be sent as they are. */
  | { kind: "problem"; problem: string }
  /** Sent; these actions are still open on the gate. */
  | { kind: "partly"; gate: Gate; notice: string }
  /** Someone decided one of them first and the gate is still open: here it is now. */
  | { kind: "moved"; detail: GateDetail; notice: string }
  /** The gate's outcome, as for a single decision. */
  | { kind: "done"; outcome: Outcome; action: DecisionAction };

/** Sends `choices` on `gate` as `me`; `reread` fetches the gate afresh after a clash. */
export async function sendChoices(
  api: Api,
  gate: Gate,
  choices: ReadonlyMap<string, Choice>,
  me: string | null,
  reread: () => Promise<GateDetail | undefined>,
): Promise<BatchSent> {
  const built = buildChoices(gate.actions ?? [], choices);
  if ("problem" in built) return { kind: "problem", problem: built.problem };
  const sent = await submitDecision(api, gate.id, { action: "approve", actions: built.ok }, me);
  if (sent.kind === "resolved" && sent.gate.status === "pending") {
    const open = openActions(sent.gate.actions ?? []).length;
    const n = built.ok.length;
    return { kind: "partly", gate: sent.gate, notice: `Sent ${n} decision${n === 1 ? "" : "s"}; ${open} action${open === 1 ? "" : "s"} still open.` };
  }
  if (sent.kind === "refused" && sent.status === 409) {
    const now = await reread();
    if (now?.gate.status === "pending") return { kind: "moved", detail: now, notice: sent.message };
  }
  return { kind: "done", outcome: sent, action: sent.kind === "resolved" ? (sent.gate.decision?.action ?? "approve") : "approve" };
}
