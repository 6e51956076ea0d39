import { describe, expect, it } from "vitest";
import { createApi } from "../../api/client";
import { gate, jsonResponse, summary } from "../../test-fixtures";
import type { DecisionAction } from "../../api/types";
import { decideEach, keepPending, markRange, planBulk, summarize, toggleMark } from "./bulk";

describe("bulk review", () => {
  const shown = ["a", "b", "c", "d", "e"].map((id) => summary({ id }));

  it("marks one at a time, a range from the anchor, and forgets gates that left the queue", () => {
    let marked = toggleMark(new Set(), "b");
    expect([...marked]).toEqual(["b"]);
    marked = markRange(marked, shown, "b", "d");
    expect([...marked].sort()).toEqual(["b", "c", "d"]);
    marked = markRange(marked, shown, "e", "e");
    expect(toggleMark(marked, "c").has("c")).toBe(false);
    expect([...keepPending(marked, shown.slice(2))].sort()).toEqual(["c", "d", "e"]);
  });

  it("decides each gate on its own and reports every outcome, successes never hidden by failures", async () => {
    const seen: string[] = [];
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async (request) => {
        const id = new URL(request.url).pathname.split("/")[4]!;
        // After a 409 the gate is read, to say how it closed.
        if (request.method === "GET") return jsonResponse(200, { gate: gate({ id, status: id === "e" ? "expired" : "resolved" }) });
        seen.push(`${id} ${JSON.stringify(await request.json())}`);
        if (id === "b") return jsonResponse(409, { code: "conflict", message: "gone", resolved_by: "bob", resolved_at: "2026-01-01T00:00:00Z" });
        if (id === "c") return jsonResponse(422, { code: "invalid", message: "action: question gates take respond or defer" });
        if (id === "e") return jsonResponse(409, { code: "conflict", message: "expired", resolved_at: "2026-01-01T00:00:00Z" });
        if (id === "q") return jsonResponse(200, gate({ id, quorum: { required: 2 }, votes: [{ reviewer: "alice", action: "approve", at: "2026-01-01T00:00:00Z" }] }));
        return jsonResponse(200, { id, status: "resolved" });
      },
    });
    const results = await decideEach(api, ["a", "b", "c", "d", "e", "q"], { action: "approve" }, 2);
    expect(results.map((r) => [r.gateId, r.outcome.kind])).toEqual([
      ["a", "resolved"],
      ["b", "conflict"],
      ["c", "refused"],
      ["d", "resolved"],
      ["e", "conflict"],
      ["q", "voted"],
    ]);
    expect(seen.sort()).toEqual(["a", "b", "c", "d", "e", "q"].map((id) => `${id} {"action":"approve"}`));
    expect(summarize("Approved", results, (id) => `gate ${id}`)).toBe(
      "Approved 2 gates. 1 vote counted on gates that wait for more. 2 already decided: gate b (by bob), gate e (expired). " +
        "1 refused: gate c: action: question gates take respond or defer.",
    );
  });
});

describe("a bulk decision split by what each gate allows", () => {
  const allowed: Record<string, DecisionAction[] | null> = {
    deploy: ["approve", "edit", "reject"],
    question: ["respond", "defer"],
    gone: [],
    unread: null,
  };
  const label = (id: string) => `“${id}”`;

  it("sends only to the gates that take it; the others say what they take instead", () => {
    const plan = planBulk(["deploy", "question", "gone", "unread"], "approve", (id) => allowed[id] ?? null, label);
    expect(plan.take).toEqual(["deploy"]);
    expect(plan.leftOut).toEqual([
      { gateId: "question", why: "“question” takes an answer or a deferral, not an approval: open it to decide." },
      { gateId: "gone", why: "“gone” takes no decision from you now: open it to see why." },
      { gateId: "unread", why: "“unread” could not be read: open it to decide." },
    ]);
    expect(planBulk(["deploy", "question"], "reject", (id) => allowed[id] ?? null, label).take).toEqual(["deploy"]);
  });

  it("the summary names those left out, without the server's words", () => {
    const plan = planBulk(["question"], "reject", (id) => allowed[id] ?? null, label);
    expect(summarize("Rejected", [], label, plan.leftOut)).toBe(
      "Rejected 0 gates. 1 left out: “question” takes an answer or a deferral, not a rejection: open it to decide.",
    );
  });
});
