//! What an agent driving a run calls besides opening gates: it reports its
//! turns and receives the run's directive (held while the run is paused in
//! step or breakpoint mode, with reviewer instructions delivered once), asks
//! through the three HITL tools, and finishes its run.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use gatehouse_engine::{
    BlockingMode, Decision, Directive, DirectiveAction, Gate, GateContext, GateId, GateStatus, NewGate, NewTurn,
    Priority, Role, Run, RunId, RunStatus, TokenRole, Turn,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::{self, ApiJson};
use crate::params::{ApiPath, ApiQuery};
use crate::routes::gates::{idempotency_key, open_gate_for, wait_for_gate};
use crate::routes::hitl::visible_run;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(add_turn))
        .routes(routes!(directive))
        .routes(routes!(complete_run))
        .routes(routes!(fail_run))
        .routes(routes!(request_approval))
        .routes(routes!(escalate_to_human))
        .routes(routes!(request_feedback))
}

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

/// What a HITL tool call answers: the gate it opened and, once decided,
/// the human's decision.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCallReply {
    /// The gate.
    pub gate_id: GateId,
    /// `pending` until decided (or when `wait` passed first), then
    /// `resolved`, `expired` or `cancelled`.
    pub status: GateStatus,
    /// The human's decision, once there is one.
    pub decision: Option<Decision>,
    /// The whole gate.
    pub gate: Gate,
}

/// How a tool call waits and how urgent it is: the fields the three tools share.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ToolOptions {
    /// low, normal (medium), high or urgent (critical).
    #[serde(default)]
    pub urgency: Option<Priority>,
    /// Seconds until the gate expires unanswered.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// sync (the run waits for the human), async (it carries on) or advisory
    /// (input welcome, not required).
    #[serde(default)]
    pub mode: Option<BlockingMode>,
    /// Seconds to hold this call for the decision, 0 to 60 (default 0: answer
    /// at once; then long-poll `GET /gates/{gate_id}/wait`).
    #[serde(default)]
    pub wait: Option<f64>,
    /// The task and step the call belongs to.
    #[serde(default)]
    pub task: GateContext,
    /// A retry with the same key (1 to 255 characters) returns the first
    /// call's gate instead of opening a second; the `Idempotency-Key`
    /// header, when sent, takes precedence.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

impl ToolOptions {
    /// Sets the call's options on `gate`; its mode stays the tool's own unless the call names one.
    fn apply(&self, gate: &mut NewGate, headers: &HeaderMap) -> ApiResult<Duration> {
        let wait = self.wait.unwrap_or(0.0);
        if !(0.0..=60.0).contains(&wait) {
            return Err(ApiError::invalid_field("wait", format!("must be from 0 to 60 seconds, got {wait}")));
        }
        if self.timeout == Some(0) {
            return Err(ApiError::invalid_field("timeout", "must be at least 1 second"));
        }
        let longest = gatehouse_engine::gate::MAX_WAIT_SECS;
        if self.timeout.is_some_and(|t| t > longest) {
            return Err(ApiError::invalid_field("timeout", format!("must be at most {longest} seconds (ten years)")));
        }
        gate.priority = self.urgency.unwrap_or_default();
        gate.mode = self.mode.unwrap_or(gate.mode);
        gate.expires_in_secs = self.timeout;
        gate.context = self.task.clone();
        gate.idempotency_key = idempotency_key(headers)?.or_else(|| self.idempotency_key.clone());
        Ok(Duration::from_secs_f64(wait))
    }
}

async fn call_tool(
    state: AppState,
    caller: Caller,
    run_id: String,
    gate: NewGate,
    wait: Duration,
) -> ApiResult<(StatusCode, Json<ToolCallReply>)> {
    let gate = open_gate_for(&state, &caller, RunId::from_string(run_id), gate).await?;
    let gate = if gate.status.is_terminal() || wait.is_zero() {
        gate
    } else {
        wait_for_gate(&state, &gate.id, tokio::time::Instant::now() + wait).await?
    };
    let reply = ToolCallReply { gate_id: gate.id.clone(), status: gate.status, decision: gate.decision.clone(), gate };
    Ok((StatusCode::CREATED, Json(reply)))
}

/// Reads a tool call's body: the shared options first, so a bad option is
/// named by its field (the flattened whole cannot say where it failed).
fn tool_request<T: serde::de::DeserializeOwned>(body: &Value) -> ApiResult<T> {
    json::from_value::<ToolOptions>(body)?;
    json::from_value(body)
}

fn required(field: &str, value: &str) -> ApiResult<()> {
    if value.trim().is_empty() {
        return Err(ApiError::invalid_field(field, "must not be empty"));
    }
    Ok(())
}

/// An agent's `request_approval(action, context, timeout)`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RequestApproval {
    /// The action to approve, e.g. `deploy build 42 to prod`.
    pub action: String,
    /// What the reviewer needs to judge it; becomes the gate's payload, editable.
    #[serde(default)]
    pub context: Option<Value>,
    /// Markdown explaining the request; defaults to naming the action.
    #[serde(default)]
    pub text: Option<String>,
    /// Urgency, timeout, mode (default sync) and wait.
    #[serde(flatten)]
    pub options: ToolOptions,
}

/// Asks a human to approve an action (an approval gate whose payload is
/// the context), on a run the caller drives or reviews.
#[utoipa::path(post, path = "/runs/{run_id}/tools/request_approval", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), ("Idempotency-Key" = Option<String>, Header, description = "Retry key")), request_body = RequestApproval,
    responses((status = 201, body = ToolCallReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn request_approval(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<(StatusCode, Json<ToolCallReply>)> {
    let req: RequestApproval = tool_request(&body)?;
    required("action", &req.action)?;
    let mut gate = NewGate::request_approval(&req.action, None, req.context);
    // Over HTTP the agent's text replaces the default one (the request's documented contract).
    if let Some(text) = req.text.filter(|t| !t.trim().is_empty()) {
        gate.text = text;
    }
    let wait = req.options.apply(&mut gate, &headers)?;
    call_tool(state, caller, run_id, gate, wait).await
}

/// An agent's escalation: `escalate_to_human(issue, urgency, required_expertise)`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct EscalateToHuman {
    /// What the agent cannot resolve (markdown).
    pub issue: String,
    /// The expertise needed, e.g. `["database", "security"]`.
    #[serde(default)]
    pub required_expertise: Vec<String>,
    /// Anything that helps the human.
    #[serde(default)]
    pub context: Option<Value>,
    /// Urgency, timeout, mode (default sync) and wait.
    #[serde(flatten)]
    pub options: ToolOptions,
}

/// Escalates an issue to a human (a question gate the human answers in
/// free text).
#[utoipa::path(post, path = "/runs/{run_id}/tools/escalate_to_human", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), ("Idempotency-Key" = Option<String>, Header, description = "Retry key")), request_body = EscalateToHuman,
    responses((status = 201, body = ToolCallReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn escalate_to_human(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<(StatusCode, Json<ToolCallReply>)> {
    let req: EscalateToHuman = tool_request(&body)?;
    required("issue", &req.issue)?;
    let mut gate = NewGate::escalate_to_human(&req.issue, &req.required_expertise, req.context);
    let wait = req.options.apply(&mut gate, &headers)?;
    call_tool(state, caller, run_id, gate, wait).await
}

/// An agent's `request_feedback(artifact, questions)`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RequestFeedback {
    /// The artifact to look at (markdown: a draft, a diff, a report).
    pub artifact: String,
    /// What the agent wants to know about it.
    #[serde(default)]
    pub questions: Vec<String>,
    /// Urgency, timeout, mode (default async: the run carries on) and wait.
    #[serde(flatten)]
    pub options: ToolOptions,
}

/// Asks a human for feedback on an artifact (a question gate listing the
/// questions above the artifact).
#[utoipa::path(post, path = "/runs/{run_id}/tools/request_feedback", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), ("Idempotency-Key" = Option<String>, Header, description = "Retry key")), request_body = RequestFeedback,
    responses((status = 201, body = ToolCallReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn request_feedback(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<(StatusCode, Json<ToolCallReply>)> {
    let req: RequestFeedback = tool_request(&body)?;
    required("artifact", &req.artifact)?;
    let mut gate = NewGate::request_feedback(&req.artifact, &req.questions);
    let wait = req.options.apply(&mut gate, &headers)?;
    call_tool(state, caller, run_id, gate, wait).await
}
