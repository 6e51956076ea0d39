// A real `gatehouse serve` for a test, started by the one helper the browser
// tests use (tests/e2e/support/gatehouse.mjs): a temporary database, a free
// loopback port, tokens made with `gatehouse token create`.

import { Client, type Gate } from "@gatehouse/client";

/** What the tests use of the shared helper's server. */
export interface Server {
  url: string;
  db: string;
  adminToken: string;
  token(role: "agent" | "reviewer" | "admin", name: string, teams?: string[]): Promise<string>;
  stop(): Promise<void>;
  readonly log: string;
}

// Compiled tests live in build/, as deep as test/, so the same path works from both.
const SUPPORT = new URL("../../../tests/e2e/support/gatehouse.mjs", import.meta.url).href;
/** The gatehouse binary the helper runs. */
export const BINARY: string = ((await import(SUPPORT)) as { BINARY: string }).BINARY;

export async function startServer(): Promise<Server> {
  const { Gatehouse } = (await import(SUPPORT)) as { Gatehouse: { start(): Promise<Server> } };
  return Gatehouse.start();
}

/** A server with an agent's and a reviewer's client on it. */
export interface Fixture {
  server: Server;
  agent: Client;
  reviewer: Client;
  agentToken: string;
}

export async function fixture(agentName = "ts-agent"): Promise<Fixture> {
  const server = await startServer();
  const agentToken = await server.token("agent", agentName);
  const reviewerToken = await server.token("reviewer", "rita");
  return {
    server,
    agentToken,
    agent: new Client({ url: server.url, token: agentToken }),
    reviewer: new Client({ url: server.url, token: reviewerToken }),
  };
}

/** The live run of a session, waiting (up to 20 s) for it to start. */
export async function sessionRun(reviewer: Client, sessionId: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [run] = await reviewer.activeRuns({ sessionId });
    if (run !== undefined) return run.id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no run for session ${sessionId} within 20 s`);
}

/** The first pending gate that `match` accepts, polled for up to 20 s (a scripted reviewer's queue). */
export async function pendingGate(reviewer: Client, match: (gate: Gate) => boolean = () => true): Promise<Gate> {
  const deadline = Date.now() + 20_000;
  const seen = new Map<string, Gate>();
  while (Date.now() < deadline) {
    const { gates } = await reviewer.listGates({ status: "pending" });
    for (const summary of gates) {
      const gate = seen.get(summary.id) ?? (await reviewer.gate(summary.id));
      seen.set(summary.id, gate);
      if (match(gate)) return gate;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending gate appeared within 20 s");
}
