// The memory snapshots' labels and entries in words, never raw identifiers;
// a deletion goes to the run's memory or to the global memory by its scope.

import { describe, expect, it, vi } from "vitest";
import type { Api } from "../../api/client";
import { deleteMemory, entryPlace, snapshotReason } from "./memory";

describe("a memory snapshot's reason", () => {
  it("names the handoff's turn, or the run's end", () => {
    expect(snapshotReason("handoff:4")).toBe("At a handoff (turn 4)");
    expect(snapshotReason("end")).toBe("At the run's end");
  });

  it("shows a label it does not know as it is", () => {
    expect(snapshotReason("checkpoint:2")).toBe("checkpoint:2");
  });
});

describe("a snapshot entry's place", () => {
  it("is its scope in words and its key, which may hold a colon", () => {
    expect(entryPlace("team:test_report")).toEqual({ scope: "The team's memory", key: "test_report" });
    expect(entryPlace("run:handoff:3")).toEqual({ scope: "This run's memory", key: "handoff:3" });
    expect(entryPlace("loose")).toEqual({ scope: "", key: "loose" });
  });
});

describe("deleting a remembered value", () => {
  function fakeApi() {
    const DELETE = vi.fn(async (_path: string, _init: unknown) => ({
      data: { scope: "team", key: "k", value: 1, by: "tester", deleted_by: "alice" },
      response: new Response(null, { status: 200 }),
    }));
    return { api: { DELETE } as unknown as Api, DELETE };
  }

  it("asks the run's memory for its run and team scopes", async () => {
    const { api, DELETE } = fakeApi();
    const answer = await deleteMemory(api, "r1", "team", "test_report");
    expect(answer.ok).toBe(true);
    expect(DELETE).toHaveBeenCalledWith("/api/hitl/runs/{run_id}/memory/{scope}/{key}", {
      params: { path: { run_id: "r1", scope: "team", key: "test_report" } },
    });
  });

  it("asks the global memory for the global scope", async () => {
    const { api, DELETE } = fakeApi();
    await deleteMemory(api, "r1", "global", "house_style");
    expect(DELETE).toHaveBeenCalledWith("/api/hitl/memory/global/{key}", { params: { path: { key: "house_style" } } });
  });
});
