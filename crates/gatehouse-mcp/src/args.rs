//! The tools' arguments. Their JSON Schemas (the tools' `inputSchema`) are
//! generated from these types, so every field's doc comment is what an
//! assistant reads when it decides how to call a tool: say what to send,
//! in what form, and what happens by default.

use gatehouse_engine::plan::{ExecutionMode, Plan, PlanTask, TaskPriority, TaskStatus};
use gatehouse_engine::{BlockingMode, Priority};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Whether a call waits for the reviewer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum WaitMode {
    #[default]
    Sync,
    Async,
}

/// How urgent a question is for the reviewer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Urgency {
    Low,
    #[default]
    Normal,
    High,
    Urgent,
}

impl From<Urgency> for Priority {
    fn from(u: Urgency) -> Self {
        match u {
            Urgency::Low => Priority::Low,
            Urgency::Normal => Priority::Normal,
            Urgency::High => Priority::High,
            Urgency::Urgent => Priority::Urgent,
        }
    }
}

impl From<WaitMode> for BlockingMode {
    fn from(m: WaitMode) -> Self {
        match m {
            WaitMode::Sync => BlockingMode::Sync,
            WaitMode::Async => BlockingMode::Async,
        }
    }
}

/// The fields every gate tool shares.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct GateOptions {
    /// `sync` (default): this call blocks until a reviewer decides, with progress notifications
    /// while it waits. `async`: it returns at once with a `gate_id`; call `check_gate` for the decision.
    #[serde(default)]
    pub mode: WaitMode,
    /// How urgent this is for the reviewer: `low`, `normal` (default), `high` or `urgent`.
    #[serde(default)]
    pub urgency: Urgency,
    /// Seconds until the request expires unanswered (the result then says `expired`).
    /// Default: questions and feedback after 24 hours, approvals and reviews never.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_seconds: Option<u64>,
    /// The Gatehouse run to ask in. Leave it out to use this session's run (started on the first
    /// call; every result names it as `run_id`).
    #[serde(default)]
    pub run_id: Option<String>,
    /// Makes retries safe: a second call with the same key returns the first request's gate
    /// instead of asking the reviewer twice.
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub idempotency_key: Option<String>,
}

/// `request_approval`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestApprovalArgs {
    /// What you want to do, in a few words, e.g. `deploy build 42 to production`.
    #[schemars(length(min = 1))]
    pub action: String,
    /// The proposal itself as a JSON object (arguments, configuration, the exact command...).
    /// The reviewer sees it and may edit it: an edited version comes back as `payload`.
    #[serde(default)]
    pub context: Option<Map<String, Value>>,
    /// Why this is needed and what could go wrong (markdown), shown above the proposal.
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(flatten)]
    pub options: GateOptions,
}

/// `ask_human`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AskHumanArgs {
    /// The question you are blocked on (markdown), specific enough to answer without a follow-up.
    #[schemars(length(min = 1))]
    pub question: String,
    /// What the human needs to know to answer: what you tried, what you found (markdown).
    #[serde(default)]
    pub context: Option<String>,
    /// Suggested answers; the human may pick one or write their own.
    #[serde(default)]
    pub options: Vec<String>,
    #[serde(flatten)]
    pub gate: GateOptions,
}

/// `request_feedback`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestFeedbackArgs {
    /// The work to look at (markdown): a draft, a design, a diff, a report.
    #[schemars(length(min = 1))]
    pub artifact: String,
    /// What you want to know about it; without questions the reviewer is asked what should change.
    #[serde(default)]
    pub questions: Vec<String>,
    #[serde(flatten)]
    pub options: GateOptions,
}

/// `request_review`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestReviewArgs {
    /// The output you intend to deliver, exactly as it would go out.
    #[schemars(length(min = 1))]
    pub output: String,
    /// The raw output before your own cleanup or redaction, if it differs; the reviewer sees the two
    /// side by side.
    #[serde(default)]
    pub original: Option<String>,
    /// What this output is and who it is for (markdown).
    #[serde(default)]
    pub summary: Option<String>,
    /// Quality or safety signals worth the reviewer's attention, e.g. `mentions a customer by name`.
    #[serde(default)]
    pub indicators: Vec<String>,
    #[serde(flatten)]
    pub options: GateOptions,
}

/// `request_permission`'s arguments: a coding assistant's permission-prompt contract.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestPermissionArgs {
    /// The tool the assistant wants to use, e.g. `Bash`, `Edit` or `mcp__server__tool`.
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// The tool's input exactly as the assistant would call it; the reviewer may edit it.
    pub input: Map<String, Value>,
    /// The assistant's id for this tool use: asking again with the same id reuses the first request.
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `check_gate`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CheckGateArgs {
    /// The `gate_id` an earlier call returned.
    #[schemars(length(min = 1))]
    pub gate_id: String,
    /// Seconds to wait for the decision if it is still pending: 0 (default) answers at once;
    /// while waiting, progress notifications arrive.
    #[serde(default)]
    #[schemars(range(min = 0, max = 86400))]
    pub wait_seconds: Option<u64>,
}

/// A run to read or change, for the plan tools.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct RunArg {
    /// The Gatehouse run whose plan this is. Leave it out to use this session's run.
    #[serde(default)]
    pub run_id: Option<String>,
}

/// A task's urgency in the plan.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum TaskUrgency {
    Low,
    #[default]
    Medium,
    High,
    Critical,
}

impl From<TaskUrgency> for TaskPriority {
    fn from(p: TaskUrgency) -> Self {
        match p {
            TaskUrgency::Low => TaskPriority::Low,
            TaskUrgency::Medium => TaskPriority::Medium,
            TaskUrgency::High => TaskPriority::High,
            TaskUrgency::Critical => TaskPriority::Critical,
        }
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum TaskState {
    #[default]
    Pending,
    InProgress,
    Completed,
    Failed,
    Blocked,
    Skipped,
}

impl From<TaskState> for TaskStatus {
    fn from(s: TaskState) -> Self {
        match s {
            TaskState::Pending => TaskStatus::Pending,
            TaskState::InProgress => TaskStatus::InProgress,
            TaskState::Completed => TaskStatus::Completed,
            TaskState::Failed => TaskStatus::Failed,
            TaskState::Blocked => TaskStatus::Blocked,
            TaskState::Skipped => TaskStatus::Skipped,
        }
    }
}

/// `plan_add_task`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddTaskArgs {
    /// What the task is, as one sentence.
    #[schemars(length(min = 1))]
    pub description: String,
    /// `low`, `medium` (default), `high` or `critical`.
    #[serde(default)]
    pub priority: TaskUrgency,
    /// Ids of tasks that must be done first; each must exist in the plan.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// The new task's id; default: the next free `task_NNN`.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The agent who will do it.
    #[serde(default)]
    pub assigned_agent: Option<String>,
    /// A free-form estimate such as `30m` or `2h`.
    #[serde(default)]
    pub estimated_duration: Option<String>,
    #[serde(flatten)]
    pub run: RunArg,
}

/// `plan_update_task`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateTaskArgs {
    /// The task to update.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// Its new status: `pending`, `in_progress`, `completed`, `failed`, `blocked` or `skipped`;
    /// leave it out to keep the current one.
    #[serde(default)]
    pub status: Option<TaskState>,
    /// Notes merged into the task's metadata (progress, artifacts, timestamps); a `null` value
    /// removes that key.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    #[serde(flatten)]
    pub run: RunArg,
}

/// `plan_assign_task`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AssignTaskArgs {
    /// The task to assign.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// The agent who will do it.
    #[schemars(length(min = 1))]
    pub agent_name: String,
    #[serde(flatten)]
    pub run: RunArg,
}

/// `plan_estimate_duration`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EstimateDurationArgs {
    /// The task to estimate.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// A free-form estimate such as `30m` or `2h`.
    #[schemars(length(min = 1))]
    pub duration: String,
    #[serde(flatten)]
    pub run: RunArg,
}

/// `plan_set_dependencies`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SetDependenciesArgs {
    /// The task whose dependencies to replace.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// The complete new list of task ids that must be done first (empty: none); cycles are refused.
    pub dependencies: Vec<String>,
    #[serde(flatten)]
    pub run: RunArg,
}

/// One task of a proposed plan.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct ProposedTask {
    /// A unique id, e.g. `task_001`.
    #[schemars(length(min = 1))]
    pub task_id: String,
    /// What the task is, as one sentence.
    #[schemars(length(min = 1))]
    pub description: String,
    /// `pending` (default), `in_progress`, `completed`, `failed`, `blocked` or `skipped`.
    #[serde(default)]
    pub status: TaskState,
    /// `low`, `medium` (default), `high` or `critical`.
    #[serde(default)]
    pub priority: TaskUrgency,
    /// Ids of tasks in this plan that must be done first.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// The agent who will do it.
    #[serde(default)]
    pub assigned_agent: Option<String>,
    /// A free-form estimate such as `30m`.
    #[serde(default)]
    pub estimated_duration: Option<String>,
}

/// How much the run may do without a human.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PlanExecution {
    #[default]
    Autonomous,
    Supervised,
    Step,
}

/// `plan_propose`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ProposePlanArgs {
    /// The whole plan, in order. It replaces the run's current plan and goes to the reviewer.
    #[schemars(length(min = 1))]
    pub tasks: Vec<ProposedTask>,
    /// How much the run may do without a human: `autonomous` (default), `supervised` or `step`.
    #[serde(default)]
    pub execution_mode: PlanExecution,
    /// Named moments when the run stops for a human, e.g. `before_deployment`.
    #[serde(default)]
    pub human_intervention_points: Vec<String>,
    /// Conditions that must hold for the work to count as done, e.g. `all tests pass`.
    #[serde(default)]
    pub success_criteria: Vec<String>,
    /// Why this plan, and what changed since the last proposal (markdown).
    #[serde(default)]
    pub note: Option<String>,
    #[serde(flatten)]
    pub options: GateOptions,
}

impl ProposePlanArgs {
    /// The engine's plan for these arguments.
    pub fn plan(&self) -> Plan {
        Plan {
            tasks: self
                .tasks
                .iter()
                .map(|t| PlanTask {
                    task_id: t.task_id.clone(),
                    description: t.description.clone(),
                    status: t.status.into(),
                    assigned_agent: t.assigned_agent.clone(),
                    priority: t.priority.into(),
                    dependencies: t.dependencies.clone(),
                    estimated_duration: t.estimated_duration.clone(),
                    metadata: Map::new(),
                })
                .collect(),
            execution_mode: match self.execution_mode {
                PlanExecution::Autonomous => ExecutionMode::Autonomous,
                PlanExecution::Supervised => ExecutionMode::Supervised,
                PlanExecution::Step => ExecutionMode::Step,
            },
            human_intervention_points: self.human_intervention_points.clone(),
            success_criteria: self.success_criteria.clone(),
        }
    }
}
