// A LangGraph.js graph that asks before it deploys, with an Agent Inbox
// HumanInterrupt, answered in Gatehouse: the reviewer may accept, edit the
// arguments or ignore (a rejection), exactly as the interrupt allows.
//
//   GATEHOUSE_TOKEN=<agent token> node examples/typescript/langgraph-inbox.mjs "web 1.4.2"

import { Annotation, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";

import { Client } from "@gatehouse/client";
import { GatehouseHuman } from "@gatehouse/client/langgraph";

const [service, version] = (process.argv[2] ?? "web 1.4.2").split(" ");

const State = Annotation.Root({ outcome: Annotation({ reducer: (_, b) => b, default: () => "" }) });

const graph = new StateGraph(State)
  .addNode("deploy", () => {
    const [response] = interrupt([
      {
        action_request: { action: "deploy", args: { service, version, env: "production" } },
        config: { allow_accept: true, allow_edit: true, allow_respond: false, allow_ignore: true },
        description: `Deploy ${service} ${version} to production?`,
      },
    ]);
    if (response.type === "ignore") return { outcome: "not deployed" };
    const args = response.type === "edit" ? response.args.args : { service, version, env: "production" };
    return { outcome: `deployed ${args.service} ${args.version} to ${args.env}` };
  })
  .addEdge(START, "deploy")
  .addEdge("deploy", END)
  // MemorySaver lives as long as the process; a checkpointer that outlives it
  // (@langchain/langgraph-checkpoint-sqlite) lets a restarted process find its gates again.
  .compile({ checkpointer: new MemorySaver(), name: "deploy" });

const human = new GatehouseHuman(new Client()); // GATEHOUSE_URL and GATEHOUSE_TOKEN
const state = await human.invoke(graph, {}, { configurable: { thread_id: `deploy-${service}-${version}-${Date.now()}` } });
console.log(state.outcome);
