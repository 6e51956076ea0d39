// An OpenAI Agents JS agent whose email tool needs approval: the run stops on
// the tool call, Gatehouse asks a reviewer, and the run resumes from its
// RunState with the decision. The model is scripted so the example runs
// offline; leave out `model` to use OpenAI's.
//
//   GATEHOUSE_TOKEN=<agent token> node examples/typescript/openai-agents-approval.mjs ceo@example.com

import { Agent, Usage, run, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";

import { Client } from "@gatehouse/client";
import { decideInterruptions } from "@gatehouse/client/openai-agents";

setTracingDisabled(true); // the scripted run has nothing to trace
const to = process.argv[2] ?? "ceo@example.com";
const gh = new Client(); // GATEHOUSE_URL and GATEHOUSE_TOKEN

const sendEmail = tool({
  name: "send_email",
  description: "Send an email",
  parameters: z.object({ to: z.string(), body: z.string() }),
  needsApproval: true,
  execute: async ({ to }) => `sent to ${to}`,
});

/** A Model that calls send_email once, then reports what the tool said. */
const model = {
  async getResponse(request) {
    const outputs = Array.isArray(request.input) ? request.input.filter((i) => i.type === "function_call_result") : [];
    if (outputs.length === 0) {
      const args = JSON.stringify({ to, body: "The release is out." });
      return { output: [{ type: "function_call", callId: "email-1", name: "send_email", arguments: args, status: "completed" }], usage: new Usage() };
    }
    const said = outputs[0].output?.text ?? JSON.stringify(outputs[0].output);
    return { output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `Email: ${said}` }] }], usage: new Usage() };
  },
  async *getStreamedResponse() {
    throw new Error("this example does not stream");
  },
};

const agent = new Agent({ name: "mailer", instructions: "Send the emails you are asked to.", model, tools: [sendEmail] });
const runId = await gh.startRun({ task: `email ${to}` }, { title: `email ${to}` });
let result = await run(agent, `Tell ${to} the release is out`);
while (result.interruptions.length > 0) {
  // The state could be saved here (result.state.toString()) and resumed in another process.
  await decideInterruptions(gh, runId, result);
  result = await run(agent, result.state);
}
console.log(result.finalOutput);
await gh.completeRun(runId, { answer: result.finalOutput });
