// LangGraph.js (the real @langchain/langgraph) with Gatehouse answering its
// interrupts: Agent Inbox HumanInterrupts with exactly their allowed
// responses, two interrupts pending at once resumed each by its id, and a
// restart from the checkpointer's file alone that finds its gate again
// instead of asking twice.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";

import { Annotation, type BaseCheckpointSaver, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import type { HumanInterrupt, HumanResponse } from "@langchain/langgraph/prebuilt";

import { Cancelled, Client } from "@gatehouse/client";
import { GatehouseHuman } from "@gatehouse/client/langgraph";
import { FileSaver } from "./file-saver.js";
import { type Fixture, fixture, pendingGate, sessionRun } from "./server.js";

let f: Fixture;
let dir: string;
before(async () => {
  f = await fixture("langgraph-agent");
  dir = await mkdtemp(join(tmpdir(), "gatehouse-langgraph-"));
});
after(async () => {
  await f.server.stop();
  await rm(dir, { recursive: true, force: true });
});

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function deployGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode("deploy", () => {
      const request: HumanInterrupt = {
        action_request: { action: "deploy", args: { build: 42, env: "prod" } },
        config: { allow_accept: true, allow_edit: true, allow_respond: false, allow_ignore: true },
        description: "Deploy build 42?",
      };
      const [response] = interrupt<HumanInterrupt[], HumanResponse[]>([request]);
      if (response?.type === "edit" && typeof response.args === "object" && response.args !== null) {
        return { log: [`deploy ${JSON.stringify(response.args.args)}`] };
      }
      return { log: [response?.type === "accept" ? "deploy as proposed" : `no deploy (${response?.type})`] };
    })
    .addEdge(START, "deploy")
    .addEdge("deploy", END)
    .compile({ checkpointer: saver, name: "deploy" });
}

it("a HumanInterrupt is an approval gate with exactly its allowed responses; an edit resumes with the new args", async () => {
  const human = new GatehouseHuman(f.agent, { pollSeconds: 5 });
  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => g.text === "Deploy build 42?");
    assert.deepEqual([...gate.allowed_actions].sort(), ["approve", "edit", "reject"]);
    assert.deepEqual(gate.payload, { build: 42, env: "prod" });
    await f.reviewer.resolveGate(gate.id, { action: "edit", payload: { build: 42, env: "staging" } });
  })();
  const values = (await human.invoke(deployGraph(new MemorySaver()), {}, { configurable: { thread_id: "inbox-1" } })) as { log: string[] };
  await reviewer;
  assert.deepEqual(values.log, ['deploy {"build":42,"env":"staging"}']);
  const run = human.gates[0]?.run_id as string;
  assert.equal((await f.agent.runStatus(run)).status, "completed");
});

/** A graph asking two questions at once, from its `region` and `budget` nodes, each logging its answer. */
function twoQuestions(region: string, budget: string) {
  return new StateGraph(State)
    .addNode("region", () => ({ log: [`region=${interrupt<string, string>(region)}`] }))
    .addNode("budget", () => ({ log: [`budget=${interrupt<string, string>(budget)}`] }))
    .addEdge(START, "region")
    .addEdge(START, "budget")
    .addEdge("region", END)
    .addEdge("budget", END)
    .compile({ checkpointer: new MemorySaver() });
}

it("two interrupts pending at once are each resumed by their own id", async () => {
  const graph = twoQuestions("Which region?", "What budget?");
  const human = new GatehouseHuman(f.agent, { pollSeconds: 5 });
  const reviewer = (async () => {
    // Answer the second question first: the answers must still reach the right nodes.
    const budget = await pendingGate(f.reviewer, (g) => g.text === "What budget?");
    const region = await pendingGate(f.reviewer, (g) => g.text === "Which region?");
    assert.equal(budget.run_id, region.run_id, "one run for the thread");
    await f.reviewer.resolveGate(budget.id, { action: "respond", text: "500 EUR" });
    await f.reviewer.resolveGate(region.id, { action: "respond", text: "eu-west-1" });
  })();
  const values = (await human.invoke(graph, {}, { configurable: { thread_id: "two-at-once" } })) as { log: string[] };
  await reviewer;
  assert.deepEqual([...values.log].sort(), ["budget=500 EUR", "region=eu-west-1"]);
  assert.equal(human.gates.length, 2);
});

it("a run cancelled after its first question opened, before the second, ends the call with Cancelled, not the refused open", async () => {
  const graph = twoQuestions("Region, or cancel?", "Budget, or cancel?");
  const reviewerToken = await f.server.token("reviewer", "quick-to-cancel");
  // An agent whose second question leaves only once the reviewer has seen the first and cancelled
  // the run, and whose first question hears of the cancel only after the second was refused (a slow
  // network): the order in which the refusal would otherwise reach the caller first.
  const agent = new Client({ url: f.server.url, token: f.agentToken });
  const open = agent.openAndWait.bind(agent);
  let cancelled: Promise<void> | undefined;
  let second: Promise<unknown> | undefined;
  const refused: string[] = [];
  agent.openAndWait = (async (...args: Parameters<Client["openAndWait"]>) => {
    const [runId] = args;
    if (cancelled === undefined) {
      cancelled = (async () => {
        await pendingGate(f.reviewer, (g) => g.run_id === runId);
        const answer = await fetch(`${f.server.url}/api/hitl/run/${runId}?reason=wrong+thread`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${reviewerToken}` },
        });
        assert.equal(answer.status, 200, await answer.text());
      })();
      const first = await open(...args);
      await cancelled;
      await second?.catch(() => undefined);
      return first;
    }
    await cancelled;
    second = open(...args).catch((e: unknown) => {
      refused.push(String(e));
      throw e;
    });
    return second;
  }) as Client["openAndWait"];
  const human = new GatehouseHuman(agent, { pollSeconds: 5 });
  await assert.rejects(human.invoke(graph, {}, { configurable: { thread_id: "cancelled-between" } }), (e: unknown) => {
    assert.ok(e instanceof Cancelled, `expected Cancelled, got ${String(e)}`);
    assert.equal(e.gate.status, "cancelled");
    return true;
  });
  assert.equal(refused.length, 1, "the second question was refused: the run had ended");
  assert.match(refused[0] as string, /accepts no more gates/);
});

it("a process that restarts from the checkpointer's file finds its gate again instead of asking twice", async () => {
  const file = join(dir, "checkpoints.json");
  const thread = { configurable: { thread_id: "restart-1" } };

  // The first process: asks, then dies while waiting (everything in memory is dropped).
  const dying = new AbortController();
  const first = new GatehouseHuman(new Client({ url: f.server.url, token: f.agentToken }), { pollSeconds: 1, signal: dying.signal });
  const firstRun = first.invoke(deployGraph(new FileSaver(file)), {}, thread);
  // The first process's gate: its answer (and so `first.gates`) is held until a decision, so find it by the thread's run.
  const run = await sessionRun(f.reviewer, "langgraph:restart-1");
  const gate = await pendingGate(f.reviewer, (g) => g.text === "Deploy build 42?" && g.run_id === run);
  dying.abort();
  await assert.rejects(firstRun);

  // The reviewer decides while no process is running.
  await f.reviewer.resolveGate(gate.id, { action: "approve" });

  // The second process: a new saver read from the file, a new graph, a new client.
  const second = new GatehouseHuman(new Client({ url: f.server.url, token: f.agentToken }), { pollSeconds: 1 });
  const values = (await second.invoke(deployGraph(new FileSaver(file)), {}, thread)) as { log: string[] };
  assert.deepEqual(values.log, ["deploy as proposed"]);
  assert.deepEqual(second.gates.map((g) => g.id), [gate.id]);
  const { gates } = await f.reviewer.listGates({ run_id: gate.run_id, status: "all" });
  assert.equal(gates.length, 1, "no second gate");
});
