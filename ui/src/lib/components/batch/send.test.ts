import { describe, expect, it } from "vitest";
import { createApi } from "../../api/client";
import type { Gate, ProposedAction } from "../../api/types";
import { gate, jsonResponse } from "../../test-fixtures";
import type { Choice } from "./batch";
import { sendChoices } from "./send";

const action = (id: string, decided = false) =>
  ({ id, name: "write_file", args: { path: `/${id}` }, ...(decided ? { decision: { action: "approve", decided_by: "bob" } } : {}) }) as unknown as ProposedAction;

function server(answer: (request: Request) => Response) {
  return createApi("secret", { baseUrl: "http://gatehouse.test", fetch: async (request) => answer(request) });
}

const choices = new Map<string, Choice>([["a1", { action: "approve" }]]);
const twoActions = gate({ actions: [action("a1"), action("a2")] });

describe("sending a batch's choices", () => {
  it("refuses nothing chosen without a request", async () => {
    let asked = 0;
    const api = server(() => {
      asked += 1;
      return jsonResponse(500, {});
    });
    expect(await sendChoices(api, twoActions, new Map(), null, async () => undefined)).toEqual({
      kind: "problem",
      problem: "Choose a decision for at least one open action.",
    });
    expect(asked).toBe(0);
  });

  it("with actions still open, says how many", async () => {
    const after: Gate = { ...twoActions, actions: [action("a1", true), action("a2")] };
    const api = server(() => jsonResponse(200, after));
    expect(await sendChoices(api, twoActions, choices, null, async () => undefined)).toMatchObject({
      kind: "partly",
      notice: "Sent 1 decision; 1 action still open.",
    });
  });

  it("on a clash with the gate still open, shows it as it is now", async () => {
    const now = { gate: { ...twoActions, actions: [action("a1", true), action("a2")] } };
    const api = server((request) =>
      request.method === "GET" ? jsonResponse(200, now) : jsonResponse(409, { code: "conflict", message: "a1 was decided by bob" }),
    );
    const sent = await sendChoices(api, twoActions, choices, null, async () => now as never);
    expect(sent).toMatchObject({ kind: "moved", notice: "a1 was decided by bob" });
  });

  it("every action decided: the gate's outcome", async () => {
    const done: Gate = { ...twoActions, status: "resolved", decision: { action: "approve" } as Gate["decision"] };
    const api = server(() => jsonResponse(200, done));
    expect(await sendChoices(api, twoActions, choices, null, async () => undefined)).toMatchObject({ kind: "done", action: "approve" });
  });
});
