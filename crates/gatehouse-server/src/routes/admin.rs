//! Administration over HTTP: recordings (export a run or a session, import
//! one into this database), API tokens, retention, audit verification and
//! the review metrics.
//!
//! Who may do what: reviewers and admins export and import recordings
//! (agents may export runs they take part in); reviewers and admins read
//! metrics; tokens, retention and audit verification are for admins only.
//! A scoped token exports only runs in its scope; importing, metrics,
//! tokens, retention and audit verification cover every run, so they need
//! an unscoped token.

use std::collections::HashSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::event::AuditAnchor;
use gatehouse_engine::recording::ImportSummary;
use gatehouse_engine::token::{NewToken, TokenScope};
use gatehouse_engine::{
    AuditReport, EngineError, Metrics, PurgeReport, Recording, RecordingScope, RunId, Token, TokenRole,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{missing, Caller};
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::{ApiPath, ApiQuery};
use crate::routes::hitl::visible_run;
use crate::state::AppState;
use crate::webhook::WebhookStats;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export_run))
        .routes(routes!(export_session))
        .routes(routes!(import_recording))
        .routes(routes!(create_token, list_tokens))
        .routes(routes!(whoami))
        .routes(routes!(revoke_token))
        .routes(routes!(purge))
        .routes(routes!(verify_audit))
        .routes(routes!(audit_anchor))
        .routes(routes!(metrics))
}

/// Exports one run as a recording: its snapshots and the events that
/// produced them, secrets redacted. Agents may export runs they take part
/// in; a scoped token runs in its scope.
#[utoipa::path(get, path = "/runs/{run_id}/recording", tag = "admin", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Recording), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn export_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Recording>> {
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    Ok(Json(state.engine(move |e| e.export(RecordingScope::Run { run_id: id })).await?))
}

/// Exports every run of a session as one recording. An agent may export a
/// session only when it takes part in every run of it (403 otherwise). A
/// scoped token gets the session's runs in its scope, and 404 when none is.
#[utoipa::path(get, path = "/sessions/{session_id}/recording", tag = "admin",
    params(("session_id" = String, Path, description = "The session")),
    responses((status = 200, body = Recording), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn export_session(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(session_id): ApiPath<String>,
) -> ApiResult<Json<Recording>> {
    let who = caller.clone();
    let recording = state
        .engine_checked(move |e| {
            let mut recording = e.export(RecordingScope::Session { session_id: session_id.clone() })?;
            if who.is_scoped() {
                let mut kept = Vec::new();
                for record in std::mem::take(&mut recording.runs) {
                    if who.reaches(e, &record.run)? {
                        kept.push(record);
                    }
                }
                if kept.is_empty() {
                    return Err(missing("session", &session_id));
                }
                let runs: HashSet<RunId> = kept.iter().map(|record| record.run.id.clone()).collect();
                recording.events.retain(|event| event.run_id.as_ref().is_some_and(|id| runs.contains(id)));
                recording.runs = kept;
            }
            Ok(recording)
        })
        .await?;
    for record in &recording.runs {
        caller.may_use_run(&record.run)?;
    }
    Ok(Json(recording))
}

/// Imports a recording in one transaction: every run, gate, decision and
/// event as it was. Reviewers and admins with unscoped tokens only. A
/// malformed recording is 422 naming the field; a recording with a run this
/// database already holds is refused whole with 409 naming the run
/// (nothing is imported).
#[utoipa::path(post, path = "/recordings", tag = "admin", request_body = Recording,
    responses((status = 201, body = ImportSummary), (status = 403, body = ApiErrorBody), (status = 409, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn import_recording(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(recording): ApiJson<Recording>,
) -> ApiResult<(StatusCode, Json<ImportSummary>)> {
    caller.require_reviewer()?;
    caller.require_unscoped("importing a recording")?;
    let actor = caller.name.clone();
    let summary = state
        .engine(move |e| {
            // The engine refuses such a recording too (as invalid); naming
            // the clash here lets clients tell "already imported" apart.
            for record in &recording.runs {
                match e.run(&record.run.id) {
                    Ok(_) => return Ok(Err(record.run.id.clone())),
                    Err(EngineError::NotFound { .. }) => {}
                    Err(other) => return Err(other),
                }
            }
            e.import(recording, &actor).map(Ok)
        })
        .await?
        .map_err(|run| {
            ApiError::new(
                StatusCode::CONFLICT,
                ApiErrorCode::Conflict,
                format!("run {run} already exists in this database; nothing was imported"),
            )
        })?;
    Ok((StatusCode::CREATED, Json(summary)))
}

/// A token to create.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateTokenRequest {
    /// The identity it stands for (recorded as the actor of what it does), 1 to 128 characters.
    pub name: String,
    /// agent, reviewer or admin.
    pub role: TokenRole,
    /// Teams the token belongs to: gates restricted to `role:TEAM` may be decided with it.
    #[serde(default)]
    pub teams: Vec<String>,
    /// Limits the token to these runs and agents (and their sub-runs):
    /// anything else is, for it, as if it did not exist. Absent or empty:
    /// everything its role allows.
    #[serde(default)]
    pub scope: TokenScope,
}

/// Who the caller is, as the server sees its token.
#[derive(Debug, Serialize, ToSchema)]
pub struct WhoAmI {
    /// The token's identity (recorded as the actor of what it does).
    pub name: String,
    /// agent, reviewer or admin.
    pub role: TokenRole,
    /// Its teams.
    pub teams: Vec<String>,
    /// The roles a gate's deciders may name for it (`role:NAME`): its role and teams.
    pub roles: Vec<String>,
    /// The runs and agents the token is limited to; absent when it is not.
    #[serde(skip_serializing_if = "TokenScope::is_empty")]
    pub scope: TokenScope,
}

/// The caller's identity: what the UI shows and decides with (which gates
/// it may decide, which it may only read).
#[utoipa::path(get, path = "/whoami", tag = "admin", responses((status = 200, body = WhoAmI), (status = 401, body = ApiErrorBody)))]
pub async fn whoami(caller: Caller) -> Json<WhoAmI> {
    let roles = caller.decider().roles;
    Json(WhoAmI { name: caller.name, role: caller.role, teams: caller.teams, roles, scope: caller.scope })
}

/// A new token and its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedToken {
    /// Its public record.
    pub token: Token,
    /// The bearer secret. Shown only now: only its hash is stored.
    pub secret: String,
}

/// Every token.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    /// Oldest first, revoked ones included (never their secrets).
    pub tokens: Vec<Token>,
}

/// Creates an API token, optionally scoped to runs and agents; a run named
/// in the scope must exist (422 naming it). Admins with unscoped tokens only.
#[utoipa::path(post, path = "/tokens", tag = "admin", request_body = CreateTokenRequest,
    responses((status = 201, body = CreatedToken), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn create_token(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<CreateTokenRequest>,
) -> ApiResult<(StatusCode, Json<CreatedToken>)> {
    caller.require_admin()?;
    caller.require_unscoped("managing tokens")?;
    let actor = caller.name;
    let new = NewToken { name: req.name, role: req.role, teams: req.teams, scope: req.scope };
    let (token, secret) = state.engine(move |e| e.issue_token(new, &actor)).await?;
    Ok((StatusCode::CREATED, Json(CreatedToken { token, secret })))
}

/// Lists every token, with its teams and scope. Admins with unscoped tokens only.
#[utoipa::path(get, path = "/tokens", tag = "admin",
    responses((status = 200, body = TokenList), (status = 403, body = ApiErrorBody)))]
pub async fn list_tokens(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<TokenList>> {
    caller.require_admin()?;
    caller.require_unscoped("managing tokens")?;
    Ok(Json(TokenList { tokens: state.engine(|e| e.tokens()).await? }))
}

/// Revokes a live token by id or (unambiguous) name; it is refused at once
/// by this server. Admins with unscoped tokens only.
#[utoipa::path(delete, path = "/tokens/{id_or_name}", tag = "admin",
    params(("id_or_name" = String, Path, description = "The token's id or name")),
    responses((status = 200, body = Token), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn revoke_token(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id_or_name): ApiPath<String>,
) -> ApiResult<Json<Token>> {
    caller.require_admin()?;
    caller.require_unscoped("managing tokens")?;
    let actor = caller.name;
    let token = state.engine(move |e| e.revoke_token(&id_or_name, &actor)).await?;
    state.forget_tokens();
    Ok(Json(token))
}

/// Which runs retention purges.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PurgeRequest {
    /// Purge ended runs last changed more than this many days ago (0: every ended run).
    pub older_than_days: u32,
}

/// Purges old ended runs. Runs with pending gates are never purged; their
/// events keep their place and hash in the log but lose their bodies.
/// Admins with unscoped tokens only.
#[utoipa::path(post, path = "/retention/purge", tag = "admin", request_body = PurgeRequest,
    responses((status = 200, body = PurgeReport), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn purge(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<PurgeRequest>,
) -> ApiResult<Json<PurgeReport>> {
    caller.require_admin()?;
    caller.require_unscoped("retention")?;
    Ok(Json(state.engine(move |e| e.purge_terminal_runs(req.older_than_days)).await?))
}

/// What to verify the audit log against.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// A head kept elsewhere (`SEQ:HASH`, from `GET /audit/anchor` or
    /// `gatehouse audit anchor`): the log must still hold that event with
    /// that hash, so nothing up to it was truncated or rewritten.
    pub anchor: Option<String>,
}

/// Verifies the hash-chained audit log end to end (with the server's audit
/// key, and against an anchor if given) and every stored row against it.
/// Admins with unscoped tokens only.
#[utoipa::path(get, path = "/audit/verify", tag = "admin", params(AuditQuery),
    responses((status = 200, body = AuditReport), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn verify_audit(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> ApiResult<Json<AuditReport>> {
    caller.require_admin()?;
    caller.require_unscoped("verifying the audit log")?;
    let anchor = match q.anchor {
        Some(text) => Some(text.parse::<AuditAnchor>().map_err(|e| EngineError::invalid("anchor", e))?),
        None => None,
    };
    Ok(Json(state.engine(move |e| e.verify_audit_against(anchor.as_ref())).await?))
}

/// The audit log's head (sequence number and hash) to keep elsewhere: a
/// later `GET /audit/verify?anchor=SEQ:HASH` proves nothing up to it was
/// truncated or rewritten. Admins with unscoped tokens only.
#[utoipa::path(get, path = "/audit/anchor", tag = "admin",
    responses((status = 200, body = AuditAnchor), (status = 403, body = ApiErrorBody)))]
pub async fn audit_anchor(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<AuditAnchor>> {
    caller.require_admin()?;
    caller.require_unscoped("reading the audit log's head")?;
    Ok(Json(state.engine(|e| e.audit_anchor()).await?))
}

/// The review metrics plus this server's webhook deliveries.
#[derive(Debug, Serialize, ToSchema)]
pub struct MetricsResponse {
    /// The engine's figures.
    #[serde(flatten)]
    pub review: Metrics,
    /// Webhook deliveries since this server started.
    pub webhooks: WebhookStats,
}

/// Review metrics: HITL and auto-pass rates per agent and per gate kind,
/// average human latency per kind, the expiry rate, the most common
/// corrections, capability ratings and webhook deliveries. Reviewers and
/// admins with unscoped tokens only (the figures cover every agent and run).
#[utoipa::path(get, path = "/metrics", tag = "admin",
    responses((status = 200, body = MetricsResponse), (status = 403, body = ApiErrorBody)))]
pub async fn metrics(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<MetricsResponse>> {
    caller.require_reviewer()?;
    caller.require_unscoped("the review metrics")?;
    let review = state.engine(|e| e.metrics()).await?;
    Ok(Json(MetricsResponse { review, webhooks: state.webhooks.stats() }))
}
