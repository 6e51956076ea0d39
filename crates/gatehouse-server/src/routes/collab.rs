//! A run's plan and shared context over HTTP, for its agents and its
//! reviewers alike: `plan_read` and six plan operations, and
//! the audited key-value shared context (get, set, delete, history).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::Json;
use gatehouse_engine::engine::collab::ContextChange;
use gatehouse_engine::plan::{PlanOperation, PlanRevision, ProgressState};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(read_plan, change_plan))
        .routes(routes!(read_context))
        .routes(routes!(context_history))
        .routes(routes!(set_context, delete_context))
}

/// A run's plan.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanView {
    /// The newest revision, if the run has a plan.
    pub plan: Option<PlanRevision>,
    /// Every revision, oldest first, each with its change log.
    pub revisions: Vec<PlanRevision>,
    /// Tasks done of all (or gates closed, without a plan).
    pub progress: ProgressState,
}

/// Reads the run's plan with its revisions.
#[utoipa::path(get, path = "/runs/{run_id}/plan", tag = "collaboration", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = PlanView), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn read_plan(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<PlanView>> {
    let view = caller
        .on_run(&state, run_id, |e, id, _| {
            let revisions = e.plan_revisions(id)?;
            Ok(PlanView { plan: revisions.last().cloned(), revisions, progress: e.progress(id)? })
        })
        .await?;
    Ok(Json(view))
}

/// Applies one plan operation (`op`: add_task, update_task, assign_task,
/// estimate_duration, set_dependencies, replace) and answers with the new
/// revision. The run's agents and reviewers may change it; a change that
/// would leave a dangling dependency or a cycle is 422 naming it. Once the
/// run has a plan, how people review it (`execution_mode`,
/// `human_intervention_points`, a task's `kind` and `intervention_point`
/// metadata) is a reviewer's to change: an agent's change of it is 403.
#[utoipa::path(post, path = "/runs/{run_id}/plan", tag = "collaboration", params(("run_id" = String, Path, description = "The run")),
    request_body = PlanOperation,
    responses((status = 200, body = PlanRevision), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn change_plan(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(op): ApiJson<PlanOperation>,
) -> ApiResult<Json<PlanRevision>> {
    Ok(Json(caller.change_plan(&state, run_id, op).await?))
}

/// Reads the run's shared context.
#[utoipa::path(get, path = "/runs/{run_id}/context", tag = "collaboration", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = BTreeMap<String, Value>), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn read_context(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<BTreeMap<String, Value>>> {
    Ok(Json(caller.on_run(&state, run_id, |e, id, _| e.context(id)).await?))
}

/// Every set and delete of the run's context, oldest first, with who and when.
#[utoipa::path(get, path = "/runs/{run_id}/context/history", tag = "collaboration",
    params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Vec<ContextChange>), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn context_history(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Vec<ContextChange>>> {
    Ok(Json(caller.on_run(&state, run_id, |e, id, _| e.context_history(id)).await?))
}

/// A value to store.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ContextValue {
    /// Any JSON (stored redacted).
    pub value: Value,
}

/// A context key's change.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContextUpdate {
    /// The key.
    pub key: String,
    /// Its value before, if it had one.
    pub old: Option<Value>,
    /// Its value now; absent after a delete.
    pub new: Option<Value>,
}

/// Sets a context key (1 to 512 characters).
#[utoipa::path(put, path = "/runs/{run_id}/context/{key}", tag = "collaboration",
    params(("run_id" = String, Path, description = "The run"), ("key" = String, Path, description = "The key")),
    request_body = ContextValue,
    responses((status = 200, body = ContextUpdate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn set_context(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((run_id, key)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<ContextValue>,
) -> ApiResult<Json<ContextUpdate>> {
    let k = key.clone();
    let (old, new) = caller
        .on_run(&state, run_id, move |e, id, actor| {
            let old = e.context_set(id, &k, body.value, actor)?;
            let new = e.context(id)?.remove(&k);
            Ok((old, new))
        })
        .await?;
    Ok(Json(ContextUpdate { key, old, new }))
}

/// Deletes a context key; 404 when the run has no such key.
#[utoipa::path(delete, path = "/runs/{run_id}/context/{key}", tag = "collaboration",
    params(("run_id" = String, Path, description = "The run"), ("key" = String, Path, description = "The key")),
    responses((status = 200, body = ContextUpdate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn delete_context(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((run_id, key)): ApiPath<(String, String)>,
) -> ApiResult<Json<ContextUpdate>> {
    let k = key.clone();
    let old = caller
        .on_run(&state, run_id, move |e, id, actor| {
            if !e.context(id)?.contains_key(&k) {
                return Ok(None);
            }
            e.context_delete(id, &k, actor)
        })
        .await?;
    match old {
        Some(old) => Ok(Json(ContextUpdate { key, old: Some(old), new: None })),
        None => Err(ApiError::not_found(format!("key: this run's context has no key `{key}`"))),
    }
}
