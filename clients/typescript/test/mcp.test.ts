// The official TypeScript MCP SDK (@modelcontextprotocol/sdk) as a client of
// Gatehouse's tools, over stdio (`gatehouse mcp`) and streamable HTTP (`/mcp`
// with a bearer token): the tools are listed, a gate tool blocks with
// progress notifications while a reviewer decides through the HTTP API, and
// the decision arrives as the tool's result.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";

import { connectHttp, connectStdio } from "@gatehouse/client/mcp";
import { BINARY, type Fixture, fixture, pendingGate } from "./server.js";

let f: Fixture;
before(async () => {
  f = await fixture("mcp-assistant");
});
after(() => f.server.stop());

const TOOLS = [
  "ask_human",
  "check_gate",
  "plan_add_task",
  "plan_assign_task",
  "plan_estimate_duration",
  "plan_propose",
  "plan_read",
  "plan_set_dependencies",
  "plan_update_task",
  "request_approval",
  "request_feedback",
  "request_permission",
  "request_review",
];

const transports: Record<string, () => Promise<McpClient>> = {
  stdio: () => connectStdio({ binary: BINARY, url: f.server.url, token: f.agentToken, progressEvery: 0.2, name: "ts-stdio" }),
  http: () => connectHttp({ url: f.server.url, token: f.agentToken, name: "ts-http" }),
};

for (const [transport, connect] of Object.entries(transports)) {
  describe(`over ${transport}`, () => {
    it("lists every tool with an object schema", async () => {
      const mcp = await connect();
      try {
        const { tools } = await mcp.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
        for (const t of tools) assert.equal(t.inputSchema.type, "object", t.name);
      } finally {
        await mcp.close();
      }
    });

    it("request_approval blocks until a reviewer edits it, then returns the edited payload", async () => {
      const mcp = await connect();
      const progress: number[] = [];
      try {
        const reviewer = (async () => {
          const gate = await pendingGate(f.reviewer, (g) => g.spec.kind === "approval" && g.text.includes(`deploy via ${transport}`));
          assert.deepEqual(gate.payload, { build: 42, target: "prod" });
          await new Promise((r) => setTimeout(r, 600)); // long enough for progress notifications
          await f.reviewer.resolveGate(gate.id, { action: "edit", payload: { build: 42, target: "staging" } });
        })();
        const result = await mcp.callTool(
          { name: "request_approval", arguments: { action: `deploy via ${transport}`, context: { build: 42, target: "prod" } } },
          undefined,
          { onprogress: (p) => progress.push(p.progress), resetTimeoutOnProgress: true, timeout: 30_000 },
        );
        await reviewer;
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        const outcome = result.structuredContent as { decision: string; proceed: boolean; decided_by: string; payload: unknown };
        assert.equal(outcome.decision, "edit");
        assert.equal(outcome.proceed, true);
        assert.equal(outcome.decided_by, "rita");
        assert.deepEqual(outcome.payload, { build: 42, target: "staging" });
        assert.ok(progress.length > 0, "progress notifications while the reviewer took 0.6 s");
        assert.deepEqual(progress, [...progress].sort((a, b) => a - b), "progress increases");
      } finally {
        await mcp.close();
      }
    });
  });
}

it("/mcp refuses a client without a valid bearer token, saying why", async () => {
  // The 401's body is a JSON-RPC error, so the SDK's message carries the reason.
  await assert.rejects(connectHttp({ url: f.server.url, token: "not-a-token" }), /-32001.*this token is unknown or revoked/);
});
