// How a call reaches the server: one request with the bearer token, retried
// with backoff and jitter when that is safe, and its answer read into a value
// or the typed error it means. A call that opens a gate carries an
// `Idempotency-Key`, the same on every retry, so a retry never opens a second
// gate. Reads are retried too; other writes only when the server did nothing.

import { ConnectionFailed, errorForStatus } from "./errors.js";

/** The API's prefix on the server. */
export const API_PREFIX = "/api/hitl";

/** Exponential backoff with jitter for transient failures. */
export interface RetryPolicy {
  /** Tries in all, the first included (default 6). */
  attempts: number;
  /** The first pause in milliseconds, doubled each time (default 200). */
  backoffMs: number;
  /** The longest pause in milliseconds (default 10 000). */
  maxBackoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, backoffMs: 200, maxBackoffMs: 10_000 };

/** Statuses that say the server did not act on the request: always safe to retry. */
const NOT_PROCESSED = new Set([429, 503]);

/** One API call, independent of how it is sent. */
export interface Call {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Under the API prefix, path segments already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to repeat after an answer was lost: reads, puts, and gate opens with their key. */
  idempotent: boolean;
  /** Overrides the client's timeout (long polls hold the answer). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  retry?: Partial<RetryPolicy>;
  /** Milliseconds before a call without an answer is abandoned (default 30 000). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: Fetch;
}

/** A fresh idempotency key. */
export function newKey(): string {
  return crypto.randomUUID();
}

/** A path segment, percent-encoded. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** Sends calls to one server with one token. */
export class Transport {
  readonly retry: RetryPolicy;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;

  constructor(
    readonly baseUrl: string,
    readonly token: string,
    options: TransportOptions = {},
  ) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The full address of `path` (under the API prefix) with `query`. */
  url(path: string, query: Call["query"] = {}): string {
    const url = new URL(API_PREFIX + path, this.baseUrl);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  /** Sends `call`, retrying transient failures; its parsed JSON answer, or the error it means. */
  async send<T>(call: Call): Promise<T> {
    const where = `${call.method} ${call.path}`;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.#fetch(this.url(call.path, call.query), this.#init(call));
      } catch (error) {
        if (call.signal?.aborted) throw error;
        if (attempt >= this.retry.attempts || !(call.idempotent || neverSent(error))) {
          throw new ConnectionFailed(`${where}: ${describe(error)} (after ${attempt} tries)`, { cause: error });
        }
        await sleep(this.#delay(attempt), call.signal);
        continue;
      }
      const body = await readBody(response);
      if (response.ok) return body as T;
      const transient = NOT_PROCESSED.has(response.status) || (call.idempotent && response.status >= 500);
      if (!transient || attempt >= this.retry.attempts) {
        throw errorForStatus(response.status, body, `${where}: HTTP ${response.status}`, transient ? ` (after ${attempt} tries)` : "");
      }
      await sleep(this.#delay(attempt, response.headers.get("retry-after")), call.signal);
    }
  }

  /** Opens a streaming GET (the event stream): the response once it is 200, else the error it means. */
  async stream(path: string, query: Call["query"], headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    const init: RequestInit = { method: "GET", headers: { ...this.#headers(), accept: "text/event-stream", ...headers } };
    if (signal) init.signal = signal;
    const response = await this.#fetch(this.url(path, query), init);
    if (response.ok) return response;
    throw errorForStatus(response.status, await readBody(response), `GET ${path}: HTTP ${response.status}`);
  }

  /** Milliseconds to pause before try `attempt + 1`. */
  delayBefore(attempt: number): number {
    return this.#delay(attempt);
  }

  #delay(attempt: number, retryAfter?: string | null): number {
    const seconds = retryAfter ? Number(retryAfter) : Number.NaN;
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, this.retry.maxBackoffMs);
    const step = Math.min(this.retry.maxBackoffMs, this.retry.backoffMs * 2 ** (attempt - 1));
    return step * (0.5 + Math.random() / 2);
  }

  #headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}` };
  }

  #init(call: Call): RequestInit {
    const headers: Record<string, string> = { ...this.#headers(), ...call.headers };
    const init: RequestInit = { method: call.method, headers };
    if (call.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    const timeout = AbortSignal.timeout(call.timeoutMs ?? this.#timeoutMs);
    init.signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    return init;
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether a fetch failure happened before the request could reach the server. */
function neverSent(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } })?.cause?.code;
  return code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "UND_ERR_CONNECT_TIMEOUT";
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
