//! Who may call, from where. Requests must name a loopback, configured or
//! public `Host` (against DNS rebinding), browsers may only call from the
//! server's own origin, its public URL's or one configured (no permissive
//! CORS), and every API call carries a bearer token whose identity, never
//! a name in the body, is recorded as the actor. A token's scope is
//! enforced here too: [`Caller::run`] and [`Caller::gate`] answer a run or
//! gate outside it exactly as a missing one.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::token::TokenScope;
use gatehouse_engine::{
    Decider, Engine, EngineError, Gate, GateId, NewRun, Oversight, ReviewFloor, Run, RunAccess, RunId, TokenRole,
};

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token's id (its revocation ends the caller's event streams).
    pub token_id: String,
    /// The token's identity.
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// Its teams (roles a gate's deciders may name).
    pub teams: Vec<String>,
    /// The runs and agents its token is limited to; empty for everything.
    pub scope: TokenScope,
    /// Whether this server lets a token decide the gates it opened.
    pub self_review: bool,
}

impl Caller {
    /// Who this caller decides as: name, role, teams and token.
    pub fn decider(&self) -> Decider {
        let who = gatehouse_engine::token::decider_of(&self.name, self.role, &self.teams).with_token(&self.token_id);
        Decider { self_review: self.self_review, ..who }
    }

    /// The review people set for this caller, if it is an agent: the least
    /// its runs and gates get. People (reviewers, admins) set their own.
    pub fn floor<'a>(&self, oversight: &'a Oversight) -> Option<&'a ReviewFloor> {
        (self.role == TokenRole::Agent).then(|| oversight.floor(&self.name, &self.teams))
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

    /// Whether the token is limited to some runs and agents.
    pub fn is_scoped(&self) -> bool {
        !self.scope.is_empty()
    }

    /// Work over the whole database (`what`: tokens, retention, imports,
    /// metrics) needs a token without a scope.
    pub fn require_unscoped(&self, what: &str) -> Result<(), ApiError> {
        if self.is_scoped() {
            return Err(ApiError::forbidden(format!(
                "`{}` has a token scoped to some runs and agents; {what} covers every run and needs an unscoped token",
                self.name
            )));
        }
        Ok(())
    }

    /// Whether [`Caller::reaches`] and [`Caller::may_use_run`] pass for
    /// every run: a token without a scope that is not an agent's.
    fn uses_every_run(&self) -> bool {
        self.scope.is_empty() && self.role != TokenRole::Agent
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

    /// Whether `run` lies within the token's scope: it, or a run above it,
    /// is named (always, without a scope).
    pub fn reaches(&self, e: &Engine, run: &Run) -> Result<bool, EngineError> {
        self.reaches_through(run, || e.run_chain(&run.id))
    }

    /// [`Caller::reaches`], with the run's chain (it and the runs above it) read by `chain`, if needed.
    fn reaches_through(
        &self,
        run: &Run,
        chain: impl FnOnce() -> Result<Vec<Run>, EngineError>,
    ) -> Result<bool, EngineError> {
        if self.scope.is_empty() || self.scope.names(run) {
            return Ok(true);
        }
        if run.parent_run_id.is_none() {
            return Ok(false);
        }
        Ok(self.scope.covers(&chain()?))
    }

    /// The run, if this caller may use it. A run outside the token's scope
    /// is answered exactly as a missing one (404), so a scoped token cannot
    /// probe for other runs; an agent's foreign run is 403.
    pub fn run(&self, e: &Engine, id: &RunId) -> ApiResult<Run> {
        let run = e.run(id)?;
        if !self.reaches(e, &run)? {
            return Err(missing("run", id.as_str()));
        }
        self.may_use_run(&run)?;
        Ok(run)
    }

    /// [`Caller::run`]'s check, on the run a gate is opening on, read in
    /// the gate's own transaction: outside the token's scope 404, an
    /// agent's foreign run 403.
    pub fn may_open_on(&self, access: &RunAccess<'_>) -> ApiResult<()> {
        let run = access.run()?;
        if !self.reaches_through(run, || access.chain())? {
            return Err(missing("run", run.id.as_str()));
        }
        self.may_use_run(run)
    }

    /// [`Caller::gate`]'s check, on a gate about to be decided and its run,
    /// read in the decision's own transaction: outside the token's scope
    /// 404 (as a missing gate), an agent's foreign run 403.
    pub fn may_decide_on(&self, gate: &Gate, access: &RunAccess<'_>) -> ApiResult<()> {
        if self.uses_every_run() {
            // Nothing to check, so the run is not read.
            return Ok(());
        }
        let run = access.run()?;
        if !self.reaches_through(run, || access.chain())? {
            return Err(missing("gate", gate.id.as_str()));
        }
        self.may_use_run(run)
    }

    /// Runs `f` on the engine (with the run's id and this caller's name) if
    /// this caller may use `run_id` (a run outside a scoped token's scope is
    /// 404), in one trip.
    pub async fn on_run<T, F>(&self, state: &AppState, run_id: String, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine, &RunId, &str) -> Result<T, EngineError> + Send + 'static,
    {
        let caller = self.clone();
        let id = RunId::from_string(run_id);
        state
            .engine_checked(move |e| {
                let run = caller.run(e, &id)?;
                Ok(f(e, &run.id, &caller.name)?)
            })
            .await
    }

    /// Applies a plan operation to the run as this caller. Once the run has
    /// a plan, an agent may not change how people review it (403 naming
    /// the field); reviewers may. On a team run a task is assigned to a
    /// member of the team only (422 naming the field).
    pub async fn change_plan(&self, state: &AppState, run_id: String, op: PlanOperation) -> ApiResult<PlanRevision> {
        let by_agent = self.role == TokenRole::Agent;
        self.on_run(state, run_id, move |e, id, actor| {
            // A team run's tasks go to its members only (422 naming the field).
            gatehouse_orchestrator::team::plan_tools::check_on_run(e, id, &op)?;
            match by_agent {
                true => e.plan_apply_by_agent(id, op, actor),
                false => e.plan_apply(id, op, actor),
            }
        })
        .await
    }

    /// The gate and its run, if this caller may use the run; a gate outside
    /// the token's scope is answered exactly as a missing gate (404).
    pub fn gate(&self, e: &Engine, id: &GateId) -> ApiResult<(Gate, Run)> {
        let (gate, run) = e.gate_and_run(id)?;
        if !self.reaches(e, &run)? {
            return Err(missing("gate", id.as_str()));
        }
        self.may_use_run(&run)?;
        Ok((gate, run))
    }

    /// Whether the token may start `new` (403 otherwise): a scoped token
    /// only a run that falls within its scope, a sub-run of a run in it or
    /// a run one of its agents drives or takes part in.
    pub fn may_start(&self, e: &Engine, new: &NewRun) -> ApiResult<()> {
        if self.scope.is_empty() {
            return Ok(());
        }
        let named = self.scope.agents.iter().any(|a| new.agent == *a || new.participants.iter().any(|p| p.name == *a));
        let under = match &new.parent_run_id {
            Some(parent) => self.reaches(e, &e.run(parent)?)?,
            None => false,
        };
        if named || under {
            return Ok(());
        }
        Err(ApiError::forbidden(format!(
            "`{}` has a token scoped to {}; it may start only sub-runs of its runs (parent_run_id) or runs its agents \
             drive or take part in (agent), not a run for `{}`",
            self.name,
            describe(&self.scope),
            new.agent
        )))
    }

    /// Whether this caller may make or revoke allow-rules for `agent`: an
    /// allow-rule passes that agent's gates in every run, so a scoped token
    /// only for the agents its scope names.
    pub fn may_rule_for(&self, agent: &str) -> bool {
        self.scope.is_empty() || self.scope.agents.iter().any(|a| a == agent)
    }
}

/// The 404 a missing thing gets, for a thing outside the caller's scope.
pub fn missing(what: &'static str, id: &str) -> ApiError {
    ApiError::from(EngineError::NotFound { what, id: id.to_owned() })
}

/// A scope in words, for messages.
fn describe(scope: &TokenScope) -> String {
    let mut parts = Vec::new();
    if !scope.runs.is_empty() {
        parts.push(format!("runs {}", scope.runs.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")));
    }
    if !scope.agents.is_empty() {
        parts.push(format!("agents {}", scope.agents.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")));
    }
    parts.join(" and ")
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| ApiError::unauthorized("a bearer token is required"))
    }
}

/// Host and origin checks for every request.
pub async fn same_origin_only(State(state): State<AppState>, req: Request, next: Next) -> Result<Response, ApiError> {
    // HTTP/2 names the host in `:authority` (the URI) and need not send `Host`; when both come, both must pass.
    let header = req.headers().get(header::HOST).map(|h| h.to_str().unwrap_or(""));
    let authority = req.uri().authority().map(|a| a.as_str());
    let host = header.or(authority).unwrap_or("");
    if let Some(refused) = [Some(host), authority].into_iter().flatten().find(|h| !state.admission.host_allowed(h)) {
        return Err(ApiError::forbidden(format!(
            "requests for host `{refused}` are refused; use localhost, the public URL's host or one allowed with \
             --allowed-host"
        )));
    }
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        let own = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|h| h.eq_ignore_ascii_case(host));
        if !own && !state.admission.origin_allowed(origin) {
            return Err(ApiError::forbidden(format!(
                "cross-origin requests from `{origin}` are refused; browsers may call only from this server's own \
                 origin, its public URL's (--public-url) or one allowed with --allowed-origin"
            )));
        }
    }
    Ok(next.run(req).await)
}

/// Authenticates the bearer token and records the caller. The token
/// travels only in the `Authorization` header: a URL ends up in proxy and
/// access logs and in browser history. A server started with
/// `allow_query_token` also takes `?access_token=` on `GET /events`, for
/// plain `EventSource` clients, and nowhere else.
pub async fn require_token(State(state): State<AppState>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let secret = presented_secret(&state, &req)?;
    let caller = caller_for(&state, &secret).await?;
    req.extensions_mut().insert(caller);
    Ok(next.run(req).await)
}

/// The token `req` presents, or why it is refused (401): none, or one in
/// the URL where the server does not take it. [`require_token`] answers a
/// refusal as the API's JSON error body; `/mcp` answers it as a JSON-RPC
/// error ([`crate::mcp`]).
pub fn presented_secret(state: &AppState, req: &Request) -> Result<String, ApiError> {
    match bearer(req.headers()) {
        Some(secret) => Ok(secret),
        None => query_secret(state, req),
    }
}

/// The caller a token's secret stands for; 401 if it is unknown or revoked.
pub async fn caller_for(state: &AppState, secret: &str) -> Result<Caller, ApiError> {
    let token =
        state.authenticate(secret).await?.ok_or_else(|| ApiError::unauthorized("this token is unknown or revoked"))?;
    Ok(Caller {
        token_id: token.id,
        name: token.name,
        role: token.role,
        teams: token.teams,
        scope: token.scope,
        self_review: state.config.allow_self_review,
    })
}

/// The path of the one route that may take the token in its query.
const EVENTS_PATH: &str = "/api/hitl/events";

/// The token in the query of a request without the header, where the
/// server allows it; otherwise why the request is refused.
fn query_secret(state: &AppState, req: &Request) -> Result<String, ApiError> {
    let Some(secret) = query_token(req.uri().query()) else {
        return Err(ApiError::unauthorized("a bearer token is required: send `Authorization: Bearer <token>`"));
    };
    let events = req.method() == axum::http::Method::GET && req.uri().path() == EVENTS_PATH;
    if events && state.config.allow_query_token {
        return Ok(secret);
    }
    let rule = if events {
        "this server takes `?access_token=` on GET /events only when started with --allow-query-token"
    } else {
        "only GET /events may take one, on a server started with --allow-query-token"
    };
    Err(ApiError::unauthorized(format!(
        "a token in the URL is refused (URLs are kept in logs and history): send `Authorization: Bearer <token>`; \
         {rule}"
    )))
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer "))?;
    Some(token.trim().to_owned()).filter(|t| !t.is_empty())
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| pair.strip_prefix("access_token=")).map(str::to_owned).filter(|t| !t.is_empty())
}
