//! The review gates an approved plan opens as it runs, and when it opens
//! them. Before a task: in `supervised` and `step` mode always; in any mode
//! when the plan names `before_deployment` and the task deploys, or names
//! a point the task's `metadata.intervention_point` names too. When a task
//! fails and the plan names `on_error`. After a task in `step` mode. Every
//! one is `requires_human`: no policy or allow-rule passes what the plan
//! says a person decides.

use gatehouse_engine::plan::{ExecutionMode, Plan, PlanTask};
use gatehouse_engine::{DecisionAction, GateSpec, NewGate, PresetOption};
use serde_json::{json, Value};

/// The intervention point before a task that deploys.
pub(crate) const BEFORE_DEPLOYMENT: &str = "before_deployment";
/// The intervention point when a task fails.
pub(crate) const ON_ERROR: &str = "on_error";

/// Words in a task's description that say it deploys.
const DEPLOY_WORDS: [&str; 6] = ["deploy", "deploys", "deploying", "deployment", "release", "releasing"];

/// Whether `task` deploys: its `metadata.kind` is `deployment` (or
/// `deploy`, `release`), or its description holds one of [`DEPLOY_WORDS`]
/// as a word. A false alarm asks a person once more; a miss would not.
pub(crate) fn deploys(task: &PlanTask) -> bool {
    let kind = task.metadata.get("kind").and_then(Value::as_str).map(str::to_lowercase);
    if kind.is_some_and(|k| matches!(k.as_str(), "deployment" | "deploy" | "release")) {
        return true;
    }
    let description = task.description.to_lowercase();
    description.split(|c: char| !c.is_alphanumeric()).any(|word| DEPLOY_WORDS.contains(&word))
}

/// The intervention points `task` names in `metadata.intervention_point` (a name or a list).
fn named_points(task: &PlanTask) -> Vec<&str> {
    match task.metadata.get("intervention_point") {
        Some(Value::String(point)) => vec![point.as_str()],
        Some(Value::Array(points)) => points.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Why a person is asked before `task` runs, in words; empty when nobody is.
pub(crate) fn reasons_before(plan: &Plan, task: &PlanTask) -> Vec<String> {
    let mut reasons = Vec::new();
    match plan.execution_mode {
        ExecutionMode::Supervised => reasons.push("the plan is supervised: each task waits for a person".to_owned()),
        ExecutionMode::Step => reasons.push("the plan runs step by step".to_owned()),
        ExecutionMode::Autonomous => {}
    }
    let points = &plan.human_intervention_points;
    if points.iter().any(|p| p == BEFORE_DEPLOYMENT) && deploys(task) {
        reasons.push("the task deploys, and the plan stops before deployment".to_owned());
    }
    for point in named_points(task) {
        if point != BEFORE_DEPLOYMENT && point != ON_ERROR && points.iter().any(|p| p == point) {
            reasons.push(format!("the task is at the plan's intervention point `{point}`"));
        }
    }
    reasons
}

/// Whether a replan waits for a person: unless the plan runs autonomously
/// with no intervention point, since a replan could otherwise remove a
/// task a point would have stopped.
pub(crate) fn replan_is_reviewed(plan: &Plan) -> bool {
    plan.execution_mode != ExecutionMode::Autonomous || !plan.human_intervention_points.is_empty()
}

fn option(name: &str, title: &str, action: DecisionAction) -> PresetOption {
    PresetOption { name: name.into(), title: title.into(), description: None, action, text: None }
}

/// What a task gate shows of the task.
fn task_payload(task: &PlanTask) -> Value {
    json!({"task_id": task.task_id, "description": task.description, "assigned_agent": task.assigned_agent})
}

fn assigned(task: &PlanTask) -> String {
    task.assigned_agent.as_deref().map(|a| format!(" (assigned to {a})")).unwrap_or_default()
}

/// Before a task: run it (approve), run it with an edited description (edit), or skip it (reject).
pub(crate) fn before_task(task: &PlanTask, reasons: &[String]) -> NewGate {
    let text = format!(
        "**Before task `{}`**{}: {}\n\nAsked because {}.\n\nRun it, edit its description first, or skip it.",
        task.task_id,
        assigned(task),
        task.description,
        reasons.join("; ")
    );
    let mut gate = NewGate::new(GateSpec::Approval { action: format!("run task {}", task.task_id) }, text);
    gate.payload = Some(task_payload(task));
    gate.payload_schema = Some(json!({
        "type": "object",
        "required": ["description"],
        "properties": {"description": {"type": "string", "minLength": 1, "maxLength": 500}}
    }));
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Edit, DecisionAction::Reject];
    gate.options = vec![
        option("run", "Run the task", DecisionAction::Approve),
        option("skip", "Skip the task", DecisionAction::Reject),
    ];
    finish(gate, task, "task_review")
}

/// A task failed: retry it, skip it, or stop the run.
pub(crate) fn task_failed(task: &PlanTask, error: &str, output: &str) -> NewGate {
    let text = format!(
        "**Task `{}` failed**{}: {}\n\n{error}\n\nRetry it, skip it and go on, or stop the run.",
        task.task_id,
        assigned(task),
        task.description
    );
    let mut gate = NewGate::new(GateSpec::Approval { action: format!("recover task {}", task.task_id) }, text);
    let mut payload = task_payload(task);
    payload["error"] = Value::from(error);
    payload["output"] = Value::from(output);
    gate.payload = Some(payload);
    gate.allowed_actions = vec![DecisionAction::Retry, DecisionAction::Defer, DecisionAction::Reject];
    gate.options = vec![
        option("retry", "Retry the task", DecisionAction::Retry),
        option("skip", "Skip it and go on", DecisionAction::Defer),
        option("stop", "Stop the run", DecisionAction::Reject),
    ];
    finish(gate, task, "task_error")
}

/// In step mode, a task's result: go on (approve), redo it with feedback (retry), or stop (reject).
pub(crate) fn task_result(task: &PlanTask, output: &str) -> NewGate {
    let text = format!(
        "**Task `{}` is done**{}: {}\n\n{output}\n\nGo on to the next task, redo this one with your feedback, or stop the run.",
        task.task_id,
        assigned(task),
        task.description
    );
    let mut gate = NewGate::new(GateSpec::Approval { action: format!("accept task {}", task.task_id) }, text);
    let mut payload = task_payload(task);
    payload["output"] = Value::from(output);
    gate.payload = Some(payload);
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Retry, DecisionAction::Reject];
    gate.options = vec![
        option("next", "Go on", DecisionAction::Approve),
        option("redo", "Redo the task", DecisionAction::Retry),
        option("stop", "Stop the run", DecisionAction::Reject),
    ];
    finish(gate, task, "task_result")
}

/// A replan for a person: the proposed plan, what changes.
pub(crate) fn replan(proposed: &Plan, revision: Option<u32>, task: &PlanTask, changes: &[String]) -> NewGate {
    let listed = changes.iter().map(|c| format!("- {c}")).collect::<Vec<_>>().join("\n");
    let note = format!(
        "The agent revised the plan after task `{}`. Approve it, edit it, or reject it to keep the plan as it was.\n\nChanges:\n{listed}",
        task.task_id
    );
    let mut gate = NewGate::plan_propose(proposed, revision, 1, Some(&note));
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Edit, DecisionAction::Reject];
    finish(gate, task, "replan_review")
}

fn finish(mut gate: NewGate, task: &PlanTask, step: &str) -> NewGate {
    gate.requires_human = true;
    gate.context.step = Some(step.into());
    gate.context.task_id = Some(task.task_id.clone());
    gate.context.task_description = Some(task.description.chars().take(500).collect());
    gate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(description: &str, metadata: Value) -> PlanTask {
        serde_json::from_value(json!({"task_id": "t", "description": description, "metadata": metadata})).unwrap()
    }

    #[test]
    fn a_task_deploys_by_its_kind_or_its_words() {
        assert!(deploys(&task("Ship it", json!({"kind": "deployment"}))));
        assert!(deploys(&task("Deploy the release to production", json!({}))));
        assert!(deploys(&task("Cut the release.", json!({}))));
        assert!(!deploys(&task("Write the deployer's tests", json!({}))));
        assert!(!deploys(&task("Build it", json!({"kind": "build"}))));
    }

    #[test]
    fn reasons_follow_the_mode_and_the_points_a_person_set() {
        let mut plan = Plan::default();
        let deploy = task("Deploy", json!({"intervention_point": ["security", "elsewhere"]}));
        assert!(reasons_before(&plan, &deploy).is_empty());
        plan.human_intervention_points = vec![BEFORE_DEPLOYMENT.into(), "security".into()];
        let reasons = reasons_before(&plan, &deploy);
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(reasons[1].contains("`security`"));
        plan.execution_mode = ExecutionMode::Supervised;
        assert_eq!(reasons_before(&plan, &task("Write", json!({}))).len(), 1);
        assert!(replan_is_reviewed(&plan));
        assert!(!replan_is_reviewed(&Plan::default()));
    }
}
