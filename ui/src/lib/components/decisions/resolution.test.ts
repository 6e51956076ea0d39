import { describe, expect, it } from "vitest";
import { createApi } from "../../api/client";
import { gate, jsonResponse } from "../../test-fixtures";
import { EMPTY_DRAFT } from "./decision";
import type { Gate } from "../../api/types";
import { afterOutcome, canDecide, closingOf, conflictSentence, Drafts, fieldProblems, submitDecision, type Conflict, type Submission, closedElsewhere } from "./resolution";

/** A server answering the decision with `status` and `body`, and a read of the gate with `current` (404 without). */
function serverAnswering(status: number, body: unknown, current?: Gate) {
  const requests: Request[] = [];
  const api = createApi("secret", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      requests.push(request);
      if (request.method === "GET") {
        return current ? jsonResponse(200, { gate: current }) : jsonResponse(404, { code: "not_found", message: "no such gate" });
      }
      return jsonResponse(status, body);
    },
  });
  return { api, requests };
}

const conflictBody = {
  code: "conflict",
  message: "gate gate_1 is already resolved by alice",
  resolved_by: "alice",
  resolved_at: "2026-01-01T00:05:00Z",
};

describe("submitting a decision", () => {
  it("posts the decision to the gate with the reviewer's token", async () => {
    const { api, requests } = serverAnswering(200, gate({ status: "resolved" }));
    const outcome = await submitDecision(api, "gate_1", { action: "respond", text: "Postgres" });
    expect(outcome.kind).toBe("resolved");
    expect(requests[0]!.method).toBe("POST");
    expect(new URL(requests[0]!.url).pathname).toBe("/api/hitl/gates/gate_1/resolve");
    expect(requests[0]!.headers.get("Authorization")).toBe("Bearer secret");
    expect(await requests[0]!.json()).toEqual({ action: "respond", text: "Postgres" });
  });

  it("names who resolved the gate first and when, on 409", async () => {
    const current = gate({ status: "resolved", closed_at: "2026-01-01T00:05:00Z" });
    const { api } = serverAnswering(409, conflictBody, current);
    const outcome = await submitDecision(api, "gate_1", { action: "respond", text: "MySQL" });
    expect(outcome).toEqual({
      kind: "conflict",
      message: "gate gate_1 is already resolved by alice",
      gateStatus: "resolved",
      resolvedBy: "alice",
      resolvedAt: "2026-01-01T00:05:00Z",
    });
    expect(conflictSentence(outcome as Conflict, (iso) => iso)).toBe("alice resolved this gate at 2026-01-01T00:05:00Z.");
    const unknown: Conflict = { kind: "conflict", message: "taken", gateStatus: "resolved", resolvedBy: null, resolvedAt: null };
    expect(conflictSentence(unknown, (iso) => iso)).toBe("Someone else resolved this gate first.");
  });

  it("says an expired gate expired, and when, rather than that someone resolved it", async () => {
    const current = gate({ status: "expired", closed_at: "2026-01-01T00:30:00Z", status_reason: "expired after 30m" });
    const body = { code: "conflict", message: "gate gate_1 is already expired (since 2026-01-01T00:30:00Z)", resolved_at: "2026-01-01T00:30:00Z" };
    const { api } = serverAnswering(409, body, current);
    const outcome = await submitDecision(api, "gate_1", { action: "approve" });
    expect(outcome).toMatchObject({ kind: "conflict", gateStatus: "expired", resolvedBy: null, resolvedAt: "2026-01-01T00:30:00Z" });
    expect(conflictSentence(outcome as Conflict, (iso) => iso)).toBe(
      "This gate expired at 2026-01-01T00:30:00Z, before your decision reached it.",
    );
    const withdrawn: Conflict = { ...(outcome as Conflict), gateStatus: "cancelled" };
    expect(conflictSentence(withdrawn, (iso) => iso)).toBe("This gate was withdrawn at 2026-01-01T00:30:00Z, before your decision reached it.");
  });

  it("counts a vote on a quorum gate that still waits, and tells a second vote by the same reviewer apart", async () => {
    const vote = { reviewer: "alice", action: "approve" as const, at: "2026-01-01T00:02:00Z" };
    const waiting = gate({ allowed_actions: ["approve", "reject"], quorum: { required: 2, rejections_to_reject: 1 }, votes: [vote] });
    const counted = await submitDecision(serverAnswering(200, waiting).api, "gate_1", { action: "approve" }, "alice");
    expect(counted).toEqual({ kind: "voted", gate: waiting });

    const twice = serverAnswering(409, { code: "conflict", message: "alice has already voted on gate gate_1" }, waiting);
    expect(await submitDecision(twice.api, "gate_1", { action: "approve" }, "alice")).toEqual({ kind: "already_voted", gate: waiting, vote });
    // Someone else refused on a gate still open is the server's refusal, never "someone resolved it".
    const other = await submitDecision(twice.api, "gate_1", { action: "approve" }, "bob");
    expect(other).toEqual({ kind: "refused", status: 409, message: "alice has already voted on gate gate_1", code: "conflict" });

    const decided = gate({ ...waiting, status: "resolved", votes: [vote, { ...vote, reviewer: "bob" }] });
    expect((await submitDecision(serverAnswering(200, decided).api, "gate_1", { action: "approve" }, "bob")).kind).toBe("resolved");
  });

  it("keeps the reviewer's unsent text after a conflict, and stops further decisions", async () => {
    const { api } = serverAnswering(409, { code: "conflict", message: "taken", resolved_by: "alice" }, gate({ status: "resolved" }));
    const before: Submission = { draft: { ...EMPTY_DRAFT, text: "Use the staging database" }, busy: true, outcome: null };
    const after = afterOutcome(before, await submitDecision(api, "gate_1", { action: "respond", text: "x" }));
    expect(after.draft.text).toBe("Use the staging database");
    expect(after.outcome?.kind).toBe("conflict");
    expect(canDecide(after)).toBe(false);
  });

  it("keeps the text and allows a retry when the server refuses for another reason", async () => {
    const { api } = serverAnswering(422, { code: "invalid", message: "a response needs its text", field: "text" });
    const before: Submission = { draft: { ...EMPTY_DRAFT, text: " " }, busy: true, outcome: null };
    const after = afterOutcome(before, await submitDecision(api, "gate_1", { action: "respond", text: " " }));
    expect(after.outcome).toEqual({ kind: "refused", status: 422, message: "a response needs its text", code: "invalid", field: "text" });
    expect(after.draft.text).toBe(" ");
    expect(canDecide(after)).toBe(true);
  });

  it("highlights the field the error body names, whatever its message says", async () => {
    const body = { code: "invalid", message: "must be at most 100 (it is 140)", field: "response.percent" };
    const outcome = await submitDecision(serverAnswering(422, body).api, "gate_1", { action: "respond", response: { percent: 140 } });
    expect(outcome).toMatchObject({ kind: "refused", code: "invalid", field: "response.percent" });
    expect(fieldProblems(outcome)).toEqual({ percent: "must be at most 100 (it is 140)" });
  });

  it("never reads a field out of the message", async () => {
    const body = { code: "invalid", message: "response.percent: must be at most 100" };
    const outcome = await submitDecision(serverAnswering(422, body).api, "gate_1", { action: "respond", response: { percent: 140 } });
    expect(outcome).toEqual({ kind: "refused", status: 422, message: "response.percent: must be at most 100", code: "invalid" });
    expect(fieldProblems(outcome)).toEqual({});
    // A field outside the response form is shown as the message alone.
    const elsewhere = await submitDecision(serverAnswering(422, { ...body, field: "text" }).api, "gate_1", { action: "approve" });
    expect(fieldProblems(elsewhere)).toEqual({});
  });

  it("reports an unreachable server instead of throwing", async () => {
    const api = createApi("secret", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => {
        throw new TypeError("Failed to fetch");
      },
    });
    const outcome = await submitDecision(api, "gate_1", { action: "approve" });
    expect(outcome).toEqual({ kind: "refused", status: 0, message: "Cannot reach the server: Failed to fetch" });
  });

  it("keeps drafts per gate until the gate is decided", () => {
    const drafts = new Drafts();
    drafts.set("g1", { ...EMPTY_DRAFT, text: "half an answer" });
    expect(drafts.get("g1")?.text).toBe("half an answer");
    drafts.forget("g1");
    expect(drafts.get("g1")).toBeUndefined();
  });
});

describe("a gate that closed under the reviewer", () => {
  const gate = {} as never;
  it("shows what the other decided after a conflict, or when the stream says it closed", () => {
    expect(closedElsewhere({ kind: "conflict", message: "", gateStatus: "resolved", resolvedBy: "alice", resolvedAt: null }, false)).toBe(true);
    expect(closedElsewhere(null, true)).toBe(true);
    expect(closedElsewhere({ kind: "refused", status: 500, message: "x" }, true)).toBe(true);
  });
  it("not when this reviewer decided it, nor while it is open", () => {
    expect(closedElsewhere({ kind: "resolved", gate }, true)).toBe(false);
    expect(closedElsewhere(null, false)).toBe(false);
    expect(closedElsewhere({ kind: "refused", status: 422, message: "x" }, false)).toBe(false);
  });
});

describe("how a gate leaves the queue after a submission", () => {
  it("decided here: named by its preview, with who decided and how", () => {
    const decided = gate({ status: "resolved", text: "Ship it?", decision: { decided_by: "alice", decided_at: "2026-01-01T00:01:00Z" } as Gate["decision"] });
    expect(closingOf({ kind: "resolved", gate: decided }, "gate_1", "approve")).toEqual({
      closed: { gateId: "gate_1", how: "resolved", by: "alice", at: "2026-01-01T00:01:00Z", action: "approve" },
      decidedHere: true,
      preview: "Ship it?",
    });
  });

  it("closed elsewhere: who closed it, else someone else or the system", () => {
    const expired: Conflict = { kind: "conflict", message: "m", gateStatus: "expired", resolvedBy: null, resolvedAt: "2026-01-01T00:30:00Z" };
    expect(closingOf(expired, "gate_1", "approve")).toEqual({
      closed: { gateId: "gate_1", how: "expired", by: "system", at: "2026-01-01T00:30:00Z" },
      decidedHere: false,
    });
    expect(closingOf({ kind: "voted", gate: gate() }, "gate_1", "approve")).toBeNull();
  });
});
