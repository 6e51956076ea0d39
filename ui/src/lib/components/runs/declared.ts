// Gates declared with a run, beside the gates opened for their nodes: for
// each declared node, what was declared (kind, required score, rubric) and
// the newest gate opened there, if the run has reached it.

import type { DeclaredGate, Gate, GateStatus } from "../../api/types";

/** One declared node as the Runs view shows it. */
export interface DeclaredRow {
  node: string;
  kind: DeclaredGate["kind"];
  /** The declared minimum score (quality gates). */
  requiredScore: number | null;
  rubric: string[];
  /** The newest gate opened for the node, if any. */
  opened: { id: string; status: GateStatus; released: boolean } | null;
  /** How many gates were opened for the node (a revision reaches it again). */
  times: number;
}

/** Each declared gate with what was opened for its node, in declared order. */
export function declaredRows(declared: readonly DeclaredGate[], gates: readonly Gate[]): DeclaredRow[] {
  return declared.map((d) => {
    const here = gates.filter((g) => g.workflow_node_id === d.workflow_node_id);
    const newest = here.reduce<Gate | null>((a, g) => (a === null || g.created_at > a.created_at ? g : a), null);
    return {
      node: d.workflow_node_id,
      kind: d.kind,
      requiredScore: d.kind === "quality_score" ? (d.required_score ?? 3) : null,
      rubric: d.rubric ?? [],
      opened: newest ? { id: newest.id, status: newest.status, released: newest.released != null } : null,
      times: here.length,
    };
  });
}
