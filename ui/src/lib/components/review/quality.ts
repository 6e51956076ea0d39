// A quality gate: the reviewer scores each rubric criterion from 1 to 5
// with a justification; the overall score is their average (the engine's
// `rubric_average`), and it passes when it reaches `required_score` (the
// engine's `evaluate`, with the same tolerance). The score travels in the
// decision's `score` field: the server has no separate scoring endpoint.

import type { GateSpec, QualityScore } from "../../api/types";

/** The engine's tolerance for "at or above the required score". */
const TOLERANCE = 1e-9;
export const DEFAULT_REQUIRED = 3;
/** The criterion scored when a gate has no rubric. */
export const OVERALL = "Overall";

/** A quality gate's score as the reviewer has given it so far. */
export interface ScoreDraft {
  /** The score to send, once every criterion is scored and justified. */
  score: QualityScore | null;
  /** Whether the overall score reaches the gate's `required_score`. */
  passes: boolean;
  /** What is still missing, when `score` is null. */
  problem: string | null;
}

/** One criterion as the reviewer fills it in. */
export interface CriterionDraft {
  name: string;
  score: number | null;
  justification: string;
}

/** The criteria to score: the rubric, or one overall score without one. */
export function criteriaOf(spec: GateSpec): CriterionDraft[] {
  const rubric = spec.kind === "quality_score" ? (spec.rubric ?? []).map((c) => c.trim()).filter(Boolean) : [];
  const names = rubric.length > 0 ? [...new Set(rubric)] : [OVERALL];
  return names.map((name) => ({ name, score: null, justification: "" }));
}

/** `fresh` criteria with the scores and justifications `saved` holds for the same names (a reopened gate). */
export function withSaved(fresh: CriterionDraft[], saved: readonly CriterionDraft[] | undefined): CriterionDraft[] {
  const byName = new Map((saved ?? []).map((c) => [c.name, c]));
  return fresh.map((c) => {
    const kept = byName.get(c.name);
    return kept ? { ...c, score: kept.score, justification: kept.justification } : c;
  });
}

export function requiredScore(spec: GateSpec): number {
  return spec.kind === "quality_score" && typeof spec.required_score === "number" ? spec.required_score : DEFAULT_REQUIRED;
}

/** The average of the scores given so far, rounded to two decimals; null before any. */
export function overallScore(criteria: readonly CriterionDraft[]): number | null {
  const given = criteria.map((c) => c.score).filter((s): s is number => s !== null);
  if (given.length === 0) return null;
  return Math.round((given.reduce((a, b) => a + b, 0) / given.length) * 100) / 100;
}

export function passes(score: number, required: number): boolean {
  return score + TOLERANCE >= required;
}

/** Whether a key is a score (1 to 5). */
export function scoreOfKey(key: string): number | null {
  return /^[1-5]$/.test(key) ? Number(key) : null;
}

/** The justifications as one text, one line per criterion. */
export function justificationText(criteria: readonly CriterionDraft[]): string {
  return criteria
    .filter((c) => c.justification.trim() !== "")
    .map((c) => (c.name === OVERALL ? c.justification.trim() : `${c.name} (${c.score ?? "?"}/5): ${c.justification.trim()}`))
    .join("\n");
}

/**
 * The score to send, once every criterion has a score and a justification.
 * `scorer` is filled in by the reviewer's name when known; the server
 * should record the token's identity whatever is sent.
 */
export function scoreDraft(
  criteria: readonly CriterionDraft[],
  spec: GateSpec,
  now: Date,
  scorer = "reviewer",
): ScoreDraft {
  const overall = overallScore(criteria);
  const pass = overall !== null && passes(overall, requiredScore(spec));
  const unscored = criteria.filter((c) => c.score === null).map((c) => c.name);
  if (unscored.length > 0) return { score: null, passes: pass, problem: `Score ${unscored.join(", ")} first (1 to 5).` };
  const unjustified = criteria.filter((c) => c.justification.trim() === "").map((c) => c.name);
  if (unjustified.length > 0) {
    return { score: null, passes: pass, problem: `Justify the score of ${unjustified.join(", ")}.` };
  }
  const rubric = criteria.length === 1 && criteria[0]!.name === OVERALL ? {} : Object.fromEntries(criteria.map((c) => [c.name, c.score!]));
  const score: QualityScore = {
    score: overall!,
    rubric_scores: rubric,
    justification: justificationText(criteria),
    scorer,
    deliverable_id: spec.kind === "quality_score" ? (spec.deliverable_id ?? "") : "",
    at: now.toISOString(),
  };
  return { score, passes: pass, problem: null };
}
