// The one way the UI talks to the server: a typed client over fetch,
// generated from the OpenAPI document (openapi-fetch + schema.d.ts). Every
// request carries the reviewer's bearer token in the Authorization header,
// the event stream's too (read with fetch, never with EventSource, which
// would need the token in its URL); a 401 tells the session the token is no
// longer good.

import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema";
import type { ApiErrorBody } from "./types";

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

/** What a call came to: its value, or a message to show (nothing throws). */
export type Answer<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Makes one API call `what` names ("list the rules"), as an answer: its
 * data, else "Cannot list the rules (403): …" from the server's error, or
 * "Cannot reach the server to list the rules: …" when the request failed.
 */
export async function attempt<T>(what: string, call: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  try {
    const { data, error, response } = await call();
    if (data !== undefined) return { ok: true, value: data };
    return { ok: false, message: `Cannot ${what} (${response.status}): ${errorMessage(error)}` };
  } catch (e) {
    return { ok: false, message: `Cannot reach the server to ${what}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
