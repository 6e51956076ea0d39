//! Alerts over HTTP: `GET /alerts`, the thresholds and SLA targets this
//! server runs with and the alerts up now (`alerts.rs` raises and clears
//! them). Reviewers and admins with an unscoped token (the figures cover
//! every run).

use axum::extract::State;
use axum::Json;
use gatehouse_engine::Alert;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::alerts::AlertConfig;
use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(alerts))
}

/// The alert configuration and the alerts up now.
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertsResponse {
    /// The thresholds (absent ones are off) and the SLA targets.
    pub config: AlertConfig,
    /// Alerts raised and not yet cleared, as raised.
    pub active: Vec<Alert>,
}

/// The alert thresholds, the SLA targets per priority and the alerts up
/// now. Reviewers and admins with unscoped tokens only.
#[utoipa::path(get, path = "/alerts", tag = "admin",
    responses((status = 200, body = AlertsResponse), (status = 403, body = ApiErrorBody)))]
pub async fn alerts(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<AlertsResponse>> {
    caller.require_reviewer()?;
    caller.require_unscoped("the alerts")?;
    let active = state.alerts.lock().await.active();
    Ok(Json(AlertsResponse { config: state.config.alerts.clone(), active }))
}
