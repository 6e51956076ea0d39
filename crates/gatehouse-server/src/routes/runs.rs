//! A reviewer's control of a run (step-through intervention points): step a paused run one
//! turn on, change its step mode and breakpoints, inject an instruction,
//! choose the next agent; and the run's event log as JSON for its
//! timeline. Pause, resume and cancel are the HITL run API's endpoints in `hitl`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{Breakpoint, Event, Instruction, Run, StepMode};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::{ApiPath, ApiQuery};
use crate::routes::collab::on_run;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(step_run))
        .routes(routes!(set_control))
        .routes(routes!(inject_instruction))
        .routes(routes!(set_next_agent))
        .routes(routes!(run_events))
}

/// Lets a paused run go on for one agent turn (in step mode the next agent
/// turn pauses it again); a held agent is answered at once. Reviewers and
/// admins only; 409 unless the run is paused.
#[utoipa::path(post, path = "/runs/{run_id}/step", tag = "reviewers", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn step_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    Ok(Json(on_run(&state, &caller, run_id, |e, id, actor| e.step_run(id, actor)).await?))
}

/// How a run steps.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ControlRequest {
    /// continuous, step (pause after every agent turn) or breakpoint.
    pub step_mode: StepMode,
    /// Conditions that pause the run in breakpoint mode (replaces the list).
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
}

/// Sets a live run's step mode and breakpoints. Reviewers and admins only.
#[utoipa::path(put, path = "/runs/{run_id}/control", tag = "reviewers", params(("run_id" = String, Path, description = "The run")),
    request_body = ControlRequest,
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn set_control(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<ControlRequest>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let run = on_run(&state, &caller, run_id, move |e, id, actor| {
        e.set_run_control(id, req.step_mode, req.breakpoints, actor)
    })
    .await?;
    Ok(Json(run))
}

/// An instruction for a run's agents.
#[derive(Debug, Deserialize, ToSchema)]
pub struct InstructionRequest {
    /// What to tell them (markdown, at most 20,000 characters).
    pub text: String,
}

/// Injects an instruction: held until an agent of the run asks for its
/// next directive, then delivered to it once. Reviewers and admins only.
#[utoipa::path(post, path = "/runs/{run_id}/instructions", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run")), request_body = InstructionRequest,
    responses((status = 201, body = Instruction), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn inject_instruction(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<InstructionRequest>,
) -> ApiResult<(StatusCode, Json<Instruction>)> {
    caller.require_reviewer()?;
    let instruction =
        on_run(&state, &caller, run_id, move |e, id, actor| e.inject_instruction(id, &req.text, actor)).await?;
    Ok((StatusCode::CREATED, Json(instruction)))
}

/// Who acts next.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NextAgentRequest {
    /// The agent; `null` withdraws an earlier choice.
    pub agent: Option<String>,
}

/// Overrides the next agent: the choice reaches the run's agents with their
/// next directive. Reviewers and admins only.
#[utoipa::path(put, path = "/runs/{run_id}/next-agent", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run")), request_body = NextAgentRequest,
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn set_next_agent(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<NextAgentRequest>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let run = on_run(&state, &caller, run_id, move |e, id, actor| e.set_next_agent(id, req.agent.as_deref(), actor));
    Ok(Json(run.await?))
}

/// A page of the run's log.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events after this sequence number (default 0: from the start).
    pub after: Option<u64>,
    /// At most this many (default 500, at most 5000).
    pub limit: Option<u32>,
}

/// The run's events, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// The events: turns, gates, decisions, context and plan changes,
    /// status changes and interventions, each with its actor and time.
    pub events: Vec<Event>,
    /// Pass as `after` for the next page; equal to the request's `after`
    /// when there is nothing newer.
    pub next_after: u64,
}

/// A run's timeline: its event log as JSON, paged. Agents see only their
/// own runs.
#[utoipa::path(get, path = "/runs/{run_id}/events", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run"), EventsQuery),
    responses((status = 200, body = EventPage), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn run_events(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> ApiResult<Json<EventPage>> {
    let limit = q.limit.unwrap_or(500);
    if !(1..=5000).contains(&limit) {
        return Err(ApiError::invalid_field("limit", format!("must be from 1 to 5000, got {limit}")));
    }
    let after = q.after.unwrap_or(0);
    let events = on_run(&state, &caller, run_id, move |e, id, _| {
        let filter = EventFilter { run_id: Some(id.clone()), ..EventFilter::default() };
        e.events_after(after, &filter, limit)
    })
    .await?;
    let next_after = events.last().map_or(after, |e| e.seq);
    Ok(Json(EventPage { events, next_after }))
}
