import { describe, expect, it } from "vitest";
import { jsonResponse } from "../test-fixtures";
import { attempt, createApi, errorMessage, openEvents } from "./client";

describe("the API client", () => {
  it("sends the bearer token and the queue's query", async () => {
    let seen: Request | undefined;
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async (request) => {
        seen = request;
        return jsonResponse(200, { gates: [], total: 0 });
      },
    });
    const { data } = await api.GET("/api/hitl/gates", { params: { query: { status: "pending", limit: 10_000 } } });
    expect(data).toEqual({ gates: [], total: 0 });
    expect(seen?.headers.get("Authorization")).toBe("Bearer tok");
    expect(new URL(seen!.url).search).toBe("?status=pending&limit=10000");
  });

  it("tells the session when the server refuses the token", async () => {
    let refused = 0;
    const api = createApi("revoked", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => jsonResponse(401, { code: "unauthorized", message: "this token is unknown or revoked" }),
      onUnauthorized: () => refused++,
    });
    const { error } = await api.GET("/api/hitl/gates/{gate_id}", { params: { path: { gate_id: "g1" } } });
    expect(refused).toBe(1);
    expect(errorMessage(error)).toBe("this token is unknown or revoked");
  });

  it("opens the event stream with the token in the header and none in the URL", async () => {
    let seen: Request | undefined;
    const api = createApi("a b", {
      baseUrl: "http://h",
      fetch: async (request) => {
        seen = request;
        return new Response("id: 1\n\n", { status: 200, headers: { "Content-Type": "text/event-stream" } });
      },
    });
    const body = await openEvents(api, 42, new AbortController().signal);
    expect(await new Response(body).text()).toBe("id: 1\n\n");
    expect(seen?.url).toBe("http://h/api/hitl/events?after=42");
    expect(seen?.headers.get("Authorization")).toBe("Bearer a b");
  });

  it("answers a refused event stream with nothing to read, and tells the session of a 401", async () => {
    let refused = 0;
    const api = createApi("revoked", {
      baseUrl: "http://h",
      fetch: async () => jsonResponse(401, { code: "unauthorized", message: "this token is unknown or revoked" }),
      onUnauthorized: () => refused++,
    });
    expect(await openEvents(api, 0, new AbortController().signal)).toBeNull();
    expect(refused).toBe(1);
  });

  it("falls back to a generic message for bodies without one", () => {
    expect(errorMessage(undefined)).toBe("the server refused the request");
    expect(errorMessage({ code: "internal" }, "oops")).toBe("oops");
  });

  it("answers a refusal with the body's code and field beside the message to show", async () => {
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => jsonResponse(422, { code: "invalid", message: "must be between 1 and 10000", field: "limit" }),
    });
    const answer = await attempt("list the gates", () => api.GET("/api/hitl/gates", { params: { query: { limit: 0 } } }));
    expect(answer).toEqual({
      ok: false,
      message: "Cannot list the gates (422): must be between 1 and 10000",
      error: { status: 422, code: "invalid", field: "limit", message: "must be between 1 and 10000", resolvedBy: null, resolvedAt: null },
    });
  });

  it("answers an unreachable server with status 0 and no code", async () => {
    const api = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => {
        throw new TypeError("Failed to fetch");
      },
    });
    const answer = await attempt("list the gates", () => api.GET("/api/hitl/gates", {}));
    expect(answer).toEqual({
      ok: false,
      message: "Cannot reach the server to list the gates: Failed to fetch",
      error: { status: 0, code: null, field: null, message: "Failed to fetch", resolvedBy: null, resolvedAt: null },
    });
  });
});
