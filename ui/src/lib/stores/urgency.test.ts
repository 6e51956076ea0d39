// The header's urgency: agents blocked on sync gates, counted apart from async and advisory gates.

import { describe, expect, it } from "vitest";
import type { GateSummary } from "../api/types";
import { urgencyOf, urgencySentence } from "./queue-logic";

const gate = (id: string, mode: GateSummary["mode"], agent: string, run = "run-1") =>
  ({ id, mode, agent, run_id: run, priority: "normal", kind: "approval", preview: "", status: "pending", created_at: "2026-01-01T00:00:00Z" }) as unknown as GateSummary;

describe("urgency", () => {
  it("counts each agent stopped on a sync gate once, and the others apart", () => {
    const u = urgencyOf([
      gate("a", "sync", "deployer"),
      gate("b", "sync", "deployer"),
      gate("c", "sync", "deployer", "run-2"),
      gate("d", "sync", "writer"),
      gate("e", "async", "writer"),
      gate("f", "advisory", "critic"),
    ]);
    expect(u).toEqual({ blockedAgents: 3, sync: 4, async: 1, advisory: 1 });
    expect(urgencySentence(u)).toBe("3 agents blocked waiting · 1 async · 1 advisory");
  });

  it("says no agent is blocked when only async and advisory gates wait", () => {
    expect(urgencySentence(urgencyOf([gate("e", "async", "w")]))).toBe("No agent blocked · 1 async");
    expect(urgencySentence(urgencyOf([gate("d", "sync", "w")]))).toBe("1 agent blocked waiting");
  });
});
