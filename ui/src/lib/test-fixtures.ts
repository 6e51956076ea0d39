// Gates and events shaped exactly as the server sends them (typed by the
// generated schema), for the unit tests.

import type { Gate, GateSummary, LogEvent, Run, RunSummary } from "./api/types";

let seq = 0;

export function gate(overrides: Partial<Gate> = {}): Gate {
  return {
    id: "gate_1",
    run_id: "run_1",
    spec: { kind: "question" },
    mode: "sync",
    priority: "normal",
    agent: "BackendWorker-abc123",
    text: "Which database should the migration target?",
    context: {},
    payload: null,
    example_input: null,
    allowed_actions: ["respond", "defer"],
    requires_human: false,
    quorum: null,
    votes: [],
    status: "pending",
    decision: null,
    status_reason: null,
    idempotency_key: null,
    created_at: "2026-01-01T00:00:00.000000Z",
    expires_at: null,
    closed_at: null,
    ...overrides,
  };
}

export function summary(overrides: Partial<GateSummary> = {}): GateSummary {
  return {
    id: "gate_1",
    run_id: "run_1",
    kind: "question",
    mode: "sync",
    priority: "normal",
    agent: "BackendWorker-abc123",
    preview: "Which database should the migration target?",
    status: "pending",
    created_at: "2026-01-01T00:00:00.000000Z",
    expires_at: null,
    ...overrides,
  };
}

function envelope(): Omit<LogEvent, "type"> {
  seq += 1;
  return { seq, hash: "00", at: "2026-01-01T00:10:00Z", actor: "system", run_id: "run_1" } as Omit<LogEvent, "type">;
}

export function opened(g: Gate): LogEvent {
  return { ...envelope(), type: "gate_opened", gate: g } as LogEvent;
}

export function resolved(gateId: string, by = "alice", at = "2026-01-01T00:05:00Z"): LogEvent {
  return {
    ...envelope(),
    type: "gate_resolved",
    gate_id: gateId,
    decision: {
      id: `dec_${gateId}`,
      gate_id: gateId,
      run_id: "run_1",
      action: "respond",
      decided_by: by,
      origin: { by: "human" },
      text: "Postgres",
      payload: null,
      diff: null,
      score: null,
      decided_at: at,
      latency_ms: 300_000,
    },
  } as LogEvent;
}

export function expired(gateId: string): LogEvent {
  return { ...envelope(), type: "gate_expired", gate_id: gateId, reason: "no answer in 24 h" } as LogEvent;
}

export function cancelled(gateId: string): LogEvent {
  return { ...envelope(), type: "gate_cancelled", gate_id: gateId, reason: "run cancelled" } as LogEvent;
}

export function turnAdded(): LogEvent {
  return { ...envelope(), type: "turn_added", turn: {} } as unknown as LogEvent;
}

/** A JSON response as the server sends it. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

export function runSummary(overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    id: "run_1",
    title: "Migrate the billing database",
    agent: "BackendWorker-abc123",
    status: "active",
    user_id: null,
    session_id: null,
    progress: { total: 4, completed: 1, status: "in_progress" },
    pending_gates: 0,
    created_at: "2026-01-01T00:00:00.000000Z",
    updated_at: "2026-01-01T00:00:00.000000Z",
    ...overrides,
  };
}

export function run(overrides: Partial<Run> = {}): Run {
  return {
    id: "run_1",
    title: "Migrate the billing database",
    agent: "BackendWorker-abc123",
    participants: [{ name: "alice", role: "human" }],
    status: "active",
    hitl_config: {},
    protocol: {},
    execution_mode: "autonomous",
    step_mode: "continuous",
    input: {},
    turn_count: 0,
    consecutive_agent_turns: 0,
    created_at: "2026-01-01T00:00:00.000000Z",
    updated_at: "2026-01-01T00:00:00.000000Z",
    ...overrides,
  } as Run;
}

/** Any event of the log, with its envelope filled in (`run_1`, by `system` unless told). */
export function event(body: Record<string, unknown>, where: Partial<{ actor: string; at: string; run_id: string }> = {}): LogEvent {
  return { ...envelope(), ...envelopeOverrides(where), ...body } as unknown as LogEvent;
}

function envelopeOverrides(e: Partial<{ actor: string; at: string; run_id: string }>): Record<string, string> {
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as Record<string, string>;
}
