// The LangGraph.js adapter: runs a compiled graph with Gatehouse answering
// its `interrupt()`s. Each pending interrupt becomes a gate; once the
// reviewer decides, the graph resumes with `Command({ resume: { [id]: value } })`,
// always by interrupt id, so several pending interrupts are never mixed up.
//
// langchain's `humanInTheLoopMiddleware` batches an agent's tool calls into
// one `HITLRequest` (`actionRequests`, `reviewConfigs`): that is one approval
// gate proposing every call as an action (`action-1`, `action-2`... in
// order), each decided on its own, resumed with `{ decisions: [...] }`.
// A decision that cannot resume the graph (say, a whole-gate edit of a
// batch) is not a crash: the interrupt is asked again, saying why, under the
// next attempt's key, up to `maxAttempts` gates.
//
// Restarts ask nothing twice: with a checkpointer that outlives the process,
// the gate of an interrupt is opened under the key
// `lg:<thread id>:<interrupt id>:1` on the run of the session
// `langgraph:<thread id>` (the keys and session the Python adapter uses), so a
// restarted process finds the same run and the same gates, decided or not.

import { createHash } from "node:crypto";

import { Command } from "@langchain/langgraph";
import type { HumanInterrupt, HumanResponse } from "@langchain/langgraph/prebuilt";

import type { Client, GateOptions, WaitOptions } from "./client.js";
import { Cancelled, Conflict, Expired, GatehouseError, Released } from "./errors.js";
import type { ActionDecision, DecisionAction, Gate, GateKind, Json } from "./types.js";

/** What a pending interrupt looks like in a state snapshot. */
export interface PendingInterrupt {
  id?: string;
  value?: unknown;
  response_schema?: unknown;
}

/** What the adapter uses of a compiled graph. */
export interface Graph {
  name?: string;
  invoke(input: unknown, config: ThreadConfig): Promise<unknown>;
  getState(config: ThreadConfig): Promise<{
    values: unknown;
    next: string[];
    metadata?: unknown;
    tasks: ReadonlyArray<{ interrupts: PendingInterrupt[] }>;
  }>;
}

export interface ThreadConfig {
  configurable: { thread_id: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The gate an interrupt opens, and how its decision resumes the graph. */
export interface Mapping {
  kind: GateKind;
  text: string;
  options: GateOptions;
  resume(gate: Gate): unknown;
}

/** The reviewer's answer cannot resume the graph; the message says why, for the next gate. */
export class AnswerInvalid extends GatehouseError {}

/** The gate key for an interrupt: the same in every process that resumes the thread. */
export function idempotencyKey(threadId: string, interruptId: string, attempt = 1): string {
  const thread = threadId.length > 120 ? createHash("sha256").update(threadId).digest("hex") : threadId;
  return `lg:${thread}:${interruptId}:${attempt}`;
}

export function sessionFor(threadId: string): string {
  return `langgraph:${threadId}`;
}

export function isHumanInterrupt(value: unknown): value is HumanInterrupt {
  const v = value as Partial<HumanInterrupt> | null;
  return typeof v === "object" && v !== null && typeof v.action_request?.action === "string" && typeof v.config === "object";
}

const INBOX_ACTIONS = [
  ["allow_accept", "approve"],
  ["allow_edit", "edit"],
  ["allow_respond", "respond"],
  ["allow_ignore", "reject"],
] as const;

/** Agent Inbox's HumanInterrupt: an approval gate with exactly its allowed responses. */
function humanInterrupt(value: HumanInterrupt, asList: boolean): Mapping {
  const { action, args } = value.action_request;
  const allowed = INBOX_ACTIONS.filter(([flag]) => value.config[flag]).map(([, decision]) => decision);
  if (allowed.length === 0) throw new GatehouseError(`HumanInterrupt for \`${action}\` allows no response at all`);
  return {
    kind: "approval",
    text: value.description || `Approve \`${action}\``,
    options: { spec: { action }, payload: (args ?? {}) as Json, allowed_actions: allowed, requires_human: true },
    resume(gate) {
      const d = decided(gate);
      const response: HumanResponse =
        d.action === "approve"
          ? { type: "accept", args: null }
          : d.action === "edit"
            ? { type: "edit", args: { action, args: (d.payload ?? args) as Record<string, unknown> } }
            : d.action === "respond"
              ? { type: "response", args: d.text ?? "" }
              : { type: "ignore", args: null };
      return asList ? [response] : response;
    },
  };
}

/** One tool call of langchain's `HITLRequest`, and the review config for its tool. */
export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}
export interface ReviewConfig {
  actionName: string;
  allowedDecisions: Array<"approve" | "edit" | "reject">;
}
/** What langchain's `humanInTheLoopMiddleware` interrupts with: the agent's tool calls, batched. */
export interface HitlRequest {
  actionRequests: ActionRequest[];
  reviewConfigs: ReviewConfig[];
}
/** langchain's decision on one tool call, as `humanInTheLoopMiddleware` resumes with it. */
export type ToolDecision =
  | { type: "approve" }
  | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

export function isHitlRequest(value: unknown): value is HitlRequest {
  const v = value as Partial<HitlRequest> | null;
  return typeof v === "object" && v !== null && Array.isArray(v.actionRequests) && Array.isArray(v.reviewConfigs);
}

/** The allowed decisions of each requested call: its own config (by position when one per call, else by tool name). */
function reviewedActions(value: HitlRequest): Array<[ActionRequest, string[]]> {
  const { actionRequests: requests, reviewConfigs: configs } = value;
  return requests.map((request, i) => {
    const config = configs.length === requests.length ? configs[i] : configs.find((c) => c.actionName === request.name);
    const allowed = config?.allowedDecisions?.length ? config.allowedDecisions : ["approve", "edit", "reject"];
    return [request, [...allowed]];
  });
}

/** langchain's batched `HITLRequest`: one approval gate proposing every call, each decided on its own. */
function hitlRequest(value: HitlRequest): Mapping {
  const actions = reviewedActions(value);
  if (actions.length === 0) throw new GatehouseError("HITLRequest with no actionRequests");
  const names = actions.map(([request]) => String(request.name ?? "action"));
  const count = `${actions.length} tool call${actions.length > 1 ? "s" : ""}`;
  return {
    kind: "approval",
    text: `**${count} to review:** ${names.map((n) => `\`${n}\``).join(", ")}`,
    options: {
      spec: { action: names.join(", ") },
      requires_human: true,
      allowed_actions: ["approve", "edit", "reject"],
      actions: actions.map(([request, allowed], i) => ({
        id: `action-${i + 1}`,
        name: names[i] as string,
        args: (request.args ?? {}) as Json,
        description: request.description ?? null,
        allowed_actions: allowed as DecisionAction[],
      })),
    },
    resume(gate) {
      const d = decided(gate);
      const byId = new Map((d.actions ?? []).map((a) => [a.id, a]));
      const decisions = actions.map(([request], i): ToolDecision => {
        const one = byId.get(`action-${i + 1}`);
        // A server that kept no per-action decisions decided the gate as a whole.
        return one ? toolDecision(request, one) : wholeDecision(d.action, d.text);
      });
      return { decisions };
    },
  };
}

function toolDecision(request: ActionRequest, one: ActionDecision): ToolDecision {
  switch (one.action) {
    case "approve":
      return { type: "approve" };
    case "edit":
      return {
        type: "edit",
        editedAction: { name: one.name ?? request.name, args: (one.args ?? request.args ?? {}) as Record<string, unknown> },
      };
    case "reject":
      return one.text ? { type: "reject", message: one.text } : { type: "reject" };
    default:
      throw new AnswerInvalid(`\`${one.action}\` is not a decision langchain takes on \`${request.name}\`: approve, edit or reject it`);
  }
}

function wholeDecision(action: DecisionAction, text: string | null | undefined): ToolDecision {
  if (action === "approve") return { type: "approve" };
  if (action === "reject") return text ? { type: "reject", message: text } : { type: "reject" };
  throw new AnswerInvalid(`\`${action}\` does not decide the tool calls; decide each, or approve or reject them all`);
}

/** The gate asking again after `gate`'s answer could not resume the graph. */
export function retryMapping(mapping: Mapping, gate: Gate, problem: string): Mapping {
  const payload = gate.decision?.payload;
  const keep = payload !== undefined && payload !== null && typeof payload === typeof mapping.options.payload;
  return {
    ...mapping,
    text: `**Your previous answer could not be used:** ${problem}\n\n---\n\n${mapping.text}`,
    // Keep the reviewer's own attempt to fix, where it has the right shape.
    options: keep ? { ...mapping.options, payload } : mapping.options,
  };
}

/** A mapping of the caller's own for the interrupts it knows; `undefined` leaves the interrupt to the built-in shapes. */
export type Mapper = (interrupt: PendingInterrupt) => Mapping | undefined;

/** The gate for one interrupt: the first of `mappers` that knows it, else by the shape of its value. */
export function mappingFor(interrupt: PendingInterrupt, mappers: readonly Mapper[] = []): Mapping {
  for (const mapper of mappers) {
    const mapping = mapper(interrupt);
    if (mapping !== undefined) return mapping;
  }
  const value = interrupt.value;
  if (isHitlRequest(value)) return hitlRequest(value);
  if (isHumanInterrupt(value)) return humanInterrupt(value, false);
  if (Array.isArray(value) && value.length === 1 && isHumanInterrupt(value[0])) return humanInterrupt(value[0], true);
  const record = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const schema = interrupt.response_schema ?? record?.response_schema;
  const question = typeof value === "string" ? value : typeof record?.question === "string" ? record.question : undefined;
  if (schema !== undefined && typeof schema === "object") {
    // The answer is data: the reviewer fills the schema's form and Gatehouse checks it.
    return {
      kind: "question",
      text: question ?? "Answer the form.",
      options: { response_schema: schema, requires_human: true, allowed_actions: ["respond"] },
      resume: (gate) => decided(gate).response,
    };
  }
  if (question !== undefined) {
    return { kind: "question", text: question, options: { requires_human: true }, resume: (gate) => decided(gate).text ?? null };
  }
  return {
    kind: "payload_review",
    text: "Review the graph's payload: approve it, edit it, or reject it.",
    options: { payload: (value ?? null) as Json, requires_human: true },
    resume(gate) {
      const d = decided(gate);
      return { action: d.action, payload: d.payload ?? value, text: d.text ?? null };
    },
  };
}

function decided(gate: Gate) {
  if (gate.status === "expired") throw new Expired(`gate ${gate.id} expired unanswered`, gate);
  if (gate.status === "cancelled") throw new Cancelled(`gate ${gate.id} was cancelled`, gate);
  if (gate.status === "pending" && gate.released) throw new Released(`gate ${gate.id} was released undecided`, gate);
  if (!gate.decision) throw new GatehouseError(`gate ${gate.id} is ${gate.status} without a decision`);
  return gate.decision;
}

export interface HumanOptions extends WaitOptions {
  /** Ask in this run instead of the thread's own (found again by its session, or started). */
  runId?: string;
  title?: string;
  /** Complete the thread's own run with the final state when the graph finishes (default true). */
  completeRun?: boolean;
  /** How many gates one interrupt may take when answers cannot resume the graph (default 5). */
  maxAttempts?: number;
  /** Mappings for the caller's own interrupt shapes, tried before the built-in ones; a `resume` may throw `AnswerInvalid` to ask again. */
  mappers?: readonly Mapper[];
}

/** Drives compiled graphs, answering their interrupts through Gatehouse. */
export class GatehouseHuman {
  /** Every gate this object asked through, in order, as the opening request answered it (decided, or pending when its wait passed). */
  readonly gates: Gate[] = [];
  readonly #runs = new Map<string, string>();

  constructor(
    readonly client: Client,
    readonly options: HumanOptions = {},
  ) {}

  /**
   * Runs `graph` on `config`'s thread until it finishes, answering every
   * interrupt; a thread that already has a checkpoint is continued, not
   * started over. The final state's values.
   */
  async invoke(graph: Graph, input: unknown, config: ThreadConfig): Promise<unknown> {
    const thread = String(config.configurable.thread_id);
    let snapshot = await graph.getState(config);
    const newThread = snapshot.metadata === undefined;
    if (newThread) await graph.invoke(input, config);
    else if (pending(snapshot).length === 0 && snapshot.next.length > 0) await graph.invoke(null, config);
    let runId: string | undefined;
    for (;;) {
      snapshot = await graph.getState(config);
      const interrupts = pending(snapshot);
      if (interrupts.length === 0) break;
      runId ??= await this.#run(thread, graph, newThread);
      const answers: Record<string, unknown> = {};
      const asked = interrupts.map(async (interrupt) => {
        const id = interrupt.id as string;
        answers[id] = await this.#answer(runId as string, thread, id, mappingFor(interrupt, this.options.mappers));
      });
      await Promise.all(asked).catch(async (first: unknown) => {
        if (!(first instanceof Conflict)) throw first;
        // An open refused: the run ended while the questions were being asked (a reviewer who saw
        // the first cancelled it). The gates already open were withdrawn with it and their waits end
        // now: what became of them, not the refusal, is what the caller should hear.
        const all = await Promise.allSettled(asked);
        const withdrawn = all.find((r) => r.status === "rejected" && !(r.reason instanceof Conflict));
        throw withdrawn?.status === "rejected" ? withdrawn.reason : first;
      });
      await graph.invoke(new Command({ resume: answers }), config);
    }
    const own = runId ?? this.#runs.get(thread);
    if ((this.options.completeRun ?? true) && own !== undefined && own !== this.options.runId) {
      await this.client.completeRun(own, snapshot.values as Json).catch((e: unknown) => {
        if (!(e instanceof Conflict)) throw e; // already finished elsewhere
      });
      this.#runs.delete(thread);
    }
    return snapshot.values;
  }

  /** The interrupt's resume value: asked in one request per gate, and asked again while an answer cannot be used. */
  async #answer(runId: string, thread: string, id: string, first: Mapping): Promise<unknown> {
    const most = this.options.maxAttempts ?? 5;
    let mapping = first;
    for (let attempt = 1; ; attempt++) {
      // Opened and held for the decision, long-polled only if still pending.
      const gate = await this.client.openAndWait(
        runId,
        mapping.kind,
        mapping.text,
        { ...mapping.options, idempotencyKey: idempotencyKey(thread, id, attempt) },
        this.#wait(),
      );
      this.gates.push(gate);
      try {
        return mapping.resume(gate);
      } catch (e) {
        if (!(e instanceof AnswerInvalid)) throw e;
        if (attempt >= most) {
          throw new GatehouseError(`interrupt ${id}: no usable answer after ${attempt} gates; last: ${e.message}`, { cause: e });
        }
        mapping = retryMapping(first, gate, e.message);
      }
    }
  }

  /** The thread's run: pinned, known, found by its session, or started. */
  async #run(thread: string, graph: Graph, newThread: boolean): Promise<string> {
    const known = this.options.runId ?? this.#runs.get(thread);
    if (known !== undefined) return known;
    const session = sessionFor(thread);
    const live = newThread ? [] : await this.client.activeRuns({ sessionId: session });
    const name = graph.name ?? "graph";
    const runId =
      live[0]?.id ??
      (await this.client.startRun(
        { thread_id: thread, graph: name },
        { session_id: session, title: this.options.title ?? `LangGraph ${name} · thread ${thread}` },
      ));
    this.#runs.set(thread, runId);
    return runId;
  }

  #wait(): WaitOptions {
    const { timeoutMs, pollSeconds, signal } = this.options;
    return Object.fromEntries(Object.entries({ timeoutMs, pollSeconds, signal }).filter(([, v]) => v !== undefined));
  }
}

/** The snapshot's pending interrupts, each once. */
function pending(snapshot: Awaited<ReturnType<Graph["getState"]>>): PendingInterrupt[] {
  const seen = new Map<string, PendingInterrupt>();
  for (const task of snapshot.tasks) for (const i of task.interrupts) if (i.id && !seen.has(i.id)) seen.set(i.id, i);
  return [...seen.values()];
}
