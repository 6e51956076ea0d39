// The Vercel AI SDK (the real `ai` package, its MockLanguageModelV3 as the
// model): tools marked `needsApproval` stop generateText, a reviewer decides
// in Gatehouse, and the next call runs what was approved, with the
// reviewer's edit, and tells the model what was denied and why.

import assert from "node:assert/strict";
import { after, before, it } from "node:test";

import { type ModelMessage, generateText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { decideToolApprovals } from "@gatehouse/client/ai-sdk";
import { type Fixture, fixture, pendingGate } from "./server.js";

let f: Fixture;
before(async () => {
  f = await fixture("ai-sdk-agent");
});
after(() => f.server.stop());

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

it("needsApproval tool calls are decided in Gatehouse: the edit runs, the rejection reaches the model", async () => {
  const ran: { tool: string; input: unknown }[] = [];
  const tools = {
    deploy: tool({
      description: "Deploy a build",
      inputSchema: z.object({ build: z.number(), env: z.string() }),
      needsApproval: true,
      execute: async (input) => {
        ran.push({ tool: "deploy", input });
        return `deployed ${input.build} to ${input.env}`;
      },
    }),
    drop_table: tool({
      description: "Drop a table",
      inputSchema: z.object({ table: z.string() }),
      needsApproval: true,
      execute: async (input) => {
        ran.push({ tool: "drop_table", input });
        return "dropped";
      },
    }),
  };
  const model = new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: "tool-call", toolCallId: "call-deploy", toolName: "deploy", input: JSON.stringify({ build: 42, env: "prod" }) },
          { type: "tool-call", toolCallId: "call-drop", toolName: "drop_table", input: JSON.stringify({ table: "users" }) },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
    ],
  });

  const run = await f.agent.startRun({ task: "ship" }, { title: "ai sdk" });
  let messages: ModelMessage[] = [{ role: "user", content: "ship build 42" }];
  const first = await generateText({ model, tools, messages });
  assert.equal(first.content.filter((p) => p.type === "tool-approval-request").length, 2);
  assert.equal(ran.length, 0, "nothing runs before a decision");

  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => g.run_id === run);
    assert.deepEqual(gate.actions?.map((a) => [a.id, a.name, a.args]), [
      ["call-deploy", "deploy", { build: 42, env: "prod" }],
      ["call-drop", "drop_table", { table: "users" }],
    ]);
    await f.reviewer.decideActions(gate.id, [
      { id: "call-deploy", action: "edit", args: { build: 42, env: "staging" } },
      { id: "call-drop", action: "reject", text: "never drop users" },
    ]);
  })();
  const decided = await decideToolApprovals(f.agent, run, first, { pollSeconds: 5 });
  await reviewer;
  messages = [...messages, ...decided.messages];

  const second = await generateText({ model, tools, messages });
  assert.equal(second.text, "done");
  assert.deepEqual(ran, [{ tool: "deploy", input: { build: 42, env: "staging" } }]);

  const prompt = JSON.stringify(model.doGenerateCalls[1]?.prompt);
  assert.match(prompt, /deployed 42 to staging/);
  assert.match(prompt, /never drop users/);
});

it("a step without approval requests opens no gate", async () => {
  const run = await f.agent.startRun({ task: "quiet" });
  const decided = await decideToolApprovals(f.agent, run, { content: [{ type: "text" }], response: { messages: [] } });
  assert.equal(decided.review, undefined);
  assert.equal((await f.reviewer.listGates({ run_id: run, status: "all" })).total, 0);
});
