// What the preview pane shows of a gate, by its kind, the way a reviewer
// reads that kind: an approval's action and payload as a table; a
// question's preset answers; a plan's tasks with what each waits for; a
// goal and its deliverables in words; a quality gate's criteria, weights
// and required score; an information review's prompt, model and the
// agent's reasons; a response review's audited text and indicators. Pure
// and defensive: agent data of any shape gives a view (the parts that
// cannot be read are left out, and `malformedParts` names them for the
// pane's warning), never an exception.

import type { Gate } from "../../api/types";
import { DECIDED } from "../../format";
import { criteriaOf, requiredScore } from "../review/quality";
import { readableText } from "../review/readable";
import { requestFields, settingsRows } from "../review/information";
import { payloadExcerpt } from "./details";

/** A payload as the pane shows it: a table of its fields, or its JSON (cut when large). */
export type PayloadView = { rows: { key: string; value: string }[] } | { json: string; cut: boolean; size: string } | null;

export interface TaskRow {
  id: string;
  description: string;
  /** The ids it depends on. */
  after: string[];
  status: string | null;
}

export type KindView =
  | { kind: "approval"; action: string | null; payload: PayloadView }
  | { kind: "payload_review"; validation: string[]; suggestions: string[]; required: string[]; payload: PayloadView }
  | { kind: "question"; options: { title: string; description: string | null; outcome: string | null }[]; payload: PayloadView }
  | { kind: "plan_review"; round: number | null; revision: number | null; tasks: TaskRow[] | null }
  | { kind: "goal_review"; round: number | null; goal: string; deliverables: string | null }
  | { kind: "quality_score"; criteria: { name: string; weight: string | null }[]; required: number; deliverable: string | null; payload: PayloadView }
  | { kind: "information_review"; prompt: string; model: string; settings: { name: string; value: string }[]; reasons: string[] }
  | { kind: "response_review"; audited: string | null; edited: boolean; indicators: string[] };

/** The most fields a payload table lists; a payload with more is shown as JSON. */
export const TABLE_FIELDS = 40;
/** How much of one field's value a table cell shows. */
const CELL_CHARS = 400;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);
const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
const count = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function cell(value: unknown): string {
  let shown: string;
  try {
    shown = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    shown = String(value);
  }
  return shown.length > CELL_CHARS ? `${shown.slice(0, CELL_CHARS)}…` : shown;
}

/** A payload as a table when it is an object of a readable size, else as JSON; none when there is none. */
export function payloadView(payload: unknown): PayloadView {
  if (payload === undefined || payload === null) return null;
  if (isObject(payload)) {
    const entries = Object.entries(payload);
    if (entries.length > 0 && entries.length <= TABLE_FIELDS) return { rows: entries.map(([key, v]) => ({ key, value: cell(v) })) };
  }
  try {
    const { text: json, cut, size } = payloadExcerpt(payload);
    return { json, cut, size };
  } catch {
    return { json: String(payload), cut: false, size: "" };
  }
}

function planTasks(payload: unknown): TaskRow[] | null {
  const tasks = isObject(payload) ? payload.tasks : undefined;
  if (!Array.isArray(tasks)) return null;
  return tasks.filter(isObject).map((t, i) => ({
    id: text(t.task_id) ?? `#${i + 1}`,
    description: text(t.description) ?? "",
    after: strings(t.dependencies),
    status: text(t.status),
  }));
}

/** A criterion's weight, if the payload gives one: `weights: {name: w}` or `criteria: [{name, weight}]`. */
function weightOf(payload: unknown, name: string): string | null {
  if (!isObject(payload)) return null;
  const weights = payload.weights;
  if (isObject(weights) && count(weights[name]) !== null) return String(weights[name]);
  const listed = Array.isArray(payload.criteria) ? payload.criteria.filter(isObject).find((c) => c.name === name) : undefined;
  const w = listed ? count(listed.weight) : null;
  return w === null ? null : String(w);
}

/** The pane's view of `gate`, by its kind; a plan review without a plan in its payload shows `runPlan`, its run's. */
export function kindView(gate: Pick<Gate, "spec" | "payload" | "options">, runPlan?: unknown): KindView {
  const spec = gate.spec as Record<string, unknown> & { kind: Gate["spec"]["kind"] };
  const payload = gate.payload;
  switch (spec.kind) {
    case "payload_review":
      return { kind: spec.kind, validation: strings(spec.validation), suggestions: strings(spec.suggestions), required: strings(spec.required_fields), payload: payloadView(payload) };
    case "question":
      return {
        kind: spec.kind,
        options: (Array.isArray(gate.options) ? gate.options : []).filter(isObject).map((o) => ({
          title: text(o.title) ?? text(o.name) ?? "(untitled)",
          description: text(o.description),
          outcome: typeof o.action === "string" && o.action in DECIDED ? DECIDED[o.action as keyof typeof DECIDED] : null,
        })),
        payload: payloadView(payload),
      };
    case "plan_review":
      return { kind: spec.kind, round: count(spec.round), revision: count(spec.plan_revision), tasks: planTasks(payload) ?? planTasks(runPlan) };
    case "goal_review": {
      const deliverables = isObject(payload) && payload.deliverables != null ? readableText(payload.deliverables) : null;
      return { kind: spec.kind, round: count(spec.round), goal: readableText(spec.goal), deliverables };
    }
    case "quality_score":
      return {
        kind: spec.kind,
        criteria: criteriaOf({ ...gate.spec, rubric: strings(spec.rubric) } as Gate["spec"]).map((c) => ({ name: c.name, weight: weightOf(payload, c.name) })),
        required: requiredScore(gate.spec),
        deliverable: text(spec.deliverable_id),
        payload: payloadView(payload),
      };
    case "information_review": {
      const { prompt, model } = requestFields(payload);
      return { kind: spec.kind, prompt, model, settings: settingsRows(spec.recommended_settings), reasons: strings(spec.reasons) };
    }
    case "response_review": {
      const edited = isObject(payload) && typeof payload.audited === "string" && payload.audited !== spec.audited;
      return { kind: spec.kind, audited: text(spec.audited), edited, indicators: strings(spec.indicators) };
    }
    default:
      return { kind: "approval", action: text(spec.action), payload: payloadView(payload) };
  }
}
