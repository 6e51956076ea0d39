//! The HITL run API's run listings: `GET /runs`, `GET /runs/active`
//! (resumable runs) and `GET /sessions/{session_id}/active`. Agents see
//! only the runs they drive or take part in; reviewers and admins see
//! everything; a scoped token sees only the runs in its scope.
//!
//! The HITL run API writes its filters as `?user_id=&status=`, so an empty
//! value means "no filter" here, never "the empty name" (pending approvals
//! in `routes/gates/read.rs` read theirs the same way).

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::plan::ProgressState;
use gatehouse_engine::recording::Imported;
use gatehouse_engine::{GateFilter, RunFilter, RunId, RunStatus, TokenRole};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::params::{non_empty, parse_limit, parse_offset, ApiPath, ApiQuery};
use crate::state::AppState;

/// Runs listed when no `limit` is given.
const DEFAULT_LIMIT: u32 = 50;
/// The most runs one listing returns.
const MAX_LIMIT: u32 = 500;
/// One line of a run listing.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunSummary {
    /// The run.
    pub id: RunId,
    /// Its title.
    pub title: String,
    /// The agent driving it.
    pub agent: String,
    /// Where it is.
    pub status: RunStatus,
    /// Its user.
    pub user_id: Option<String>,
    /// Its session.
    pub session_id: Option<String>,
    /// Plan tasks done, or gates closed, of all.
    pub progress: ProgressState,
    /// Gates waiting for a decision.
    pub pending_gates: u64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When and by whom it was imported from a recording: history, not work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

/// A run listing, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunList {
    /// The runs.
    pub runs: Vec<RunSummary>,
}

/// Filters of `GET /runs`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunsQuery {
    /// Only this user's runs.
    pub user_id: Option<String>,
    /// Only these statuses, comma-separated: created, active, awaiting_human,
    /// paused, completed, failed, cancelled (`queued` and `aborted` are accepted too).
    pub status: Option<String>,
    /// At most this many, 1 to 500 (default 50).
    #[param(value_type = Option<u32>)]
    pub limit: Option<String>,
    /// Skip this many of the newest first (default 0), to page back in time.
    #[param(value_type = Option<u32>)]
    pub offset: Option<String>,
}

/// Filters of the active-run listings.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ActiveQuery {
    /// Only this user's runs.
    pub user_id: Option<String>,
    /// Only this session's runs.
    pub session_id: Option<String>,
    /// Only these live statuses, comma-separated: created, active, awaiting_human, paused.
    pub status: Option<String>,
    /// At most this many, 1 to 500 (default 50).
    #[param(value_type = Option<u32>)]
    pub limit: Option<String>,
    /// Skip this many of the newest first (default 0), to page back in time.
    #[param(value_type = Option<u32>)]
    pub offset: Option<String>,
}

/// Filters of a session's active runs.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    /// Only this user's runs.
    pub user_id: Option<String>,
}

/// Parses a comma-separated `status`, naming the parameter and the bad value.
fn parse_statuses(raw: Option<String>) -> ApiResult<Vec<RunStatus>> {
    let Some(raw) = non_empty(raw) else { return Ok(Vec::new()) };
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|_| {
                ApiError::invalid_field("status", format!(
                    "`{s}` is not a run status; use created, active, awaiting_human, paused, completed, failed or cancelled"
                ))
            })
        })
        .collect()
}

/// Live statuses only: the given ones (each must be live) or all four.
fn live_statuses(raw: Option<String>) -> ApiResult<Vec<RunStatus>> {
    let statuses = parse_statuses(raw)?;
    if let Some(done) = statuses.iter().find(|s| s.is_terminal()) {
        return Err(ApiError::invalid_field(
            "status",
            format!("`{}` has ended; active runs are created, active, awaiting_human or paused", done.as_str()),
        ));
    }
    Ok(if statuses.is_empty() { RunStatus::LIVE.to_vec() } else { statuses })
}

/// Lists runs with their progress and pending-gate counts, newest first,
/// restricted for agent tokens to runs they drive or take part in, and for
/// scoped tokens to runs in their scope.
async fn summaries(state: &AppState, caller: &Caller, filter: RunFilter) -> ApiResult<Json<RunList>> {
    let agent = (caller.role == TokenRole::Agent).then(|| caller.name.clone());
    let filter = RunFilter { agent, ..filter };
    let scope = caller.scope.clone();
    let runs = state
        .engine(move |e| {
            let runs = e.runs_visible(&scope, &filter)?;
            let mut out = Vec::with_capacity(runs.len());
            for run in runs {
                let pending = GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() };
                out.push(RunSummary {
                    progress: e.progress(&run.id)?,
                    pending_gates: e.count_gates(&pending)?,
                    id: run.id,
                    title: run.title,
                    agent: run.agent,
                    status: run.status,
                    user_id: run.user_id,
                    session_id: run.session_id,
                    created_at: run.created_at,
                    updated_at: run.updated_at,
                    imported: run.imported,
                });
            }
            Ok(out)
        })
        .await?;
    Ok(Json(RunList { runs }))
}

/// Lists runs, newest first. Agents see only runs they drive or take part in.
#[utoipa::path(get, path = "/runs", tag = "hitl", params(RunsQuery),
    responses((status = 200, body = RunList), (status = 422, body = ApiErrorBody)))]
pub async fn list_runs(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<RunsQuery>,
) -> ApiResult<Json<RunList>> {
    let filter = RunFilter {
        statuses: parse_statuses(q.status)?,
        user_id: non_empty(q.user_id),
        session_id: None,
        agent: None,
        ids: None,
        limit: Some(parse_limit(q.limit, DEFAULT_LIMIT, MAX_LIMIT)?),
        offset: parse_offset(q.offset)?,
    };
    summaries(&state, &caller, filter).await
}

/// Lists active (resumable, not yet ended) runs, newest first.
#[utoipa::path(get, path = "/runs/active", tag = "hitl", params(ActiveQuery),
    responses((status = 200, body = RunList), (status = 422, body = ApiErrorBody)))]
pub async fn active_runs(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ActiveQuery>,
) -> ApiResult<Json<RunList>> {
    let filter = RunFilter {
        statuses: live_statuses(q.status)?,
        user_id: non_empty(q.user_id),
        session_id: non_empty(q.session_id),
        agent: None,
        ids: None,
        limit: Some(parse_limit(q.limit, DEFAULT_LIMIT, MAX_LIMIT)?),
        offset: parse_offset(q.offset)?,
    };
    summaries(&state, &caller, filter).await
}

/// Lists a session's active runs, newest first (at most 500).
#[utoipa::path(get, path = "/sessions/{session_id}/active", tag = "hitl",
    params(("session_id" = String, Path, description = "The session"), SessionQuery),
    responses((status = 200, body = RunList), (status = 422, body = ApiErrorBody)))]
pub async fn session_active_runs(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(session_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<SessionQuery>,
) -> ApiResult<Json<RunList>> {
    let filter = RunFilter {
        statuses: RunStatus::LIVE.to_vec(),
        user_id: non_empty(q.user_id),
        session_id: Some(session_id),
        agent: None,
        ids: None,
        limit: Some(MAX_LIMIT),
        offset: None,
    };
    summaries(&state, &caller, filter).await
}
