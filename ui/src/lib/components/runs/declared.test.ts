import { describe, expect, it } from "vitest";
import type { DeclaredGate, Gate } from "../../api/types";
import { declaredRows } from "./declared";

const declared = [
  { workflow_node_id: "review", kind: "quality_score", required_score: 4, rubric: ["accuracy"] },
  { workflow_node_id: "ship", kind: "approval" },
] as DeclaredGate[];

function gate(id: string, node: string | null, created_at: string, status = "pending"): Gate {
  return { id, workflow_node_id: node, created_at, status } as unknown as Gate;
}

describe("declared gates", () => {
  it("pairs each declared node with the newest gate opened there, and says which are not reached", () => {
    const gates = [
      gate("g1", "review", "2026-01-01T00:00:00Z", "resolved"),
      gate("g2", "review", "2026-01-01T00:05:00Z"),
      gate("g3", null, "2026-01-01T00:06:00Z"),
    ];
    const rows = declaredRows(declared, gates);
    expect(rows.map((r) => [r.node, r.requiredScore, r.opened?.id ?? null, r.times])).toEqual([
      ["review", 4, "g2", 2],
      ["ship", null, null, 0],
    ]);
  });
});
