//! Gates over HTTP, the hot path: an agent opens a gate and long-polls for
//! its decision; reviewers list the queue in panel order, open one (with
//! its markdown rendered safely and its payload diffed against
//! `example_input`) and resolve it. The first resolver wins; later ones
//! get 409 naming who resolved it and when.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::decision::DecisionInput;
use gatehouse_engine::diff::{diff_values, PayloadDiff};
use gatehouse_engine::engine::GatePage;
use gatehouse_engine::scoring::{QualityScore, ScoreVerdict};
use gatehouse_engine::Role;
use gatehouse_engine::{
    BlockingMode, EngineError, Gate, GateFilter, GateId, GateKind, GateStatus, NewGate, Priority, RunId, RunStatus,
    Turn,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::markdown;
use crate::params::{ApiPath, ApiQuery};
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open_gate))
        .routes(routes!(wait_gate))
        .routes(routes!(list_gates))
        .routes(routes!(get_gate))
        .routes(routes!(resolve_gate))
        .routes(routes!(score_gate))
}

/// Answer to opening a gate.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenedGate {
    /// The gate's id.
    pub gate_id: GateId,
    /// `pending`, or `resolved` when a policy passed it at once.
    pub status: GateStatus,
    /// The whole gate.
    pub gate: Gate,
}

/// Opens a gate of any kind on a run. An `Idempotency-Key` header (or the
/// body's `idempotency_key`) makes retries return the first gate.
#[utoipa::path(post, path = "/runs/{run_id}/gates", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), ("Idempotency-Key" = Option<String>, Header, description = "Retry key")),
    request_body = NewGate,
    responses((status = 201, body = OpenedGate), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn open_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(mut new): ApiJson<NewGate>,
) -> ApiResult<(StatusCode, Json<OpenedGate>)> {
    if let Some(key) = idempotency_key(&headers)? {
        new.idempotency_key = Some(key);
    }
    let gate = open_gate_for(&state, &caller, RunId::from_string(run_id), new).await?;
    Ok((StatusCode::CREATED, Json(OpenedGate { gate_id: gate.id.clone(), status: gate.status, gate })))
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

/// Opens `new` on `run_id` if the caller may use the run, in one engine
/// call (the run check and the gate share a trip to the blocking pool).
/// An agent's gate is checked against the review people set for it (403
/// naming the field that would weaken it), and every gate remembers the
/// token that opened it, which may then not decide it.
pub(crate) async fn open_gate_for(state: &AppState, caller: &Caller, run_id: RunId, new: NewGate) -> ApiResult<Gate> {
    let (caller, config) = (caller.clone(), state.config.clone());
    let new = NewGate { opened_by: Some(caller.token_id.clone()), ..new };
    state
        .engine_checked(move |e| {
            let run = caller.run(e, &run_id)?;
            if let Some(floor) = caller.floor(&config.oversight) {
                floor.check_gate(&new, &caller.name).map_err(EngineError::from)?;
            }
            Ok(e.open_gate(&run.id, new, &caller.name)?)
        })
        .await
}

/// Waits until `gate_id` closes or `deadline` passes, answering with the
/// gate as it is then.
pub(crate) async fn wait_for_gate(
    state: &AppState,
    gate_id: &GateId,
    deadline: tokio::time::Instant,
) -> ApiResult<Gate> {
    let ticket = state.waiters.register(gate_id);
    loop {
        // Arm the wake-up before reading, so a decision in between still wakes us.
        let notified = ticket.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let id = gate_id.clone();
        let gate = state.engine(move |e| e.gate(&id)).await?;
        if gate.status.is_terminal() || tokio::time::Instant::now() >= deadline {
            return Ok(gate);
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            // Timed out: answer with the gate as it is now.
            let id = gate_id.clone();
            return state.engine(move |e| e.gate(&id)).await;
        }
    }
}

/// How long to wait.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitQuery {
    /// Seconds to wait for a decision, 0 to 60 (default 30).
    pub timeout: Option<f64>,
}

/// Long-polls a gate: returns the moment it is decided, expired or
/// cancelled, or the still-pending gate when the timeout passes.
#[utoipa::path(get, path = "/gates/{gate_id}/wait", tag = "agents",
    params(("gate_id" = String, Path, description = "The gate"), WaitQuery),
    responses((status = 200, body = Gate), (status = 404, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn wait_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<WaitQuery>,
) -> ApiResult<Json<Gate>> {
    let timeout = q.timeout.unwrap_or(30.0);
    if !(0.0..=60.0).contains(&timeout) || timeout.is_nan() {
        return Err(ApiError::invalid_field("timeout", format!("must be from 0 to 60 seconds, got {timeout}")));
    }
    let gate_id = GateId::from_string(gate_id);
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(timeout);
    // The caller must see the gate's run; checked once, before waiting.
    let id = gate_id.clone();
    let gate = state.engine_checked(move |e| Ok(caller.gate(e, &id)?.0)).await?;
    if gate.status.is_terminal() || timeout == 0.0 {
        return Ok(Json(gate));
    }
    Ok(Json(wait_for_gate(&state, &gate_id, deadline).await?))
}

/// Filters for the queue.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GateQuery {
    /// pending (default), resolved, expired, cancelled, or `all`.
    pub status: Option<String>,
    /// Only this kind.
    pub kind: Option<GateKind>,
    /// Only this blocking mode.
    pub mode: Option<BlockingMode>,
    /// Only this run.
    pub run_id: Option<String>,
    /// Only this agent.
    pub agent: Option<String>,
    /// At most this many (default 500, at most 10000).
    pub limit: Option<u32>,
    /// Skip this many.
    pub offset: Option<u32>,
}

/// One line of the reviewer's panel.
#[derive(Debug, Serialize, ToSchema)]
pub struct GateSummary {
    /// The gate.
    pub id: GateId,
    /// Its run.
    pub run_id: RunId,
    /// Its kind.
    pub kind: GateKind,
    /// Sync, async or advisory.
    pub mode: BlockingMode,
    /// Urgency.
    pub priority: Priority,
    /// The asking agent.
    pub agent: String,
    /// The first 50 characters of its text.
    pub preview: String,
    /// Where it is.
    pub status: GateStatus,
    /// When it opened.
    pub created_at: DateTime<Utc>,
    /// When it expires.
    pub expires_at: Option<DateTime<Utc>>,
    /// For a sub-agent's gate: the agents that led to it, the first parent's first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agent_chain: Vec<String>,
    /// Who may decide it (reviewers, `role:NAME`); anyone when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<String>,
}

impl From<&Gate> for GateSummary {
    fn from(g: &Gate) -> Self {
        Self {
            id: g.id.clone(),
            run_id: g.run_id.clone(),
            kind: g.kind(),
            mode: g.mode,
            priority: g.priority,
            agent: g.agent.clone(),
            preview: g.preview(),
            status: g.status,
            created_at: g.created_at,
            expires_at: g.expires_at,
            agent_chain: g.agent_chain.clone(),
            deciders: g.deciders.clone(),
        }
    }
}

/// A page of the queue.
#[derive(Debug, Serialize, ToSchema)]
pub struct GateList {
    /// The gates, pending ones in panel order: sync first, then priority, then age.
    pub gates: Vec<GateSummary>,
    /// How many match in all.
    pub total: u64,
    /// The event log's head when the list was read: follow `GET /events`
    /// from here (`after=head_seq`) and nothing is missed. Events just
    /// after it may already be reflected in the list; applying them again
    /// changes nothing.
    pub head_seq: u64,
}

fn parse_status(s: Option<&str>) -> ApiResult<Option<GateStatus>> {
    Ok(match s.unwrap_or("pending") {
        "all" => None,
        "pending" => Some(GateStatus::Pending),
        "resolved" => Some(GateStatus::Resolved),
        "expired" => Some(GateStatus::Expired),
        "cancelled" => Some(GateStatus::Cancelled),
        other => {
            return Err(ApiError::invalid_field(
                "status",
                format!("`{other}` is not one of pending, resolved, expired, cancelled, all"),
            ))
        }
    })
}

/// Lists gates for the panel. Agents see only their own; a scoped token
/// only those of the runs in its scope.
#[utoipa::path(get, path = "/gates", tag = "reviewers", params(GateQuery),
    responses((status = 200, body = GateList), (status = 422, body = ApiErrorBody)))]
pub async fn list_gates(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<GateQuery>,
) -> ApiResult<Json<GateList>> {
    let limit = q.limit.unwrap_or(500);
    if limit > 10_000 {
        return Err(ApiError::invalid_field("limit", "at most 10000"));
    }
    let mut filter = GateFilter {
        status: parse_status(q.status.as_deref())?,
        kind: q.kind,
        mode: q.mode,
        run_id: q.run_id.map(RunId::from_string),
        runs: None,
        agent: q.agent,
        limit: Some(limit),
        offset: q.offset.unwrap_or(0),
    };
    if caller.role == gatehouse_engine::TokenRole::Agent {
        filter.agent = Some(caller.name.clone());
    }
    let scope = caller.scope;
    let (head_seq, page) = state
        .engine(move |e| {
            // Head first: anything newer than the list is then replayed, never skipped.
            let head = e.head_seq()?;
            Ok((head, e.gates_visible(&scope, &filter)?))
        })
        .await?;
    let GatePage { gates, total } = page;
    Ok(Json(GateList { gates: gates.iter().map(GateSummary::from).collect(), total, head_seq }))
}

/// A gate with everything a reviewer needs to decide it.
#[derive(Debug, Serialize, ToSchema)]
pub struct GateDetail {
    /// The gate.
    pub gate: Gate,
    /// Its text rendered from markdown and sanitised.
    pub text_html: String,
    /// The payload against `example_input`, when both exist.
    pub payload_diff: Option<PayloadDiff>,
    /// Its run's title.
    pub run_title: String,
    /// Its run's status.
    pub run_status: RunStatus,
    /// The run's most recent turns (up to 10), oldest first.
    pub recent_turns: Vec<Turn>,
}

/// One gate, rendered for review.
#[utoipa::path(get, path = "/gates/{gate_id}", tag = "reviewers", params(("gate_id" = String, Path, description = "The gate")),
    responses((status = 200, body = GateDetail), (status = 404, body = ApiErrorBody)))]
pub async fn get_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
) -> ApiResult<Json<GateDetail>> {
    let id = GateId::from_string(gate_id);
    let (gate, run, turns) = state
        .engine_checked(move |e| {
            let (gate, run) = caller.gate(e, &id)?;
            let turns = e.turns(&run.id)?;
            Ok((gate, run, turns))
        })
        .await?;
    let payload_diff = match (&gate.example_input, &gate.payload) {
        (Some(example), Some(payload)) => Some(diff_values(example, payload)),
        _ => None,
    };
    let recent_turns = turns[turns.len().saturating_sub(10)..].to_vec();
    Ok(Json(GateDetail {
        text_html: markdown::render(&gate.text),
        payload_diff,
        run_title: run.title,
        run_status: run.status,
        recent_turns,
        gate,
    }))
}

/// Decides a gate. Reviewers and admins only; the decider recorded is the
/// token's identity. 409 names who resolved it first and when. A scoped
/// token may make an `allow_rule` only for an agent its scope names (403).
#[utoipa::path(post, path = "/gates/{gate_id}/resolve", tag = "reviewers", params(("gate_id" = String, Path, description = "The gate")),
    request_body = DecisionInput,
    responses((status = 200, body = Gate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn resolve_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
    ApiJson(input): ApiJson<DecisionInput>,
) -> ApiResult<Json<Gate>> {
    caller.require_reviewer()?;
    let id = GateId::from_string(gate_id);
    let gate = state
        .engine_checked(move |e| {
            let (gate, _) = caller.gate(e, &id)?;
            if input.allow_rule.is_some() && !caller.may_rule_for(&gate.agent) {
                return Err(ApiError::forbidden(format!(
                    "allow_rule: `{}` has a scoped token, which may make allow-rules only for the agents its scope \
                     names, not for `{}` (a rule passes that agent's gates in every run)",
                    caller.name, gate.agent
                )));
            }
            Ok(e.resolve_gate_as(&id, input, &caller.decider())?)
        })
        .await?;
    Ok(Json(gate))
}

/// A score for a quality gate's deliverable.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ScoreRequest {
    /// Overall score, 1 to 5.
    pub score: f64,
    /// Optional per-criterion scores, each 1 to 5.
    #[serde(default)]
    pub rubric_scores: std::collections::BTreeMap<String, f64>,
    /// Why.
    #[serde(default)]
    pub justification: String,
}

/// A scored gate and what the score means.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScoreReply {
    /// The gate: resolved when the score decided it, else still pending.
    pub gate: Gate,
    /// `passes` at or above the gate's `required_score`, else `needs_revision`.
    pub verdict: ScoreVerdict,
}

/// Scores a quality gate's deliverable against its rubric. A
/// reviewer's score decides the gate (approve when it passes, needs
/// revision when not). An agent's score (its own run's gate) decides it
/// only when the run's handoff protocol has an auto-approve threshold the
/// score meets and the gate does not require a human; otherwise it is
/// recorded and the gate waits for a reviewer. The scorer is the token.
#[utoipa::path(post, path = "/gates/{gate_id}/score", tag = "reviewers", params(("gate_id" = String, Path, description = "The gate")),
    request_body = ScoreRequest,
    responses((status = 200, body = ScoreReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn score_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
    ApiJson(req): ApiJson<ScoreRequest>,
) -> ApiResult<Json<ScoreReply>> {
    let id = GateId::from_string(gate_id);
    let role = match caller.role {
        gatehouse_engine::TokenRole::Agent => Role::Agent,
        _ => Role::Human,
    };
    let (gate, verdict) = state
        .engine_checked(move |e| {
            let (gate, _) = caller.gate(e, &id)?;
            let score = QualityScore {
                score: req.score,
                rubric_scores: req.rubric_scores,
                justification: req.justification,
                scorer: caller.name.clone(),
                deliverable_id: match &gate.spec {
                    gatehouse_engine::GateSpec::QualityScore { deliverable_id, .. } => deliverable_id.clone(),
                    _ => String::new(),
                },
                at: e.now(),
            };
            // A person's score decides the gate: they must be one who may decide it.
            Ok(match role {
                Role::Human => e.score_quality_gate_as(&id, score, &caller.decider())?,
                _ => e.evaluate_quality_gate(&id, score, role)?,
            })
        })
        .await?;
    Ok(Json(ScoreReply { gate, verdict }))
}
