//! Restart a task over HTTP: `POST /runs/{run_id}/restart-task`, a
//! reviewer's intervention on a live team run. A named agent (or the one
//! holding the turn) goes back to redo its turn, with an optional
//! instruction; recorded as the reviewer's turn (the timeline and the
//! audit show who asked), taken by the orchestrator at the team's next
//! step boundary, also while the run is paused, in step mode or at a
//! breakpoint. Reviewers and admins only: an agent's token never restarts
//! its own work. A run waiting at a review gate is answered there instead
//! (retry with changes sends the agent back).
//!
//! On a team run with a plan, `task_id` names a plan task: it and its
//! dependants go back to `pending` and its assigned agent is sent back.
//! On a plan collaboration run the request names the plan's `task_id`: the
//! task and the tasks depending on it go back to `pending` as one plan
//! revision (the instruction the task's feedback), recorded as the
//! reviewer's turn too, and the run runs them again
//! (`gatehouse_orchestrator::plan_restart`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::plan::PlanRevision;
use gatehouse_engine::{Engine, GateFilter, NewTurn, Role, Run};
use gatehouse_orchestrator::plan_restart::restarts_plan_tasks;
use gatehouse_orchestrator::team::change;
use gatehouse_orchestrator::team::restart::{RestartTask, MAX_INSTRUCTION};
use gatehouse_orchestrator::team::view::team_of;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::team::{state_of, TeamState};
use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// Which agent redoes its turn, and what it is told.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct RestartTaskRequest {
    /// The agent sent back; absent: the agent holding the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// What the agent is told as it redoes its turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// A plan task to restart (with the tasks depending on it): required on
    /// a plan collaboration run; on a team run with a plan, its assigned
    /// agent is the one sent back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

/// What a restart answers: a team run's team, or a plan run's new plan revision.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum RestartTaskAnswer {
    /// A team run: its team as the reviewer sees it.
    Team(TeamState),
    /// A plan collaboration run: the revision putting the tasks back to pending.
    Plan(PlanRevision),
}

fn conflict(message: String) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, ApiErrorCode::Conflict, message)
}

/// Why `run` cannot take a restart now, if it cannot.
fn refusal(e: &gatehouse_engine::Engine, run: &Run) -> ApiResult<Option<ApiError>> {
    if run.status.is_terminal() {
        return Ok(Some(conflict(format!("run {} is {}: there is no task to restart", run.id, run.status.as_str()))));
    }
    let filter = GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() };
    if let Some(gate) = e.gates(&filter)?.into_iter().next() {
        return Ok(Some(conflict(format!(
            "run {} waits at gate {} ({}): decide it there; retrying with changes sends the agent back",
            run.id,
            gate.id,
            gate.kind().as_str()
        ))));
    }
    Ok(None)
}

/// Sends an agent of a live team run back to redo its turn, with an
/// optional instruction, or restarts the plan task `task_id` and the tasks
/// depending on it (a team run's plan: its assigned agent sent back; a plan
/// collaboration run: the run runs them again). 422 naming the field
/// (`agent` not on the team, on a plan collaboration run or not the task's;
/// `task_id` missing on a plan collaboration run or not in the plan), 409
/// for a run that ended, has neither a team nor a plan, or waits at a gate;
/// 403 for an agent's token.
#[utoipa::path(post, path = "/runs/{run_id}/restart-task", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run")),
    request_body = RestartTaskRequest,
    responses((status = 200, body = RestartTaskAnswer), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn restart_task(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<RestartTaskRequest>,
) -> ApiResult<Json<RestartTaskAnswer>> {
    caller.require_reviewer()?;
    let request = serde_json::to_value(&req).map_err(|e| ApiError::internal(e.to_string()))?;
    let id = gatehouse_engine::RunId::from_string(run_id);
    let found = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            let Some(start) = team_of(&run) else {
                if !restarts_plan_tasks(&run) {
                    return Err(conflict(format!("run {} has neither a team nor a plan: no task to restart", run.id)));
                }
                if let Some(refused) = refusal(e, &run)? {
                    return Err(refused);
                }
                return restart_plan_task(e, &run, &req, &caller.name).map(RestartTaskAnswer::Plan);
            };
            if let Some(refused) = refusal(e, &run)? {
                return Err(refused);
            }
            let team = change::current(&start, &e.turns(&run.id)?);
            let (request, task) = team_plan_task(e, &run, &req, request)?;
            let restart =
                RestartTask::check(&request, &team).map_err(|s| ApiError::invalid_field(s.field, s.message))?;
            if let Some(task) = task {
                e.plan_restart_task(&run.id, &task, restart.instruction.as_deref(), &caller.name)?;
            }
            e.add_turn(&run.id, restart.turn(&caller.name), &caller.name)?;
            let run = e.run(&run.id)?;
            state_of(e, &run).map(RestartTaskAnswer::Team)
        })
        .await?;
    Ok(Json(found))
}

/// A team run's restart naming a plan task (`task_id`): the request with
/// the task's agent as the one sent back (422 when another `agent` is
/// named, the run has no plan or the task is not in it), and the task.
fn team_plan_task(
    e: &Engine,
    run: &Run,
    req: &RestartTaskRequest,
    mut request: serde_json::Value,
) -> ApiResult<(serde_json::Value, Option<String>)> {
    let Some(task_id) = req.task_id.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok((request, None));
    };
    let plan = e.plan(&run.id)?.ok_or_else(|| ApiError::invalid_field("task_id", "the team run has no plan"))?;
    let Some(task) = plan.plan.task(task_id) else {
        let ids: Vec<&str> = plan.plan.tasks.iter().map(|t| t.task_id.as_str()).collect();
        let message = format!("no task `{task_id}` in the plan; the tasks are {}", ids.join(", "));
        return Err(ApiError::invalid_field("task_id", message));
    };
    if let Some(assigned) = &task.assigned_agent {
        if req.agent.as_deref().is_some_and(|a| a.trim() != assigned) {
            let message = format!("task `{task_id}` is assigned to `{assigned}`, who redoes it");
            return Err(ApiError::invalid_field("agent", message));
        }
        request["agent"] = serde_json::Value::from(assigned.clone());
    }
    Ok((request, Some(task_id.to_owned())))
}

/// A plan collaboration run's task back to `pending` with its dependants,
/// recorded as the reviewer's turn; the new revision.
fn restart_plan_task(e: &Engine, run: &Run, req: &RestartTaskRequest, by: &str) -> ApiResult<PlanRevision> {
    if req.agent.as_deref().is_some_and(|a| !a.trim().is_empty()) {
        return Err(ApiError::invalid_field("agent", "a plan run has no team: name the plan task as `task_id`"));
    }
    let Some(task_id) = req.task_id.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        return Err(ApiError::invalid_field("task_id", "is required: the plan task to restart"));
    };
    let plan =
        e.plan(&run.id)?.ok_or_else(|| conflict(format!("run {} has no plan yet: no task to restart", run.id)))?;
    if plan.plan.task(task_id).is_none() {
        let ids: Vec<&str> = plan.plan.tasks.iter().map(|t| t.task_id.as_str()).collect();
        let message = format!("no task `{task_id}` in the plan; the tasks are {}", ids.join(", "));
        return Err(ApiError::invalid_field("task_id", message));
    }
    let instruction = req.instruction.as_deref().map(str::trim).filter(|i| !i.is_empty());
    if instruction.is_some_and(|i| i.chars().count() > MAX_INSTRUCTION) {
        return Err(ApiError::invalid_field("instruction", format!("is longer than {MAX_INSTRUCTION} characters")));
    }
    let revision = e.plan_restart_task(&run.id, task_id, instruction, by)?;
    let with = instruction.map(|i| format!(": {i}")).unwrap_or_default();
    let turn = NewTurn {
        role: Role::Human,
        actor: Some(by.to_owned()),
        content: format!("{by} restarted task `{task_id}` (plan revision {}){with}", revision.revision),
        score: None,
        metadata: serde_json::json!({"restart_plan_task": {"task_id": task_id, "instruction": instruction,
            "plan_revision": revision.revision}}),
    };
    e.add_turn(&run.id, turn, by)?;
    Ok(revision)
}
