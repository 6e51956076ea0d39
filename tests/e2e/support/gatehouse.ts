// A real `gatehouse serve` for one test: its own database in a fresh
// temporary directory, a free loopback port, the reviewer UI from ui/dist,
// tokens made with `gatehouse token create`, and agents simulated by plain
// HTTP calls (what an agent's SDK would send).

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The binary under test: $GATEHOUSE_BIN, else the workspace's debug build. */
export const BINARY =
  process.env.GATEHOUSE_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(ROOT, "target"), "debug", "gatehouse");
/** The UI build the server serves. */
export const UI_DIR = process.env.GATEHOUSE_UI_DIR ?? join(ROOT, "ui", "dist");

export type Role = "agent" | "reviewer" | "admin";

/** A JSON value as sent and received. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What the tests read of a gate (the server's `Gate`). */
export interface Gate {
  id: string;
  run_id: string;
  agent: string;
  mode: "sync" | "async" | "advisory";
  status: string;
  text: string;
  payload?: Json;
  decision?: {
    action: string;
    decided_by: string;
    decided_at: string;
    text?: string | null;
    payload?: Json;
    diff?: { changes: { path: string; op: string; old?: Json; new?: Json }[]; unified: string } | null;
  } | null;
}

export class Gatehouse {
  readonly url: string;
  readonly db: string;
  readonly adminToken: string;
  readonly #dir: string;
  readonly #process: ChildProcess;
  readonly #log: string[];

  private constructor(url: string, db: string, adminToken: string, dir: string, child: ChildProcess, log: string[]) {
    this.url = url;
    this.db = db;
    this.adminToken = adminToken;
    this.#dir = dir;
    this.#process = child;
    this.#log = log;
  }

  /** Starts a server over a new database; resolves once it is listening. */
  static async start(): Promise<Gatehouse> {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`cargo build -p gatehouse-cli\` first`);
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-e2e-"));
    const db = join(dir, "g.db");
    const log: string[] = [];
    const child = spawn(BINARY, ["serve", "--db", db, "--bind", "127.0.0.1:0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, GATEHOUSE_UI_DIR: UI_DIR, GATEHOUSE_LOG: process.env.GATEHOUSE_LOG ?? "warn" },
    });
    child.stderr!.on("data", (chunk: Buffer) => log.push(chunk.toString()));
    const url = await new Promise<string>((resolveUrl, reject) => {
      let seen = "";
      const timer = setTimeout(() => reject(new Error(`gatehouse serve did not listen within 20 s:\n${seen}${log.join("")}`)), 20_000);
      child.on("error", (e) => reject(new Error(`cannot run ${BINARY}: ${e.message}`)));
      child.on("exit", (code) => reject(new Error(`gatehouse serve exited with ${code}:\n${seen}${log.join("")}`)));
      child.stdout!.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /Gatehouse listening on (http:\/\/\S+)/.exec(seen);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1]!);
        }
      });
    });
    const adminToken = (await readFile(join(dir, "admin-token"), "utf8")).trim();
    return new Gatehouse(url, db, adminToken, dir, child, log);
  }

  /** Makes a token with `gatehouse token create` and returns its secret. */
  async token(role: Role, name: string): Promise<string> {
    const { stdout } = await run(BINARY, ["token", "create", "--db", this.db, "--role", role, "--name", name]);
    const secret = stdout.trim();
    if (!secret) throw new Error(`gatehouse token create printed no secret for ${name}`);
    return secret;
  }

  /** The address that signs the UI in with `token`. */
  signInUrl(token: string): string {
    return `${this.url}/#token=${encodeURIComponent(token)}`;
  }

  /** A JSON call to the API; throws with the body on an unexpected status. */
  async call<T>(token: string, method: string, path: string, body?: unknown, expect = [200, 201]): Promise<T> {
    const response = await fetch(`${this.url}/api/hitl${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!expect.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  }

  /** An agent's view of this server, acting with `token`. */
  agent(token: string): Agent {
    return new Agent(this, token);
  }

  /** Stops the server and removes its files. */
  async stop(): Promise<void> {
    if (this.#process.exitCode === null) {
      const exited = new Promise((r) => this.#process.once("exit", r));
      this.#process.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (this.#process.exitCode === null) this.#process.kill("SIGKILL");
    }
    await rm(this.#dir, { recursive: true, force: true });
  }

  /** What the server wrote on stderr, for failure messages. */
  get log(): string {
    return this.#log.join("");
  }
}

/** A simulated agent: starts runs, opens gates and long-polls for decisions. */
export class Agent {
  constructor(
    readonly server: Gatehouse,
    readonly token: string,
  ) {}

  /** Starts a run (`POST /run`), returning its id. */
  async startRun(title: string, input: Json = { prompt: title }): Promise<string> {
    const started = await this.server.call<{ run_id: string }>(this.token, "POST", "/run", { run_input: input, title });
    return started.run_id;
  }

  /** Opens a gate on a run (`POST /runs/{id}/gates`, a `NewGate` body). */
  async openGate(runId: string, gate: Record<string, Json>): Promise<Gate> {
    const opened = await this.server.call<{ gate: Gate }>(this.token, "POST", `/runs/${runId}/gates`, gate);
    return opened.gate;
  }

  /** Long-polls a gate (`GET /gates/{id}/wait`) until it is decided or `timeout` seconds pass. */
  wait(gateId: string, timeout = 30): Promise<Gate> {
    return this.server.call<Gate>(this.token, "GET", `/gates/${gateId}/wait?timeout=${timeout}`);
  }
}
