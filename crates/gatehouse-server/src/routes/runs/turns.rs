//! What an agent driving a run reports and is told: `POST
//! /runs/{run_id}/turns` records a turn and answers with the run's
//! directive, `GET /runs/{run_id}/directive` reads it; both are held while
//! the run is paused in step or breakpoint mode, and deliver reviewer
//! instructions once. Agent tokens add agent turns; reviewer tokens human
//! turns in their own name.

use std::time::Duration;

use axum::extract::State;
use axum::Json;
use gatehouse_engine::{Directive, DirectiveAction, NewTurn, Role, RunId, RunStatus, TokenRole, Turn};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::{ApiPath, ApiQuery};
use crate::routes::runs::visible_run;
use crate::state::AppState;

/// How long to hold an agent while its run is paused.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HoldQuery {
    /// Seconds to hold the answer while the run is paused (step mode,
    /// a breakpoint, a reviewer's pause), 0 to 60 (default 30). The answer
    /// comes the moment a reviewer steps, resumes or cancels the run.
    pub wait: Option<f64>,
}

fn hold_duration(q: &HoldQuery) -> ApiResult<Duration> {
    let wait = q.wait.unwrap_or(30.0);
    if !(0.0..=60.0).contains(&wait) {
        return Err(ApiError::invalid_field("wait", format!("must be from 0 to 60 seconds, got {wait}")));
    }
    Ok(Duration::from_secs_f64(wait))
}

/// Holds while `run_id` is paused, up to `wait`; returns at once otherwise.
async fn hold_while_paused(state: &AppState, run_id: &RunId, wait: Duration) -> ApiResult<()> {
    let deadline = tokio::time::Instant::now() + wait;
    let ticket = state.waiters.register_run(run_id);
    loop {
        // Armed before reading, so a step in between still wakes us.
        let notified = ticket.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let id = run_id.clone();
        let status = state.engine(move |e| Ok(e.run(&id)?.status)).await?;
        if status != RunStatus::Paused || tokio::time::Instant::now() >= deadline {
            return Ok(());
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return Ok(());
        }
    }
}

/// A turn and what to do next.
#[derive(Debug, Serialize, ToSchema)]
pub struct TurnReply {
    /// The turn as recorded.
    pub turn: Turn,
    /// The run's directive after it.
    pub directive: Directive,
}

/// Adds a turn to a run and answers with the run's directive: `continue`,
/// `paused` (held up to `wait` seconds first, answered the moment a
/// reviewer steps or resumes), `cancelled` or `finished`. Reviewer
/// instructions and the next-agent choice come back here, once. Agent
/// tokens add agent turns (a sub-agent may be named in `actor`); reviewer
/// tokens add human turns in their own name.
#[utoipa::path(post, path = "/runs/{run_id}/turns", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), HoldQuery), request_body = NewTurn,
    responses((status = 200, body = TurnReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn add_turn(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<HoldQuery>,
    ApiJson(mut turn): ApiJson<NewTurn>,
) -> ApiResult<Json<TurnReply>> {
    let wait = hold_duration(&q)?;
    match (caller.role, turn.role) {
        (TokenRole::Agent, Role::Agent) => {}
        (TokenRole::Agent, other) => {
            return Err(ApiError::forbidden(format!(
                "role: `{}` has an agent token and may add only agent turns, not {other:?} turns",
                caller.name
            )))
        }
        (_, Role::Human) => turn.actor = Some(caller.name.clone()),
        (TokenRole::Admin, Role::System) => {}
        (_, other) => {
            return Err(ApiError::forbidden(format!(
                "role: `{}` is a reviewer and adds human turns, not {other:?} turns",
                caller.name
            )))
        }
    }
    let run_id = RunId::from_string(run_id);
    let run = visible_run(&state, &caller, &run_id).await?;
    let actor = caller.name.clone();
    let (turn, mut directive) = state.engine(move |e| e.agent_turn(&run.id, turn, &actor)).await?;
    if directive.action == DirectiveAction::Paused && !wait.is_zero() && turn.role == Role::Agent {
        hold_while_paused(&state, &run_id, wait).await?;
        let actor = caller.name.clone();
        directive = state.engine(move |e| e.directive(&run_id, &actor)).await?;
    }
    Ok(Json(TurnReply { turn, directive }))
}

/// The run's directive for an agent, held up to `wait` seconds while the
/// run is paused. Reviewer instructions and the next-agent choice are
/// delivered here (once) when the run may continue.
#[utoipa::path(get, path = "/runs/{run_id}/directive", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), HoldQuery),
    responses((status = 200, body = Directive), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn directive(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<HoldQuery>,
) -> ApiResult<Json<Directive>> {
    let wait = hold_duration(&q)?;
    let run_id = RunId::from_string(run_id);
    let run = visible_run(&state, &caller, &run_id).await?;
    if run.status == RunStatus::Paused && !wait.is_zero() {
        hold_while_paused(&state, &run_id, wait).await?;
    }
    let actor = caller.name.clone();
    Ok(Json(state.engine(move |e| e.directive(&run_id, &actor)).await?))
}
