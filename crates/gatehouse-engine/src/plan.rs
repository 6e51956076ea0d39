//! The execution plan a run owns (its `plan.json`): tasks with dependencies, the
//! operations agents and reviewers use to revise it, and the change log each revision keeps.
//! Everything here is pure: an operation yields a new, validated plan and never mutates the old.
//!
//! Over 600 lines only with its tests: the code above them is about 570 lines, one type and its
//! operations, which read best together.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Logs `<prefix><field> <was> -> <now>` when a field differs, naming the field after itself
/// so every change-log line has the same shape.
macro_rules! log_change {
    ($log:ident, $prefix:expr, $a:ident, $b:ident, $field:ident, $show:expr) => {
        if $a.$field != $b.$field {
            let what = stringify!($field).replace('_', " ");
            let (was, now) = ($show(&$a.$field), $show(&$b.$field));
            $log.push(format!("{}{what} {was} -> {now}", $prefix));
        }
    };
}

/// Where a task is in its life.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Failed,
    Blocked,
    Skipped,
}

impl TaskStatus {
    /// Whether dependants may start: the task completed or was deliberately skipped.
    pub fn is_done(&self) -> bool {
        matches!(self, Self::Completed | Self::Skipped)
    }
}

/// How urgent a task is; ordered so `Critical` sorts highest.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskPriority {
    Low,
    #[default]
    Medium,
    High,
    Critical,
}

/// How much the run may do without a human: everything, under supervision, or step by step.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    #[default]
    Autonomous,
    Supervised,
    Step,
}

/// One unit of work in the plan.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanTask {
    pub task_id: String,
    pub description: String,
    #[serde(default)]
    pub status: TaskStatus,
    #[serde(default)]
    pub assigned_agent: Option<String>,
    #[serde(default)]
    pub priority: TaskPriority,
    /// Ids of tasks that must be done before this one may start.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Free-form estimate such as `"15m"`; nothing parses it, Gatehouse included.
    #[serde(default)]
    pub estimated_duration: Option<String>,
    /// Free-form agent notes (timestamps, progress, artifacts); `update_task` merges into it.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// The whole plan, exactly as it is stored in `plan.json`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Plan {
    pub tasks: Vec<PlanTask>,
    pub execution_mode: ExecutionMode,
    /// Named moments when the run stops for a human, such as `before_deployment`.
    pub human_intervention_points: Vec<String>,
    /// Conditions that must hold for the run to count as successful.
    pub success_criteria: Vec<String>,
}

/// A mutating plan tool call, as agents and reviewers send it (`{"op": "add_task", ...}`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PlanOperation {
    /// Append a pending task; without `task_id` the next free `task_NNN` is used.
    AddTask {
        description: String,
        #[serde(default)]
        priority: TaskPriority,
        #[serde(default)]
        dependencies: Vec<String>,
        #[serde(default)]
        task_id: Option<String>,
        #[serde(default)]
        assigned_agent: Option<String>,
        #[serde(default)]
        estimated_duration: Option<String>,
    },
    /// Set the status and merge metadata keys; a `null` value removes that key.
    UpdateTask {
        task_id: String,
        #[serde(default)]
        status: Option<TaskStatus>,
        #[serde(default)]
        metadata: Map<String, Value>,
    },
    /// Hand a task to an agent.
    AssignTask { task_id: String, agent_name: String },
    /// Record a duration estimate such as `"30m"`.
    EstimateDuration { task_id: String, duration: String },
    /// Replace a task's dependency list.
    SetDependencies { task_id: String, dependencies: Vec<String> },
    /// A reviewer's edit of the whole plan.
    Replace { plan: Plan },
}

/// Why a plan, or an operation on it, was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("no task `{task_id}` in the plan")]
    UnknownTask { task_id: String },
    #[error("task `{task_id}` depends on `{dependency}`, which is not in the plan")]
    UnknownDependency { task_id: String, dependency: String },
    #[error("dependency cycle: {} (each task depends on the next)", .cycle.join(" -> "))]
    DependencyCycle { cycle: Vec<String> },
    #[error("task id `{task_id}` is used by more than one task")]
    DuplicateTask { task_id: String },
    #[error("task `{task_id}` depends on itself")]
    SelfDependency { task_id: String },
    #[error("a task description must not be empty")]
    EmptyDescription,
    #[error("invalid {field}: {reason}")]
    InvalidField { field: String, reason: String },
}

impl Plan {
    /// The task with this id, if any.
    pub fn task(&self, id: &str) -> Option<&PlanTask> {
        self.tasks.iter().find(|t| t.task_id == id)
    }

    fn task_mut(&mut self, id: &str) -> Result<&mut PlanTask, PlanError> {
        let task_id = id.to_owned();
        let found = self.tasks.iter_mut().find(|t| t.task_id == id);
        found.ok_or(PlanError::UnknownTask { task_id })
    }

    /// Checks ids, descriptions, optional fields, dependencies and cycles, in that order.
    pub fn validate(&self) -> Result<(), PlanError> {
        let mut ids = HashSet::new();
        for task in &self.tasks {
            let id = &task.task_id;
            if id.trim().is_empty() {
                return Err(invalid("task_id", "a task has an empty id".to_owned()));
            }
            let optional = [("assigned_agent", &task.assigned_agent), ("estimated_duration", &task.estimated_duration)];
            for (field, value) in optional {
                if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                    let what = field.replace('_', " ");
                    return Err(invalid(field, format!("task `{id}` has an empty {what}")));
                }
            }
            if !ids.insert(id.as_str()) {
                let task_id = id.clone();
                return Err(PlanError::DuplicateTask { task_id });
            }
            if task.description.trim().is_empty() {
                return Err(PlanError::EmptyDescription);
            }
        }
        for task in &self.tasks {
            let task_id = task.task_id.clone();
            if task.dependencies.contains(&task_id) {
                return Err(PlanError::SelfDependency { task_id });
            }
            if let Some(dep) = task.dependencies.iter().find(|d| !ids.contains(d.as_str())) {
                let dependency = dep.clone();
                return Err(PlanError::UnknownDependency { task_id, dependency });
            }
        }
        match self.find_cycle() {
            Some(cycle) => Err(PlanError::DependencyCycle { cycle }),
            None => Ok(()),
        }
    }

    /// Depth-first search in task order, so the same plan always reports the same cycle.
    /// Iterative, so a long dependency chain cannot overflow the stack. Expects known ids.
    fn find_cycle(&self) -> Option<Vec<String>> {
        let index: HashMap<&str, usize> = self.tasks.iter().enumerate().map(|(i, t)| (t.task_id.as_str(), i)).collect();
        // 0 = unvisited, 1 = on the current path, 2 = fully explored without a cycle.
        let mut state = vec![0u8; self.tasks.len()];
        for start in 0..self.tasks.len() {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            // Each frame is (task index, index of the next dependency to follow).
            let mut path = vec![(start, 0)];
            while let Some(frame) = path.last_mut() {
                let (node, next) = *frame;
                frame.1 += 1;
                let Some(dep) = self.tasks[node].dependencies.get(next) else {
                    state[node] = 2;
                    path.pop();
                    continue;
                };
                let Some(&dep) = index.get(dep.as_str()) else {
                    continue;
                };
                if state[dep] == 1 {
                    let from = path.iter().position(|&(n, _)| n == dep).unwrap_or(0);
                    let ids = path[from..].iter().map(|&(n, _)| n).chain([dep]);
                    return Some(ids.map(|n| self.tasks[n].task_id.clone()).collect());
                }
                if state[dep] == 0 {
                    state[dep] = 1;
                    path.push((dep, 0));
                }
            }
        }
        None
    }

    /// The id `AddTask` uses when none is given: one past the highest `task_NNN` suffix.
    pub fn next_task_id(&self) -> String {
        let suffixes = self.tasks.iter().filter_map(|t| t.task_id.strip_prefix("task_"));
        // `parse` alone would accept "+7"; only plain digit runs count as generated ids.
        let numbers = suffixes.filter(|n| n.bytes().all(|b| b.is_ascii_digit()));
        let highest = numbers.filter_map(|n| n.parse::<u64>().ok()).max().unwrap_or(0);
        format!("task_{:03}", highest.saturating_add(1))
    }

    /// Applies `op` to a copy of the plan, validates the result and describes what changed.
    /// An operation that changes nothing yields an empty change log.
    pub fn apply(&self, op: &PlanOperation) -> Result<(Plan, Vec<String>), PlanError> {
        let mut next = self.clone();
        match op {
            PlanOperation::AddTask {
                description,
                priority,
                dependencies,
                task_id,
                assigned_agent,
                estimated_duration,
            } => next.tasks.push(PlanTask {
                task_id: task_id.clone().unwrap_or_else(|| self.next_task_id()),
                description: description.clone(),
                status: TaskStatus::Pending,
                assigned_agent: assigned_agent.clone(),
                priority: *priority,
                dependencies: dependencies.clone(),
                estimated_duration: estimated_duration.clone(),
                metadata: Map::new(),
            }),
            PlanOperation::UpdateTask { task_id, status, metadata } => {
                let task = next.task_mut(task_id)?;
                task.status = status.unwrap_or(task.status);
                for (key, value) in metadata {
                    match value {
                        Value::Null => task.metadata.shift_remove(key),
                        value => task.metadata.insert(key.clone(), value.clone()),
                    };
                }
            }
            PlanOperation::AssignTask { task_id, agent_name } => {
                next.task_mut(task_id)?.assigned_agent = Some(agent_name.clone());
            }
            PlanOperation::EstimateDuration { task_id, duration } => {
                next.task_mut(task_id)?.estimated_duration = Some(duration.clone());
            }
            PlanOperation::SetDependencies { task_id, dependencies } => {
                next.task_mut(task_id)?.dependencies = dependencies.clone();
            }
            PlanOperation::Replace { plan } => next = plan.clone(),
        }
        // One set of rules for every op: blank names and durations are caught here too.
        next.validate()?;
        let log = self.change_log(&next);
        Ok((next, log))
    }

    /// Human-readable lines for every removed, added or changed task field and every changed
    /// top-level field going from `self` to `new`; empty when the plans are equal.
    pub fn change_log(&self, new: &Plan) -> Vec<String> {
        let mut log = Vec::new();
        for old in self.tasks.iter().filter(|t| new.task(&t.task_id).is_none()) {
            log.push(format!("removed {} {:?}", old.task_id, old.description));
        }
        for task in &new.tasks {
            match self.task(&task.task_id) {
                None => log.push(describe_added(task)),
                Some(old) => task_changes(old, task, &mut log),
            }
        }
        // Order breaks ties in `ready_tasks`, so a pure reordering is a real change.
        let kept = |a: &Plan, b: &Plan| -> Vec<String> {
            let ids = a.tasks.iter().map(|t| t.task_id.clone());
            ids.filter(|id| b.task(id).is_some()).collect()
        };
        if kept(self, new) != kept(new, self) {
            log.push("tasks reordered".to_owned());
        }
        let (a, b) = (self, new);
        log_change!(log, "", a, b, execution_mode, name);
        log_change!(log, "", a, b, human_intervention_points, list);
        log_change!(log, "", a, b, success_criteria, list);
        log
    }

    /// Pending tasks whose dependencies are all done, most urgent first, then in plan order.
    pub fn ready_tasks(&self) -> Vec<&PlanTask> {
        let done = |id: &String| self.task(id).is_some_and(|t| t.status.is_done());
        let mut ready: Vec<&PlanTask> =
            self.tasks.iter().filter(|t| t.status == TaskStatus::Pending && t.dependencies.iter().all(done)).collect();
        // A stable sort keeps plan order among equal priorities.
        ready.sort_by_key(|t| std::cmp::Reverse(t.priority));
        ready
    }

    /// Each task's own progress, in plan order.
    pub fn task_progress(&self) -> Vec<TaskProgress> {
        self.tasks.iter().map(TaskProgress::of).collect()
    }

    /// The plan with `task_id` and every task depending on it (directly or
    /// not) back to `pending`, for a reviewer's restart of the task: each
    /// counts a new attempt in `metadata.attempt` (what a driver keys an
    /// attempt's work and gates by, so none is reused) and loses its
    /// `output`, `error` and `feedback`.
    pub fn restarted(&self, task_id: &str) -> Result<Plan, PlanError> {
        self.task(task_id).ok_or_else(|| PlanError::UnknownTask { task_id: task_id.to_owned() })?;
        let mut reset: HashSet<String> = HashSet::from([task_id.to_owned()]);
        // Dependants of dependants: repeat until the set stops growing (plans are small).
        loop {
            let before = reset.len();
            for task in &self.tasks {
                if task.dependencies.iter().any(|d| reset.contains(d)) {
                    reset.insert(task.task_id.clone());
                }
            }
            if reset.len() == before {
                break;
            }
        }
        let mut next = self.clone();
        for task in next.tasks.iter_mut().filter(|t| reset.contains(&t.task_id)) {
            let attempt = task.metadata.get("attempt").and_then(Value::as_u64).unwrap_or(0);
            task.status = TaskStatus::Pending;
            for key in ["output", "error", "feedback", "skipped_by", "run_retries"] {
                task.metadata.shift_remove(key);
            }
            task.metadata.insert("attempt".into(), Value::from(attempt + 1));
        }
        Ok(next)
    }

    /// How many tasks are done (completed or skipped) out of all tasks.
    pub fn progress(&self) -> ProgressState {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let done = self.tasks.iter().filter(|t| t.status.is_done()).count();
        ProgressState::from_counts(count(self.tasks.len()), count(done))
    }
}

fn invalid(field: &str, reason: String) -> PlanError {
    let field = field.to_owned();
    PlanError::InvalidField { field, reason }
}

/// The name serde gives a unit variant, so log lines use the same words as the JSON.
fn name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

fn quoted(text: &str) -> String {
    format!("{text:?}")
}

fn or_none(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "(none)".to_owned())
}

fn describe_added(task: &PlanTask) -> String {
    let mut details = vec![name(&task.priority)];
    if let Some(agent) = &task.assigned_agent {
        details.push(format!("assigned to {agent}"));
    }
    if let Some(duration) = &task.estimated_duration {
        details.push(format!("estimated {duration}"));
    }
    if !task.dependencies.is_empty() {
        details.push(format!("depends on {}", task.dependencies.join(", ")));
    }
    let (id, description) = (&task.task_id, &task.description);
    format!("added {id} {description:?} ({})", details.join(", "))
}

fn task_changes(a: &PlanTask, b: &PlanTask, log: &mut Vec<String>) {
    let id = &b.task_id;
    let prefix = format!("{id}: ");
    log_change!(log, prefix, a, b, description, quoted);
    log_change!(log, prefix, a, b, status, name);
    log_change!(log, prefix, a, b, priority, name);
    log_change!(log, prefix, a, b, dependencies, list);
    log_change!(log, prefix, a, b, estimated_duration, or_none);
    match (&a.assigned_agent, &b.assigned_agent) {
        (Some(was), Some(now)) if was != now => {
            log.push(format!("{id}: assigned to {now} (was {was})"));
        }
        (None, Some(now)) => log.push(format!("{id}: assigned to {now}")),
        (Some(was), None) => log.push(format!("{id}: unassigned (was {was})")),
        _ => {}
    }
    // serde_json's Map is sorted by key, so these lines come out in a stable order.
    for (key, was) in &a.metadata {
        match b.metadata.get(key) {
            None => log.push(format!("{id}: metadata {key} removed")),
            Some(now) if now != was => log.push(format!("{id}: metadata {key} {was} -> {now}")),
            Some(_) => {}
        }
    }
    for (key, now) in b.metadata.iter().filter(|(k, _)| !a.metadata.contains_key(*k)) {
        log.push(format!("{id}: metadata {key} set to {now}"));
    }
}

/// Where the run as a whole stands.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressStatus {
    Pending,
    InProgress,
    Completed,
}

/// Task counts for progress reporting. The JSON also carries `percentage` for readers;
/// it is derived, so it is ignored when reading back.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ProgressJson")]
pub struct ProgressState {
    pub total: u32,
    pub completed: u32,
    pub status: ProgressStatus,
}

impl ProgressState {
    /// Derives the status from the counts: nothing done is pending, all done is completed.
    pub fn from_counts(total: u32, completed: u32) -> Self {
        let status = match completed {
            0 => ProgressStatus::Pending,
            c if c == total => ProgressStatus::Completed,
            _ => ProgressStatus::InProgress,
        };
        Self { total, completed, status }
    }

    /// Percent done, 0.0..=100.0; with no tasks it is 100 only once marked completed.
    pub fn percentage(&self) -> f64 {
        match (self.total, self.status) {
            (0, ProgressStatus::Completed) => 100.0,
            (0, _) => 0.0,
            // Clamped because stored counts are input data and may disagree.
            (total, _) => f64::from(self.completed.min(total)) / f64::from(total) * 100.0,
        }
    }
}

/// One task's progress: its status and how far along it is.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// The task.
    pub task_id: String,
    /// What it is.
    pub description: String,
    /// Where it is in its life.
    pub status: TaskStatus,
    /// Who works on it.
    pub assigned_agent: Option<String>,
    /// Percent done, 0..=100: 100 once done (completed or skipped), 0 while
    /// pending; in between, what its agent last reported as `progress` (a
    /// percentage) in the task's metadata, else none.
    pub percentage: Option<f64>,
}

impl TaskProgress {
    fn of(task: &PlanTask) -> Self {
        let reported = task.metadata.get("progress").and_then(Value::as_f64).filter(|p| p.is_finite() && *p >= 0.0);
        let percentage = match task.status {
            s if s.is_done() => Some(100.0),
            TaskStatus::Pending => Some(0.0),
            _ => reported.map(|p| p.min(100.0)),
        };
        Self {
            task_id: task.task_id.clone(),
            description: task.description.clone(),
            status: task.status,
            assigned_agent: task.assigned_agent.clone(),
            percentage,
        }
    }
}

/// The written shape of [`ProgressState`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Serialize)]
struct ProgressJson {
    total: u32,
    completed: u32,
    percentage: f64,
    status: ProgressStatus,
}

impl From<ProgressState> for ProgressJson {
    fn from(p: ProgressState) -> Self {
        let percentage = p.percentage();
        let (total, completed, status) = (p.total, p.completed, p.status);
        Self { total, completed, percentage, status }
    }
}

/// One kept version of the plan and who changed it how; revision 1 is the first plan.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRevision {
    pub revision: u32,
    pub plan: Plan,
    /// What changed since the previous revision, as produced by [`Plan::change_log`].
    pub change_log: Vec<String>,
    /// The agent or reviewer who made the revision.
    pub actor: String,
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PLAN_JSON: &str = r#"{"tasks":[{"task_id":"task_001","description":"Analyze the project requirements and create a file structure.","status":"completed","assigned_agent":"analyst","priority":"high","dependencies":[],"estimated_duration":"15m","metadata":{"completed_at":"2023-10-27T10:00:00Z","artifacts_created":["project_structure.md"]}},{"task_id":"task_002","description":"Write the main application logic in app.py.","status":"in_progress","assigned_agent":"coder","priority":"high","dependencies":["task_001"],"estimated_duration":"30m","metadata":{"started_at":"2023-10-27T10:05:00Z","progress_percentage":60}},{"task_id":"task_003","description":"Create unit tests for app.py.","status":"pending","assigned_agent":"tester","priority":"medium","dependencies":["task_002"],"estimated_duration":"20m","metadata":{}}],"execution_mode":"autonomous","human_intervention_points":["before_deployment","on_error"],"success_criteria":["all_tests_pass","code_coverage_80_percent"]}"#;

    fn example_plan() -> Plan {
        serde_json::from_str(PLAN_JSON).expect("the plan.json example parses")
    }

    fn op(value: Value) -> PlanOperation {
        serde_json::from_value(value).expect("the operation parses")
    }

    fn apply(plan: &Plan, value: Value) -> Result<(Plan, Vec<String>), PlanError> {
        plan.apply(&op(value))
    }

    #[test]
    fn a_restarted_task_and_its_dependants_go_back_to_pending_with_a_new_attempt() {
        let plan = example_plan();
        let restarted = plan.restarted("task_001").unwrap();
        let statuses: Vec<TaskStatus> = restarted.tasks.iter().map(|t| t.status).collect();
        assert_eq!(statuses, [TaskStatus::Pending; 3]);
        assert_eq!(restarted.tasks[0].metadata["attempt"], 1);
        assert_eq!(restarted.tasks[1].metadata["attempt"], 1);
        assert_eq!(restarted.tasks[2].metadata["attempt"], 1, "a pending dependant's gates are asked anew too");
        let only_last = plan.restarted("task_002").unwrap();
        assert_eq!(only_last.tasks[0].status, TaskStatus::Completed);
        assert_eq!(plan.restarted("nope"), Err(PlanError::UnknownTask { task_id: "nope".into() }));
        assert!(
            plan.change_log(&restarted).iter().any(|l| l.contains("status completed -> pending")),
            "{:?}",
            plan.change_log(&restarted)
        );
    }

    fn set_deps(id: &str, deps: &[&str]) -> Value {
        json!({"op": "set_dependencies", "task_id": id, "dependencies": deps})
    }

    #[test]
    fn the_plan_json_example_parses_validates_and_round_trips() {
        let plan = example_plan();
        assert_eq!(plan.validate(), Ok(()));
        assert_eq!(plan.tasks.len(), 3);
        assert_eq!(plan.tasks[1].status, TaskStatus::InProgress);
        assert_eq!(plan.tasks[1].metadata["progress_percentage"], json!(60));
        assert_eq!(plan.success_criteria[1], "code_coverage_80_percent");
        let text = serde_json::to_string(&plan).expect("plan serializes");
        assert_eq!(serde_json::from_str::<Plan>(&text).ok(), Some(plan));
    }

    #[test]
    fn add_task_appends_a_pending_task_with_the_next_id_and_logs_it() {
        let before = example_plan();
        let add = json!({"op": "add_task", "description": "Deploy", "priority": "high",
            "dependencies": ["task_003"]});
        let (plan, log) = apply(&before, add).expect("add succeeds");
        let line = r#"added task_004 "Deploy" (high, depends on task_003)"#;
        assert_eq!(log, [line]);
        let added = plan.task("task_004").expect("task_004 exists");
        assert_eq!(added.status, TaskStatus::Pending);
        assert_eq!(before, example_plan(), "the original plan is untouched");
    }

    #[test]
    fn generated_ids_follow_the_highest_numeric_task_suffix() {
        assert_eq!(Plan::default().next_task_id(), "task_001");
        let mut plan = Plan::default();
        for id in ["task_009", "setup", "task_+20", "task_", "task_002"] {
            let add = json!({"op": "add_task", "description": "x", "task_id": id});
            plan = apply(&plan, add).expect("add succeeds").0;
        }
        assert_eq!(plan.next_task_id(), "task_010");
    }

    #[test]
    fn update_task_sets_status_and_merges_metadata_where_null_removes_a_key() {
        let update = json!({"op": "update_task", "task_id": "task_002", "status": "completed",
            "metadata": {"started_at": null, "progress_percentage": 100, "reviewer": "ana"}});
        let (plan, log) = apply(&example_plan(), update).expect("update succeeds");
        // Changes to existing keys come in the task's own key order, then the new keys.
        let expected = [
            "task_002: status in_progress -> completed",
            "task_002: metadata started_at removed",
            "task_002: metadata progress_percentage 60 -> 100",
            r#"task_002: metadata reviewer set to "ana""#,
        ];
        assert_eq!(log, expected);
        let metadata = &plan.tasks[1].metadata;
        assert!(!metadata.contains_key("started_at"));
        assert_eq!(metadata.get("reviewer"), Some(&json!("ana")));
    }

    #[test]
    fn assign_estimate_and_set_dependencies_each_log_old_and_new_values() {
        let cases = [
            (
                json!({"op": "assign_task", "task_id": "task_003", "agent_name": "qa"}),
                "task_003: assigned to qa (was tester)",
            ),
            (
                json!({"op": "estimate_duration", "task_id": "task_003", "duration": "45m"}),
                "task_003: estimated duration 20m -> 45m",
            ),
            (
                set_deps("task_003", &["task_001", "task_002"]),
                "task_003: dependencies [task_002] -> [task_001, task_002]",
            ),
        ];
        for (value, line) in cases {
            assert_eq!(apply(&example_plan(), value).expect("op succeeds").1, [line]);
        }
    }

    #[test]
    fn replace_logs_removed_added_and_changed_tasks_and_top_level_fields() {
        let mut edited = example_plan();
        edited.tasks.pop();
        edited.tasks[0].priority = TaskPriority::Critical;
        edited.tasks[1].assigned_agent = None;
        edited.execution_mode = ExecutionMode::Supervised;
        edited.success_criteria.push("docs_written".into());
        let add = json!({"op": "add_task", "description": "Ship", "task_id": "task_010",
            "assigned_agent": "ops"});
        let (edited, _) = apply(&edited, add).expect("add succeeds");
        let (plan, log) = apply(&example_plan(), json!({"op": "replace", "plan": edited})).expect("replace succeeds");
        let expected = [
            r#"removed task_003 "Create unit tests for app.py.""#,
            "task_001: priority high -> critical",
            "task_002: unassigned (was coder)",
            r#"added task_010 "Ship" (medium, assigned to ops)"#,
            "execution mode autonomous -> supervised",
            "success criteria [all_tests_pass, code_coverage_80_percent] -> \
             [all_tests_pass, code_coverage_80_percent, docs_written]",
        ];
        assert_eq!(log, expected);
        assert_eq!(plan, edited);
    }

    #[test]
    fn reordering_tasks_is_logged() {
        let mut edited = example_plan();
        edited.tasks.swap(0, 2);
        assert_eq!(example_plan().change_log(&edited), ["tasks reordered"]);
    }

    #[test]
    fn an_operation_that_changes_nothing_gives_an_empty_change_log() {
        let same = [
            json!({"op": "assign_task", "task_id": "task_003", "agent_name": "tester"}),
            json!({"op": "update_task", "task_id": "task_002"}),
            set_deps("task_002", &["task_001"]),
            json!({"op": "replace", "plan": example_plan()}),
        ];
        for value in same {
            let (plan, log) = apply(&example_plan(), value).expect("op succeeds");
            assert_eq!((plan, log), (example_plan(), vec![]));
        }
    }

    #[test]
    fn an_unknown_task_is_rejected_naming_it() {
        let assign = json!({"op": "assign_task", "task_id": "task_404", "agent_name": "qa"});
        let err = apply(&example_plan(), assign).expect_err("unknown task");
        assert_eq!(err.to_string(), "no task `task_404` in the plan");
    }

    #[test]
    fn an_unknown_dependency_is_rejected_on_add_and_on_set_dependencies() {
        let add = json!({"op": "add_task", "description": "x", "dependencies": ["ghost"]});
        let expected =
            |task_id: &str| PlanError::UnknownDependency { task_id: task_id.into(), dependency: "ghost".into() };
        assert_eq!(apply(&example_plan(), add), Err(expected("task_004")));
        let set = set_deps("task_003", &["task_001", "ghost"]);
        assert_eq!(apply(&example_plan(), set), Err(expected("task_003")));
    }

    #[test]
    fn two_and_three_task_dependency_cycles_are_rejected_naming_the_cycle() {
        let cases = [
            ("task_002", "task_001 -> task_002 -> task_001"),
            ("task_003", "task_001 -> task_003 -> task_002 -> task_001"),
        ];
        for (dependency, path) in cases {
            let err = apply(&example_plan(), set_deps("task_001", &[dependency])).expect_err("cycle");
            let cycle = path.split(" -> ").map(String::from).collect();
            assert_eq!(err, PlanError::DependencyCycle { cycle });
            assert!(err.to_string().contains(path), "message names {path}");
        }
    }

    #[test]
    fn a_self_dependency_is_rejected() {
        let err = apply(&example_plan(), set_deps("task_002", &["task_002"])).expect_err("self");
        assert_eq!(err.to_string(), "task `task_002` depends on itself");
    }

    #[test]
    fn duplicate_ids_in_a_replaced_plan_are_rejected() {
        let mut edited = example_plan();
        edited.tasks[2].task_id = "task_001".into();
        let err = apply(&example_plan(), json!({"op": "replace", "plan": edited})).expect_err("dup");
        let task_id = "task_001".to_owned();
        assert_eq!(err, PlanError::DuplicateTask { task_id });
    }

    #[test]
    fn blank_descriptions_agent_names_and_durations_are_rejected() {
        let add = json!({"op": "add_task", "description": "  "});
        assert_eq!(apply(&example_plan(), add), Err(PlanError::EmptyDescription));
        let assign = json!({"op": "assign_task", "task_id": "task_003", "agent_name": ""});
        let err = apply(&example_plan(), assign).expect_err("blank agent");
        let message = "invalid assigned_agent: task `task_003` has an empty assigned agent";
        assert_eq!(err.to_string(), message);
        let estimate = json!({"op": "estimate_duration", "task_id": "task_003", "duration": ""});
        let err = apply(&example_plan(), estimate).expect_err("blank duration");
        let message = "invalid estimated_duration: task `task_003` has an empty estimated duration";
        assert_eq!(err.to_string(), message);
    }

    #[test]
    fn ready_tasks_are_pending_with_done_dependencies_by_priority_then_plan_order() {
        let mut plan = example_plan();
        plan.tasks[1].status = TaskStatus::Skipped;
        for (priority, deps) in [("low", vec![]), ("critical", vec!["task_003"]), ("high", vec![])] {
            let add = json!({"op": "add_task", "description": "x", "priority": priority,
                "dependencies": deps});
            plan = apply(&plan, add).expect("add succeeds").0;
        }
        let ready: Vec<&str> = plan.ready_tasks().iter().map(|t| &*t.task_id).collect();
        assert_eq!(ready, ["task_006", "task_003", "task_004"]);
    }

    #[test]
    fn each_task_says_how_far_along_it_is() {
        let mut plan: Plan = serde_json::from_value(serde_json::json!({"tasks": [
            {"task_id": "a", "description": "Write", "status": "completed"},
            {"task_id": "b", "description": "Test", "status": "in_progress", "assigned_agent": "tester",
             "metadata": {"progress": 40}},
            {"task_id": "c", "description": "Ship", "status": "in_progress", "metadata": {"progress": "most"}},
            {"task_id": "d", "description": "Tell", "status": "pending"},
            {"task_id": "e", "description": "Wave", "status": "skipped"}
        ]}))
        .unwrap();
        let shown: Vec<_> = plan.task_progress().iter().map(|t| (t.task_id.clone(), t.percentage)).collect();
        assert_eq!(
            shown,
            [
                ("a".into(), Some(100.0)),
                ("b".into(), Some(40.0)),
                ("c".into(), None),
                ("d".into(), Some(0.0)),
                ("e".into(), Some(100.0))
            ]
        );
        plan.tasks[1].metadata.insert("progress".into(), serde_json::json!(250));
        assert_eq!(plan.task_progress()[1].percentage, Some(100.0), "a report past the end is the end");
        assert_eq!(plan.task_progress()[1].assigned_agent.as_deref(), Some("tester"));
    }

    #[test]
    fn progress_is_the_share_of_done_tasks() {
        let mut plan = example_plan();
        let progress = plan.progress();
        assert_eq!((progress.total, progress.completed), (3, 1));
        assert_eq!(progress.status, ProgressStatus::InProgress);
        assert!((progress.percentage() - 100.0 / 3.0).abs() < 1e-9);
        for task in &mut plan.tasks {
            task.status = TaskStatus::Skipped;
        }
        assert_eq!(plan.progress().status, ProgressStatus::Completed);
        assert_eq!(plan.progress().percentage(), 100.0);
        assert_eq!(Plan::default().progress(), ProgressState::from_counts(0, 0));
        assert_eq!(Plan::default().progress().percentage(), 0.0);
        let mut done_and_empty = ProgressState::from_counts(0, 0);
        done_and_empty.status = ProgressStatus::Completed;
        assert_eq!(done_and_empty.percentage(), 100.0);
    }

    #[test]
    fn progress_state_serializes_its_percentage_and_round_trips() {
        let progress = ProgressState::from_counts(4, 1);
        let value = serde_json::to_value(&progress).expect("progress serializes");
        let expected = json!({"total": 4, "completed": 1, "percentage": 25.0, "status": "in_progress"});
        assert_eq!(value, expected);
        let back: ProgressState = serde_json::from_value(value).expect("progress parses");
        assert_eq!(back, progress);
    }

    #[test]
    fn a_plan_revision_round_trips_through_json() {
        let at = DateTime::parse_from_rfc3339("2023-10-27T10:00:00Z").map(|t| t.to_utc());
        let revision = PlanRevision {
            revision: 1,
            plan: example_plan(),
            change_log: Plan::default().change_log(&example_plan()),
            actor: "planner".into(),
            at: at.expect("timestamp parses"),
        };
        // Three tasks added plus the two top-level lists going from empty to filled.
        assert_eq!(revision.change_log.len(), 5);
        let text = serde_json::to_string(&revision).expect("revision serializes");
        let back: PlanRevision = serde_json::from_str(&text).expect("revision parses");
        assert_eq!(back, revision);
    }
}
