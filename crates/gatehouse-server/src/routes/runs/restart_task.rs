//! Restart a task over HTTP: `POST /runs/{run_id}/restart-task`, a
//! reviewer's intervention on a live team run. A named agent (or the one
//! holding the turn) goes back to redo its turn, with an optional
//! instruction; recorded as the reviewer's turn (the timeline and the
//! audit show who asked), taken by the orchestrator at the team's next
//! step boundary, also while the run is paused, in step mode or at a
//! breakpoint. Reviewers and admins only: an agent's token never restarts
//! its own work. A run waiting at a review gate is answered there instead
//! (retry with changes sends the agent back).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::{GateFilter, Run};
use gatehouse_orchestrator::team::change;
use gatehouse_orchestrator::team::restart::RestartTask;
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
/// optional instruction. 422 naming the field (`agent` not on the team),
/// 409 for a run that ended, has no team (a plan task's restart is not
/// offered yet) or waits at a gate; 403 for an agent's token.
#[utoipa::path(post, path = "/runs/{run_id}/restart-task", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run")),
    request_body = RestartTaskRequest,
    responses((status = 200, body = TeamState), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn restart_task(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<RestartTaskRequest>,
) -> ApiResult<Json<TeamState>> {
    caller.require_reviewer()?;
    let request = serde_json::to_value(&req).map_err(|e| ApiError::internal(e.to_string()))?;
    let id = gatehouse_engine::RunId::from_string(run_id);
    let found = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            let start = team_of(&run).ok_or_else(|| {
                conflict(format!("run {} has no team: restarting a plan task is not offered yet", run.id))
            })?;
            if let Some(refused) = refusal(e, &run)? {
                return Err(refused);
            }
            let team = change::current(&start, &e.turns(&run.id)?);
            let restart =
                RestartTask::check(&request, &team).map_err(|s| ApiError::invalid_field(s.field, s.message))?;
            e.add_turn(&run.id, restart.turn(&caller.name), &caller.name)?;
            let run = e.run(&run.id)?;
            state_of(e, &run)
        })
        .await?;
    Ok(Json(found))
}
