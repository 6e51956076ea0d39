// The gate open in the resolution modal, as the server has it: loaded when
// the modal opens (or why it cannot be), read again when the event stream
// says some of its actions were decided or someone voted (without moving
// the reviewer's cursor), and read once more when it closed under the
// reviewer, to show how. The modal holds the draft and sends decisions.

import { errorMessage, type Api } from "../../api/client";
import type { Gate, GateDetail, LogEvent } from "../../api/types";

export class OpenGate {
  /** The gate and what the modal shows with it; null until loaded. Raw: a payload may be a megabyte, and each read replaces it whole. */
  detail = $state.raw<GateDetail | null>(null);
  /** Why it could not be loaded. */
  loadError = $state<string | null>(null);
  /** The gate as it closed under this reviewer (someone else decided it, or it expired). */
  closedGate = $state.raw<Gate | null>(null);
  #api: Api;
  #gateId: string;
  #readingClosed = false;

  constructor(api: Api, gateId: string) {
    this.#api = api;
    this.#gateId = gateId;
  }

  /** Loads the gate; the detail, or null when it cannot be read (`loadError` says why). */
  async load(): Promise<GateDetail | null> {
    const { data, error, response } = await this.#api.GET("/api/hitl/gates/{gate_id}", { params: { path: { gate_id: this.#gateId } } });
    if (data === undefined) {
      this.loadError = response.status === 404 ? "This gate no longer exists." : errorMessage(error);
      return null;
    }
    this.detail = data;
    return data;
  }

  /** The gate as the server has it now, or undefined when it cannot be read. */
  fetch = async (): Promise<GateDetail | undefined> =>
    (await this.#api.GET("/api/hitl/gates/{gate_id}", { params: { path: { gate_id: this.#gateId } } })).data;

  /** Reads the gate again while it is pending (the reviewer may be typing: nothing moves the cursor). */
  async refresh(): Promise<void> {
    const data = await this.fetch();
    if (data !== undefined && data.gate.status === "pending") this.detail = data;
  }

  /** Shows the gate as `gate` now is (after a vote or some actions decided here). */
  replace(gate: Gate): void {
    if (this.detail) this.detail = { ...this.detail, gate };
  }

  /** Reads, once, how the gate closed under this reviewer. */
  readClosed(): void {
    if (this.#readingClosed) return;
    this.#readingClosed = true;
    void this.fetch().then((data) => {
      if (data && data.gate.status !== "pending") this.closedGate = data.gate;
    });
  }

  /** Whether `events` decided some of this gate's actions or counted a vote on it. */
  movedBy(events: readonly LogEvent[]): boolean {
    return events.some((e) => (e.type === "actions_decided" || e.type === "vote_recorded") && e.gate_id === this.#gateId);
  }
}
