//! API tokens over HTTP: `GET /whoami` for any token, and `POST /tokens`,
//! `GET /tokens`, `DELETE /tokens/{id_or_name}` for admins with an unscoped
//! token only (tokens cover every run).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::token::{NewToken, TokenScope};
use gatehouse_engine::{Token, TokenRole};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_token, list_tokens))
        .routes(routes!(whoami))
        .routes(routes!(revoke_token))
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
