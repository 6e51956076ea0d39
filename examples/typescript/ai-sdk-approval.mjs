// A Vercel AI SDK agent whose deploy tool needs a human's approval, asked in
// Gatehouse: the reviewer approves, edits the arguments or rejects, and the
// agent carries on with that. The model is scripted so the example runs
// offline; put your provider's model (`openai("...")`, ...) in its place.
//
//   GATEHOUSE_TOKEN=<agent token> node examples/typescript/ai-sdk-approval.mjs "web 1.4.2"

import { generateText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { Client } from "@gatehouse/client";
import { decideToolApprovals } from "@gatehouse/client/ai-sdk";

const [service, version] = (process.argv[2] ?? "web 1.4.2").split(" ");
const gh = new Client(); // GATEHOUSE_URL (default http://127.0.0.1:7777) and GATEHOUSE_TOKEN

const tools = {
  deploy: tool({
    description: "Deploy a service's version to an environment",
    inputSchema: z.object({ service: z.string(), version: z.string(), env: z.string() }),
    needsApproval: true,
    execute: async ({ service, version, env }) => `deployed ${service} ${version} to ${env}`,
  }),
};

const usage = { inputTokens: { total: 0, noCache: 0 }, outputTokens: { total: 0, text: 0 } };
const model = new MockLanguageModelV3({
  // First a tool call; then a summary of what the tool answered (or of the denial).
  doGenerate: async ({ prompt }) => {
    const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).filter((p) => p.type === "tool-result");
    if (results.length === 0) {
      const input = JSON.stringify({ service, version, env: "production" });
      return { content: [{ type: "tool-call", toolCallId: "deploy-1", toolName: "deploy", input }], finishReason: { unified: "tool-calls" }, usage, warnings: [] };
    }
    const output = results[0].output;
    const text = output.type === "execution-denied" ? `Not deployed: ${output.reason ?? "denied"}` : `Done: ${output.value}`;
    return { content: [{ type: "text", text }], finishReason: { unified: "stop" }, usage, warnings: [] };
  },
});

const run = await gh.startRun({ task: `ship ${service} ${version}` }, { title: `ship ${service} ${version}` });
let messages = [{ role: "user", content: `Ship ${service} ${version} to production` }];
for (;;) {
  const step = await generateText({ model, tools, messages });
  const decided = await decideToolApprovals(gh, run, step);
  messages = [...messages, ...decided.messages];
  if (!decided.review) {
    console.log(step.text);
    await gh.completeRun(run, { answer: step.text });
    break;
  }
  console.log(`reviewed in gate ${decided.review.gate.id}`);
}
