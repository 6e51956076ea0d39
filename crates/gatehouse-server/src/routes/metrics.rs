//! The review metrics over HTTP: `GET /metrics`. Reviewers and admins with
//! an unscoped token only (the metrics cover every run).

use axum::extract::State;
use axum::Json;
use gatehouse_engine::{Metrics, SlaCompliance};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::state::AppState;
use crate::webhook::WebhookStats;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}

/// The review metrics plus this server's webhook deliveries.
#[derive(Debug, Serialize, ToSchema)]
pub struct MetricsResponse {
    /// The engine's figures.
    #[serde(flatten)]
    pub review: Metrics,
    /// Webhook deliveries since this server started.
    pub webhooks: WebhookStats,
    /// SLA compliance per priority (low to urgent): the share of gates a
    /// person decided within the priority's target (`serve --sla-*`).
    pub sla: Vec<SlaCompliance>,
}

/// Review metrics: HITL and auto-pass rates per agent and per gate kind,
/// average human latency per kind, the expiry rate, the most common
/// corrections, capability ratings, webhook deliveries and SLA compliance per priority. Reviewers and
/// admins with unscoped tokens only (the figures cover every agent and run).
#[utoipa::path(get, path = "/metrics", tag = "admin",
    responses((status = 200, body = MetricsResponse), (status = 403, body = ApiErrorBody)))]
pub async fn metrics(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<MetricsResponse>> {
    caller.require_reviewer()?;
    caller.require_unscoped("the review metrics")?;
    let targets = state.config.alerts.sla;
    let (review, sla) = state.engine(move |e| Ok((e.metrics()?, e.sla_compliance(&targets)?))).await?;
    Ok(Json(MetricsResponse { review, webhooks: state.webhooks.stats(), sla }))
}
