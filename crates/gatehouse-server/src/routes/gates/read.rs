//! Reading gates: an agent's long-poll for a decision (`GET
//! /gates/{gate_id}/wait`), the reviewers' queue in panel order (`GET
//! /gates`), one gate for review (`GET /gates/{gate_id}`, its markdown
//! rendered safely and its payload diffed against `example_input`) and the
//! HITL run API's `GET /approvals/pending`. Agents see only their own
//! gates; a scoped token only those of the runs in its scope.

use std::time::Duration;

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::diff::{diff_values, PayloadDiff};
use gatehouse_engine::engine::GatePage;
use gatehouse_engine::{
    BlockingMode, Gate, GateFilter, GateId, GateKind, GateStatus, Priority, RunFilter, RunId, RunStatus, TokenRole,
    Turn,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::markdown;
use crate::params::{non_empty, parse_limit, ApiPath, ApiQuery};
use crate::routes::gates::wait_reading_first;
use crate::state::AppState;

/// How long to wait.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitQuery {
    /// Seconds to wait for a decision, 0 to 60 (default 30).
    pub timeout: Option<f64>,
    /// `true` keeps waiting on a gate a reviewer released, for its decision;
    /// by default a released gate is answered at once (still pending, with
    /// `released` set: the run went on without it, nothing was decided).
    pub through_release: Option<bool>,
}

/// Long-polls a gate: returns the moment it is decided, expired or
/// cancelled, or released by a reviewer (still pending, `released` set:
/// not a decision), or the still-pending gate when the timeout passes.
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
    if timeout == 0.0 {
        let gate = state.engine_checked(move |e| Ok(caller.gate(e, &gate_id)?.0)).await?;
        return Ok(Json(gate));
    }
    // The caller must see the gate's run: checked on the wait's first read of the gate.
    let through_release = q.through_release.unwrap_or(false);
    let first = move |e: &gatehouse_engine::Engine, id: &GateId| Ok(caller.gate(e, id)?.0);
    Ok(Json(wait_reading_first(&state, &gate_id, deadline, through_release, first).await?))
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

/// Filters of pending approvals.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PendingQuery {
    /// Only gates of this user's runs.
    pub user_id: Option<String>,
    /// At most this many, 1 to 10000 (default 500).
    #[param(value_type = Option<u32>)]
    pub limit: Option<String>,
}

/// Pending approvals in panel order (sync first, then priority, then age):
/// gates of the user's runs, or every pending gate when no user is named.
/// Agents see only their own gates; a scoped token only those of its runs.
#[utoipa::path(get, path = "/approvals/pending", tag = "hitl", params(PendingQuery),
    responses((status = 200, body = GateList), (status = 422, body = ApiErrorBody)))]
pub async fn pending_approvals(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<PendingQuery>,
) -> ApiResult<Json<GateList>> {
    let limit = parse_limit(q.limit, 500, 10_000)?;
    let agent = (caller.role == TokenRole::Agent).then(|| caller.name.clone());
    let user = non_empty(q.user_id);
    let scope = caller.scope;
    let (head_seq, gates, total) = state
        .engine(move |e| {
            let head = e.head_seq()?;
            let filter = GateFilter { agent, limit: Some(limit), ..GateFilter::pending() };
            let GatePage { gates, total } = match user {
                // Ending a run withdraws its gates, so only a user's live runs can have pending ones.
                Some(user) => {
                    let live =
                        RunFilter { statuses: RunStatus::LIVE.to_vec(), user_id: Some(user), ..RunFilter::default() };
                    e.gates_of_runs_visible(&scope, &live, &filter)?
                }
                None => e.gates_visible(&scope, &filter)?,
            };
            Ok((head, gates, total))
        })
        .await?;
    Ok(Json(GateList { gates: gates.iter().map(GateSummary::from).collect(), total, head_seq }))
}
