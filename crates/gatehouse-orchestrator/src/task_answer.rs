//! What a model answers to one task of an approved plan, read: plain text is
//! the task's result; a JSON object may say the task failed (`status:
//! "failed"`, `error`) and may carry a `replan`, the tasks still to do; a
//! first line `TASK FAILED: reason` is a failure too. A replan is merged
//! into the current plan here, purely: it replaces the tasks not started,
//! never a task that is done or running, nor the plan's execution mode,
//! intervention points or success criteria, which only a person changes.

use gatehouse_engine::plan::{Plan, PlanError, PlanTask, TaskPriority, TaskStatus};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The most tasks a plan may hold after a replan.
const MAX_TASKS: usize = 50;
/// The longest task description kept.
const MAX_DESCRIPTION: usize = 500;

/// A task's answer, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct TaskAnswer {
    /// The task's result (the whole text when it was not structured).
    pub output: String,
    /// Why the task failed, when the model says it did.
    pub failure: Option<String>,
    /// The tasks still to do, when the model revises the plan.
    pub replan: Option<Vec<ReplanTask>>,
}

/// One task of a replan: a description, or a task with its id (an existing
/// pending task's, to keep it), agent, priority and metadata.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum ReplanTask {
    Described(String),
    Task {
        #[serde(default)]
        task_id: Option<String>,
        description: String,
        #[serde(default)]
        assigned_agent: Option<String>,
        #[serde(default)]
        priority: Option<TaskPriority>,
        #[serde(default)]
        metadata: Map<String, Value>,
    },
}

/// Reads a model's answer to a task.
pub(crate) fn read(text: &str) -> TaskAnswer {
    let trimmed = unfenced(text.trim());
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(trimmed) {
        if ["output", "result", "status", "error", "replan"].iter().any(|k| object.contains_key(*k)) {
            return structured(&object, trimmed);
        }
    }
    let first = trimmed.lines().next().unwrap_or_default().trim();
    let failure = first
        .get(..12)
        .filter(|head| head.eq_ignore_ascii_case("TASK FAILED:"))
        .map(|_| first[12..].trim().to_owned())
        .map(|reason| if reason.is_empty() { "the agent said the task failed".to_owned() } else { reason });
    TaskAnswer { output: trimmed.to_owned(), failure, replan: None }
}

fn structured(object: &Map<String, Value>, whole: &str) -> TaskAnswer {
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty());
    let output = text("output").or_else(|| text("result")).unwrap_or(whole).to_owned();
    let failed = text("status").is_some_and(|s| s.eq_ignore_ascii_case("failed"));
    let failure = failed.then(|| text("error").unwrap_or("the agent said the task failed").to_owned());
    let replan = object.get("replan").and_then(|r| match r {
        Value::Object(plan) => plan.get("tasks").cloned(),
        other => Some(other.clone()),
    });
    let replan = replan.and_then(|tasks| serde_json::from_value::<Vec<ReplanTask>>(tasks).ok());
    TaskAnswer { output, failure, replan }
}

/// The text inside a ```json fence, or the text itself.
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// `current` with the tasks not started replaced by `tasks`, after the
/// running task `after`: done and running tasks stay as they are; a replan
/// task naming a pending task's id keeps that task's metadata (adding keys,
/// never changing one); the replan's tasks run in the order given, the
/// first after `after`. The execution mode, intervention points and
/// success criteria stay the current plan's.
pub(crate) fn replanned(current: &Plan, after: &str, tasks: &[ReplanTask]) -> Result<Plan, PlanError> {
    let started = |t: &PlanTask| t.status != TaskStatus::Pending || t.task_id == after;
    let mut plan = Plan { tasks: current.tasks.iter().filter(|t| started(t)).cloned().collect(), ..current.clone() };
    if plan.tasks.len() + tasks.len() > MAX_TASKS {
        let reason = format!("a plan holds at most {MAX_TASKS} tasks");
        return Err(PlanError::InvalidField { field: "replan".into(), reason });
    }
    // New ids follow the kept tasks and the ids the replan names, never the
    // dropped ones: the same replan merged again gives the same plan.
    let named = tasks.iter().filter_map(|t| match t {
        ReplanTask::Task { task_id: Some(id), .. } => Some(id.clone()),
        _ => None,
    });
    let mut reserved = plan.clone();
    reserved.tasks.extend(named.map(|task_id| PlanTask { task_id, ..placeholder() }));
    let mut previous = after.to_owned();
    for task in tasks {
        let next = planned(current, &reserved, task, &previous);
        reserved.tasks.push(PlanTask { task_id: next.task_id.clone(), ..placeholder() });
        if plan.task(&next.task_id).is_some() {
            return Err(PlanError::DuplicateTask { task_id: next.task_id });
        }
        previous = next.task_id.clone();
        plan.tasks.push(next);
    }
    plan.validate()?;
    Ok(plan)
}

fn placeholder() -> PlanTask {
    PlanTask {
        task_id: String::new(),
        description: String::new(),
        status: TaskStatus::Pending,
        assigned_agent: None,
        priority: TaskPriority::default(),
        dependencies: Vec::new(),
        estimated_duration: None,
        metadata: Map::new(),
    }
}

/// One replan task as a pending task, after `previous`; a new one takes
/// the next id free in `reserved`.
fn planned(current: &Plan, reserved: &Plan, task: &ReplanTask, previous: &str) -> PlanTask {
    let (task_id, description, agent, priority, metadata) = match task {
        ReplanTask::Described(d) => (None, d, None, None, Map::new()),
        ReplanTask::Task { task_id, description, assigned_agent, priority, metadata } => {
            (task_id.as_deref(), description, assigned_agent.clone(), *priority, metadata.clone())
        }
    };
    let kept = task_id.and_then(|id| current.task(id)).filter(|t| t.status == TaskStatus::Pending);
    let mut next = kept.cloned().unwrap_or_else(|| PlanTask {
        task_id: task_id.map(str::to_owned).unwrap_or_else(|| reserved.next_task_id()),
        assigned_agent: current.task(previous).and_then(|t| t.assigned_agent.clone()),
        ..placeholder()
    });
    next.description = description.trim().chars().take(MAX_DESCRIPTION).collect();
    next.assigned_agent = agent.filter(|a| !a.trim().is_empty()).or(next.assigned_agent);
    next.priority = priority.unwrap_or(next.priority);
    next.dependencies = vec![previous.to_owned()];
    for (key, value) in metadata {
        next.metadata.entry(key).or_insert(value);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan() -> Plan {
        serde_json::from_value(json!({
            "tasks": [
                {"task_id": "task_001", "description": "Migrate", "status": "completed"},
                {"task_id": "task_002", "description": "Build", "status": "in_progress", "dependencies": ["task_001"],
                 "assigned_agent": "gatehouse"},
                {"task_id": "task_003", "description": "Deploy", "dependencies": ["task_002"],
                 "metadata": {"kind": "deployment"}}
            ],
            "execution_mode": "supervised",
            "human_intervention_points": ["before_deployment"]
        }))
        .unwrap()
    }

    #[test]
    fn plain_text_is_the_result_and_a_failure_line_is_a_failure() {
        assert_eq!(read(" Built it. ").output, "Built it.");
        assert_eq!(read("Built it.").failure, None);
        let failed = read("task failed: the disk is full\nmore detail");
        assert_eq!(failed.failure.as_deref(), Some("the disk is full"));
        assert_eq!(read("TASK FAILED:").failure.as_deref(), Some("the agent said the task failed"));
    }

    #[test]
    fn a_json_answer_may_fail_or_replan() {
        let answer = read(r#"{"status": "failed", "error": "timed out", "output": "half done"}"#);
        assert_eq!((answer.output.as_str(), answer.failure.as_deref()), ("half done", Some("timed out")));
        let answer =
            read("```json\n{\"result\": \"built\", \"replan\": [\"Smoke-test\", {\"description\": \"Ship\"}]}\n```");
        assert_eq!(answer.output, "built");
        assert_eq!(answer.replan.map(|r| r.len()), Some(2));
        let answer = read(r#"{"output": "x", "replan": {"tasks": ["A"]}}"#);
        assert_eq!(answer.replan, Some(vec![ReplanTask::Described("A".into())]));
        assert_eq!(read(r#"{"name": "not an answer"}"#).output, r#"{"name": "not an answer"}"#);
    }

    #[test]
    fn a_replan_replaces_the_tasks_not_started_and_keeps_what_a_person_set() {
        let tasks = [
            ReplanTask::Described("Smoke-test the build".into()),
            ReplanTask::Task {
                task_id: Some("task_003".into()),
                description: "Release it".into(),
                assigned_agent: None,
                priority: None,
                metadata: Map::from_iter([("kind".to_owned(), json!("chore")), ("note".to_owned(), json!(1))]),
            },
        ];
        let next = replanned(&plan(), "task_002", &tasks).unwrap();
        let ids: Vec<&str> = next.tasks.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["task_001", "task_002", "task_004", "task_003"]);
        assert_eq!(next.tasks[2].description, "Smoke-test the build");
        assert_eq!(next.tasks[3].dependencies, ["task_004"]);
        assert_eq!(replanned(&next, "task_002", &tasks), Ok(next.clone()), "merging again changes nothing");
        assert_eq!(next.tasks[2].dependencies, ["task_002"]);
        assert_eq!(next.tasks[2].assigned_agent.as_deref(), Some("gatehouse"));
        let release = next.task("task_003").unwrap();
        assert_eq!(release.description, "Release it");
        assert_eq!(release.metadata["kind"], "deployment", "a replan never changes a key already set");
        assert_eq!(release.metadata["note"], 1);
        assert_eq!(next.execution_mode, plan().execution_mode);
        assert_eq!(next.human_intervention_points, ["before_deployment"]);
    }

    #[test]
    fn a_replan_dropping_pending_work_or_reusing_a_done_id_is_checked() {
        let next = replanned(&plan(), "task_002", &[]).unwrap();
        assert_eq!(next.tasks.len(), 2);
        let reuse = [ReplanTask::Task {
            task_id: Some("task_001".into()),
            description: "Again".into(),
            assigned_agent: None,
            priority: None,
            metadata: Map::new(),
        }];
        assert_eq!(
            replanned(&plan(), "task_002", &reuse),
            Err(PlanError::DuplicateTask { task_id: "task_001".into() })
        );
    }
}
