// OpenAI Agents JS (the real @openai/agents, with a scripted Model and no
// network): a `needsApproval` tool stops the run, a reviewer decides in
// Gatehouse, and the run resumes; across a serialized RunState too, read
// back in what stands for a new process, without a second gate.

import assert from "node:assert/strict";
import { after, before, it } from "node:test";

import { Agent, type Model, type ModelRequest, type ModelResponse, RunState, Usage, run, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";

import { decideInterruptions } from "@gatehouse/client/openai-agents";
import { type Fixture, fixture, pendingGate } from "./server.js";

setTracingDisabled(true);

let f: Fixture;
before(async () => {
  f = await fixture("openai-agent");
});
after(() => f.server.stop());

/** A Model answering with scripted outputs, in order, and keeping what it was asked. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly outputs: ModelResponse["output"][]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.outputs[this.requests.length - 1];
    if (!output) throw new Error(`the script has no answer for request ${this.requests.length}`);
    return { output, usage: new Usage() };
  }

  // These tests never stream.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed");
  }
}

function emailAgent(sent: unknown[]) {
  const model = new ScriptedModel([
    [{ type: "function_call", callId: "call-email", name: "send_email", arguments: JSON.stringify({ to: "ceo@example.com", body: "hi" }), status: "completed" }],
    [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }],
  ]);
  const sendEmail = tool({
    name: "send_email",
    description: "Send an email",
    parameters: z.object({ to: z.string(), body: z.string() }),
    needsApproval: true,
    execute: async (input) => {
      sent.push(input);
      return `sent to ${input.to}`;
    },
  });
  return { agent: new Agent({ name: "mailer", instructions: "Send what you are asked to.", model, tools: [sendEmail] }), model };
}

it("an approved call runs once the reviewer decides, after the RunState went through a string", async () => {
  const sent: unknown[] = [];
  const { agent } = emailAgent(sent);
  const runId = await f.agent.startRun({ task: "email" }, { title: "openai agents" });
  const first = await run(agent, "email the CEO");
  assert.equal(first.interruptions.length, 1);
  assert.equal(sent.length, 0, "nothing runs before a decision");

  // The first process opens the gate, saves its state and dies before the decision.
  const saved = first.state.toString();
  const asking = new AbortController();
  const firstAsk = decideInterruptions(f.agent, runId, first, { signal: asking.signal, pollSeconds: 1 });
  const gate = await pendingGate(f.reviewer, (g) => g.run_id === runId);
  asking.abort();
  await assert.rejects(firstAsk);
  assert.deepEqual(gate.actions?.map((a) => [a.id, a.name, a.args]), [["call-email", "send_email", { to: "ceo@example.com", body: "hi" }]]);
  await f.reviewer.resolveGate(gate.id, { action: "approve" });

  // A new process: a fresh agent, the state read back from the string.
  const again = emailAgent(sent);
  const state = await RunState.fromString(again.agent, saved);
  const review = await decideInterruptions(f.agent, runId, state);
  assert.equal(review?.gate.id, gate.id, "the same gate, found again by its key");
  const resumed = await run(again.agent, state);
  assert.equal(resumed.finalOutput, "done");
  assert.deepEqual(sent, [{ to: "ceo@example.com", body: "hi" }]);
  assert.equal((await f.reviewer.listGates({ run_id: runId, status: "all" })).total, 1);
});

it("a rejected call does not run and the model is told the reviewer's reason", async () => {
  const sent: unknown[] = [];
  const { agent, model } = emailAgent(sent);
  const runId = await f.agent.startRun({ task: "email, rejected" });
  const first = await run(agent, "email the CEO");
  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => g.run_id === runId);
    await f.reviewer.resolveGate(gate.id, { action: "reject", text: "not without legal" });
  })();
  await decideInterruptions(f.agent, runId, first, { pollSeconds: 5 });
  await reviewer;
  const resumed = await run(agent, first.state);
  assert.equal(resumed.finalOutput, "done");
  assert.deepEqual(sent, []);
  assert.match(JSON.stringify(model.requests[1]?.input), /not without legal/);
});
