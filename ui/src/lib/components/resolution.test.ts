import { describe, expect, it } from "vitest";
import { createApi } from "../api/client";
import { gate, jsonResponse } from "../test-fixtures";
import { EMPTY_DRAFT } from "./decision";
import { afterOutcome, canDecide, conflictSentence, Drafts, submitDecision, type Submission } from "./resolution";

function serverAnswering(status: number, body: unknown) {
  const requests: Request[] = [];
  const api = createApi("secret", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      requests.push(request);
      return jsonResponse(status, body);
    },
  });
  return { api, requests };
}

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
    const { api } = serverAnswering(409, {
      code: "conflict",
      message: "gate gate_1 is already resolved by alice",
      resolved_by: "alice",
      resolved_at: "2026-01-01T00:05:00Z",
    });
    const outcome = await submitDecision(api, "gate_1", { action: "respond", text: "MySQL" });
    expect(outcome).toEqual({
      kind: "conflict",
      message: "gate gate_1 is already resolved by alice",
      resolvedBy: "alice",
      resolvedAt: "2026-01-01T00:05:00Z",
    });
    expect(conflictSentence("alice", "2026-01-01T00:05:00Z", (iso) => iso)).toBe(
      "alice resolved this gate at 2026-01-01T00:05:00Z.",
    );
    expect(conflictSentence(null, null, (iso) => iso)).toBe("Someone else resolved this gate first.");
  });

  it("keeps the reviewer's unsent text after a conflict, and stops further decisions", async () => {
    const { api } = serverAnswering(409, { code: "conflict", message: "taken", resolved_by: "alice" });
    const before: Submission = { draft: { ...EMPTY_DRAFT, text: "Use the staging database" }, busy: true, outcome: null };
    const after = afterOutcome(before, await submitDecision(api, "gate_1", { action: "respond", text: "x" }));
    expect(after.draft.text).toBe("Use the staging database");
    expect(after.outcome?.kind).toBe("conflict");
    expect(canDecide(after)).toBe(false);
  });

  it("keeps the text and allows a retry when the server refuses for another reason", async () => {
    const { api } = serverAnswering(422, { code: "invalid", message: "text: a response needs its text" });
    const before: Submission = { draft: { ...EMPTY_DRAFT, text: " " }, busy: true, outcome: null };
    const after = afterOutcome(before, await submitDecision(api, "gate_1", { action: "respond", text: " " }));
    expect(after.outcome).toEqual({ kind: "refused", status: 422, message: "text: a response needs its text", field: "text" });
    expect(after.draft.text).toBe(" ");
    expect(canDecide(after)).toBe(true);
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
