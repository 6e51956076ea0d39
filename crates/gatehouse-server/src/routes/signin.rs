//! One-time sign-in links: `gatehouse serve` prints
//! `ORIGIN/#signin=CODE` (and an admin asks a running server for another
//! with `POST /api/hitl/signin-links`, as `gatehouse signin-link` does), the
//! reviewer UI posts the code to `POST /api/signin` (outside `/api/hitl`, so
//! no token is needed), and the code is exchanged, once, for a new reviewer
//! token recorded in the audit log. The long-lived token never appears in an address or a shell's
//! history; the code lives in this process's memory only, for ten minutes,
//! and is unguessable (two random UUIDs, 244 random bits).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Duration, Utc};
use gatehouse_engine::{Engine, TokenRole};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::state::AppState;

/// How long a printed link stays usable.
pub const CODE_LIFETIME: Duration = Duration::minutes(10);
/// The actor the audit log records for a token a link created.
pub const SIGNIN_ACTOR: &str = "sign-in link";

/// The exchange, merged beside the API (not behind its token guard).
pub fn router() -> Router<AppState> {
    Router::new().route("/api/signin", post(exchange))
}

/// Issuing links, under `/api/hitl` behind the token (admins).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_link))
}

/// `POST /signin-links`'s body.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NewSigninLink {
    /// The reviewer the link signs in as (default: the caller's name).
    #[serde(default)]
    pub name: Option<String>,
}

/// A one-time sign-in link.
#[derive(Debug, Serialize, ToSchema)]
pub struct SigninLinkAnswer {
    /// The address to open: `ORIGIN/#signin=CODE`; it works once.
    pub url: String,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
}

/// Issues a one-time sign-in link (admins): opened within ten minutes, it
/// signs the reviewer UI in once as a new reviewer token named `name`.
#[utoipa::path(post, path = "/signin-links", tag = "admin", request_body = NewSigninLink,
    responses((status = 201, body = SigninLinkAnswer), (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn create_link(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<NewSigninLink>,
) -> ApiResult<(StatusCode, Json<SigninLinkAnswer>)> {
    caller.require_admin()?;
    let name = body.name.map(|n| n.trim().to_owned()).unwrap_or_else(|| caller.name.clone());
    if name.is_empty() || name.len() > 128 {
        return Err(ApiError::invalid_field("name", "a reviewer's name is 1 to 128 characters"));
    }
    let link = issue_link(state.engine_handle(), &name);
    Ok((
        StatusCode::CREATED,
        Json(SigninLinkAnswer { url: link.url(&state.public_url()), expires_at: link.expires_at }),
    ))
}

/// A code waiting to be exchanged.
#[derive(Debug, Clone)]
struct Pending {
    /// The database it signs into (an engine's identity in this process).
    database: usize,
    /// The reviewer the token will name.
    name: String,
    expires_at: DateTime<Utc>,
}

/// Why a code was not exchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Never issued here, or already used.
    Unknown,
    /// Issued, but its ten minutes have passed.
    Expired,
}

/// The codes issued and not yet used, in memory.
#[derive(Debug, Default)]
pub struct Codes {
    pending: HashMap<String, Pending>,
}

impl Codes {
    /// Issues a code for `name` on `database`, usable until `now` plus
    /// [`CODE_LIFETIME`]; codes past their time are dropped.
    pub fn issue(&mut self, database: usize, name: &str, now: DateTime<Utc>) -> String {
        self.pending.retain(|_, p| p.expires_at > now);
        let code = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        self.pending.insert(code.clone(), Pending { database, name: name.to_owned(), expires_at: now + CODE_LIFETIME });
        code
    }

    /// Uses `code` up: the reviewer name it was issued for, or why not.
    /// A code issued for another database is left as it is.
    pub fn redeem(&mut self, database: usize, code: &str, now: DateTime<Utc>) -> Result<String, Refusal> {
        match self.pending.get(code) {
            Some(p) if p.database == database => {}
            _ => return Err(Refusal::Unknown),
        }
        let pending = self.pending.remove(code).ok_or(Refusal::Unknown)?;
        if pending.expires_at <= now {
            return Err(Refusal::Expired);
        }
        Ok(pending.name)
    }
}

static CODES: LazyLock<Mutex<Codes>> = LazyLock::new(|| Mutex::new(Codes::default()));

fn codes() -> std::sync::MutexGuard<'static, Codes> {
    // A panic elsewhere while holding the lock leaves the map itself intact.
    CODES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Which database an engine stands for, as codes are bound to it: servers
/// in one process over one engine share its codes, others do not.
fn database_of(engine: &Engine) -> usize {
    std::ptr::from_ref(engine.store()) as usize
}

/// A link just issued.
#[derive(Debug, Clone)]
pub struct SigninLink {
    /// The one-time code.
    pub code: String,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
}

impl SigninLink {
    /// The address to open: the code in the fragment, which browsers never
    /// send to the server (so no access log holds it).
    pub fn url(&self, origin: &str) -> String {
        format!("{}/#signin={}", origin.trim_end_matches('/'), self.code)
    }
}

/// Issues a one-time link that signs its opener in as reviewer `name` on
/// `engine`'s database, through any server of this process serving it.
pub fn issue_link(engine: &Engine, name: &str) -> SigninLink {
    let now = engine.now();
    let code = codes().issue(database_of(engine), name, now);
    SigninLink { code, expires_at: now + CODE_LIFETIME }
}

/// `POST /api/signin`'s body.
#[derive(Debug, Deserialize)]
pub struct SigninRequest {
    /// The code from the link's `#signin=` fragment.
    pub code: String,
}

/// `POST /api/signin`'s answer: a reviewer token for the UI to keep.
#[derive(Debug, Serialize)]
pub struct SigninAnswer {
    /// The new token's secret (shown only now).
    pub token: String,
    /// Who it decides as.
    pub name: String,
    /// Its role.
    pub role: TokenRole,
}

/// Exchanges a one-time code for a new reviewer token (recorded in the
/// audit log as created by [`SIGNIN_ACTOR`]). A code is good once, for ten
/// minutes; an unknown, used or expired one is 401 saying to ask for a new
/// link.
pub async fn exchange(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SigninRequest>,
) -> ApiResult<Json<SigninAnswer>> {
    let engine = state.engine_handle();
    let redeemed = codes().redeem(database_of(engine), body.code.trim(), engine.now());
    let name = redeemed.map_err(refused)?;
    let (token, secret) = state.engine(move |e| e.create_token(&name, TokenRole::Reviewer, SIGNIN_ACTOR)).await?;
    Ok(Json(SigninAnswer { token: secret, name: token.name, role: token.role }))
}

fn refused(why: Refusal) -> ApiError {
    let what = match why {
        Refusal::Unknown => "this sign-in link is unknown or was already used (each link works once)",
        Refusal::Expired => "this sign-in link has expired (links work for ten minutes)",
    };
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        ApiErrorCode::Unauthorized,
        format!("{what}; ask for a new one: `gatehouse signin-link` prints one (or restart `gatehouse serve`)"),
    )
    .with_field("code")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + Duration::minutes(minutes)
    }

    #[test]
    fn a_code_signs_in_once_only() {
        let mut codes = Codes::default();
        let code = codes.issue(1, "alice", at(0));
        assert_eq!(codes.redeem(1, &code, at(1)), Ok("alice".to_owned()));
        assert_eq!(codes.redeem(1, &code, at(1)), Err(Refusal::Unknown));
    }

    #[test]
    fn a_code_expires_after_ten_minutes() {
        let mut codes = Codes::default();
        let code = codes.issue(1, "alice", at(0));
        assert_eq!(codes.redeem(1, &code, at(10)), Err(Refusal::Expired));
        assert_eq!(codes.redeem(1, &code, at(10)), Err(Refusal::Unknown), "and is gone");
    }

    #[test]
    fn a_wrong_code_or_another_databases_code_is_refused_and_leaves_the_real_one_usable() {
        let mut codes = Codes::default();
        let code = codes.issue(1, "alice", at(0));
        assert_eq!(codes.redeem(1, "not-a-code", at(0)), Err(Refusal::Unknown));
        assert_eq!(codes.redeem(2, &code, at(0)), Err(Refusal::Unknown));
        assert_eq!(codes.redeem(1, &code, at(0)), Ok("alice".to_owned()));
    }

    #[test]
    fn codes_are_long_and_different() {
        let mut codes = Codes::default();
        let (a, b) = (codes.issue(1, "a", at(0)), codes.issue(1, "a", at(0)));
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
    }
}
