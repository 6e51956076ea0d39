//! A run's lifecycle over HTTP: the HITL run API's `POST /run` (start;
//! any role, a scoped token only within its scope), `GET
//! /run/{run_id}/status` and `/state` (whoever may see the run), `POST
//! /run/{run_id}/pause` and `/resume` and `DELETE /run/{run_id}` (reviewers
//! and admins), and `POST /runs/{run_id}/complete` and `/fail` (its agent,
//! or a reviewer). Runs, checkpoints and decisions are the engine's; this
//! module only translates the HITL run API's shapes onto them.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::engine::collab::RunStatusSnapshot;
use gatehouse_engine::engine::RunState;
use gatehouse_engine::plan::{PlanRevision, ProgressState, TaskProgress, TaskStatus};
use gatehouse_engine::policy::HitlConfig;
use gatehouse_engine::run::{Breakpoint, HandoffProtocol, Participant, Role, StepMode};
use gatehouse_engine::{DeclaredGate, EngineError, Gate, NewRun, Run, RunId, RunStatus, TokenRole, Turn};
use gatehouse_orchestrator::StartError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::{ApiPath, ApiQuery};
use crate::routes::gates::read::GateSummary;
use crate::routes::runs::visible_run;
use crate::state::AppState;

/// A request to start a run.
#[derive(Debug, Deserialize, ToSchema)]
pub struct StartRunRequest {
    /// The run's input, stored redacted. When it names a `tool` (one of
    /// `GET /providers`' tools, as in an `agent_tool_config`),
    /// Gatehouse drives that provider itself: `prompt` (required),
    /// `system`, `inputs` (further payload fields), `collaborate` (`true`,
    /// or `{"goal": bool, "plan": bool}`: goal and plan review rounds
    /// first), `assessment` (your own information step's `confidence`,
    /// `reasons`, `safety_flags`, `recommended_settings`) and
    /// `answer_template` (how an answered blocker, a question gate on the
    /// run, is put into the next prompt: `{question}`, `{answer}`,
    /// `{answered_by}`; by default "Previous blocker question: {question}
    /// / User answer: {answer} / Continue task execution with this
    /// answer.", one per line). Otherwise an agent drives the run.
    pub run_input: Value,
    /// Review policy; `null` or absent means the default (`require_human`).
    #[serde(default)]
    pub hitl_config: Option<HitlConfig>,
    /// The user on whose behalf it runs (at most 255 characters).
    #[serde(default)]
    pub user_id: Option<String>,
    /// The session it belongs to (at most 255 characters).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Human-readable title (orchestrated runs default to the tool and prompt).
    #[serde(default)]
    pub title: Option<String>,
    /// The driving agent (at most 255 characters); defaults to the caller's
    /// token name. An agent token may only name itself. Orchestrated runs are driven by `gatehouse`.
    #[serde(default)]
    pub agent: Option<String>,
    /// Turn-taking rules.
    #[serde(default)]
    pub protocol: Option<HandoffProtocol>,
    /// Step-through control.
    #[serde(default)]
    pub step_mode: Option<StepMode>,
    /// Conditions that pause the run in breakpoint mode.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// Participants besides the agent.
    #[serde(default)]
    pub participants: Vec<Participant>,
    /// The run this one is a sub-agent's run of: its gates show the chain
    /// of agents, and pausing or cancelling the parent reaches it. An agent
    /// may name only a run it may use.
    #[serde(default)]
    pub parent_run_id: Option<String>,
    /// `false` creates the run without starting it: it stays `created`, and
    /// an orchestrated one is not driven, until `POST /run/{run_id}/start`.
    /// Default `true` (an agent's run starts with its first turn or gate).
    #[serde(default)]
    pub start: Option<bool>,
    /// When the run expires: the sweep then cancels it (within half a
    /// minute) and its pending gates expire. At most one of this and `expires_in_secs`.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Seconds from now until the run expires (1 to 31536000, a year).
    #[serde(default)]
    pub expires_in_secs: Option<u64>,
    /// Gates declared up front, each bound to a workflow node (unique):
    /// reaching the node (`POST /run/{run_id}/nodes/{node_id}`, or a gate
    /// naming its `workflow_node_id`) opens it with the declared kind,
    /// rubric and required score, which the agent may raise, never lower.
    #[serde(default)]
    pub declared_gates: Vec<DeclaredGate>,
}

/// The answer to starting a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct StartRunResponse {
    /// The new run.
    pub run_id: RunId,
    /// `created`: queued, not yet started.
    pub status: RunStatus,
    /// Always "HITL run started successfully".
    pub message: String,
    /// Where to follow the run's events (Server-Sent Events).
    pub events_url: String,
    /// Whether Gatehouse drives the run (its input named a tool).
    pub orchestrated: bool,
}

/// Starts a HITL run. Any role may start one; agents typically do. A run
/// input naming a tool starts an orchestrated run: Gatehouse calls the
/// provider through information, payload and response review (and, when
/// asked, goal and plan collaboration first) under the run's policy. A
/// scoped token may start only a run within its scope: a sub-run of a run
/// in it, or a run one of its agents drives or takes part in (403).
#[utoipa::path(post, path = "/run", tag = "hitl", request_body = StartRunRequest,
    responses((status = 201, body = StartRunResponse), (status = 401, body = ApiErrorBody),
        (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn start_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<StartRunRequest>,
) -> ApiResult<(StatusCode, Json<StartRunResponse>)> {
    let orchestrated = gatehouse_orchestrator::is_orchestrated(&req.run_input);
    let agent = req.agent.filter(|a| !a.trim().is_empty()).unwrap_or_else(|| caller.name.clone());
    if caller.role == TokenRole::Agent && agent != caller.name && !orchestrated {
        return Err(ApiError::forbidden(format!(
            "agent: `{}` may start runs only for itself, not for `{agent}`",
            caller.name
        )));
    }
    let parent_run_id = match req.parent_run_id.filter(|p| !p.trim().is_empty()) {
        Some(parent) => Some(
            visible_run(&state, &caller, &RunId::from_string(parent))
                .await
                .map_err(|e| match e.status() {
                    StatusCode::NOT_FOUND => ApiError::invalid_field("parent_run_id", e.message()),
                    _ => e,
                })?
                .id,
        ),
        None => None,
    };
    let expires_at = match (req.expires_at, req.expires_in_secs) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_field(
                "expires_in_secs",
                "give either expires_at or expires_in_secs, not both",
            ))
        }
        (at, None) => at,
        (None, Some(secs @ 1..=31_536_000)) => {
            Some(state.engine_handle().now() + chrono::Duration::seconds(secs as i64))
        }
        (None, Some(secs)) => {
            return Err(ApiError::invalid_field(
                "expires_in_secs",
                format!("must be from 1 to 31536000 (a year), got {secs}"),
            ))
        }
    };
    let asked_for_policy = req.hitl_config.is_some();
    let mut new = NewRun {
        title: req.title.unwrap_or_default(),
        agent,
        user_id: req.user_id.filter(|u| !u.is_empty()),
        session_id: req.session_id.filter(|s| !s.is_empty()),
        parent_run_id,
        participants: req.participants,
        hitl_config: req.hitl_config.unwrap_or_default(),
        protocol: req.protocol.unwrap_or_default(),
        step_mode: req.step_mode.unwrap_or_default(),
        breakpoints: req.breakpoints,
        input: req.run_input,
        expires_at,
        declared_gates: req.declared_gates,
    };
    if let Some(floor) = caller.floor(&state.config.oversight) {
        // A malformed policy is named as such (422) before it is compared.
        new.hitl_config.validate().map_err(EngineError::from)?;
        // People set how much review an agent's runs get; it may ask for more, never for less.
        floor.apply_to_run(&mut new, asked_for_policy).map_err(EngineError::from)?;
    }
    let actor = caller.name.clone();
    if orchestrated {
        // The caller follows the run it asked for, whatever its role.
        if !new.participants.iter().any(|p| p.name == caller.name) {
            let role = if caller.role == TokenRole::Agent { Role::Agent } else { Role::Human };
            new.participants.push(Participant { name: caller.name.clone(), role });
        }
    }
    // Checked as the run will be stored: Gatehouse drives an orchestrated one.
    let agent = if orchestrated { gatehouse_orchestrator::AGENT.to_owned() } else { new.agent.clone() };
    let (may, probe) = (caller.clone(), NewRun { agent, input: Value::Null, ..new.clone() });
    state.engine_checked(move |e| may.may_start(e, &probe)).await?;
    let run = if orchestrated {
        let mut input = std::mem::take(&mut new.input);
        if let (Some(false), Some(fields)) = (req.start, input.as_object_mut()) {
            fields.insert("wait_for_start".into(), Value::Bool(true));
        }
        state.orchestrator.start(&input, new, &actor).await.map_err(|e| match e {
            StartError::Spec(e) => {
                let field = if e.field.is_empty() { "run_input".to_owned() } else { format!("run_input.{}", e.field) };
                ApiError::invalid(e.to_string()).with_field(field)
            }
            StartError::Engine(e) => ApiError::from(e),
        })?
    } else {
        state.engine(move |e| e.create_run(new, &actor)).await?
    };
    let events_url = format!("{}/api/hitl/events?run_id={}", state.public_url(), run.id);
    let body = StartRunResponse {
        run_id: run.id,
        status: run.status,
        message: "HITL run started successfully".into(),
        events_url,
        orchestrated,
    };
    Ok((StatusCode::CREATED, Json(body)))
}

/// A run's status, progress and pending checkpoints.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStatusResponse {
    /// The run.
    pub run_id: RunId,
    /// Where it is.
    pub status: RunStatus,
    /// Why it failed or was cancelled.
    pub status_reason: Option<String>,
    /// The plan task in progress (its id; the last one when several are),
    /// else the kind of the newest pending gate (`payload_review`...), else none.
    pub current_step: Option<String>,
    /// Plan tasks done, or gates closed, of all.
    pub progress: ProgressState,
    /// Each task of its plan with its own progress, in plan order (empty
    /// without a plan).
    pub tasks: Vec<TaskProgress>,
    /// Its pending gates in panel order: what a human must act on.
    pub pending_actions: Vec<GateSummary>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A run's status, progress, current step and pending actions.
#[utoipa::path(get, path = "/run/{run_id}/status", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = RunStatusResponse), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn run_status(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<RunStatusResponse>> {
    let run = visible_run(&state, &caller, &RunId::from_string(run_id)).await?;
    // The run again, with its plan, gates and progress from one snapshot:
    // never a run still `active` beside the sync gate that made it wait.
    let id = run.id.clone();
    let RunStatusSnapshot { run, plan, pending, progress } = state.engine(move |e| e.run_status(&id)).await?;
    let tasks = plan.as_ref().map(|p| p.plan.task_progress()).unwrap_or_default();
    let task = tasks.iter().rev().find(|t| t.status == TaskStatus::InProgress).map(|t| t.task_id.clone());
    let newest_gate = pending.iter().max_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let current_step = task.or_else(|| newest_gate.map(|g| g.kind().as_str().to_owned()));
    Ok(Json(RunStatusResponse {
        run_id: run.id,
        status: run.status,
        status_reason: run.status_reason,
        current_step,
        progress,
        tasks,
        pending_actions: pending.iter().map(GateSummary::from).collect(),
        created_at: run.created_at,
        updated_at: run.updated_at,
    }))
}

/// Pauses an active or waiting run. Reviewers and admins only.
#[utoipa::path(post, path = "/run/{run_id}/pause", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn pause_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    Ok(Json(state.engine(move |e| e.pause_run(&id, &caller.name)).await?))
}

/// Resumes a run. A paused one goes back to `awaiting_human` while
/// blocking gates are pending, otherwise `active`. One awaiting a human
/// goes on without waiting: its pending sync gates are released (async
/// from now on, marked `released`, a `gate_released` event each) and stay
/// open for a decision; agents waiting on them are told they were released,
/// never that they passed. Reviewers and admins only: an agent may not
/// release its own review.
#[utoipa::path(post, path = "/run/{run_id}/resume", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn resume_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    Ok(Json(state.engine(move |e| e.resume_run(&id, &caller.name)).await?))
}

/// Starts a run created without starting (`"start": false`): `created` →
/// `active`, and Gatehouse begins driving an orchestrated one. Reviewers and
/// admins, or an agent on its own run; 409 once it has started.
#[utoipa::path(post, path = "/run/{run_id}/start", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn begin_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Run>> {
    let run = visible_run(&state, &caller, &RunId::from_string(run_id)).await?;
    caller.may_use_run(&run)?;
    let id = run.id;
    Ok(Json(state.engine(move |e| e.start_run(&id, &caller.name)).await?))
}

/// Retries a failed or cancelled run from its last good step, its history
/// kept: back to `active`, with "retried by ..." as its reason. Gatehouse
/// drives an orchestrated one again at once (decided steps are replayed,
/// the step that stopped asks again); an agent's run waits for its agent.
/// Reviewers and admins only; 409 for a run that has not ended, or completed.
#[utoipa::path(post, path = "/run/{run_id}/retry", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn retry_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    let run = state.engine(move |e| e.retry_run(&id, &caller.name)).await?;
    state.orchestrator.take_up(&run);
    Ok(Json(run))
}

/// Why a run is cancelled.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CancelQuery {
    /// Recorded as the run's status reason.
    pub reason: Option<String>,
}

/// Cancels a run; its pending gates are withdrawn with it. Reviewers and
/// admins only.
#[utoipa::path(delete, path = "/run/{run_id}", tag = "hitl", params(("run_id" = String, Path, description = "The run"), CancelQuery),
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn cancel_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<CancelQuery>,
) -> ApiResult<Json<Run>> {
    caller.require_reviewer()?;
    let reason = q.reason.filter(|r| !r.trim().is_empty());
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    Ok(Json(state.engine(move |e| e.cancel_run(&id, &caller.name, reason.as_deref())).await?))
}

/// Everything needed to resume a run in another session.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStateResponse {
    /// The run.
    pub run: Run,
    /// Its turns in order.
    pub turns: Vec<Turn>,
    /// All its gates, oldest first, with their decisions.
    pub gates: Vec<Gate>,
    /// Its shared context.
    pub context: std::collections::BTreeMap<String, Value>,
    /// Its current plan (the newest revision), if it has one.
    pub plan: Option<PlanRevision>,
    /// Every plan revision, oldest first.
    pub plan_revisions: Vec<PlanRevision>,
    /// Plan tasks done, or gates closed, of all.
    pub progress: ProgressState,
}

/// A run's full state for resuming it: run, turns, gates, context and plan
/// from one snapshot, then its progress.
#[utoipa::path(get, path = "/run/{run_id}/state", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = RunStateResponse), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn run_state(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<RunStateResponse>> {
    let run = visible_run(&state, &caller, &RunId::from_string(run_id)).await?;
    let id = run.id.clone();
    let body = state
        .engine(move |e| {
            let RunState { run, turns, gates, context, plan_revisions } = e.run_state(&id)?;
            let progress = e.progress(&id)?;
            let plan = plan_revisions.last().cloned();
            Ok(RunStateResponse { run, turns, gates, context, plan, plan_revisions, progress })
        })
        .await?;
    Ok(Json(body))
}

/// How a run ended well.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CompleteRequest {
    /// The run's result (stored redacted).
    #[serde(default)]
    pub result: Option<Value>,
}

/// Completes an active run (its agent, or a reviewer). A run still waiting
/// for a human or paused cannot complete: 409.
#[utoipa::path(post, path = "/runs/{run_id}/complete", tag = "agents",
    params(("run_id" = String, Path, description = "The run")), request_body = CompleteRequest,
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn complete_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    body: Option<ApiJson<CompleteRequest>>,
) -> ApiResult<Json<Run>> {
    let run_id = RunId::from_string(run_id);
    visible_run(&state, &caller, &run_id).await?;
    let result = body.and_then(|ApiJson(b)| b.result);
    let actor = caller.name;
    Ok(Json(state.engine(move |e| e.complete_run(&run_id, &actor, result)).await?))
}

/// Why a run failed.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FailRequest {
    /// What went wrong.
    pub reason: String,
}

/// Fails a live run with a reason (its agent, or a reviewer); its pending
/// gates are withdrawn with it.
#[utoipa::path(post, path = "/runs/{run_id}/fail", tag = "agents",
    params(("run_id" = String, Path, description = "The run")), request_body = FailRequest,
    responses((status = 200, body = Run), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn fail_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(body): ApiJson<FailRequest>,
) -> ApiResult<Json<Run>> {
    let reason = body.reason.trim().to_owned();
    if reason.is_empty() {
        return Err(ApiError::invalid_field("reason", "say why the run failed"));
    }
    let run_id = RunId::from_string(run_id);
    visible_run(&state, &caller, &run_id).await?;
    let actor = caller.name;
    Ok(Json(state.engine(move |e| e.fail_run(&run_id, &actor, &reason)).await?))
}
