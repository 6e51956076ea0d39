import { describe, expect, it } from "vitest";
import { jsonResponse } from "../test-fixtures";
import { createApi, errorMessage, eventsUrl } from "./client";

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

  it("builds the event stream's URL with the token in the query, since EventSource cannot send headers", () => {
    expect(eventsUrl("http://h", "a b", 42)).toBe("http://h/api/hitl/events?access_token=a+b&after=42");
  });

  it("falls back to a generic message for bodies without one", () => {
    expect(errorMessage(undefined)).toBe("the server refused the request");
    expect(errorMessage({ code: "internal" }, "oops")).toBe("oops");
  });
});
