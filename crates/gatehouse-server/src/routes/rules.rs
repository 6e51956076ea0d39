//! Allow-rules over HTTP: reviewers list them (live and past), make one
//! directly, and revoke one at once. A rule is usually made while deciding
//! (`allow_rule` in `POST /gates/{id}/resolve`); gates it passes come back
//! to the agent already approved, decided by `rule:<id>`. Agents get 403
//! everywhere here: an agent must never allow itself. A rule passes its
//! agent's gates in every run, so a scoped token sees and makes rules only
//! for the agents its scope names.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::{AllowRule, AllowRuleFilter, AllowRuleId, AllowRuleStatus, NewAllowRule};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{missing, Caller};
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::{ApiPath, ApiQuery};
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_allow_rules, create_allow_rule)).routes(routes!(revoke_allow_rule))
}

/// Which rules to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AllowRuleQuery {
    /// Only this agent's.
    pub agent: Option<String>,
    /// `live`, `expired`, `revoked`, or `all` (the default).
    pub status: Option<String>,
    /// At most this many, newest first (default 500, at most 5000).
    pub limit: Option<u32>,
}

/// Allow-rules, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AllowRuleList {
    /// The rules, each with its status as of now and how many gates it passed.
    pub rules: Vec<AllowRule>,
}

fn parse_status(s: Option<&str>) -> ApiResult<Option<AllowRuleStatus>> {
    Ok(match s.unwrap_or("all") {
        "all" => None,
        "live" => Some(AllowRuleStatus::Live),
        "expired" => Some(AllowRuleStatus::Expired),
        "revoked" => Some(AllowRuleStatus::Revoked),
        other => {
            return Err(ApiError::invalid_field(
                "status",
                format!("`{other}` is not one of live, expired, revoked, all"),
            ));
        }
    })
}

/// Lists allow-rules, live and past (expired, revoked), newest first.
/// Reviewers and admins only; a scoped token sees its agents' rules.
#[utoipa::path(get, path = "/allow-rules", tag = "reviewers", params(AllowRuleQuery),
    responses((status = 200, body = AllowRuleList), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn list_allow_rules(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<AllowRuleQuery>,
) -> ApiResult<Json<AllowRuleList>> {
    caller.require_reviewer()?;
    let limit = q.limit.unwrap_or(500);
    if !(1..=5000).contains(&limit) {
        return Err(ApiError::invalid_field("limit", format!("must be from 1 to 5000, got {limit}")));
    }
    let filter = AllowRuleFilter {
        agent: q.agent.filter(|a| !a.trim().is_empty()),
        status: parse_status(q.status.as_deref())?,
        limit: Some(limit),
    };
    let scope = caller.scope;
    // A scoped token sees its own agents' rules only: the engine's rule.
    let rules = state.engine(move |e| e.allow_rules_visible(&scope, &filter)).await?;
    Ok(Json(AllowRuleList { rules }))
}

/// Makes an allow-rule directly: from now on (for `for_secs`, or until
/// revoked) approval gates of `agent`'s `action`, opened by that agent,
/// whose arguments match `args` pass at once. Reviewers and admins only
/// (a scoped token only for an agent its scope names); the author
/// recorded is the token's identity.
#[utoipa::path(post, path = "/allow-rules", tag = "reviewers", request_body = NewAllowRule,
    responses((status = 201, body = AllowRule), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn create_allow_rule(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(new): ApiJson<NewAllowRule>,
) -> ApiResult<(StatusCode, Json<AllowRule>)> {
    caller.require_reviewer()?;
    if !caller.may_rule_for(&new.agent) {
        return Err(ApiError::forbidden(format!(
            "agent: `{}` has a scoped token, which may make allow-rules only for the agents its scope names, not \
             for `{}`",
            caller.name, new.agent
        )));
    }
    let author = caller.name.clone();
    let rule = state.engine(move |e| e.create_allow_rule(new, &author)).await?;
    Ok((StatusCode::CREATED, Json(rule)))
}

/// Revokes an allow-rule at once: it passes no gate from now on. Revoking
/// a rule already revoked changes nothing and returns it as it is (who
/// revoked it first, and when). Reviewers and admins only; to a scoped
/// token, another agent's rule is as missing (404).
#[utoipa::path(delete, path = "/allow-rules/{rule_id}", tag = "reviewers",
    params(("rule_id" = String, Path, description = "The rule")),
    responses((status = 200, body = AllowRule), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn revoke_allow_rule(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(rule_id): ApiPath<String>,
) -> ApiResult<Json<AllowRule>> {
    caller.require_reviewer()?;
    let id = AllowRuleId::from_string(rule_id);
    let rule = state
        .engine_checked(move |e| {
            if !caller.may_rule_for(&e.allow_rule(&id)?.agent) {
                return Err(missing("allow-rule", id.as_str()));
            }
            Ok(e.revoke_allow_rule(&id, &caller.name)?)
        })
        .await?;
    Ok(Json(rule))
}
