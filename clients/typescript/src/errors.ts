// The errors the client throws. Every one is a GatehouseError carrying the
// server's error body as typed fields (`status`, `code`, `message`, `field`),
// so callers branch on the class, `code` and `field`, never on the text.
// Gate outcomes that stop an agent (rejected, expired, cancelled) and a wait
// of the caller's own that ran out are errors too.

import type { ApiErrorBody, ApiErrorCode, Decision, Gate } from "./types.js";

/** Base class: the server's message, HTTP status, error code and offending field, where known. */
export class GatehouseError extends Error {
  /** The HTTP status; undefined when no answer came (or for gate outcomes). */
  readonly status: number | undefined;
  /** The server's error code (`ApiErrorCode`), when it sent an error body. */
  readonly code: ApiErrorCode | undefined;
  /** The offending field, query parameter or path segment, where there is one. */
  readonly field: string | undefined;
  /** The error body as the server sent it (parsed JSON, or text). */
  readonly body: unknown;

  constructor(message: string, options: { status?: number; code?: ApiErrorCode; field?: string; body?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.code = options.code;
    this.field = options.field;
    this.body = options.body;
  }
}

/** 401: no token, or an unknown or revoked one; 403: the token's role may not do this. */
export class AuthError extends GatehouseError {}
/** 404: no such run, gate, context key or token. */
export class NotFound extends GatehouseError {}
/** 409: someone decided first, or the run's state forbids the change. */
export class Conflict extends GatehouseError {
  /** For a gate decided first by someone else: who decided. */
  readonly resolvedBy: string | undefined;
  /** For a gate decided first by someone else: when it closed. */
  readonly resolvedAt: string | undefined;
  constructor(message: string, options: ConstructorParameters<typeof GatehouseError>[1] = {}) {
    super(message, options);
    const body = asErrorBody(options.body);
    this.resolvedBy = body?.resolved_by ?? undefined;
    this.resolvedAt = body?.resolved_at ?? undefined;
  }
}
/** 400, 413 or 422: the request breaks a rule; `field` names what. */
export class InvalidRequest extends GatehouseError {}
/** 5xx that retries did not get past. */
export class ServerError extends GatehouseError {}
/** The server could not be reached, or the connection broke, and retries did not help. */
export class ConnectionFailed extends GatehouseError {}

/** A gate closed without letting the agent go ahead; `gate` is the gate as it closed. */
export class GateOutcome extends GatehouseError {
  constructor(
    message: string,
    readonly gate: Gate,
  ) {
    super(message);
  }
}
/** The reviewer rejected; `reason` is their text. */
export class Rejected extends GateOutcome {
  readonly reason: string | undefined;
  constructor(
    message: string,
    gate: Gate,
    readonly decision: Decision,
  ) {
    super(message, gate);
    this.reason = decision.text ?? undefined;
  }
}
/** Nobody decided before the gate's expiry. */
export class Expired extends GateOutcome {}
/** The gate was withdrawn (its run ended, failed or was cancelled). */
export class Cancelled extends GateOutcome {}

/**
 * A reviewer released the gate: its run went on without waiting. Nothing was
 * decided or approved; the gate is still open (`gate.released` says who and
 * when) and may be decided later (`waitClosed(id, { throughRelease: true })`).
 */
export class Released extends GateOutcome {}

/** The caller's own wait ran out while the gate was still pending; the gate stays open. */
export class WaitTimeout extends GatehouseError {
  constructor(
    message: string,
    readonly gateId: string,
  ) {
    super(message);
  }
}

const CODES: readonly ApiErrorCode[] = [
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "payload_too_large",
  "invalid",
  "unavailable",
  "internal",
];

function asErrorBody(body: unknown): ApiErrorBody | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Partial<ApiErrorBody>;
  return typeof b.message === "string" ? (b as ApiErrorBody) : undefined;
}

/** The error an HTTP error answer means (`body` parsed JSON, or its text; `note` is appended to the message). */
export function errorForStatus(status: number, body: unknown, fallback: string, note = ""): GatehouseError {
  const parsed = asErrorBody(body);
  const message = (parsed?.message ?? (typeof body === "string" && body ? body : fallback)) + note;
  const code = parsed && CODES.includes(parsed.code) ? parsed.code : undefined;
  const options = { status, code, field: parsed?.field ?? undefined, body } as const;
  if (status === 401 || status === 403) return new AuthError(message, options);
  if (status === 404) return new NotFound(message, options);
  if (status === 409) return new Conflict(message, options);
  if (status === 400 || status === 413 || status === 422) return new InvalidRequest(message, options);
  if (status >= 500) return new ServerError(message, options);
  return new GatehouseError(message, options);
}
