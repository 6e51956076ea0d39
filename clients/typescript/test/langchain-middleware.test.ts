// langchain's `humanInTheLoopMiddleware` (the real `langchain` package's
// `createAgent`) with Gatehouse deciding its batched tool calls, and the
// adapter asking again when an answer cannot resume the graph. The model is
// a scripted subclass of langchain's own BaseChatModel that proposes two tool
// calls in one step, then finishes, so no network is needed.

import assert from "node:assert/strict";
import { after, before, it } from "node:test";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Annotation, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";

import type { Gate, GatehouseError } from "@gatehouse/client";
import { AnswerInvalid, GatehouseHuman, type Mapper, mappingFor } from "@gatehouse/client/langgraph";
import { type Fixture, fixture, pendingGate } from "./server.js";

let f: Fixture;
before(async () => {
  f = await fixture("langchain-agent");
});
after(async () => {
  await f.server.stop();
});

/** A chat model answering from a script: each call takes the next reply. */
class ScriptedModel extends BaseChatModel {
  readonly #replies: AIMessage[];
  constructor(replies: AIMessage[]) {
    super({});
    this.#replies = replies;
  }
  _llmType(): string {
    return "scripted";
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.#replies.shift() ?? new AIMessage("All done.");
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
  override bindTools(): this {
    return this;
  }
}

type Ran = Array<[string, Record<string, unknown>]>;

function makeAgent(ran: Ran) {
  const sendEmail = tool(
    async (args: { to: string; body: string }) => {
      ran.push(["send_email", args]);
      return `sent to ${args.to}`;
    },
    { name: "send_email", description: "Send an email.", schema: z.object({ to: z.string(), body: z.string() }) },
  );
  const deleteFile = tool(
    async (args: { path: string }) => {
      ran.push(["delete_file", args]);
      return `deleted ${args.path}`;
    },
    { name: "delete_file", description: "Delete a file.", schema: z.object({ path: z.string() }) },
  );
  const model = new ScriptedModel([
    new AIMessage({
      content: "",
      tool_calls: [
        { name: "send_email", args: { to: "all@example.com", body: "outage" }, id: "call_1", type: "tool_call" },
        { name: "delete_file", args: { path: "/srv/report.pdf" }, id: "call_2", type: "tool_call" },
      ],
    }),
    new AIMessage("All done."),
  ]);
  return createAgent({
    model,
    tools: [sendEmail, deleteFile],
    middleware: [
      humanInTheLoopMiddleware({
        interruptOn: { send_email: true, delete_file: { allowedDecisions: ["approve", "reject"] } },
      }),
    ],
    checkpointer: new MemorySaver(),
  });
}

const input = { messages: [{ role: "user", content: "Email everyone, then delete the report." }] };

function toolResults(values: unknown): Record<string, string> {
  const messages = (values as { messages: BaseMessage[] }).messages;
  return Object.fromEntries(
    messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, String(m.content)]),
  );
}

it("batched tool calls are one gate; a rejection with a reason goes back to the model", async () => {
  const ran: Ran = [];
  const thread = { configurable: { thread_id: "lc-batched" } };
  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => (g.actions?.length ?? 0) === 2);
    await f.reviewer.resolveGate(gate.id, {
      action: "reject",
      actions: [
        { id: "action-1", action: "approve" },
        { id: "action-2", action: "reject", text: "keep the report" },
      ],
    });
    return gate;
  })();
  const values = await new GatehouseHuman(f.agent, { pollSeconds: 5 }).invoke(makeAgent(ran), input, thread);
  const gate = await reviewer;
  assert.equal(gate.spec.kind, "approval");
  assert.deepEqual(
    gate.actions?.map((a) => [a.id, a.name, a.args, a.allowed_actions]),
    [
      ["action-1", "send_email", { to: "all@example.com", body: "outage" }, ["approve", "edit", "reject"]],
      ["action-2", "delete_file", { path: "/srv/report.pdf" }, ["approve", "reject"]],
    ],
  );
  // langchain's own rule: when any call of a batch is rejected, none runs and the model is asked again.
  assert.deepEqual(ran, []);
  const results = toolResults(values);
  assert.equal(results.call_2, "keep the report");
  assert.equal(results.call_1, undefined);
});

it("an edited call runs with the reviewer's arguments", async () => {
  const ran: Ran = [];
  const thread = { configurable: { thread_id: "lc-edit" } };
  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => (g.actions?.length ?? 0) === 2 && g.status === "pending");
    await f.reviewer.resolveGate(gate.id, {
      action: "edit",
      actions: [
        { id: "action-1", action: "edit", args: { to: "oncall@example.com", body: "outage" } },
        { id: "action-2", action: "approve" },
      ],
    });
  })();
  await new GatehouseHuman(f.agent, { pollSeconds: 5 }).invoke(makeAgent(ran), input, thread);
  await reviewer;
  const sorted = [...ran].sort(([a], [b]) => a.localeCompare(b));
  assert.deepEqual(sorted, [
    ["delete_file", { path: "/srv/report.pdf" }],
    ["send_email", { to: "oncall@example.com", body: "outage" }],
  ]);
});

it("a whole-gate answer deciding no call is refused to the reviewer, naming `actions`, and the agent waits for a real one", async () => {
  const ran: Ran = [];
  const thread = { configurable: { thread_id: "lc-whole" } };
  const reviewer = (async () => {
    const gate = await pendingGate(f.reviewer, (g) => (g.actions?.length ?? 0) === 2 && g.status === "pending");
    const refused = await f.reviewer.resolveGate(gate.id, { action: "respond", text: "do what you think is best" }).then(
      () => undefined,
      (e: unknown) => e as GatehouseError,
    );
    await f.reviewer.resolveGate(gate.id, { action: "approve" });
    return refused;
  })();
  await new GatehouseHuman(f.agent, { pollSeconds: 5 }).invoke(makeAgent(ran), input, thread);
  const refused = await reviewer;
  assert.equal(refused?.status, 422);
  assert.equal(refused?.field, "actions");
  assert.deepEqual(ran.map(([name]) => name).sort(), ["delete_file", "send_email"]);
});

it("an answer the caller's own mapping cannot use is asked again, saying why, until one fits", async () => {
  const State = Annotation.Root({ port: Annotation<number>() });
  const graph = new StateGraph(State)
    .addNode("pick", () => ({ port: interrupt<{ type: string }, number>({ type: "pick_port" }) }))
    .addEdge(START, "pick")
    .addEdge("pick", END)
    .compile({ checkpointer: new MemorySaver() });
  const portMapper: Mapper = (interrupt) =>
    (interrupt.value as { type?: string } | undefined)?.type === "pick_port"
      ? {
          kind: "question",
          text: "Which port?",
          options: { requires_human: true },
          resume(gate) {
            const port = Number(gate.decision?.text);
            if (!Number.isInteger(port)) throw new AnswerInvalid(`\`${gate.decision?.text}\` is not a port number`);
            return port;
          },
        }
      : undefined;
  const reviewer = (async () => {
    const first = await pendingGate(f.reviewer, (g) => g.text === "Which port?");
    await f.reviewer.resolveGate(first.id, { action: "respond", text: "eighty" });
    const again = await pendingGate(f.reviewer, (g) => g.text.includes("could not be used") && g.status === "pending");
    await f.reviewer.resolveGate(again.id, { action: "respond", text: "8080" });
    return again;
  })();
  const human = new GatehouseHuman(f.agent, { pollSeconds: 5, mappers: [portMapper] });
  const values = (await human.invoke(graph, {}, { configurable: { thread_id: "lc-port" } })) as { port: number };
  const again = await reviewer;
  assert.equal(values.port, 8080);
  assert.match(again.text, /`eighty` is not a port number[\s\S]*Which port\?/);
  assert.equal(human.gates.length, 2);
});

it("a whole-gate decision on a batch resumes every call, and an unusable one is AnswerInvalid", () => {
  const mapping = mappingFor({
    id: "i1",
    value: {
      actionRequests: [
        { name: "a", args: { x: 1 } },
        { name: "b", args: {} },
      ],
      reviewConfigs: [],
    },
  });
  const closed = (decision: Partial<NonNullable<Gate["decision"]>>): Gate =>
    ({ id: "g", status: "resolved", decision: { decided_by: "rita", decided_at: "", latency_ms: 0, ...decision } }) as unknown as Gate;
  assert.deepEqual(mapping.resume(closed({ action: "reject", text: "no" })), {
    decisions: [
      { type: "reject", message: "no" },
      { type: "reject", message: "no" },
    ],
  });
  assert.deepEqual(mapping.resume(closed({ action: "approve" })), { decisions: [{ type: "approve" }, { type: "approve" }] });
  assert.throws(() => mapping.resume(closed({ action: "respond", text: "?" })), AnswerInvalid);
});
