//! The team agents' memory beyond one run's view: `GET /memory/global`, the
//! global memory every run's team agents share (its live entries and its
//! history; reviewers, unscoped), and `GET /runs/{run_id}/memory/snapshots`,
//! the snapshots of a run's memory kept at each handoff and at its end
//! (whoever may see the run); the entries and snapshots are the
//! orchestrator's types (their schemas too). A reviewer deletes a remembered value:
//! `DELETE /memory/global/{key}` and `DELETE /runs/{run_id}/memory/{scope}/{key}`
//! (the run's `run` and `team` scopes, while the run is live); each deletion
//! is in the key's history and the audit log under the reviewer's name.

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::EngineError;
use gatehouse_orchestrator::team::memory::{live, reviewer_context_key, snapshots, Entry, MemoryEntry, MemorySnapshot};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::params::ApiPath;
use crate::state::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(global_memory))
        .routes(routes!(memory_snapshots))
        .routes(routes!(delete_global_memory))
        .routes(routes!(delete_run_memory))
}

/// One change of a global memory key.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemoryChange {
    /// Its key.
    pub key: String,
    /// Before (absent when new).
    pub old: Option<Value>,
    /// After (absent when deleted).
    pub new: Option<Value>,
    /// Who changed it.
    pub actor: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// The global memory: what it holds now (expired entries left out) and its changes.
#[derive(Debug, Serialize, ToSchema)]
pub struct GlobalMemory {
    /// The live entries, by key.
    pub entries: Vec<MemoryEntry>,
    /// Its changes, oldest first (the newest thousand).
    pub history: Vec<MemoryChange>,
}

/// A run's memory snapshots, in the order they were taken.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemorySnapshots {
    /// The snapshots.
    pub snapshots: Vec<MemorySnapshot>,
}

/// The global memory team agents keep across runs: its live entries and
/// its history. Reviewers and admins with an unscoped token.
#[utoipa::path(get, path = "/memory/global", tag = "reviewers",
    responses((status = 200, body = GlobalMemory), (status = 403, body = ApiErrorBody)))]
pub async fn global_memory(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<GlobalMemory>> {
    caller.require_reviewer()?;
    caller.require_unscoped("the global memory")?;
    let found = state
        .engine_checked(|e| {
            let entries = live(e.global_memory()?, "", e.now()).into_iter().map(|(k, v)| MemoryEntry::new(k, v));
            let history = e.global_memory_history()?.into_iter().map(|c| MemoryChange {
                key: c.key,
                old: c.old,
                new: c.new,
                actor: c.actor,
                at: c.at,
            });
            Ok(GlobalMemory { entries: entries.collect(), history: history.collect() })
        })
        .await?;
    Ok(Json(found))
}

/// The snapshots of a run's memory kept at each handoff and at its end.
#[utoipa::path(get, path = "/runs/{run_id}/memory/snapshots", tag = "runs",
    params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = MemorySnapshots), (status = 403, body = ApiErrorBody),
        (status = 404, body = ApiErrorBody)))]
pub async fn memory_snapshots(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<MemorySnapshots>> {
    let id = gatehouse_engine::RunId::from_string(run_id);
    let found = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            Ok(MemorySnapshots { snapshots: snapshots(&e.context(&run.id)?) })
        })
        .await?;
    Ok(Json(found))
}

/// What a reviewer's deletion removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemoryDeletion {
    /// `run`, `team` or `global`.
    pub scope: String,
    /// Its key.
    pub key: String,
    /// The value it held.
    pub value: Value,
    /// The agent that had stored it.
    pub by: String,
    /// The reviewer who deleted it.
    pub deleted_by: String,
}

impl MemoryDeletion {
    fn new(scope: &str, key: String, old: Value, deleted_by: String) -> Self {
        let (value, by) = match serde_json::from_value::<Entry>(old.clone()) {
            Ok(entry) => (entry.value, entry.by),
            Err(_) => (old, String::new()),
        };
        Self { scope: scope.to_owned(), key, value, by, deleted_by }
    }
}

/// An engine's "no such key" as a 404 naming the key and where it was looked for.
fn missing_key(err: EngineError, key: &str, place: &str) -> ApiError {
    match err {
        EngineError::NotFound { .. } => ApiError::not_found(format!("key: {place} has no key `{key}`")),
        other => other.into(),
    }
}

/// Deletes a key of the global memory every run's team agents share; in
/// its history and the audit log under the reviewer's name. 404 when there
/// is no such key. Reviewers and admins with an unscoped token.
#[utoipa::path(delete, path = "/memory/global/{key}", tag = "reviewers",
    params(("key" = String, Path, description = "The key")),
    responses((status = 200, body = MemoryDeletion), (status = 403, body = ApiErrorBody),
        (status = 404, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn delete_global_memory(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<Json<MemoryDeletion>> {
    caller.require_reviewer()?;
    caller.require_unscoped("the global memory")?;
    let deleted = state
        .engine_checked(move |e| {
            let old = e
                .global_memory_delete(&key, &caller.name)
                .map_err(|err| missing_key(err, &key, "the global memory"))?;
            Ok(MemoryDeletion::new("global", key, old, caller.name))
        })
        .await?;
    Ok(Json(deleted))
}

/// Deletes a key of a live run's `run` or `team` memory; in the run's
/// memory history and the audit log under the reviewer's name. 404 when
/// the run or the key is not there, 409 once the run ended, 422 for another
/// scope. Reviewers and admins only.
#[utoipa::path(delete, path = "/runs/{run_id}/memory/{scope}/{key}", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run"),
        ("scope" = String, Path, description = "`run` or `team`"), ("key" = String, Path, description = "The key")),
    responses((status = 200, body = MemoryDeletion), (status = 403, body = ApiErrorBody),
        (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn delete_run_memory(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((run_id, scope, key)): ApiPath<(String, String, String)>,
) -> ApiResult<Json<MemoryDeletion>> {
    caller.require_reviewer()?;
    let context_key = reviewer_context_key(&scope, &key).map_err(|m| ApiError::invalid_field("scope", m))?;
    let id = gatehouse_engine::RunId::from_string(run_id);
    let deleted = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            let place = format!("the {scope} memory of run {}", run.id);
            let old =
                e.context_delete(&run.id, &context_key, &caller.name).map_err(|err| missing_key(err, &key, &place))?;
            let old = old.ok_or_else(|| ApiError::not_found(format!("key: {place} has no key `{key}`")))?;
            Ok(MemoryDeletion::new(&scope, key, old, caller.name))
        })
        .await?;
    Ok(Json(deleted))
}
