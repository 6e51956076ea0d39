//! Opening gates: `POST /runs/{run_id}/gates` opens a gate of any kind
//! (and, with `?wait=`, holds the call for the decision), and the three HITL tools an agent calls (`POST
//! /runs/{run_id}/tools/request_approval`, `escalate_to_human`,
//! `request_feedback`) each open theirs (built by the engine's
//! `tool_gates.rs`) and may hold the call for the decision. Whoever may use
//! the run may open its gates; an agent's gate is checked against the
//! review people set for it.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use gatehouse_engine::{BlockingMode, Decision, Gate, GateContext, GateId, GateStatus, NewGate, Priority, RunId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::{self, ApiJson};
use crate::params::{ApiPath, ApiQuery};
use crate::routes::gates::{open_gate_for, wait_for_gate};
use crate::state::AppState;

/// Answer to opening a gate.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenedGate {
    /// The gate's id.
    pub gate_id: GateId,
    /// `pending` (also when `wait` passed before a decision), or
    /// `resolved`, `expired` or `cancelled` once closed: by a policy at
    /// once, or by a reviewer during the wait.
    pub status: GateStatus,
    /// The whole gate, with its decision once there is one.
    pub gate: Gate,
}

/// How long to hold the opening call for the decision.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OpenQuery {
    /// Seconds to hold this call for the decision, 0 to 60 (default 0:
    /// answer at once). A gate still pending when it passes comes back as
    /// `pending`; then long-poll `GET /gates/{gate_id}/wait`.
    pub wait: Option<f64>,
}

impl OpenQuery {
    /// The wait, bounded like the long poll's: 422 naming `wait` outside 0 to 60 seconds.
    fn hold(&self) -> ApiResult<Duration> {
        bounded_wait(self.wait.unwrap_or(0.0))
    }
}

/// A wait in seconds as a duration, 422 naming `wait` unless it is from 0 to 60.
fn bounded_wait(wait: f64) -> ApiResult<Duration> {
    if !(0.0..=60.0).contains(&wait) {
        return Err(ApiError::invalid_field("wait", format!("must be from 0 to 60 seconds, got {wait}")));
    }
    Ok(Duration::from_secs_f64(wait))
}

/// Opens a gate of any kind on a run. An `Idempotency-Key` header (or the
/// body's `idempotency_key`) makes retries return the first gate. With
/// `wait`, the call is held until the gate is decided or the wait passes,
/// so an agent opens and waits in one request.
#[utoipa::path(post, path = "/runs/{run_id}/gates", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), OpenQuery, ("Idempotency-Key" = Option<String>, Header, description = "Retry key")),
    request_body = NewGate,
    responses((status = 201, body = OpenedGate), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn open_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<OpenQuery>,
    headers: HeaderMap,
    ApiJson(mut new): ApiJson<NewGate>,
) -> ApiResult<(StatusCode, Json<OpenedGate>)> {
    let wait = q.hold()?;
    if let Some(key) = idempotency_key(&headers)? {
        new.idempotency_key = Some(key);
    }
    let gate = open_and_hold(&state, &caller, run_id, new, wait).await?;
    Ok((StatusCode::CREATED, Json(OpenedGate { gate_id: gate.id.clone(), status: gate.status, gate })))
}

/// Opens `new` and, unless it closed at once or `wait` is zero, holds for
/// its decision until `wait` passes: the agent's hot path in one request.
async fn open_and_hold(
    state: &AppState,
    caller: &Caller,
    run_id: String,
    new: NewGate,
    wait: Duration,
) -> ApiResult<Gate> {
    let gate = open_gate_for(state, caller, RunId::from_string(run_id), new).await?;
    if gate.status.is_terminal() || wait.is_zero() {
        return Ok(gate);
    }
    wait_for_gate(state, &gate.id, tokio::time::Instant::now() + wait).await
}

/// The `Idempotency-Key` header, if sent; it takes precedence over a key in the body.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> ApiResult<Option<String>> {
    headers
        .get("idempotency-key")
        .map(|key| {
            key.to_str()
                .map(str::to_owned)
                .map_err(|_| ApiError::invalid_field("Idempotency-Key", "must be visible ASCII"))
        })
        .transpose()
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
        let wait = bounded_wait(self.wait.unwrap_or(0.0))?;
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
        Ok(wait)
    }
}

async fn call_tool(
    state: AppState,
    caller: Caller,
    run_id: String,
    gate: NewGate,
    wait: Duration,
) -> ApiResult<(StatusCode, Json<ToolCallReply>)> {
    let gate = open_and_hold(&state, &caller, run_id, gate, wait).await?;
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
