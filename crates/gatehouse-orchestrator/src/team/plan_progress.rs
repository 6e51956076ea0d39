//! A team run's plan follows the work. The plan comes from the run input's
//! `plan` (a person's: its tasks, each `assigned_agent` a team member, its
//! `execution_mode` and `human_intervention_points`) or from the agents'
//! plan tools (`plan_tools.rs`). The rules, each change a plan revision:
//!
//! - When the turn reaches an agent, its task is the one assigned to it
//!   that is `in_progress`, else its first (in plan order) `pending` or
//!   `blocked` task whose dependencies are done, which goes `in_progress`.
//!   Before that the plan's gates of `task_gates.rs` open where they say
//!   (`supervised` and `step`: every task; `before_deployment`: a task that
//!   deploys; a named point the task names): run it, edit its description,
//!   or skip it (not again for a task a person sent back to its agent:
//!   its retry was the decision). The agent's prompt names its task.
//! - When the agent hands off, its `in_progress` task is `completed`;
//!   `failed` when the handoff's reason starts `TASK FAILED:`. With
//!   `on_error` a person then decides: retry (the task `in_progress` again,
//!   a new attempt, and its agent takes the turn back, told the feedback),
//!   skip, or stop the run. Without `on_error` the task stays `failed` and
//!   the team goes on (a reviewer may restart it).
//! - In a plan that runs step by step (`execution_mode: step`), a task its
//!   agent handed on is first shown to a person (`task_result`): accept it
//!   (`completed`), send its agent back to redo it with feedback (a new
//!   attempt, as a retry above), or stop the run.
//! - When the team's answer is accepted, the answering agent's task is
//!   `completed`.
//!
//! Durable: gates are keyed by task and attempt (`team:task:ID:N:before`,
//! `team:task:ID:N:failed`, `team:task:ID:N:result`), the end of a turn's task is noted under
//! `team:N:plan:end` with who holds the turn after it, and a turn already
//! taken changes nothing when the run is driven again.

use gatehouse_engine::plan::{ExecutionMode, Plan, PlanOperation, PlanTask, TaskStatus};
use gatehouse_engine::DecisionAction;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::collab::current_plan;
use crate::driver::{decision_of, Driver, Halt, Step};
use crate::spec::{RunSpec, SpecError};
use crate::task_gates::{self, ON_ERROR};
use crate::AGENT;

use super::{plan_tools, Team, TeamAgent};

/// What an agent's handoff says when its task failed.
pub const FAILED_PREFIX: &str = "TASK FAILED:";

/// The turn going back to the agent of a task a person asked to retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Back {
    /// The agent that takes the turn again.
    pub agent: String,
    /// What it is told.
    pub note: String,
}

/// Reads the run input's `plan` for a team run: a plan whose tasks are
/// assigned to members of `team`; errors name the field (`plan.tasks[1].assigned_agent`).
pub fn parse_plan(value: Option<&Value>, team: Option<&Team>) -> Result<Option<Plan>, SpecError> {
    let bad = |field: &str, message: String| SpecError { field: field.into(), message };
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let Some(team) = team else {
        return Err(bad("plan", "is given with a `team`; one model plans with `collaborate`".into()));
    };
    let plan: Plan = serde_json::from_value(value.clone()).map_err(|e| bad("plan", e.to_string()))?;
    plan.validate().map_err(|e| bad("plan", e.to_string()))?;
    plan_tools::check_plan(team, &plan, "plan")?;
    Ok(Some(plan))
}

/// The run input's plan made the run's, once, before the first turn.
pub(crate) async fn seed(d: &mut Driver, spec: &RunSpec) -> Step<()> {
    let (key, Some(plan)) = ("team:plan", spec.plan.clone()) else {
        return Ok(());
    };
    if d.journaled(key) {
        return Ok(());
    }
    let id = d.run_id.clone();
    // Only a run without a plan gets it, checked in the same write as the plan is made.
    let revision = d
        .engine(move |e| e.plan_revise(&id, AGENT, |found| found.is_none().then_some(PlanOperation::Replace { plan })));
    let Some(revision) = revision.await? else {
        return Err(Halt::Fail("the team's plan was not kept".into()));
    };
    let content = format!("The team's plan: {} task(s), revision {}.", revision.plan.tasks.len(), revision.revision);
    d.note(key, content, json!({"step": "plan", "plan_revision": revision.revision})).await
}

/// The task `agent` works on now: its `in_progress` one, else its first
/// `pending` or `blocked` one whose dependencies are done.
fn task_of<'a>(plan: &'a Plan, agent: &str) -> Option<&'a PlanTask> {
    let mine = |t: &&PlanTask| t.assigned_agent.as_deref() == Some(agent);
    let done = |id: &String| plan.task(id).is_some_and(|t| t.status.is_done());
    let startable = |t: &&PlanTask| {
        matches!(t.status, TaskStatus::Pending | TaskStatus::Blocked) && t.dependencies.iter().all(done)
    };
    let mut tasks = plan.tasks.iter().filter(mine);
    tasks.clone().find(|t| t.status == TaskStatus::InProgress).or_else(|| tasks.find(startable))
}

fn attempt_of(task: &PlanTask) -> u64 {
    task.metadata.get("attempt").and_then(Value::as_u64).unwrap_or(0)
}

fn turn_of(task: &PlanTask, key: &str) -> Option<u64> {
    task.metadata.get(key).and_then(Value::as_u64)
}

async fn update(d: &Driver, task_id: &str, status: TaskStatus, metadata: Map<String, Value>) -> Step<()> {
    let (id, task_id) = (d.run_id.clone(), task_id.to_owned());
    let op = PlanOperation::UpdateTask { task_id, status: Some(status), metadata };
    d.engine(move |e| e.plan_apply(&id, op, AGENT)).await?;
    Ok(())
}

fn meta(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// At the start of `agent`'s turn `turn`: its task, past its gate, goes
/// `in_progress`. The line its prompt gets, if it has a task.
pub(crate) async fn start(d: &mut Driver, agent: &TeamAgent, turn: u32) -> Step<Option<String>> {
    if d.journaled(&format!("team:{turn}:call")) {
        // A turn already taken: its task started then.
        return Ok(None);
    }
    let Some(plan) = current_plan(d).await? else {
        return Ok(None);
    };
    let Some(task) = task_of(&plan, &agent.name).cloned() else {
        return Ok(None);
    };
    let id = task.task_id.clone();
    // A task a person sent back to its agent (a retry: in progress on a
    // later attempt) was just decided on: its gate is not asked again.
    let retried = task.status == TaskStatus::InProgress && attempt_of(&task) > 0;
    let reasons = if retried { Vec::new() } else { task_gates::reasons_before(&plan, &task) };
    if !reasons.is_empty() {
        let key = format!("team:task:{id}:{}:before", attempt_of(&task));
        let gate = d.ask(&key, "task_review", task_gates::before_task(&task, &reasons)).await?;
        let decision = decision_of(&gate).clone();
        match decision.action {
            DecisionAction::Approve => {}
            DecisionAction::Edit => {
                let edited = decision.payload.as_ref().and_then(|p| p.get("description")).and_then(Value::as_str);
                if let Some(description) = edited.filter(|t| *t != task.description) {
                    crate::execution::describe(d, &id, description.to_owned(), &decision.decided_by).await?;
                }
            }
            _ => {
                if task.status != TaskStatus::Skipped {
                    update(d, &id, TaskStatus::Skipped, meta(&[("skipped_by", json!(decision.decided_by))])).await?;
                }
                return Ok(Some(format!(
                    "{} skipped your task `{id}` ({}): do not do it.",
                    decision.decided_by, task.description
                )));
            }
        }
    }
    if task.status != TaskStatus::InProgress {
        update(d, &id, TaskStatus::InProgress, meta(&[("started_turn", json!(turn))])).await?;
    }
    let plan = current_plan(d).await?.unwrap_or_default();
    let description = plan.task(&id).map_or(task.description.clone(), |t| t.description.clone());
    Ok(Some(format!("Your task: {id}: {description}")))
}

/// Whether the run went past turn `turn` already (a turn after it began).
fn past(d: &Driver, turn: u32) -> bool {
    ["team", "restart", "call"].iter().any(|s| d.journaled(&format!("team:{}:{s}", turn + 1)))
}

/// `agent` handed off in turn `turn` with `reason`: its task ends
/// (completed, or failed and decided at the `on_error` gate). The agent
/// that takes the turn back when a person asked for a retry.
pub(crate) async fn handed(d: &mut Driver, agent: &TeamAgent, turn: u32, reason: &str) -> Step<Option<Back>> {
    let failure = reason.trim().get(..FAILED_PREFIX.len()).filter(|p| p.eq_ignore_ascii_case(FAILED_PREFIX));
    let error = failure.map(|p| reason.trim()[p.len()..].trim().to_owned());
    end(d, agent, turn, error.map(|e| if e.is_empty() { "no reason given".to_owned() } else { e }), false).await
}

/// The team's answer from `agent` was accepted in turn `turn` (a person
/// reviewed it already): its task is done.
pub(crate) async fn answered(d: &mut Driver, agent: &TeamAgent, turn: u32) -> Step<()> {
    end(d, agent, turn, None, true).await.map(|_| ())
}

/// The end of `agent`'s turn `turn` for its task; `accepted` when a person
/// accepted the team's answer with it (no step-by-step look then).
async fn end(
    d: &mut Driver,
    agent: &TeamAgent,
    turn: u32,
    error: Option<String>,
    accepted: bool,
) -> Step<Option<Back>> {
    let key = format!("team:{turn}:plan:end");
    if let Some(done) = d.output(&key) {
        return Ok(serde_json::from_value(done.clone()).unwrap_or(None));
    }
    if past(d, turn) {
        return Ok(None);
    }
    let Some(plan) = current_plan(d).await? else {
        return Ok(None);
    };
    let here = Some(u64::from(turn));
    let mine = |t: &&PlanTask| t.assigned_agent.as_deref() == Some(agent.name.as_str());
    // Its task, or the one this turn already failed or retried (a run driven again mid-way).
    let found = plan.tasks.iter().filter(mine).find(|t| {
        t.status == TaskStatus::InProgress && turn_of(t, "retry_turn") != here
            || t.status == TaskStatus::Failed && turn_of(t, "failed_turn") == here
    });
    let retried = plan.tasks.iter().filter(mine).find(|t| turn_of(t, "retry_turn") == here);
    let (back, content) = match (found.cloned(), retried) {
        (_, Some(task)) => {
            (Some(retry_back(agent, task)), format!("Task `{}` is retried by {}.", task.task_id, agent.name))
        }
        (None, None) => return Ok(None),
        (Some(task), None) => match error {
            None if !accepted && plan.execution_mode == ExecutionMode::Step => stepped(d, &task, agent, turn).await?,
            None => {
                update(d, &task.task_id, TaskStatus::Completed, meta(&[("completed_turn", json!(turn))])).await?;
                (None, format!("Task `{}` is completed by {}.", task.task_id, agent.name))
            }
            Some(error) => failed(d, &plan, &task, agent, turn, &error).await?,
        },
    };
    let output = serde_json::to_value(&back).unwrap_or(Value::Null);
    d.note_with(&key, content, json!({"step": "plan_progress", "team_agent": agent.name}), output).await?;
    Ok(back)
}

fn retry_back(agent: &TeamAgent, task: &PlanTask) -> Back {
    let feedback = task.metadata.get("feedback").and_then(Value::as_str).map(|f| format!(": {f}")).unwrap_or_default();
    Back {
        agent: agent.name.clone(),
        note: format!("A reviewer asked you to retry your task `{}` ({}){feedback}", task.task_id, task.description),
    }
}

/// A task done in a plan that runs step by step: a person looks at it
/// first (`team:task:ID:N:result`): accept it (completed), send its agent
/// back to redo it with feedback (a new attempt), or stop the run.
async fn stepped(d: &mut Driver, task: &PlanTask, agent: &TeamAgent, turn: u32) -> Step<(Option<Back>, String)> {
    let id = &task.task_id;
    let key = format!("team:task:{id}:{}:result", attempt_of(task));
    let done = format!("{} handed the turn on.", agent.name);
    let gate = d.ask(&key, "task_result", task_gates::task_result(task, &done)).await?;
    let decision = decision_of(&gate).clone();
    match decision.action {
        DecisionAction::Approve => {
            update(d, id, TaskStatus::Completed, meta(&[("completed_turn", json!(turn))])).await?;
            Ok((None, format!("Task `{id}` is completed by {}, as {} accepted.", agent.name, decision.decided_by)))
        }
        DecisionAction::Retry => {
            let back = retry(d, task, agent, turn, decision.text.as_deref()).await?;
            Ok((Some(back), format!("Task `{id}` is sent back to {} by {}.", agent.name, decision.decided_by)))
        }
        _ => Err(stop(&decision, id)),
    }
}

/// A person asked `agent` to redo `task`: in progress again, a new
/// attempt, the feedback kept; the agent that takes the turn back.
async fn retry(d: &mut Driver, task: &PlanTask, agent: &TeamAgent, turn: u32, feedback: Option<&str>) -> Step<Back> {
    let id = &task.task_id;
    let feedback = feedback.map(str::trim).filter(|t| !t.is_empty());
    let retry = meta(&[
        ("attempt", json!(attempt_of(task) + 1)),
        ("error", Value::Null),
        ("feedback", feedback.map_or(Value::Null, Value::from)),
        ("retry_turn", json!(turn)),
    ]);
    update(d, id, TaskStatus::InProgress, retry).await?;
    let plan = current_plan(d).await?.unwrap_or_default();
    Ok(retry_back(agent, plan.task(id).unwrap_or(task)))
}

/// A person stopped the run at task `id`.
fn stop(decision: &gatehouse_engine::Decision, id: &str) -> Halt {
    let why = decision.text.as_deref().filter(|t| !t.trim().is_empty()).map(|t| format!(": {t}"));
    Halt::Cancel(format!("stopped by {} at task `{id}`{}", decision.decided_by, why.unwrap_or_default()))
}

/// A task that failed: noted in the plan, then decided by a person at the
/// `on_error` gate when the plan names it.
async fn failed(
    d: &mut Driver,
    plan: &Plan,
    task: &PlanTask,
    agent: &TeamAgent,
    turn: u32,
    error: &str,
) -> Step<(Option<Back>, String)> {
    let id = &task.task_id;
    if task.status != TaskStatus::Failed {
        let failed = meta(&[("error", json!(error)), ("failed_turn", json!(turn))]);
        update(d, id, TaskStatus::Failed, failed).await?;
    }
    if !plan.human_intervention_points.iter().any(|p| p == ON_ERROR) {
        return Ok((None, format!("Task `{id}` failed ({error}); the team goes on.")));
    }
    let key = format!("team:task:{id}:{}:failed", attempt_of(task));
    let gate = d.ask(&key, "task_error", task_gates::task_failed(task, error, "")).await?;
    let decision = decision_of(&gate).clone();
    match decision.action {
        DecisionAction::Retry => {
            let back = retry(d, task, agent, turn, decision.text.as_deref()).await?;
            Ok((Some(back), format!("Task `{id}` failed; {} asked for a retry.", decision.decided_by)))
        }
        DecisionAction::Defer => {
            update(d, id, TaskStatus::Skipped, meta(&[("skipped_by", json!(decision.decided_by))])).await?;
            Ok((None, format!("Task `{id}` failed; {} skipped it.", decision.decided_by)))
        }
        _ => Err(stop(&decision, id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(tasks: Value) -> Plan {
        serde_json::from_value(json!({"tasks": tasks})).unwrap()
    }

    #[test]
    fn an_agents_task_is_its_running_one_else_its_first_ready_one() {
        let p = plan(json!([
            {"task_id": "a", "description": "A", "assigned_agent": "coder", "status": "completed"},
            {"task_id": "b", "description": "B", "assigned_agent": "tester", "dependencies": ["c"]},
            {"task_id": "c", "description": "C", "assigned_agent": "coder", "status": "blocked"},
            {"task_id": "d", "description": "D", "assigned_agent": "tester"},
        ]));
        assert_eq!(task_of(&p, "coder").map(|t| t.task_id.as_str()), Some("c"));
        assert_eq!(task_of(&p, "tester").map(|t| t.task_id.as_str()), Some("d"), "b waits for c");
        assert!(task_of(&p, "deployer").is_none());
        let mut running = p.clone();
        running.tasks[1].status = TaskStatus::InProgress;
        assert_eq!(task_of(&running, "tester").map(|t| t.task_id.as_str()), Some("b"));
    }
}
