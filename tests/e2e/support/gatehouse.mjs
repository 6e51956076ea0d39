// A real `gatehouse serve` for one test (or benchmark): its own database in
// a fresh temporary directory, a free loopback port, the reviewer UI from
// ui/dist, tokens made with `gatehouse token create`, and agents simulated
// by plain HTTP calls (what an agent's SDK would send). Plain JavaScript
// with JSDoc types, so the specs and the benchmark script share it.

import { execFile, spawn } from "node:child_process";
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

/** @typedef {"agent" | "reviewer" | "admin"} Role */
/** @typedef {null | boolean | number | string | JsonArray | { [key: string]: Json }} Json */
/** @typedef {Json[]} JsonArray */
/**
 * What the tests read of a gate (the server's `Gate`).
 * @typedef {{
 *   id: string, run_id: string, agent: string, mode: "sync" | "async" | "advisory", status: string, text: string,
 *   payload?: Json,
 *   agent_state?: Json,
 *   decision?: {
 *     action: string, decided_by: string, decided_at: string, text?: string | null, payload?: Json,
 *     diff?: { changes: { path: string, op: string, old?: Json, new?: Json }[], unified: string } | null,
 *     actions?: { id: string, action: string, decided_by: string, args?: Json, text?: string | null }[],
 *     response?: Json,
 *     option?: string,
 *   } | null,
 * }} Gate
 */

export class Gatehouse {
  /** @type {import("node:child_process").ChildProcess} */
  #process;
  /** @type {string[]} */
  #log;
  #dir;
  /** @type {Promise<string>} */
  #link;

  /**
   * @param {string} url `http://ADDR`
   * @param {string} db the database file
   * @param {string} adminToken the secret `serve` wrote to `admin-token`
   * @param {string} dir the temporary directory holding them
   * @param {import("node:child_process").ChildProcess} child the server process
   * @param {string[]} log what it wrote on stderr
   * @param {Promise<string>} link the one-time sign-in link it printed
   */
  constructor(url, db, adminToken, dir, child, log, link) {
    this.url = url;
    this.db = db;
    this.adminToken = adminToken;
    this.#dir = dir;
    this.#process = child;
    this.#log = log;
    this.#link = link;
  }

  /**
   * The one-time sign-in link `gatehouse serve` printed.
   * @returns {Promise<string>}
   */
  signInLink() {
    return this.#link;
  }

  /**
   * Starts a server over a new database; resolves once it is listening.
   * @param {string[]} [flags] more `serve` flags (`--alert-pending 0`)
   * @returns {Promise<Gatehouse>}
   */
  static async start(flags = []) {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`cargo build -p gatehouse-cli\` first`);
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-e2e-"));
    const db = join(dir, "g.db");
    /** @type {string[]} */
    const log = [];
    const child = spawn(BINARY, ["serve", "--db", db, "--bind", "127.0.0.1:0", ...flags], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, GATEHOUSE_UI_DIR: UI_DIR, GATEHOUSE_LOG: process.env.GATEHOUSE_LOG ?? "warn" },
    });
    child.stderr?.on("data", (chunk) => log.push(String(chunk)));
    /** @type {Promise<string>} */
    const link = new Promise((resolveLink, reject) => {
      let out = "";
      child.stdout?.on("data", (chunk) => {
        out += String(chunk);
        const match = /(http\S+#signin=\S+)/.exec(out);
        if (match) resolveLink(match[1] ?? "");
      });
      child.once("exit", () => reject(new Error(`gatehouse serve printed no sign-in link:\n${out}`)));
    });
    link.catch(() => {});
    /** @type {string} */
    const url = await new Promise((resolveUrl, reject) => {
      let seen = "";
      const timer = setTimeout(
        () => reject(new Error(`gatehouse serve did not listen within 20 s:\n${seen}${log.join("")}`)),
        20_000,
      );
      child.on("error", (e) => reject(new Error(`cannot run ${BINARY}: ${e.message}`)));
      child.on("exit", (code) => reject(new Error(`gatehouse serve exited with ${code}:\n${seen}${log.join("")}`)));
      child.stdout?.on("data", (chunk) => {
        seen += String(chunk);
        const match = /Gatehouse listening on (http:\/\/\S+)/.exec(seen);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1] ?? "");
        }
      });
    });
    const adminToken = (await readFile(join(dir, "admin-token"), "utf8")).trim();
    return new Gatehouse(url, db, adminToken, dir, child, log, link);
  }

  /**
   * Makes a token with `gatehouse token create` and returns its secret.
   * @param {Role} role
   * @param {string} name the identity recorded for what it does
   * @param {string[]} [teams] teams the token belongs to (gates may be restricted to `role:TEAM`)
   * @returns {Promise<string>}
   */
  async token(role, name, teams = []) {
    const args = ["token", "create", "--db", this.db, "--role", role, "--name", name, ...teams.flatMap((t) => ["--team", t])];
    const { stdout } = await run(BINARY, args);
    const secret = stdout.trim();
    if (!secret) throw new Error(`gatehouse token create printed no secret for ${name}`);
    return secret;
  }

  /**
   * The address that signs the UI in with `token`.
   * @param {string} token
   */
  signInUrl(token) {
    return `${this.url}/#token=${encodeURIComponent(token)}`;
  }

  /**
   * A JSON call to the API (`path` under /api/hitl); throws with the body on an unexpected status.
   * @template [T=any]
   * @param {string} token
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @param {number[]} [expect] the statuses that count as success
   * @returns {Promise<T>}
   */
  async call(token, method, path, body, expect = [200, 201]) {
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${this.url}/api/hitl${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!expect.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return /** @type {T} */ (text ? JSON.parse(text) : null);
  }

  /**
   * An agent's view of this server, acting with `token`.
   * @param {string} token
   */
  agent(token) {
    return new Agent(this, token);
  }

  /** Stops the server and removes its files. */
  async stop() {
    const child = this.#process;
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    await rm(this.#dir, { recursive: true, force: true });
  }

  /** What the server wrote on stderr, for failure messages. */
  get log() {
    return this.#log.join("");
  }
}

/** A simulated agent: starts runs, opens gates and long-polls for decisions. */
export class Agent {
  /**
   * @param {Gatehouse} server
   * @param {string} token an agent token's secret
   */
  constructor(server, token) {
    this.server = server;
    this.token = token;
  }

  /**
   * Starts a run (`POST /run`), returning its id.
   * @param {string} title
   * @param {Json} [input]
   * @returns {Promise<string>}
   */
  async startRun(title, input = { prompt: title }) {
    const started = await this.server.call(this.token, "POST", "/run", { run_input: input, title });
    return started.run_id;
  }

  /**
   * Opens a gate on a run (`POST /runs/{id}/gates`, a `NewGate` body).
   * @param {string} runId
   * @param {Record<string, Json>} gate
   * @returns {Promise<Gate>}
   */
  async openGate(runId, gate) {
    const opened = await this.server.call(this.token, "POST", `/runs/${runId}/gates`, gate);
    return opened.gate;
  }

  /**
   * Long-polls a gate (`GET /gates/{id}/wait`) until it is decided or `timeout` seconds pass.
   * @param {string} gateId
   * @param {number} [timeout]
   * @returns {Promise<Gate>}
   */
  wait(gateId, timeout = 30) {
    return this.server.call(this.token, "GET", `/gates/${gateId}/wait?timeout=${timeout}`);
  }
}
