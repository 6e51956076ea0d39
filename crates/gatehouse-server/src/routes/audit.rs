//! The audit log's integrity over HTTP: `GET /audit/verify` (the hash
//! chain, optionally against an anchor) and `GET /audit/anchor`. Admins with
//! an unscoped token only (the log covers every run).

use axum::extract::State;
use axum::Json;
use gatehouse_engine::event::AuditAnchor;
use gatehouse_engine::{AuditReport, EngineError};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::params::ApiQuery;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify_audit)).routes(routes!(audit_anchor))
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
