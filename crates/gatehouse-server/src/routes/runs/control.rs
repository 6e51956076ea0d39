//! A reviewer's control of a run (step-through intervention points):
//! `POST /runs/{run_id}/step` steps a paused run one turn on, `PUT
//! /runs/{run_id}/control` changes its step mode and breakpoints, `POST
//! /runs/{run_id}/instructions` injects an instruction, `PUT
//! /runs/{run_id}/next-agent` chooses the next agent. Reviewers and admins
//! only. Pause, resume and cancel are in [`super::lifecycle`].

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::{Breakpoint, Instruction, Run, StepMode};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

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
    Ok(Json(caller.on_run(&state, run_id, |e, id, actor| e.step_run(id, actor)).await?))
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
    let run = caller
        .on_run(&state, run_id, move |e, id, actor| e.set_run_control(id, req.step_mode, req.breakpoints, actor))
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
        caller.on_run(&state, run_id, move |e, id, actor| e.inject_instruction(id, &req.text, actor)).await?;
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
    let run = caller.on_run(&state, run_id, move |e, id, actor| e.set_next_agent(id, req.agent.as_deref(), actor));
    Ok(Json(run.await?))
}
