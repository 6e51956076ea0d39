// Every enum value the server's API can send, as reviewers read it. The
// OpenAPI document's enums are snake_case identifiers ("plan_review",
// "needs_revision"); no view shows one raw: it asks `word` (or one of the
// tables) here. A vitest test (`words.test.ts`) fails when the document
// gains an enum value without a label, so a new one cannot slip through.

import type { components } from "./api/schema";

type S = components["schemas"];
type Labels<T extends string> = Readonly<Record<T, string>>;

/**
 * A label for each value of each enum, by the OpenAPI schema that declares
 * it. A tagged union's tag is under its schema and the tag's property
 * (`EventKind.type`).
 */
export const WORDS = {
  AlertKind: {
    sync_gate_waiting: "Sync gate waiting",
    pending_queue: "Pending queue",
    auto_pass_rate: "Auto-pass rate",
    webhook_failures: "Webhook failures",
  } satisfies Labels<S["AlertKind"]>,
  AllowRuleStatus: { live: "Live", expired: "Expired", revoked: "Revoked" } satisfies Labels<S["AllowRuleStatus"]>,
  ApiErrorCode: {
    unauthorized: "Not signed in",
    forbidden: "Not allowed",
    not_found: "Not found",
    method_not_allowed: "Not supported",
    conflict: "Already decided",
    payload_too_large: "Too large",
    invalid: "Not valid",
    unavailable: "Unavailable",
    internal: "Server error",
  } satisfies Labels<S["ApiErrorCode"]>,
  ApproveAction: { approve: "Approve", edit: "Approve with edits", reject: "Reject" } satisfies Labels<S["ApproveAction"]>,
  BlockingMode: { sync: "SYNC", async: "ASYNC", advisory: "ADVISORY" } satisfies Labels<S["BlockingMode"]>,
  "Breakpoint.on": {
    tool_call: "Tool call",
    handoff: "Handoff",
    error: "Error",
    agent: "Agent",
    step: "Step",
  } satisfies Labels<S["Breakpoint"]["on"]>,
  ChangeOp: { added: "Added", removed: "Removed", changed: "Changed" } satisfies Labels<S["ChangeOp"]>,
  DecisionAction: {
    approve: "Approve",
    edit: "Approve with edits",
    reject: "Reject",
    respond: "Answer",
    needs_revision: "Send back for revision",
    defer: "Defer",
    retry: "Retry",
  } satisfies Labels<S["DecisionAction"]>,
  "DecisionOrigin.by": { human: "A reviewer", auto: "Automatically", system: "The system" } satisfies Labels<
    S["DecisionOrigin"]["by"]
  >,
  DirectiveAction: { continue: "Continue", paused: "Paused", cancelled: "Cancelled", finished: "Finished" } satisfies Labels<
    S["DirectiveAction"]
  >,
  "EventKind.type": {
    run_created: "Run created",
    run_status_changed: "Run status changed",
    turn_added: "Turn added",
    gate_opened: "Gate opened",
    gate_auto_passed: "Gate passed automatically",
    gate_resolved: "Gate decided",
    actions_decided: "Actions decided",
    gate_escalated: "Gate escalated",
    gate_released: "Gate released",
    vote_recorded: "Vote recorded",
    resolution_refused: "Decision refused",
    gate_expired: "Gate expired",
    gate_cancelled: "Gate cancelled",
    context_set: "Context set",
    context_deleted: "Context deleted",
    plan_revised: "Plan revised",
    score_recorded: "Score recorded",
    run_control_changed: "Run control changed",
    instruction_injected: "Instruction sent",
    next_agent_set: "Next agent chosen",
    directive_delivered: "Directive delivered",
    allow_rule_created: "Allow-rule created",
    allow_rule_revoked: "Allow-rule revoked",
    recording_imported: "Recording imported",
    token_created: "Token created",
    token_revoked: "Token revoked",
    retention_purged: "Old records purged",
    alert_raised: "Alert raised",
    alert_cleared: "Alert cleared",
    global_memory_set: "Global memory set",
    global_memory_deleted: "Global memory deleted",
  } satisfies Labels<S["EventKind"]["type"]>,
  ExecutionMode: { autonomous: "Autonomous", supervised: "Supervised", step: "Step by step" } satisfies Labels<S["ExecutionMode"]>,
  GateKind: {
    approval: "Approval",
    payload_review: "Payload review",
    question: "Question",
    information_review: "Information review",
    response_review: "Response review",
    quality_score: "Quality score",
    goal_review: "Goal review",
    plan_review: "Plan review",
  } satisfies Labels<S["GateKind"]>,
  "GateSpec.kind": {
    approval: "Approval",
    payload_review: "Payload review",
    question: "Question",
    information_review: "Information review",
    response_review: "Response review",
    quality_score: "Quality score",
    goal_review: "Goal review",
    plan_review: "Plan review",
  } satisfies Labels<S["GateSpec"]["kind"]>,
  GateStatus: { pending: "Pending", resolved: "Decided", expired: "Expired", cancelled: "Cancelled" } satisfies Labels<S["GateStatus"]>,
  "PlanOperation.op": {
    add_task: "Add a task",
    update_task: "Update a task",
    assign_task: "Assign a task",
    estimate_duration: "Estimate a duration",
    set_dependencies: "Set dependencies",
    replace: "Replace the plan",
  } satisfies Labels<S["PlanOperation"]["op"]>,
  PlayState: { playing: "Playing", paused: "Paused", finished: "Finished", stopped: "Stopped" } satisfies Labels<S["PlayState"]>,
  Priority: { low: "Low", normal: "Normal", high: "High", urgent: "Urgent" } satisfies Labels<S["Priority"]>,
  ProgressStatus: { pending: "Not started", in_progress: "In progress", completed: "Completed" } satisfies Labels<S["ProgressStatus"]>,
  "RecordingScope.scope": { run: "One run", session: "A session", all: "Everything" } satisfies Labels<S["RecordingScope"]["scope"]>,
  ReplayAction: { pause: "Pause", resume: "Resume", step: "Step", stop: "Stop" } satisfies Labels<S["ReplayAction"]>,
  Role: { human: "Person", agent: "Agent", system: "System" } satisfies Labels<S["Role"]>,
  RunPolicy: { auto: "Automatic", require_human: "A reviewer decides", auto_with_thresholds: "Automatic within thresholds" } satisfies Labels<
    S["RunPolicy"]
  >,
  RunStatus: {
    created: "Created",
    active: "Active",
    awaiting_human: "Awaiting a reviewer",
    paused: "Paused",
    completed: "Completed",
    failed: "Failed",
    cancelled: "Cancelled",
  } satisfies Labels<S["RunStatus"]>,
  ScoreVerdict: { passes: "Passes", needs_revision: "Needs revision" } satisfies Labels<S["ScoreVerdict"]>,
  StepMode: { continuous: "Continuous", step: "Step by step", breakpoint: "Until a breakpoint" } satisfies Labels<S["StepMode"]>,
  TaskPriority: { low: "Low", medium: "Medium", high: "High", critical: "Critical" } satisfies Labels<S["TaskPriority"]>,
  TaskStatus: {
    pending: "Pending",
    in_progress: "In progress",
    completed: "Completed",
    failed: "Failed",
    blocked: "Blocked",
    skipped: "Skipped",
  } satisfies Labels<S["TaskStatus"]>,
  TeamAction: {
    add: "Add an agent",
    remove: "Remove an agent",
    update: "Reassign an agent",
    create_team: "Create a sub-team",
    modify_team: "Change a sub-team",
    dissolve_team: "Dissolve a sub-team",
  } satisfies Labels<S["TeamAction"]>,
  TeamProposalStatus: { open: "Taking votes", with_people: "With people", agreed: "Agreed", rejected: "Not agreed" } satisfies Labels<
    S["TeamProposalStatus"]
  >,
  TeamStepKind: { work: "Work", review: "People's review", check: "Check" } satisfies Labels<S["TeamStepKind"]>,
  TeamStepOutcome: {
    success: "Success",
    failure: "Failure",
    approve: "Approved",
    reject: "Rejected",
    pass: "Pass",
    fail: "Fail",
  } satisfies Labels<S["TeamStepOutcome"]>,
  TeamVote: { approve: "For", reject: "Against", abstain: "Abstains" } satisfies Labels<S["TeamVote"]>,
  TeamWorkflowState: { running: "Under way", finished: "Finished", failed: "Failed" } satisfies Labels<S["TeamWorkflowState"]>,
  TimeoutFallback: { expire: "Expire", reject: "Reject", approve: "Approve", escalate: "Escalate", fail: "Fail" } satisfies Labels<
    S["TimeoutFallback"]
  >,
  TokenRole: { agent: "Agent", reviewer: "Reviewer", admin: "Administrator" } satisfies Labels<S["TokenRole"]>,
} as const;

export type Enum = keyof typeof WORDS;

/** A parallel handoff's coordination strategy, as the team view shows it (a string in the API). */
export const COORDINATION_STRATEGY = { wait_all: "waits for every branch", first_answer: "takes the first answer" } as const;

/** Why a run's memory snapshot was taken (`MemorySnapshot.label`'s first part, a string in the API). */
export const SNAPSHOT_TAKEN = { handoff: "At a handoff", end: "At the run's end" } as const;

/** A memory scope (`scope`, a string in the API), as a reviewer reads it. */
export const MEMORY_SCOPE = { run: "This run's memory", team: "The team's memory", global: "The global memory" } as const;

/** Who changed a team (`TeamChangeEntry.by_kind`, a string in the API). */
export const CHANGED_BY = { reviewer: "Reviewer", agent: "Agent" } as const;

/**
 * The label of `value` in `enumName`; a value the table does not know (a
 * newer server) reads as words, never as an identifier: "awaiting_human"
 * → "Awaiting human".
 */
export function word<E extends Enum>(enumName: E, value: keyof (typeof WORDS)[E] | (string & {})): string {
  const table = WORDS[enumName] as Readonly<Record<string, string>>;
  return Object.hasOwn(table, value) ? table[value as string]! : humanize(String(value));
}

/** The same label in lower case, for the middle of a sentence ("the run is waiting for a reviewer"). */
export function lowerWord<E extends Enum>(enumName: E, value: keyof (typeof WORDS)[E] | (string & {})): string {
  const label = word(enumName, value);
  // Upper-case labels (SYNC) stay as they are.
  return label === label.toUpperCase() ? label : label.charAt(0).toLowerCase() + label.slice(1);
}

/** An identifier as words: "plan_review" → "Plan review"; text that is not one identifier is left as it is. */
export function humanize(text: string): string {
  if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(text)) return text;
  const spaced = text.replace(/_/g, " ");
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/**
 * Free text an agent sent that may be an identifier (a step named
 * "plan_review"): the label of a gate kind or run status it names, else
 * the identifier as words; other text as it is.
 */
export function labelOf(text: string): string {
  for (const name of ["GateKind", "RunStatus", "TaskStatus"] as const) {
    if (Object.hasOwn(WORDS[name], text)) return word(name, text);
  }
  return humanize(text);
}
