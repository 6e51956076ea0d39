//! MCP at `/mcp`: the Gatehouse MCP tools over streamable HTTP, behind the
//! same bearer tokens as the API. Each tool call acts as its request's
//! token (the decider and the run's owner are never a name in the body),
//! and calls the engine and the gate waiters in-process, so a decision
//! wakes a waiting tool as it wakes a long poll. A session's calls share
//! one run, ended with the session (completed if it finished its work, else
//! cancelled: "MCP session closed") as the token that started it; a
//! sessionless client (protocol 2026-07-28) keeps one live run per token
//! and client name.
//!
//! Its door answers as MCP clients expect: a refused token is still 401
//! (with `WWW-Authenticate: Bearer`) but its body is a JSON-RPC error the
//! SDKs show, and a session's `DELETE` is 200 (404 for an unknown session),
//! where rmcp answers 202, which the SDKs log as a failed termination.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::{EngineError, Gate, GateId, NewGate, NewRun, RunId, RunStatus, TokenRole};
use gatehouse_mcp::{
    finished_its_work, Backend, BackendError, Failure, GatehouseMcp, McpOptions, PlanSnapshot, SessionRun,
    SESSION_CLOSED,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::RoleServer;

use crate::auth::{self, Caller};
use crate::error::{ApiError, ApiErrorCode};
use crate::routes::gates::{open_gate_for, wait_for_gate};
use crate::state::AppState;

/// How long an MCP session may go without a message before it is dropped.
pub const SESSION_IDLE_LIMIT: Duration = Duration::from_secs(24 * 60 * 60);

/// The JSON-RPC error code of a request refused for its token (missing,
/// unknown or revoked): in the range JSON-RPC leaves to servers.
pub const UNAUTHORIZED: i64 = -32001;

/// JSON-RPC's code for an error inside the server.
const INTERNAL_ERROR: i64 = -32603;

/// The largest body read to find a refused request's id; beyond it the id is `null`.
const MAX_ID_SCAN: usize = 64 * 1024;

/// `/mcp` (POST, GET and DELETE on one path): the MCP service behind its door.
pub fn router(state: &AppState) -> Router<AppState> {
    let sessions = Arc::new(sessions());
    let door = Door { state: state.clone(), sessions: Arc::clone(&sessions) };
    Router::new()
        .route_service("/mcp", service(state, sessions))
        .layer(axum::middleware::from_fn_with_state(door, guard))
}

/// What `/mcp`'s door needs: the tokens, and the sessions a `DELETE` may end.
#[derive(Clone)]
struct Door {
    state: AppState,
    sessions: Arc<LocalSessionManager>,
}

/// The door of `/mcp`: the token guard, answering a refusal as a JSON-RPC
/// error, and a session's end as the MCP SDKs expect it.
async fn guard(State(door): State<Door>, mut req: Request, next: Next) -> Response {
    let caller = match auth::presented_secret(&door.state, &req) {
        Ok(secret) => auth::caller_for(&door.state, &secret).await,
        Err(refusal) => Err(refusal),
    };
    match caller {
        Ok(caller) => req.extensions_mut().insert(caller),
        Err(refusal) => return refused_at_the_door(refusal, req).await,
    };
    if req.method() != Method::DELETE {
        return next.run(req).await;
    }
    // rmcp answers any `DELETE` naming a session with 202, ended or unknown.
    let named = req.headers().get(rmcp::transport::common::http_header::HEADER_SESSION_ID);
    if let Some(id) = named.and_then(|v| v.to_str().ok()) {
        if !door.sessions.has_session(&Arc::from(id)).await.unwrap_or(true) {
            let message = format!("there is no MCP session `{id}`: it has ended or never began");
            return ApiError::new(StatusCode::NOT_FOUND, ApiErrorCode::NotFound, message).into_response();
        }
    }
    let mut response = next.run(req).await;
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// A request refused before MCP saw it, as a JSON-RPC error answering its
/// id (`null` if it has none or cannot be read) with the HTTP status kept:
/// MCP clients show a JSON-RPC error's message, not an API error body.
async fn refused_at_the_door(refusal: ApiError, req: Request) -> Response {
    let status = refusal.status();
    let body = axum::body::to_bytes(req.into_body(), MAX_ID_SCAN).await.unwrap_or_default();
    let id = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|message| message.get("id").cloned())
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(serde_json::Value::Null);
    let code = if status == StatusCode::UNAUTHORIZED { UNAUTHORIZED } else { INTERNAL_ERROR };
    let error = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": refusal.message()}});
    let mut response = (status, axum::Json(error)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The sessions of `/mcp`, each dropped after [`SESSION_IDLE_LIMIT`] idle.
/// A call waiting for a reviewer is silent unless its client asked for
/// progress, and reviewers take their time: rmcp's five minutes would drop
/// the session under a waiting call.
fn sessions() -> LocalSessionManager {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE_LIMIT);
    sessions
}

/// The MCP service mounted at `/mcp`: one [`GatehouseMcp`] per MCP session.
fn service(
    state: &AppState,
    sessions: Arc<LocalSessionManager>,
) -> StreamableHttpService<GatehouseMcp<InProcess>, LocalSessionManager> {
    let backend = Arc::new(InProcess { state: state.clone(), sessionless_runs: Mutex::default() });
    // `Host` and `Origin` are checked by the server's own guard, for every path alike.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(state.config.body_limit);
    StreamableHttpService::new(
        move || Ok(GatehouseMcp::new(Arc::clone(&backend), McpOptions::default())),
        sessions,
        config,
    )
}

/// The tools' backend inside the server: the engine and the waiters.
pub struct InProcess {
    state: AppState,
    /// The run of each sessionless client, by token name and client name.
    sessionless_runs: Mutex<HashMap<(String, String), RunId>>,
}

fn refused(e: ApiError) -> BackendError {
    BackendError::new(Failure::from_status(e.status().as_u16()), e.message())
}

impl Backend for InProcess {
    type Caller = Caller;

    /// The caller the token guard recorded on the HTTP request.
    fn caller(&self, request: &RequestContext<RoleServer>) -> Result<Caller, BackendError> {
        request
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>().cloned())
            .ok_or_else(|| BackendError::new(Failure::Unauthorized, "a bearer token is required"))
    }

    async fn start_run(&self, caller: &Caller, run: SessionRun) -> Result<RunId, BackendError> {
        let key = (caller.name.clone(), run.agent.clone());
        let known = self.sessionless_runs.lock().ok().and_then(|book| book.get(&key).cloned());
        if let (true, Some(id)) = (run.sessionless, known) {
            let probe = id.clone();
            let live = self.state.engine(move |e| Ok(!e.run(&probe)?.status.is_terminal())).await.unwrap_or(false);
            if live {
                return Ok(id);
            }
        }
        // An agent token's runs are its own; other tokens name the run after the client.
        let agent = if caller.role == TokenRole::Agent { caller.name.clone() } else { run.agent };
        let mut new = NewRun { title: run.title, agent, input: run.input, ..NewRun::default() };
        if let Some(floor) = caller.floor(&self.state.config.oversight) {
            floor.apply_to_run(&mut new, false).map_err(|w| refused(EngineError::from(w).into()))?;
        }
        let who = caller.clone();
        let started = self
            .state
            .engine_checked(move |e| {
                who.may_start(e, &new)?;
                Ok(e.create_run(new, &who.name)?)
            })
            .await
            .map_err(refused)?;
        if run.sessionless {
            if let Ok(mut book) = self.sessionless_runs.lock() {
                book.insert(key, started.id.clone());
            }
        }
        Ok(started.id)
    }

    async fn open_gate(&self, caller: &Caller, run: &RunId, gate: NewGate) -> Result<Gate, BackendError> {
        open_gate_for(&self.state, caller, run.clone(), gate).await.map_err(refused)
    }

    async fn wait_gate(&self, caller: &Caller, gate: &GateId, within: Duration) -> Result<Gate, BackendError> {
        let (id, who) = (gate.clone(), caller.clone());
        let now = self.state.engine_checked(move |e| Ok(who.gate(e, &id)?.0)).await.map_err(refused)?;
        if now.status.is_terminal() || within.is_zero() {
            return Ok(now);
        }
        let deadline = tokio::time::Instant::now() + within.min(Duration::from_secs(60));
        wait_for_gate(&self.state, gate, deadline).await.map_err(refused)
    }

    async fn read_plan(&self, caller: &Caller, run: &RunId) -> Result<PlanSnapshot, BackendError> {
        caller
            .on_run(&self.state, run.to_string(), |e, id, _| {
                Ok(PlanSnapshot { plan: e.plan(id)?, progress: e.progress(id)? })
            })
            .await
            .map_err(refused)
    }

    async fn change_plan(&self, caller: &Caller, run: &RunId, op: PlanOperation) -> Result<PlanRevision, BackendError> {
        caller.change_plan(&self.state, run.to_string(), op).await.map_err(refused)
    }

    /// In one trip to the engine, as the token that started the run (it
    /// must still reach the run): completed or cancelled.
    async fn end_run(&self, caller: &Caller, run: &RunId) -> Result<RunStatus, BackendError> {
        let (who, id) = (caller.clone(), run.clone());
        self.state
            .engine_checked(move |e| {
                let run = who.run(e, &id)?;
                if run.status.is_terminal() {
                    return Ok(run.status);
                }
                let now = e.run_status(&run.id)?;
                let ended = if finished_its_work(now.run.status, now.pending.len(), &now.progress) {
                    e.complete_run(&run.id, &who.name, None)?
                } else {
                    e.cancel_run(&run.id, &who.name, Some(SESSION_CLOSED))?
                };
                Ok(ended.status)
            })
            .await
            .map_err(refused)
    }
}
