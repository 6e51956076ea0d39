//! Retention over HTTP: `POST /retention/purge` purges old ended runs
//! (never one with pending gates). Admins with an unscoped token only (it
//! covers every run).

use axum::extract::State;
use axum::Json;
use gatehouse_engine::PurgeReport;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(purge))
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
