// The review metrics as the Metrics view charts them: what share of
// gates waited for a person and what passed on its own (per review type,
// agent and model), how long people took per review type, how each
// reviewer decides, how many gates expired, and how each agent rates.
// The figures come from `GET /api/hitl/metrics` (computed by the engine
// over the whole database); this module only loads them, decides when
// they are stale, and turns them into labelled bars.

import { attempt, type Answer, type Api } from "../../api/client";
import type { GateKind, LogEvent, Metrics } from "../../api/types";
import { KIND_LABELS } from "../../format";

/** Loads the metrics (reviewers and admins with unscoped tokens only). */
export function loadMetrics(api: Api): Promise<Answer<Metrics>> {
  return attempt("load the metrics", () => api.GET("/api/hitl/metrics"));
}

/** Events after which the figures may have changed: a gate opened or closed, a score given. */
export function touchesMetrics(events: readonly LogEvent[]): boolean {
  return events.some((e) => e.type.startsWith("gate_") || e.type === "score_recorded" || e.type === "actions_decided" || e.type === "recording_imported");
}

/** One bar: a label, its value, and the text shown beside it. */
export interface Bar {
  label: string;
  /** Where the bar ends, from 0 to `max` of its chart. */
  value: number;
  /** The value in words ("75 %", "2.5 s", "4.2 of 5"). */
  text: string;
  /** A second line under the label ("12 gates"). */
  detail?: string;
}

/** A share as a whole percentage, or a dash when there is none. */
export function percent(rate: number | null | undefined): string {
  if (rate == null || !Number.isFinite(rate)) return "–";
  const p = rate * 100;
  return `${p > 0 && p < 1 ? "<1" : Math.round(p)} %`;
}

/** Milliseconds as a person reads a wait: "850 ms", "12.5 s", "4.2 min", "3.1 h". */
export function duration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const units: [number, string][] = [
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ];
  for (const [size, unit] of units) {
    if (ms >= size) {
      const v = ms / size;
      return `${v >= 100 ? Math.round(v) : Number(v.toFixed(1))} ${unit}`;
    }
  }
  return `${Math.round(ms)} ms`;
}

function gates(n: number): string {
  return `${n} gate${n === 1 ? "" : "s"}`;
}

/** The share of gates that waited for a person, per review type (kinds without gates are left out). */
export function hitlByKind(m: Metrics): Bar[] {
  return m.by_kind
    .filter((k) => k.gates > 0)
    .map((k) => ({
      label: kindLabel(k.kind),
      value: k.hitl_rate ?? 0,
      text: percent(k.hitl_rate),
      detail: `${gates(k.gates)}, ${k.auto_passed} passed on their own`,
    }));
}

/** The share of each agent's gates that waited for a person, most first. */
export function hitlByAgent(m: Metrics): Bar[] {
  return [...m.by_agent]
    .filter((a) => a.gates > 0)
    .sort((a, b) => (b.hitl_rate ?? 0) - (a.hitl_rate ?? 0) || a.agent.localeCompare(b.agent))
    .map((a) => ({
      label: a.agent,
      value: a.hitl_rate ?? 0,
      text: percent(a.hitl_rate),
      detail: `${gates(a.gates)}, ${a.auto_passed} passed on their own`,
    }));
}

/** Each model's auto-pass rate (runs that named a model), most first, with how people decided the rest. */
export function autoPassByModel(m: Metrics): Bar[] {
  return [...m.by_model]
    .filter((x) => x.gates > 0)
    .sort((a, b) => (b.auto_pass_rate ?? 0) - (a.auto_pass_rate ?? 0) || a.model.localeCompare(b.model))
    .map((x) => {
      const d = x.decisions;
      const decided = d.decided
        ? `; people approved ${percent(d.approval_rate)}, edited ${percent(d.edit_rate)} of ${d.decided} in ${duration(d.avg_latency_ms)} on average`
        : "";
      return {
        label: x.model,
        value: x.auto_pass_rate ?? 0,
        text: percent(x.auto_pass_rate),
        detail: `${gates(x.gates)}, ${x.auto_passed} passed on their own${decided}`,
      };
    });
}

/** Each reviewer's mean time to decide, quickest first, with how they decided. */
export function reviewers(m: Metrics): { bars: Bar[]; max: number } {
  const bars = [...m.by_reviewer]
    .filter((r) => r.decided > 0)
    .sort((a, b) => (a.avg_latency_ms ?? 0) - (b.avg_latency_ms ?? 0) || a.reviewer.localeCompare(b.reviewer))
    .map((r) => {
      const own = r.self_decided ? `, ${r.self_decided} self-decided` : "";
      return {
        label: r.reviewer,
        value: r.avg_latency_ms ?? 0,
        text: duration(r.avg_latency_ms),
        detail: `${r.decided} decided: ${percent(r.approval_rate)} approved, ${percent(r.edit_rate)} edited, ${percent(r.rejection_rate)} rejected${own}`,
      };
    });
  return { bars, max: Math.max(0, ...bars.map((b) => b.value)) };
}

/** Mean time to a person's decision per review type; kinds nobody decided yet are left out. */
export function latencyByKind(m: Metrics): { bars: Bar[]; max: number } {
  const bars = m.by_kind
    .filter((k) => k.avg_human_latency_ms != null)
    .map((k) => ({
      label: kindLabel(k.kind),
      value: k.avg_human_latency_ms ?? 0,
      text: duration(k.avg_human_latency_ms),
      detail: `${k.human_decided} decided by a person`,
    }));
  return { bars, max: Math.max(0, ...bars.map((b) => b.value)) };
}

/** Each agent's capability rating on the 1-to-5 scale, best first; unrated agents last. */
export function ratings(m: Metrics): Bar[] {
  return [...m.capability_ratings]
    .sort((a, b) => (b.effective_rating ?? 0) - (a.effective_rating ?? 0) || a.agent.localeCompare(b.agent))
    .map((r) => {
      const parts = [];
      if (r.approval_rate != null) parts.push(`${percent(r.approval_rate)} of ${r.decisions} decisions approved`);
      if (r.average_score != null) parts.push(`mean score ${r.average_score.toFixed(1)} over ${r.scores}`);
      return {
        label: r.agent,
        value: r.effective_rating ?? 0,
        text: r.effective_rating == null ? "not rated yet" : `${r.effective_rating.toFixed(1)} of 5`,
        detail: parts.join("; ") || "no decisions or scores yet",
      };
    });
}

/** The payload fields people corrected most often. */
export function corrections(m: Metrics): { bars: Bar[]; max: number } {
  const bars = m.common_corrections.map((c) => ({
    label: c.path === "" ? "(the whole payload)" : c.path,
    value: c.count,
    text: `${c.count}×`,
  }));
  return { bars, max: Math.max(0, ...bars.map((b) => b.value)) };
}

function kindLabel(kind: GateKind): string {
  return KIND_LABELS[kind] ?? kind;
}
