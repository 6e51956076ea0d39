//! Who may call, from where. Requests must name a loopback or configured
//! `Host` (against DNS rebinding), browsers may only call from the server's
//! own origin (no permissive CORS), and every API call carries a bearer
//! token whose identity, never a name in the body, is recorded as the actor.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use gatehouse_engine::{Decider, Run, TokenRole};

use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token's identity.
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// Its teams (roles a gate's deciders may name).
    pub teams: Vec<String>,
}

impl Caller {
    /// Who this caller decides as: name, role and teams.
    pub fn decider(&self) -> Decider {
        gatehouse_engine::token::decider_of(&self.name, self.role, &self.teams)
    }

    /// Reviewers and admins only: an agent must never decide a gate.
    pub fn require_reviewer(&self) -> Result<(), ApiError> {
        match self.role {
            TokenRole::Reviewer | TokenRole::Admin => Ok(()),
            TokenRole::Agent => Err(ApiError::forbidden(format!(
                "`{}` has an agent token; deciding gates and controlling runs needs a reviewer token (an agent must not approve itself)",
                self.name
            ))),
        }
    }

    /// Admins only.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        match self.role {
            TokenRole::Admin => Ok(()),
            _ => Err(ApiError::forbidden(format!("`{}` is not an admin; this needs an admin token", self.name))),
        }
    }

    /// Agents may act only on runs they drive or take part in.
    pub fn may_use_run(&self, run: &Run) -> Result<(), ApiError> {
        let own = run.agent == self.name || run.participants.iter().any(|p| p.name == self.name);
        if self.role != TokenRole::Agent || own {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("run {} belongs to `{}`, not to `{}`", run.id, run.agent, self.name)))
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| ApiError::unauthorized("a bearer token is required"))
    }
}

/// Host and origin checks for every request.
pub async fn same_origin_only(State(state): State<AppState>, req: Request, next: Next) -> Result<Response, ApiError> {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !host_allowed(&state, host) {
        return Err(ApiError::forbidden(format!(
            "requests for host `{host}` are refused; use localhost or a configured host"
        )));
    }
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        let same = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host);
        if !same {
            return Err(ApiError::forbidden(format!("cross-origin requests from `{origin}` are refused")));
        }
    }
    Ok(next.run(req).await)
}

fn host_allowed(state: &AppState, host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let bound = state.config.bind.ip().to_string();
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
        || name == bound
        || name.trim_start_matches('[').trim_end_matches(']') == bound
        || state.config.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// Authenticates the bearer token (or `access_token` query parameter, for
/// `EventSource`, which cannot set headers) and records the caller.
pub async fn require_token(State(state): State<AppState>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let secret = bearer(req.headers()).or_else(|| query_token(req.uri().query()));
    let Some(secret) = secret else {
        return Err(ApiError::unauthorized("a bearer token is required: send `Authorization: Bearer <token>`"));
    };
    let token =
        state.authenticate(&secret).await?.ok_or_else(|| ApiError::unauthorized("this token is unknown or revoked"))?;
    req.extensions_mut().insert(Caller { name: token.name, role: token.role, teams: token.teams });
    Ok(next.run(req).await)
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer "))?;
    Some(token.trim().to_owned()).filter(|t| !t.is_empty())
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| pair.strip_prefix("access_token=")).map(str::to_owned).filter(|t| !t.is_empty())
}
