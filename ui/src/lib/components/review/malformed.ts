// What in a gate its kind's review cannot render: an agent may send data
// the server accepts but the review does not expect (a plan whose tasks have
// no ids, a response review without its texts). Such a gate is shown raw,
// with these warnings, instead of breaking the modal.

import type { Gate } from "../../api/types";

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Why the plan in a plan review's payload cannot be listed as tasks, if it cannot. */
function planProblems(payload: unknown): string[] {
  if (!isObject(payload) || !("tasks" in payload)) return [];
  const tasks = payload.tasks;
  if (!Array.isArray(tasks)) return ["The plan's `tasks` is not a list."];
  const problems: string[] = [];
  const seen = new Set<string>();
  tasks.forEach((task, i) => {
    const n = i + 1;
    if (!isObject(task)) problems.push(`Task ${n} is not an object.`);
    else if (typeof task.task_id !== "string" || task.task_id.trim() === "") problems.push(`Task ${n} has no \`task_id\`.`);
    else if (seen.has(task.task_id)) problems.push(`Task id \`${task.task_id}\` is used by more than one task.`);
    else seen.add(task.task_id);
    if (isObject(task) && task.dependencies !== undefined && !(Array.isArray(task.dependencies) && task.dependencies.every((d) => typeof d === "string"))) {
      problems.push(`Task ${n}'s dependencies are not a list of ids.`);
    }
  });
  return problems;
}

/** What the gate's review cannot render, in words; empty when it renders as intended. */
export function malformedParts(gate: Pick<Gate, "spec" | "payload">): string[] {
  const spec = gate.spec as Record<string, unknown> & { kind: string };
  switch (spec.kind) {
    case "plan_review":
      return planProblems(gate.payload);
    case "response_review": {
      const missing = ["raw", "audited"].filter((k) => typeof spec[k] !== "string");
      return missing.length > 0 ? [`The response review has no ${missing.map((k) => `\`${k}\``).join(" or ")} text.`] : [];
    }
    case "quality_score": {
      const rubric = spec.rubric;
      if (rubric === undefined || rubric === null) return [];
      return Array.isArray(rubric) && rubric.every((c) => typeof c === "string") ? [] : ["The rubric is not a list of criteria."];
    }
    default:
      return [];
  }
}

/** The gate's spec and payload as indented JSON, for showing them raw. */
export function rawGateData(gate: Pick<Gate, "spec" | "payload">): string {
  try {
    return JSON.stringify({ spec: gate.spec, payload: gate.payload ?? null }, null, 2);
  } catch {
    return String(gate.payload);
  }
}
