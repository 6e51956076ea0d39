//! The approved plan acts: its tasks run one at a time in plan order (a
//! task once its dependencies are done), each one's progress recorded as
//! plan revisions (`pending` -> `in_progress` -> `completed`, `failed` or
//! `skipped`, with the change log). The plan's `execution_mode` and
//! `human_intervention_points` open the gates of `task_gates.rs`; a task's
//! answer may fail it or revise the plan (`task_answer.rs`).
//!
//! Durable like every step: the plan's own state says which task is next
//! and which attempt it is on (`metadata.attempt`), and every step and gate
//! of an attempt has a key made from the task's id and the attempt, so a
//! run driven again after a restart replays, runs no task twice and asks
//! nothing twice. A reviewer's restart of a task (`plan_restart.rs`) puts
//! it back to `pending` with a new attempt: it passes its gate again and
//! runs under its new attempt's keys.

use gatehouse_engine::plan::{Plan, PlanOperation, PlanTask, TaskStatus};
use gatehouse_engine::DecisionAction;
use gatehouse_providers::Tool;
use serde_json::{json, Map, Value};

use crate::collab::{current_plan, generate, request, task_request, TASK_SYSTEM};
use crate::driver::{decision_of, Driver, Halt, Step};
use crate::injection::{inject, At};
use crate::spec::RunSpec;
use crate::task_answer::{self, TaskAnswer};
use crate::task_gates::{self, ON_ERROR};
use crate::AGENT;

/// How a task ended.
enum Ended {
    Completed,
    Skipped,
    /// A reviewer restarted it while an attempt was under way (`plan_restart.rs`).
    Restarted,
}

/// Runs the plan's tasks until none is left to start; the run's result.
pub(crate) async fn execute(d: &mut Driver, spec: &RunSpec, tool: &Tool, goal: &str) -> Step<Value> {
    loop {
        let plan = current_plan(d).await?.unwrap_or_default();
        let Some(task) = next_task(&plan) else { break };
        let task_id = task.task_id.clone();
        run_task(d, spec, tool, goal, &task_id).await?;
    }
    let id = d.run_id.clone();
    let revision = d.engine(move |e| e.plan(&id)).await?;
    let plan = revision.as_ref().map(|r| r.plan.clone()).unwrap_or_default();
    let waiting: Vec<&str> = plan.tasks.iter().filter(|t| !t.status.is_done()).map(|t| t.task_id.as_str()).collect();
    if !waiting.is_empty() {
        return Err(Halt::Fail(format!(
            "tasks {} cannot start: a task they depend on is not done",
            waiting.join(", ")
        )));
    }
    let outputs: Vec<Value> = plan
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
        .map(|t| json!({"task_id": t.task_id, "description": t.description, "output": output_of(t)}))
        .collect();
    let skipped: Vec<&str> =
        plan.tasks.iter().filter(|t| t.status == TaskStatus::Skipped).map(|t| t.task_id.as_str()).collect();
    let mut result = json!({"goal": goal, "plan_revision": revision.map(|r| r.revision), "outputs": outputs});
    if !skipped.is_empty() {
        result["skipped"] = json!(skipped);
    }
    Ok(result)
}

/// The task to work on: one already under way (a run driven again), else
/// the first pending task, in plan order, whose dependencies are done.
fn next_task(plan: &Plan) -> Option<&PlanTask> {
    let running = |t: &&PlanTask| matches!(t.status, TaskStatus::InProgress | TaskStatus::Failed);
    plan.tasks.iter().find(running).or_else(|| {
        let done = |id: &String| plan.task(id).is_some_and(|t| t.status.is_done());
        plan.tasks.iter().find(|t| t.status == TaskStatus::Pending && t.dependencies.iter().all(done))
    })
}

fn output_of(task: &PlanTask) -> &str {
    task.metadata.get("output").and_then(Value::as_str).unwrap_or_default()
}

/// Which attempt the task is on (0 for the first).
pub(crate) fn attempt_of(task: &PlanTask) -> u64 {
    task.metadata.get("attempt").and_then(Value::as_u64).unwrap_or(0)
}

/// The step key of a task's attempt.
fn attempt_key(task_id: &str, attempt: u64) -> String {
    match attempt {
        0 => format!("task:{task_id}"),
        n => format!("task:{task_id}:try{n}"),
    }
}

pub(crate) async fn task_now(d: &Driver, task_id: &str) -> Step<(Plan, PlanTask)> {
    let plan = current_plan(d).await?.unwrap_or_default();
    let task = plan.task(task_id).cloned().ok_or_else(|| Halt::Fail(format!("task `{task_id}` left the plan")))?;
    Ok((plan, task))
}

/// One task: the gate before it, then attempts until it completes, is
/// skipped, or the run stops.
async fn run_task(d: &mut Driver, spec: &RunSpec, tool: &Tool, goal: &str, task_id: &str) -> Step<Ended> {
    let (plan, task) = task_now(d, task_id).await?;
    let mut attempt = attempt_of(&task);
    if task.status == TaskStatus::Failed && !asks_on_error(&plan) {
        // The run failed at this task: a reviewer's retry of the run asks anew, anything else fails again.
        let id = d.run_id.clone();
        let retries = d.engine(move |e| e.run(&id)).await?.retries;
        let failed_at = task.metadata.get("run_retries").and_then(Value::as_u64).unwrap_or(0);
        if u64::from(retries) <= failed_at {
            let error = task.metadata.get("error").and_then(Value::as_str).unwrap_or("it failed");
            return Err(Halt::Fail(format!("task `{task_id}` failed: {error}")));
        }
        attempt = next_attempt(d, task_id, attempt, None).await?;
    }
    // A task starting afresh (a first attempt, or one a reviewer restarted) passes its gate first.
    if task.status == TaskStatus::Pending || (attempt == 0 && task.status == TaskStatus::InProgress) {
        let reasons = task_gates::reasons_before(&plan, &task);
        if !reasons.is_empty() {
            let key = format!("{}:before", attempt_key(task_id, attempt));
            let gate = task_gates::before_task(&task, &reasons);
            let gate = d.ask(&key, "task_review", gate).await?;
            let decision = decision_of(&gate);
            match decision.action {
                DecisionAction::Approve => {}
                DecisionAction::Edit => {
                    let edited = decision.payload.as_ref().and_then(|p| p.get("description")).and_then(Value::as_str);
                    let description = edited.unwrap_or(&task.description).to_owned();
                    let by = decision.decided_by.clone();
                    describe(d, task_id, description, &by).await?;
                }
                _ => {
                    let skipped = Map::from_iter([("skipped_by".to_owned(), Value::from(decision.decided_by.clone()))]);
                    update(d, task_id, TaskStatus::Skipped, skipped).await?;
                    return Ok(Ended::Skipped);
                }
            }
        }
    }
    if crate::plan_restart::waits_again(d, task_id).await? {
        return Ok(Ended::Restarted);
    }
    loop {
        let (plan, task) = task_now(d, task_id).await?;
        if task.status == TaskStatus::Pending {
            update(d, task_id, TaskStatus::InProgress, Map::new()).await?;
        }
        let key = attempt_key(task_id, attempt);
        let answer = attempt_task(d, spec, tool, goal, &plan, &task, &key).await?;
        if crate::plan_restart::dropped(d, task_id, attempt, &key).await? {
            return Ok(Ended::Restarted);
        }
        if let Some(error) = &answer.failure {
            let id = d.run_id.clone();
            let retries = d.engine(move |e| e.run(&id)).await?.retries;
            let failed = Map::from_iter([
                ("error".to_owned(), Value::from(error.clone())),
                ("run_retries".to_owned(), Value::from(retries)),
            ]);
            if !settle(d, task_id, attempt, TaskStatus::Failed, failed).await? {
                crate::plan_restart::note_dropped(d, task_id, &key).await?;
                return Ok(Ended::Restarted);
            }
            if !asks_on_error(&plan) {
                return Err(Halt::Fail(format!("task `{task_id}` failed: {error}")));
            }
            let gate = task_gates::task_failed(&task, error, &answer.output);
            let gate = d.ask(&format!("{key}:failed"), "task_error", gate).await?;
            let decision = decision_of(&gate);
            match decision.action {
                DecisionAction::Retry => attempt = next_attempt(d, task_id, attempt, decision.text.clone()).await?,
                DecisionAction::Defer => {
                    let skipped = Map::from_iter([("skipped_by".to_owned(), Value::from(decision.decided_by.clone()))]);
                    update(d, task_id, TaskStatus::Skipped, skipped).await?;
                    return Ok(Ended::Skipped);
                }
                _ => return Err(Halt::Cancel(stopped(&decision.decided_by, task_id, decision.text.as_deref()))),
            }
            continue;
        }
        if plan.execution_mode == gatehouse_engine::plan::ExecutionMode::Step {
            let gate = task_gates::task_result(&task, &answer.output);
            let gate = d.ask(&format!("{key}:result"), "task_result", gate).await?;
            let decision = decision_of(&gate);
            match decision.action {
                DecisionAction::Approve => {}
                DecisionAction::Retry => {
                    attempt = next_attempt(d, task_id, attempt, decision.text.clone()).await?;
                    continue;
                }
                _ => return Err(Halt::Cancel(stopped(&decision.decided_by, task_id, decision.text.as_deref()))),
            }
        }
        if let Some(tasks) = &answer.replan {
            replan(d, &key, &task, tasks).await?;
        }
        let done = Map::from_iter([("output".to_owned(), Value::from(answer.output.clone()))]);
        if !settle(d, task_id, attempt, TaskStatus::Completed, done).await? {
            crate::plan_restart::note_dropped(d, task_id, &key).await?;
            return Ok(Ended::Restarted);
        }
        return Ok(Ended::Completed);
    }
}

/// One attempt's model request (the reviewer's feedback in it, answered
/// blockers injected); its answer, read.
async fn attempt_task(
    d: &mut Driver,
    spec: &RunSpec,
    tool: &Tool,
    goal: &str,
    plan: &Plan,
    task: &PlanTask,
    key: &str,
) -> Step<TaskAnswer> {
    let done: Vec<(String, String)> = plan
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
        .map(|t| (t.description.clone(), output_of(t).to_owned()))
        .collect();
    let mut prompt = task_request(goal, Some(plan), &task.description, &done);
    if let Some(agent) = &task.assigned_agent {
        prompt.push_str(&format!("\n\nAgent:\n{agent}"));
    }
    if let Some(feedback) = task.metadata.get("feedback").and_then(Value::as_str) {
        prompt.push_str(&format!("\n\nFeedback:\n{feedback}"));
    }
    let attempt = attempt_of(task);
    if attempt > 0 {
        prompt.push_str(&format!("\n\nAttempt:\n{}", attempt + 1));
    }
    let mut input = request(spec, TASK_SYSTEM, prompt);
    let at = At { key: format!("inject:{key}"), next: key.to_owned(), task: Some(&task.task_id) };
    inject(d, spec.answer_template.as_deref(), &mut input, at).await?;
    let text = generate(d, tool, key, "task", input).await?;
    Ok(task_answer::read(&text))
}

fn asks_on_error(plan: &Plan) -> bool {
    plan.human_intervention_points.iter().any(|p| p == ON_ERROR)
}

/// Counts a new attempt in the plan (with the reviewer's feedback, if any); its number.
async fn next_attempt(d: &Driver, task_id: &str, attempt: u64, feedback: Option<String>) -> Step<u64> {
    let next = attempt + 1;
    let mut metadata = Map::from_iter([("attempt".to_owned(), Value::from(next)), ("error".to_owned(), Value::Null)]);
    metadata.insert("feedback".into(), feedback.filter(|f| !f.trim().is_empty()).map_or(Value::Null, Value::from));
    update(d, task_id, TaskStatus::InProgress, metadata).await?;
    Ok(next)
}

fn stopped(by: &str, task_id: &str, reason: Option<&str>) -> String {
    let reason = reason.filter(|r| !r.trim().is_empty()).map(|r| format!(": {r}")).unwrap_or_default();
    format!("stopped by {by} at task `{task_id}`{reason}")
}

/// The agent's revised plan: applied at once when nothing a person set
/// could be bypassed by it, else a plan review (approve, edit, or reject to
/// keep the plan as it was). A replan that does not fit is noted and dropped.
async fn replan(d: &mut Driver, key: &str, task: &PlanTask, tasks: &[task_answer::ReplanTask]) -> Step<()> {
    let current = current_plan(d).await?.unwrap_or_default();
    let proposed = match task_answer::replanned(&current, &task.task_id, tasks) {
        Ok(plan) => plan,
        Err(error) => {
            let content = format!("The agent's revised plan after task `{}` was not taken: {error}", task.task_id);
            return d.note(&format!("{key}:replan"), content, json!({"step": "replan"})).await;
        }
    };
    let changes = current.change_log(&proposed);
    if changes.is_empty() {
        return Ok(());
    }
    if task_gates::replan_is_reviewed(&current) {
        let id = d.run_id.clone();
        let revision = d.engine(move |e| e.plan(&id)).await?.map(|r| r.revision);
        let gate = task_gates::replan(&proposed, revision, task, &changes);
        let gate = d.ask(&format!("{key}:replan"), "replan_review", gate).await?;
        // An edit made the reviewer's plan the run's (the engine applies it); a rejection keeps the plan.
        if decision_of(&gate).action != DecisionAction::Approve {
            return Ok(());
        }
    }
    let id = d.run_id.clone();
    d.engine(move |e| e.plan_apply(&id, PlanOperation::Replace { plan: proposed }, AGENT)).await?;
    Ok(())
}

/// A reviewer's new description of a task, as a revision of theirs
/// (read and written in one transaction: `plan_edit.rs`).
pub(crate) async fn describe(d: &Driver, task_id: &str, description: String, by: &str) -> Step<()> {
    let (id, task_id, by) = (d.run_id.clone(), task_id.to_owned(), by.to_owned());
    d.engine(move |e| crate::plan_edit::describe_task(e, &id, &task_id, description, &by)).await?;
    Ok(())
}

/// Sets the status attempt `attempt` of `task_id` ended with, unless a
/// reviewer restarted the task meanwhile (checked in the same write): false then.
async fn settle(
    d: &Driver,
    task_id: &str,
    attempt: u64,
    status: TaskStatus,
    metadata: Map<String, Value>,
) -> Step<bool> {
    let (id, task) = (d.run_id.clone(), task_id.to_owned());
    let op = PlanOperation::UpdateTask { task_id: task.clone(), status: Some(status), metadata };
    let settled = d.engine(move |e| e.plan_apply_at_attempt(&id, &task, attempt, op, AGENT)).await?;
    Ok(settled.is_some())
}

async fn update(d: &Driver, task_id: &str, status: TaskStatus, metadata: Map<String, Value>) -> Step<()> {
    let (id, task_id) = (d.run_id.clone(), task_id.to_owned());
    let op = PlanOperation::UpdateTask { task_id, status: Some(status), metadata };
    d.engine(move |e| e.plan_apply(&id, op, AGENT)).await?;
    Ok(())
}
