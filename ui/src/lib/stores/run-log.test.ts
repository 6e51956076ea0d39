import { describe, expect, it } from "vitest";
import { createApi } from "../api/client";
import { jsonResponse } from "../test-fixtures";
import { runEvents } from "./run-log";

describe("a run's event log", () => {
  it("reads a run's whole event log page by page", async () => {
    const pages = [
      { events: [{ seq: 3 }, { seq: 5 }], next_after: 5 },
      { events: [{ seq: 8 }, { seq: 9 }], next_after: 9 },
      { events: [{ seq: 12 }], next_after: 12 },
    ];
    const seen: string[] = [];
    const client = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async (request) => {
        seen.push(new URL(request.url).search);
        return jsonResponse(200, pages[seen.length - 1]);
      },
    });
    const all = await runEvents(client, "run_1", 2);
    expect(all.ok && all.value.map((e) => e.seq)).toEqual([3, 5, 8, 9, 12]);
    expect(seen).toEqual(["?after=0&limit=2", "?after=5&limit=2", "?after=9&limit=2"]);
  });

  it("says why the server refused it", async () => {
    const client = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async () => jsonResponse(403, { code: "forbidden", message: "not your run" }),
    });
    const refused = await runEvents(client, "run_1");
    expect(refused).toMatchObject({ ok: false, message: "Cannot read the run's events (403): not your run", error: { status: 403, code: "forbidden" } });
  });
});
