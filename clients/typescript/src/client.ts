// The agent's (and a scripted reviewer's) client of the API under /api/hitl:
// runs, gates of every kind, long-poll waits, the HITL tools, plan and
// context, and the event stream. Every answer is typed from the server's
// OpenAPI document; every call goes through the Transport's retry rule, and
// every call that opens a gate carries an idempotency key.

import { Cancelled, Expired, GatehouseError, Rejected, Released, WaitTimeout } from "./errors.js";
import { type EventFilter, type StreamedEvent, follow } from "./events.js";
import { type Call, Transport, type TransportOptions, newKey, seg } from "./http.js";
import type { paths } from "./schema.js";
import type {
  ActionChoice,
  Decision,
  DecisionInput,
  Gate,
  GateKind,
  GateList,
  Json,
  NewGate,
  NodeReached,
  SpecOf,
  StartRunRequest,
  ToolOptions,
} from "./types.js";

/** The JSON a successful answer of `method` on `path` carries, as the OpenAPI document says. */
type Answer<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: { content: { "application/json": infer J } } }
    ? J
    : R extends { 201: { content: { "application/json": infer J } } }
      ? J
      : never
  : never;

export interface ClientOptions extends TransportOptions {
  /** The server; `GATEHOUSE_URL`, else http://127.0.0.1:7777. */
  url?: string;
  /** The bearer token; `GATEHOUSE_TOKEN` when absent. */
  token?: string;
}

/** Optional fields of a new run (`POST /run`). */
export type RunOptions = Omit<StartRunRequest, "run_input">;

/** Optional fields of a new gate of kind `K`: its kind-specific `spec`, and the `NewGate` fields. */
export type GateOptions<K extends GateKind = GateKind> = Partial<Omit<NewGate, "kind" | "text" | keyof SpecOf<K>>> & {
  /** Kind-specific fields (`action` for approvals, `raw`/`audited` for response reviews, ...). */
  spec?: SpecOf<K>;
  /** A key of your own; a fresh one otherwise. Retries reuse it, so they never open a second gate. */
  idempotencyKey?: string;
  /**
   * Seconds (0 to 60) the server holds the answer for the decision: open and
   * wait in one request. The gate comes back decided, or still pending once
   * the wait passes. Default 0: at once.
   */
  waitSeconds?: number;
  /** Aborts the (held) request. */
  signal?: AbortSignal;
};

/** Options the three HITL tools share: urgency, expiry (`timeout`, seconds), mode, task. */
export type ToolCallOptions = Omit<ToolOptions, "wait" | "idempotency_key"> & { idempotencyKey?: string };

export interface WaitOptions {
  /** Give up after this many milliseconds (the gate stays open): WaitTimeout. Unbounded by default. */
  timeoutMs?: number;
  /** Seconds each long poll holds (default 30, at most 60). */
  pollSeconds?: number;
  signal?: AbortSignal;
  /** Keep waiting on a gate a reviewer released, for its decision (by default a released gate is answered at once). */
  throughRelease?: boolean;
}

/** A filter of `GET /gates`. */
export type GateFilter = NonNullable<paths["/api/hitl/gates"]["get"]["parameters"]["query"]>;

/** A Gatehouse client acting with one token. */
export class Client {
  readonly transport: Transport;

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? process.env.GATEHOUSE_URL ?? "http://127.0.0.1:7777";
    const token = options.token ?? process.env.GATEHOUSE_TOKEN;
    if (!token) throw new GatehouseError("no token: pass `token` or set GATEHOUSE_TOKEN (`gatehouse token create --role agent`)");
    this.transport = new Transport(url, token, options);
  }

  #send<T>(call: Call): Promise<T> {
    return this.transport.send<T>(call);
  }

  /** Who the token is. */
  whoami(): Promise<Answer<"/api/hitl/whoami", "get">> {
    return this.#send({ method: "GET", path: "/whoami", idempotent: true });
  }

  // Runs ---------------------------------------------------------------------

  /** Starts a run; its id. */
  async startRun(input: Json = {}, options: RunOptions = {}): Promise<string> {
    const started = await this.#send<Answer<"/api/hitl/run", "post">>({
      method: "POST",
      path: "/run",
      body: { ...options, run_input: input },
      idempotent: false,
    });
    return started.run_id;
  }

  /** The run reached a workflow node: opens the gate it declared there (`declared_gates`), as declared. */
  async reachNode(runId: string, nodeId: string, body: NodeReached = {}): Promise<Gate> {
    const opened = await this.#send<Answer<"/api/hitl/run/{run_id}/nodes/{node_id}", "post">>({
      method: "POST",
      path: `/run/${seg(runId)}/nodes/${seg(nodeId)}`,
      body,
      idempotent: body.idempotency_key !== undefined && body.idempotency_key !== null,
    });
    return opened.gate;
  }

  runStatus(runId: string): Promise<Answer<"/api/hitl/run/{run_id}/status", "get">> {
    return this.#send({ method: "GET", path: `/run/${seg(runId)}/status`, idempotent: true });
  }

  runState(runId: string): Promise<Answer<"/api/hitl/run/{run_id}/state", "get">> {
    return this.#send({ method: "GET", path: `/run/${seg(runId)}/state`, idempotent: true });
  }

  async activeRuns(filter: { sessionId?: string; userId?: string; status?: string } = {}) {
    const list = await this.#send<Answer<"/api/hitl/runs/active", "get">>({
      method: "GET",
      path: "/runs/active",
      query: { session_id: filter.sessionId, user_id: filter.userId, status: filter.status, limit: 500 },
      idempotent: true,
    });
    return list.runs;
  }

  completeRun(runId: string, result: Json = null): Promise<Answer<"/api/hitl/runs/{run_id}/complete", "post">> {
    return this.#send({ method: "POST", path: `/runs/${seg(runId)}/complete`, body: { result }, idempotent: false });
  }

  /** Starts a run created with `start: false`; answers with the run. */
  beginRun(runId: string): Promise<Answer<"/api/hitl/run/{run_id}/start", "post">> {
    return this.#send({ method: "POST", path: `/run/${seg(runId)}/start`, idempotent: false });
  }

  /** Tries a failed or cancelled run again from its last good step (reviewer tokens only); answers with the run. */
  retryRun(runId: string): Promise<Answer<"/api/hitl/run/{run_id}/retry", "post">> {
    return this.#send({ method: "POST", path: `/run/${seg(runId)}/retry`, idempotent: false });
  }

  /**
   * Resumes a run (reviewer tokens only): a paused one goes on; one awaiting a
   * human goes on without waiting, its sync gates released (still open, undecided).
   */
  resumeRun(runId: string): Promise<Answer<"/api/hitl/run/{run_id}/resume", "post">> {
    return this.#send({ method: "POST", path: `/run/${seg(runId)}/resume`, idempotent: false });
  }

  failRun(runId: string, reason: string): Promise<Answer<"/api/hitl/runs/{run_id}/fail", "post">> {
    return this.#send({ method: "POST", path: `/runs/${seg(runId)}/fail`, body: { reason }, idempotent: false });
  }

  /** Records a turn; the answer carries the run's directive (held up to `waitSeconds` while a reviewer steps the run). */
  addTurn(
    runId: string,
    turn: { content: string; role?: string; actor?: string; score?: number; metadata?: Json },
    waitSeconds = 0,
  ): Promise<Answer<"/api/hitl/runs/{run_id}/turns", "post">> {
    return this.#send({
      method: "POST",
      path: `/runs/${seg(runId)}/turns`,
      query: { wait: waitSeconds },
      body: { role: "assistant", ...turn },
      idempotent: false,
      timeoutMs: (waitSeconds + 30) * 1000,
    });
  }

  /** A page of the run's events after `after`. */
  runEvents(runId: string, after = 0, limit = 500): Promise<Answer<"/api/hitl/runs/{run_id}/events", "get">> {
    return this.#send({ method: "GET", path: `/runs/${seg(runId)}/events`, query: { after, limit }, idempotent: true });
  }

  // Gates --------------------------------------------------------------------

  /**
   * Opens a gate of any kind on a run; the gate as opened (already resolved
   * when a policy passed it), or with `waitSeconds` as it is once decided or
   * when the wait passes.
   */
  async openGate<K extends GateKind>(runId: string, kind: K, text: string, options: GateOptions<K> = {}): Promise<Gate> {
    const { spec, idempotencyKey, waitSeconds, signal, ...fields } = options;
    const call: Call = {
      method: "POST",
      path: `/runs/${seg(runId)}/gates`,
      body: { ...spec, ...fields, kind, text },
      headers: { "Idempotency-Key": idempotencyKey ?? newKey() },
      idempotent: true,
    };
    if (waitSeconds !== undefined && waitSeconds > 0) {
      call.query = { wait: waitSeconds };
      call.timeoutMs = (waitSeconds + 30) * 1000;
    }
    if (signal) call.signal = signal;
    const opened = await this.#send<Answer<"/api/hitl/runs/{run_id}/gates", "post">>(call);
    return opened.gate;
  }

  /**
   * Opens a gate and waits until it closes: one request that the server
   * holds for the decision (up to `pollSeconds`, default 30), then long
   * polls only while it is still pending. The closed gate; WaitTimeout
   * when `timeoutMs` passes first (the gate stays open).
   */
  async openAndWait<K extends GateKind>(
    runId: string,
    kind: K,
    text: string,
    options: Omit<GateOptions<K>, "waitSeconds" | "signal">,
    wait: WaitOptions = {},
  ): Promise<Gate> {
    const deadline = wait.timeoutMs === undefined ? undefined : Date.now() + wait.timeoutMs;
    const hold = Math.min(wait.pollSeconds ?? 30, 60, (wait.timeoutMs ?? Number.POSITIVE_INFINITY) / 1000);
    const held = { ...options, waitSeconds: hold, ...(wait.signal ? { signal: wait.signal } : {}) } as GateOptions<K>;
    const opened = await this.openGate(runId, kind, text, held);
    if (opened.status !== "pending") return opened;
    const rest: WaitOptions = { ...wait };
    if (deadline !== undefined) rest.timeoutMs = Math.max(0, deadline - Date.now());
    return this.waitClosed(opened.id, rest);
  }

  /** The gate as it is now. */
  async gate(gateId: string): Promise<Gate> {
    return (await this.gateDetail(gateId)).gate;
  }

  /** The gate with what a reviewer sees beside it (its text as HTML, the payload's diff, the run's last turns). */
  gateDetail(gateId: string): Promise<Answer<"/api/hitl/gates/{gate_id}", "get">> {
    return this.#send({ method: "GET", path: `/gates/${seg(gateId)}`, idempotent: true });
  }

  listGates(filter: GateFilter = {}): Promise<GateList> {
    return this.#send({ method: "GET", path: "/gates", query: filter, idempotent: true });
  }

  /**
   * One long poll: the gate the moment it closes or a reviewer releases it
   * (still pending, `released` set; with `throughRelease` the poll holds on),
   * or still pending after `seconds` (0 to 60).
   */
  wait(gateId: string, seconds = 30, signal?: AbortSignal, throughRelease = false): Promise<Gate> {
    const call: Call = {
      method: "GET",
      path: `/gates/${seg(gateId)}/wait`,
      query: throughRelease ? { timeout: seconds, through_release: true } : { timeout: seconds },
      idempotent: true,
      timeoutMs: (seconds + 30) * 1000,
    };
    if (signal) call.signal = signal;
    return this.#send(call);
  }

  /**
   * Long-polls until the gate closes; the closed gate. A gate a reviewer
   * released comes back at once, still pending (unless `throughRelease`).
   * WaitTimeout when `timeoutMs` passes first.
   */
  async waitClosed(gateId: string, options: WaitOptions = {}): Promise<Gate> {
    const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    for (;;) {
      const left = (deadline - Date.now()) / 1000;
      if (left <= 0) throw new WaitTimeout(`gate ${gateId} is still pending after ${options.timeoutMs} ms`, gateId);
      const poll = Math.min(options.pollSeconds ?? 30, 60, Math.ceil(left));
      const gate = await this.wait(gateId, poll, options.signal, options.throughRelease ?? false);
      if (gate.status !== "pending" || (gate.released && !options.throughRelease)) return gate;
    }
  }

  /**
   * Long-polls until the gate is decided; the decision when it lets the
   * agent go ahead (approve, edit, respond, ...). Rejected, Expired,
   * Cancelled or Released (a reviewer let the run go on undecided) otherwise.
   */
  async waitForDecision(gateId: string, options: WaitOptions = {}): Promise<Decision> {
    return settle(await this.waitClosed(gateId, options));
  }

  /** A reviewer's decision (reviewer tokens). */
  resolveGate(gateId: string, decision: DecisionInput): Promise<Gate> {
    return this.#send({ method: "POST", path: `/gates/${seg(gateId)}/resolve`, body: decision, idempotent: false });
  }

  /** Decides some of an approval gate's proposed actions by id (reviewer tokens). */
  decideActions(gateId: string, actions: ActionChoice[]): Promise<Gate> {
    return this.resolveGate(gateId, { action: "approve", actions });
  }

  /** A reviewer's score on a quality gate. */
  scoreGate(gateId: string, score: number, justification = "", rubricScores: Record<string, number> = {}) {
    return this.#send<Answer<"/api/hitl/gates/{gate_id}/score", "post">>({
      method: "POST",
      path: `/gates/${seg(gateId)}/score`,
      body: { score, justification, rubric_scores: rubricScores },
      idempotent: false,
    });
  }

  // The HITL tools ------------------------------------------------------------

  /** `request_approval`: opens an approval gate whose payload is `context`; the gate. */
  requestApproval(runId: string, action: string, context: Json = null, options: ToolCallOptions & { text?: string } = {}) {
    return this.#tool(runId, "request_approval", { action, context }, options);
  }

  /** `escalate_to_human`: opens a question gate for a person with `requiredExpertise`; the gate. */
  escalateToHuman(runId: string, issue: string, requiredExpertise: string[] = [], context: Json = null, options: ToolCallOptions = {}) {
    return this.#tool(runId, "escalate_to_human", { issue, required_expertise: requiredExpertise, context }, options);
  }

  /** `request_feedback`: asks a reviewer to comment on an artifact; the gate. */
  requestFeedback(runId: string, artifact: string, questions: string[] = [], options: ToolCallOptions = {}) {
    return this.#tool(runId, "request_feedback", { artifact, questions }, options);
  }

  /** Asks for approval and waits: the decision (the reviewer's edit in `payload`), or Rejected/Expired/Cancelled. */
  async approve(runId: string, action: string, context: Json = null, options: ToolCallOptions & WaitOptions & { text?: string } = {}): Promise<Decision> {
    const { timeoutMs, pollSeconds, signal, ...tool } = options;
    const gate = await this.requestApproval(runId, action, context, tool);
    return this.waitForDecision(gate.id, { timeoutMs, pollSeconds, signal } as WaitOptions);
  }

  async #tool(runId: string, tool: string, body: Record<string, unknown>, options: ToolCallOptions): Promise<Gate> {
    const { idempotencyKey, ...fields } = options;
    const reply = await this.#send<Answer<"/api/hitl/runs/{run_id}/tools/request_approval", "post">>({
      method: "POST",
      path: `/runs/${seg(runId)}/tools/${tool}`,
      body: { ...body, ...fields, wait: 0 },
      headers: { "Idempotency-Key": idempotencyKey ?? newKey() },
      idempotent: true,
    });
    return reply.gate;
  }

  // Plan and context -----------------------------------------------------------

  plan(runId: string): Promise<Answer<"/api/hitl/runs/{run_id}/plan", "get">> {
    return this.#send({ method: "GET", path: `/runs/${seg(runId)}/plan`, idempotent: true });
  }

  changePlan(runId: string, operation: paths["/api/hitl/runs/{run_id}/plan"]["post"]["requestBody"]["content"]["application/json"]) {
    return this.#send<Answer<"/api/hitl/runs/{run_id}/plan", "post">>({
      method: "POST",
      path: `/runs/${seg(runId)}/plan`,
      body: operation,
      idempotent: false,
    });
  }

  context(runId: string): Promise<Answer<"/api/hitl/runs/{run_id}/context", "get">> {
    return this.#send({ method: "GET", path: `/runs/${seg(runId)}/context`, idempotent: true });
  }

  setContext(runId: string, key: string, value: Json): Promise<Answer<"/api/hitl/runs/{run_id}/context/{key}", "put">> {
    return this.#send({ method: "PUT", path: `/runs/${seg(runId)}/context/${seg(key)}`, body: { value }, idempotent: true });
  }

  /** Not retried after a lost answer: a repeat would be a 404. */
  deleteContext(runId: string, key: string): Promise<Answer<"/api/hitl/runs/{run_id}/context/{key}", "delete">> {
    return this.#send({ method: "DELETE", path: `/runs/${seg(runId)}/context/${seg(key)}`, idempotent: false });
  }

  contextHistory(runId: string): Promise<Answer<"/api/hitl/runs/{run_id}/context/history", "get">> {
    return this.#send({ method: "GET", path: `/runs/${seg(runId)}/context/history`, idempotent: true });
  }

  // Events ---------------------------------------------------------------------

  /** The event stream (SSE), reconnecting with `Last-Event-ID`; ends when `filter.signal` aborts. */
  events(filter: EventFilter = {}): AsyncGenerator<StreamedEvent> {
    return follow(this.transport, filter);
  }
}

/**
 * The decision of a closed gate when it lets the agent go ahead; Rejected
 * for a rejection, Expired or Cancelled for a gate closed undecided, Released
 * for one a reviewer released undecided (never a go-ahead).
 */
export function settle(gate: Gate): Decision {
  if (gate.status === "pending" && gate.released) {
    const by = gate.released.by;
    throw new Released(`gate ${gate.id} was released by ${by}: the run goes on without it; nothing was decided`, gate);
  }
  if (gate.status === "expired") throw new Expired(`gate ${gate.id} expired unanswered`, gate);
  if (gate.status === "cancelled") throw new Cancelled(`gate ${gate.id} was cancelled`, gate);
  const decision = gate.decision;
  if (!decision) throw new GatehouseError(`gate ${gate.id} is ${gate.status} without a decision`);
  if (decision.action === "reject") {
    const reason = decision.text ? `: ${decision.text}` : "";
    throw new Rejected(`gate ${gate.id} was rejected by ${decision.decided_by}${reason}`, gate, decision);
  }
  return decision;
}
