// The TypeScript examples in examples/typescript, each run as its own
// process (as a user would run it) against a real server while a scripted
// reviewer decides its gate through the API.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, it } from "node:test";

import type { DecisionInput, Gate } from "@gatehouse/client";
import { BINARY, type Fixture, fixture, pendingGate } from "./server.js";

const run = promisify(execFile);
const LOADER = fileURLToPath(new URL("../test/examples-loader.mjs", import.meta.url));
const EXAMPLES = new URL("../../../examples/typescript/", import.meta.url);

let f: Fixture;
before(async () => {
  f = await fixture("examples-agent");
});
after(() => f.server.stop());

/** Runs an example while the reviewer decides the first gate `match` accepts; its stdout. */
async function example(file: string, args: string[], match: (gate: Gate) => boolean, decision: DecisionInput): Promise<string> {
  const child = run(process.execPath, ["--import", LOADER, fileURLToPath(new URL(file, EXAMPLES)), ...args], {
    env: { ...process.env, GATEHOUSE_URL: f.server.url, GATEHOUSE_TOKEN: f.agentToken, GATEHOUSE_BIN: BINARY },
    timeout: 60_000,
  });
  const gate = await pendingGate(f.reviewer, match);
  await f.reviewer.resolveGate(gate.id, decision);
  const { stdout } = await child;
  return stdout;
}

it("ai-sdk-approval deploys with the reviewer's edited arguments", async () => {
  const out = await example("ai-sdk-approval.mjs", ["api 2.0.1"], (g) => g.actions?.[0]?.name === "deploy", {
    action: "edit",
    actions: [{ id: "deploy-1", action: "edit", args: { service: "api", version: "2.0.1", env: "staging" } }],
  });
  assert.match(out, /Done: deployed api 2\.0\.1 to staging/);
});

it("langgraph-inbox stops when the reviewer ignores the interrupt", async () => {
  const out = await example("langgraph-inbox.mjs", ["web 1.4.2"], (g) => g.text === "Deploy web 1.4.2 to production?", {
    action: "reject",
    text: "freeze",
  });
  assert.equal(out.trim(), "not deployed");
});

it("openai-agents-approval sends the email once approved", async () => {
  const out = await example("openai-agents-approval.mjs", ["cto@example.com"], (g) => g.actions?.[0]?.name === "send_email", { action: "approve" });
  assert.match(out, /Email: sent to cto@example\.com/);
});

for (const transport of ["http", "stdio"]) {
  it(`mcp-client over ${transport} prints the reviewer's decision`, async () => {
    const out = await example("mcp-client.mjs", [transport], (g) => g.text.includes("rotate the API keys") && g.status === "pending", {
      action: "approve",
    });
    assert.match(out, /tools: .*request_approval/);
    assert.match(out, /Approved by rita/);
  });
}
