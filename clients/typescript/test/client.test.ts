// The client against a real `gatehouse serve`: runs, gates of every kind,
// long-poll waits, typed errors, idempotent retries after lost answers and
// 5xx, and the event stream with the token in the Authorization header.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import {
  AuthError,
  Client,
  Conflict,
  InvalidRequest,
  NotFound,
  Rejected,
  Released,
  WaitTimeout,
  type Fetch,
  type GateKind,
} from "@gatehouse/client";
import { type Fixture, fixture, pendingGate } from "./server.js";

let f: Fixture;
before(async () => {
  f = await fixture();
});
after(() => f.server.stop());

describe("runs", () => {
  it("a run created without starting is begun, and a failed one retried by a reviewer", async () => {
    const run = await f.agent.startRun({ task: "rotate" }, { start: false, expires_in_secs: 3600 });
    assert.equal((await f.agent.runStatus(run)).status, "created");
    assert.equal((await f.agent.beginRun(run)).status, "active");
    await assert.rejects(f.agent.beginRun(run), Conflict);
    await f.agent.failRun(run, "the vault was locked");
    await assert.rejects(f.agent.retryRun(run), AuthError);
    const retried = await f.reviewer.retryRun(run);
    assert.equal(retried.status, "active");
    assert.equal(retried.retries, 1);
  });
});

describe("gates", () => {
  it("an approval waits for the reviewer and carries their edited payload back", async () => {
    const run = await f.agent.startRun({ task: "deploy" }, { title: "deploy 42" });
    const gate = await f.agent.openGate(run, "approval", "deploy build 42", { spec: { action: "deploy" }, payload: { build: 42, env: "prod" } });
    assert.equal(gate.status, "pending");
    const waiting = f.agent.waitForDecision(gate.id, { pollSeconds: 5 });
    await f.reviewer.resolveGate(gate.id, { action: "edit", payload: { build: 42, env: "staging" } });
    const decision = await waiting;
    assert.equal(decision.action, "edit");
    assert.deepEqual(decision.payload, { build: 42, env: "staging" });
    assert.equal(decision.decided_by, "rita");
  });

  it("open and wait in one request: a decision during the hold comes back with the gate", async () => {
    const run = await f.agent.startRun({ task: "hold" }, { title: "open and wait" });
    const reviewer = (async () => {
      const gate = await pendingGate(f.reviewer, (g) => g.run_id === run);
      await f.reviewer.resolveGate(gate.id, { action: "approve", text: "go" });
    })();
    const gate = await f.agent.openAndWait(run, "approval", "deploy build 43", { spec: { action: "deploy" } }, { pollSeconds: 30 });
    await reviewer;
    assert.equal(gate.status, "resolved");
    assert.equal(gate.decision?.text, "go");
  });

  it("a hold that passes first answers the pending gate; a hold past 60 s is refused naming wait", async () => {
    const run = await f.agent.startRun({ task: "hold" });
    const gate = await f.agent.openGate(run, "question", "Anyone?", { waitSeconds: 0.2 });
    assert.equal(gate.status, "pending");
    await assert.rejects(f.agent.openGate(run, "question", "Anyone?", { waitSeconds: 61 }), (e: unknown) => e instanceof InvalidRequest && e.field === "wait");
    await assert.rejects(f.agent.openAndWait(run, "question", "Still anyone?", {}, { timeoutMs: 200 }), WaitTimeout);
  });

  it("every kind of gate opens with its own spec", async () => {
    const run = await f.agent.startRun({ task: "kinds" });
    const kinds: [GateKind, Record<string, unknown>][] = [
      ["approval", { action: "deploy" }],
      ["payload_review", { required_fields: ["prompt"] }],
      ["question", {}],
      ["information_review", { confidence: 0.4, reasons: ["thin sources"] }],
      ["response_review", { raw: "raw text", audited: "clean text" }],
      ["quality_score", { rubric: ["clarity"], required_score: 3 }],
      ["goal_review", { goal: { summary: "ship it" }, round: 1 }],
      ["plan_review", { round: 1 }],
    ];
    for (const [kind, spec] of kinds) {
      const gate = await f.agent.openGate(run, kind, `a ${kind} gate`, { spec: spec as never, payload: { n: 1 } });
      assert.equal(gate.spec.kind, kind);
      assert.equal(gate.status, "pending", kind);
    }
    const { gates } = await f.reviewer.listGates({ run_id: run, status: "pending" });
    assert.deepEqual(new Set(gates.map((g) => g.kind)), new Set(kinds.map(([k]) => k)));
  });

  it("a question's answer arrives as the respond decision's text", async () => {
    const run = await f.agent.startRun({ task: "question" });
    const gate = await f.agent.openGate(run, "question", "which region?");
    await f.reviewer.resolveGate(gate.id, { action: "respond", text: "eu-west-1" });
    const decision = await f.agent.waitForDecision(gate.id);
    assert.equal(decision.action, "respond");
    assert.equal(decision.text, "eu-west-1");
  });

  it("approve asks through request_approval and waits for the decision", async () => {
    const run = await f.agent.startRun();
    const reviewer = (async () => {
      const gate = await pendingGate(f.reviewer, (g) => g.run_id === run);
      assert.equal(gate.spec.kind, "approval");
      await f.reviewer.resolveGate(gate.id, { action: "approve", text: "go" });
    })();
    const decision = await f.agent.approve(run, "say hello");
    await reviewer;
    assert.equal(decision.action, "approve");
    assert.equal(decision.text, "go");
  });

  it("a rejection throws Rejected with the reviewer's reason", async () => {
    const run = await f.agent.startRun({ task: "reject" });
    const gate = await f.agent.requestApproval(run, "drop the table", { table: "users" });
    await f.reviewer.resolveGate(gate.id, { action: "reject", text: "not on a Friday" });
    await assert.rejects(f.agent.waitForDecision(gate.id), (e: unknown) => e instanceof Rejected && e.reason === "not on a Friday");
  });

  it("a gate a reviewer released throws Released, never an approval, and its decision can still be awaited", async () => {
    const run = await f.agent.startRun({ task: "release" });
    const gate = await f.agent.openGate(run, "approval", "deploy?", { spec: { action: "deploy" }, payload: { v: 1 } });
    const resumed = await f.reviewer.resumeRun(run);
    assert.equal(resumed.status, "active");
    await assert.rejects(
      f.agent.waitForDecision(gate.id),
      (e: unknown) => e instanceof Released && e.gate.status === "pending" && e.gate.decision == null,
    );
    await f.reviewer.resolveGate(gate.id, { action: "approve" });
    const decided = await f.agent.waitClosed(gate.id, { throughRelease: true });
    assert.equal(decided.decision?.action, "approve");
    assert.equal(decided.released?.from_mode, "sync");
  });

  it("reaching a declared node opens its gate with the declared score", async () => {
    const declared_gates = [{ workflow_node_id: "review", kind: "quality_score" as const, required_score: 4, rubric: ["accuracy"] }];
    const run = await f.agent.startRun({ task: "declared" }, { declared_gates });
    const gate = await f.agent.reachNode(run, "review", { payload: { draft: "text" } });
    assert.equal(gate.workflow_node_id, "review");
    assert.deepEqual(gate.spec, { kind: "quality_score", deliverable_id: "review", required_score: 4, rubric: ["accuracy"] });
  });

  it("the proposed actions of one gate are decided each on its own", async () => {
    const run = await f.agent.startRun({ task: "actions" });
    const gate = await f.agent.openGate(run, "approval", "two tool calls", {
      spec: { action: "tools" },
      actions: [
        { id: "call-1", name: "read_file", args: { path: "a" } },
        { id: "call-2", name: "delete_file", args: { path: "b" } },
      ],
    });
    await f.reviewer.decideActions(gate.id, [
      { id: "call-1", action: "approve" },
      { id: "call-2", action: "reject", text: "keep b" },
    ]);
    const closed = await f.agent.waitClosed(gate.id);
    const byId = Object.fromEntries((closed.decision?.actions ?? []).map((a) => [a.id, a.action]));
    assert.deepEqual(byId, { "call-1": "approve", "call-2": "reject" });
  });

  it("a wait of the caller's own runs out with WaitTimeout and leaves the gate open", async () => {
    const run = await f.agent.startRun({ task: "timeout" });
    const gate = await f.agent.requestFeedback(run, "draft.md", ["is it clear?"]);
    await assert.rejects(f.agent.waitForDecision(gate.id, { timeoutMs: 1_000, pollSeconds: 1 }), WaitTimeout);
    assert.equal((await f.agent.gate(gate.id)).status, "pending");
  });
});

describe("typed errors", () => {
  it("an unknown gate is NotFound with the not_found code", async () => {
    await assert.rejects(f.agent.gate("no-such-gate"), (e: unknown) => e instanceof NotFound && e.status === 404 && e.code === "not_found");
  });

  it("a bad field is InvalidRequest naming the field", async () => {
    const run = await f.agent.startRun({ task: "invalid" });
    await assert.rejects(
      f.agent.openGate(run, "approval", "x", { confidence: 7 }),
      (e: unknown) => e instanceof InvalidRequest && e.code === "invalid" && e.field === "confidence" && e.message.length > 0,
    );
  });

  it("a second decision is a Conflict naming who decided first", async () => {
    const run = await f.agent.startRun({ task: "conflict" });
    const gate = await f.agent.openGate(run, "approval", "once");
    await f.reviewer.resolveGate(gate.id, { action: "approve" });
    await assert.rejects(
      f.reviewer.resolveGate(gate.id, { action: "reject" }),
      (e: unknown) => e instanceof Conflict && e.code === "conflict" && e.resolvedBy === "rita",
    );
  });

  it("an unknown token is an AuthError", async () => {
    const stranger = new Client({ url: f.server.url, token: "not-a-token" });
    await assert.rejects(stranger.whoami(), (e: unknown) => e instanceof AuthError && e.status === 401 && e.code === "unauthorized");
  });
});

describe("retries", () => {
  /** A fetch that lets the server act on a gate open, then loses the first answer to each key the way `failure` says. */
  function losingFirstAnswer(failure: "network" | 502): { fetch: Fetch; keys: string[] } {
    const keys: string[] = [];
    const lost = new Set<string>();
    const fetch: Fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (init.method !== "POST" || !input.includes("/gates") && !input.includes("/tools/")) return response;
      const key = new Headers(init.headers).get("idempotency-key") ?? "";
      keys.push(key);
      if (lost.has(key)) return response;
      lost.add(key);
      if (failure === "network") throw new TypeError("fetch failed", { cause: new Error("socket hang up") });
      return new Response("bad gateway", { status: 502 });
    };
    return { fetch, keys };
  }

  for (const failure of ["network", 502] as const) {
    it(`a gate open whose answer was lost (${failure}) is retried with the same key and opens one gate`, async () => {
      const { fetch, keys } = losingFirstAnswer(failure);
      const agent = new Client({ url: f.server.url, token: f.agentToken, fetch, retry: { backoffMs: 10 } });
      const run = await agent.startRun({ task: `retry ${failure}` });
      const gate = await agent.openGate(run, "approval", "retried");
      const tool = await agent.requestApproval(run, "retried tool");
      assert.equal(keys.length, 4);
      assert.equal(keys[0], keys[1]);
      assert.notEqual(keys[1], keys[2]);
      assert.equal(keys[2], keys[3]);
      const { gates } = await f.reviewer.listGates({ run_id: run, status: "pending" });
      assert.deepEqual(gates.map((g) => g.id).sort(), [gate.id, tool.id].sort());
    });
  }

  it("a write that is not idempotent is not repeated after a lost answer", async () => {
    let posts = 0;
    const fetch: Fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (init.method === "POST" && input.endsWith("/api/hitl/run")) {
        posts += 1;
        throw new TypeError("fetch failed", { cause: new Error("socket hang up") });
      }
      return response;
    };
    const agent = new Client({ url: f.server.url, token: f.agentToken, fetch, retry: { backoffMs: 10 } });
    await assert.rejects(agent.startRun({ task: "once" }), /socket hang up/);
    assert.equal(posts, 1);
  });
});

describe("events", () => {
  it("a dropped stream reconnects with Last-Event-ID: nothing missed, nothing repeated", async () => {
    const run = await f.agent.startRun({ task: "reconnect" });
    for (const text of ["one?", "two?", "three?"]) await f.agent.openGate(run, "question", text);
    const resumedAfter: (string | null)[] = [];
    // The first connection breaks after its first message; later ones pass through.
    const fetch: Fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (!input.includes("/events")) return response;
      resumedAfter.push(new Headers(init.headers).get("last-event-id"));
      if (resumedAfter.length > 1 || !response.body) return response;
      const reader = response.body.getReader();
      let seen = "";
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          seen += new TextDecoder().decode(value);
          const end = seen.indexOf("\n\n");
          if (end < 0) return controller.enqueue(value);
          controller.enqueue(new TextEncoder().encode(seen.slice(0, end + 2)));
          await reader.cancel();
          controller.close();
        },
      });
      return new Response(cut, { status: response.status, headers: response.headers });
    };
    const agent = new Client({ url: f.server.url, token: f.agentToken, fetch, retry: { backoffMs: 10 } });
    const stop = new AbortController();
    const ids: number[] = [];
    const opened: string[] = [];
    for await (const event of agent.events({ runId: run, signal: stop.signal })) {
      ids.push(event.id);
      if (event.type === "gate_opened") opened.push(event.id.toString());
      if (opened.length === 3) stop.abort();
    }
    assert.equal(resumedAfter[0], null);
    assert.equal(resumedAfter[1], String(ids[0]), "the second connection resumes after the first event");
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), "no event twice, in order");
    assert.equal(opened.length, 3);
  });

  it("the stream carries a gate's opening and decision, the token in the header and never the URL", async () => {
    const urls: string[] = [];
    const auth: (string | null)[] = [];
    const fetch: Fetch = (input, init) => {
      urls.push(input);
      auth.push(new Headers(init.headers).get("authorization"));
      return globalThis.fetch(input, init);
    };
    const agent = new Client({ url: f.server.url, token: f.agentToken, fetch });
    const run = await agent.startRun({ task: "events" });
    const gate = await agent.openGate(run, "question", "watched?");
    await f.reviewer.resolveGate(gate.id, { action: "respond", text: "yes" });

    const stop = new AbortController();
    const seen: string[] = [];
    let lastId = 0;
    for await (const event of agent.events({ runId: run, signal: stop.signal })) {
      assert.ok(event.id > lastId, "ids increase");
      lastId = event.id;
      seen.push(event.type);
      if (event.type === "gate_resolved") stop.abort();
    }
    assert.ok(seen.includes("gate_opened") && seen.indexOf("gate_opened") < seen.indexOf("gate_resolved"), seen.join(","));
    const streamUrl = urls.find((u) => u.includes("/events"));
    assert.ok(streamUrl && !streamUrl.includes(f.agentToken));
    assert.ok(auth.every((a) => a === `Bearer ${f.agentToken}`));
  });
});
