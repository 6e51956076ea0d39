// The one way the UI talks to the server: a typed client over fetch,
// generated from the OpenAPI document (openapi-fetch + schema.d.ts). Every
// request carries the reviewer's bearer token in the Authorization header,
// the event stream's too (read with fetch, never with EventSource, which
// would need the token in its URL); a 401 tells the session the token is no
// longer good.

import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema";
import type { ApiErrorBody, ApiErrorCode } from "./types";

export type Api = Client<paths>;

export interface ApiOptions {
  /** The server's origin; the page's own by default. */
  baseUrl?: string;
  /** A fetch to use instead of the global one (tests). */
  fetch?: (request: Request) => Promise<Response>;
  /** Called when the server refuses the token (401). */
  onUnauthorized?: () => void;
}

/** A client whose every request carries `token`. */
export function createApi(token: string, options: ApiOptions = {}): Api {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? globalThis.location?.origin ?? "",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) options.onUnauthorized?.();
      return response;
    },
  });
  return client;
}

/**
 * Opens the event stream after `after` (0 replays the whole log): the body
 * to read as Server-Sent Events, or `null` when the server refused it.
 */
export async function openEvents(api: Api, after: number, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | null> {
  const { data } = await api.GET("/api/hitl/events", { params: { query: { after } }, parseAs: "stream", signal });
  return data ?? null;
}

/** A readable message from an error body, whatever the server answered. */
export function errorMessage(error: unknown, fallback = "the server refused the request"): string {
  const body = error as Partial<ApiErrorBody> | undefined;
  return typeof body?.message === "string" && body.message.length > 0 ? body.message : fallback;
}

/**
 * Why a call failed, read from the server's error body (`ApiErrorBody`):
 * its code, the field it is about, its own message. The UI acts on `code`
 * and `field`, never on the message's wording, which is only shown.
 */
export interface ApiError {
  /** The HTTP status; 0 when the server could not be reached. */
  status: number;
  /** The server's error code; null when it sent no error body or could not be reached. */
  code: ApiErrorCode | null;
  /** The offending field, parameter or path segment (`response.percent`, `limit`), where there is one. */
  field: string | null;
  /** The server's own message, or why the request failed (the network's error); null when it said nothing. */
  message: string | null;
  /** For a gate conflict: who decided first and when the gate closed. */
  resolvedBy: string | null;
  resolvedAt: string | null;
}

/** The error an answer with `status` and `error` (its parsed body) carries. */
export function apiError(status: number, error: unknown): ApiError {
  const body = (typeof error === "object" && error !== null ? error : {}) as Partial<ApiErrorBody>;
  const text = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
  return {
    status,
    code: (text(body.code) as ApiErrorCode | null) ?? null,
    field: text(body.field),
    message: text(body.message),
    resolvedBy: text(body.resolved_by),
    resolvedAt: text(body.resolved_at),
  };
}

/** What a call came to: its value, or a message to show with the error behind it (nothing throws). */
export type Answer<T> = { ok: true; value: T } | { ok: false; message: string; error: ApiError };

/**
 * Makes one API call `what` names ("list the rules"), as an answer: its
 * data, else "Cannot list the rules (403): …" from the server's error, or
 * "Cannot reach the server to list the rules: …" when the request failed;
 * either way with the error itself (status, code, field) to act on.
 */
export async function attempt<T>(what: string, call: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call();
    if (data !== undefined) return { ok: true, value: data };
    const refused = apiError(response.status, error);
    return { ok: false, message: `Cannot ${what} (${response.status}): ${errorMessage(error)}`, error: refused };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const unreachable: ApiError = { status: 0, code: null, field: null, message: reason, resolvedBy: null, resolvedAt: null };
    return { ok: false, message: `Cannot reach the server to ${what}: ${reason}`, error: unreachable };
  }
}
