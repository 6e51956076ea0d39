//! The MCP server: one [`GatehouseMcp`] per MCP session, generic over the
//! [`Backend`] that reaches Gatehouse. It owns what the tools share: the
//! session's run (started on the first call that needs one, its agent named
//! after the client, and ended with the session: see [`Session`]), waiting for a decision while sending progress
//! notifications, and reading arguments so a bad one is a tool result that
//! names the field.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_engine::{Gate, GateId, NewGate, RunId};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, Implementation, JsonObject, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool_handler, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::args::{GateOptions, RunArg};
use crate::backend::{Backend, BackendError, Failure, SessionRun};
use crate::outcome::{bad_arguments, failure};

/// How a Gatehouse MCP server behaves.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// How often a waiting call sends a progress notification (at most 60 s).
    pub progress_every: Duration,
    /// Work in this run instead of starting one per session (`gatehouse mcp --run`).
    pub run: Option<RunId>,
    /// How long a waiting call keeps trying while Gatehouse cannot be
    /// reached (the desktop app restarting, say) before it gives up.
    pub reconnect_for: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self { progress_every: Duration::from_secs(5), run: None, reconnect_for: Duration::from_secs(60) }
    }
}

/// What the server tells clients at `initialize`.
const INSTRUCTIONS: &str = "Gatehouse puts a human reviewer in the loop. Use request_approval before \
risky or irreversible actions, ask_human when you are blocked on a question only a person can answer, \
request_feedback for an opinion on a draft, request_review before delivering output, and the plan_* \
tools to share your plan (plan_propose asks the reviewer to approve it). Each call blocks until the \
reviewer decides (mode \"async\" returns a gate_id at once; check_gate fetches the decision later). \
Always follow the decision: a rejection means do not proceed; an edit means use the returned payload. \
request_permission is a permission-prompt tool for coding assistants.";

/// The Gatehouse MCP server for one session.
pub struct GatehouseMcp<B: Backend> {
    pub(crate) backend: Arc<B>,
    pub(crate) options: McpOptions,
    session: Arc<Session<B>>,
    plan_rounds: AtomicU32,
    tool_router: ToolRouter<Self>,
}

impl<B: Backend> GatehouseMcp<B> {
    /// A server for one session over `backend`.
    pub fn new(backend: Arc<B>, options: McpOptions) -> Self {
        let options = McpOptions { progress_every: options.progress_every.min(Duration::from_secs(60)), ..options };
        Self {
            session: Arc::new(Session::new(Arc::clone(&backend))),
            backend,
            options,
            plan_rounds: AtomicU32::new(0),
            tool_router: Self::gate_tools() + Self::plan_tools(),
        }
    }

    /// The session: its run, which [`Session::end`] ends (dropping the
    /// server ends it too, on the runtime it is dropped in).
    pub fn session(&self) -> Arc<Session<B>> {
        Arc::clone(&self.session)
    }

    /// Every tool this server offers.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    /// The run a call works in: the one it names, else `--run`, else this
    /// session's, started now if this is the session's first call.
    pub(crate) async fn run_for(
        &self,
        caller: &B::Caller,
        request: &RequestContext<RoleServer>,
        named: Option<&str>,
    ) -> Result<RunId, BackendError> {
        if let Some(id) = named.map(str::trim).filter(|id| !id.is_empty()) {
            return Ok(RunId::from_string(id.to_owned()));
        }
        if let Some(run) = &self.options.run {
            return Ok(run.clone());
        }
        // Held across the start, so two first calls at once share one run.
        let mut session_run = self.session.run.lock().await;
        if let Some(run) = session_run.as_ref() {
            return Ok(run.clone());
        }
        let client = request.client_info().unwrap_or_else(|| Implementation::new("mcp-client", "unknown"));
        // The 2026-07-28 envelope names its version on every request; no handshake, no session.
        let sessionless = request.meta.protocol_version().is_some() || request.peer.peer_info().is_none();
        let run = self
            .backend
            .start_run(
                caller,
                SessionRun {
                    agent: client.name.clone(),
                    title: format!("MCP session: {} {}", client.name, client.version),
                    input: serde_json::json!({ "mcp_client": { "name": client.name, "version": client.version } }),
                    sessionless,
                },
            )
            .await?;
        // A sessionless client's run outlives each request's server: only a session's run ends with it.
        if !sessionless {
            self.session.owned_by(caller);
        }
        *session_run = Some(run.clone());
        Ok(run)
    }

    /// Opens `gate` in the call's run and, unless `options.mode` is async,
    /// waits for the decision.
    pub(crate) async fn ask(
        &self,
        request: &RequestContext<RoleServer>,
        mut gate: NewGate,
        options: &GateOptions,
    ) -> Result<Gate, BackendError> {
        let caller = self.backend.caller(request)?;
        let run = self.run_for(&caller, request, options.run_id.as_deref()).await?;
        gate.mode = options.mode.into();
        gate.priority = options.urgency.into();
        gate.expires_in_secs = options.timeout_seconds.or(gate.expires_in_secs);
        gate.idempotency_key = options.idempotency_key.clone().or(gate.idempotency_key);
        let opened = self.backend.open_gate(&caller, &run, gate).await?;
        if options.mode == crate::args::WaitMode::Async {
            return Ok(opened);
        }
        self.await_decision(&caller, request, opened, None).await
    }

    /// Waits until `gate` is decided (or `limit` passes, or the client
    /// cancels the call), sending a progress notification when the call
    /// starts waiting and every `progress_every` after, if the client asked
    /// for progress. While Gatehouse cannot be reached it keeps trying for
    /// `reconnect_for`. A cancelled call leaves the gate pending.
    pub(crate) async fn await_decision(
        &self,
        caller: &B::Caller,
        request: &RequestContext<RoleServer>,
        mut gate: Gate,
        limit: Option<Duration>,
    ) -> Result<Gate, BackendError> {
        let token = request.meta.get_progress_token();
        let started = Instant::now();
        let deadline = limit.map(|l| started + l);
        let mut notified = 0u32;
        let mut unreachable_since: Option<Instant> = None;
        while !gate.status.is_terminal() {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                break;
            }
            if let Some(token) = &token {
                notified += 1;
                let waited = started.elapsed().as_secs();
                let message = match unreachable_since {
                    None => {
                        format!("Waiting for a reviewer to decide gate {} in Gatehouse ({waited} s so far)", gate.id)
                    }
                    Some(_) => {
                        format!("Gatehouse cannot be reached; still trying, gate {} ({waited} s so far)", gate.id)
                    }
                };
                let progress = ProgressNotificationParam::new(token.clone(), f64::from(notified)).with_message(message);
                if let Err(e) = request.peer.notify_progress(progress).await {
                    tracing::debug!(error = %e, "could not send a progress notification");
                }
            }
            let step = left.map_or(self.options.progress_every, |l| l.min(self.options.progress_every));
            let next = tokio::select! {
                next = self.backend.wait_gate(caller, &gate.id, step) => next,
                () = request.ct.cancelled() => {
                    tracing::info!(gate = %gate.id, "the client cancelled a call waiting for a reviewer; the gate stays pending");
                    break;
                }
            };
            match next {
                Ok(now) => (gate, unreachable_since) = (now, None),
                Err(e) if e.failure == Failure::Unreachable => {
                    if unreachable_since.is_none() {
                        tracing::warn!(gate = %gate.id, error = %e, "Gatehouse cannot be reached; trying again");
                    }
                    let since = *unreachable_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= self.options.reconnect_for {
                        return Err(e);
                    }
                    tokio::time::sleep(step.min(Duration::from_secs(1))).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(gate)
    }

    /// The review round of this session's next plan proposal, from 1.
    pub(crate) fn next_plan_round(&self) -> u32 {
        self.plan_rounds.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The gate `id` as it is now.
    pub(crate) async fn gate_now(&self, caller: &B::Caller, id: &GateId) -> Result<Gate, BackendError> {
        self.backend.wait_gate(caller, id, Duration::ZERO).await
    }
}

/// An MCP session's run and the token that started it. When the session
/// ends (the client's `DELETE /mcp`, the session dropped when idle, or the
/// stdio client gone), the run is ended once, as that token: completed if it
/// finished its work, else cancelled with the reason "MCP session closed"
/// ([`Backend::end_run`]). A run the calls named, `--run`'s, or a
/// sessionless client's is never ended here.
pub struct Session<B: Backend> {
    backend: Arc<B>,
    /// The run, once the session's first call started it.
    run: Mutex<Option<RunId>>,
    /// Who started it; none for a run this session must not end.
    owner: std::sync::Mutex<Option<B::Caller>>,
    ended: AtomicBool,
}

impl<B: Backend> Session<B> {
    fn new(backend: Arc<B>) -> Self {
        Self { backend, run: Mutex::new(None), owner: std::sync::Mutex::new(None), ended: AtomicBool::new(false) }
    }

    fn owned_by(&self, caller: &B::Caller) {
        if let Ok(mut owner) = self.owner.lock() {
            *owner = Some(caller.clone());
        }
    }

    /// Ends the session's run, once (later calls, and the drop, do nothing).
    pub async fn end(&self) {
        if self.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        let run = self.run.lock().await.clone();
        let owner = self.owner.lock().ok().and_then(|o| o.clone());
        if let (Some(run), Some(owner)) = (run, owner) {
            end_run(&*self.backend, &owner, &run).await;
        }
    }
}

impl<B: Backend> Drop for Session<B> {
    fn drop(&mut self) {
        if self.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        let run = self.run.get_mut().take();
        let owner = self.owner.get_mut().ok().and_then(Option::take);
        let (Some(run), Some(owner)) = (run, owner) else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let backend = Arc::clone(&self.backend);
                runtime.spawn(async move { end_run(&*backend, &owner, &run).await });
            }
            Err(_) => tracing::warn!(run = %run, "an MCP session ended outside a runtime; its run stays open"),
        }
    }
}

async fn end_run<B: Backend>(backend: &B, owner: &B::Caller, run: &RunId) {
    match backend.end_run(owner, run).await {
        Ok(status) => tracing::info!(run = %run, status = status.as_str(), "the MCP session closed; its run ended"),
        Err(e) => tracing::warn!(run = %run, error = %e, "the MCP session closed; could not end its run"),
    }
}

/// Reads a tool's arguments as `T`; a bad one is an error result naming its path.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, arguments: JsonObject) -> Result<T, Box<CallToolResult>> {
    fn named<U: DeserializeOwned>(value: &serde_json::Value) -> Option<String> {
        let e = serde_path_to_error::deserialize::<_, U>(value.clone()).err()?;
        let path = e.path().to_string();
        Some(format!("{path}: {}", e.into_inner())).filter(|_| path != ".")
    }
    let value = serde_json::Value::Object(arguments);
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        let message = if path == "." {
            // A flattened part's error loses its path: read the shared parts alone to name the field.
            named::<GateOptions>(&value)
                .or_else(|| named::<RunArg>(&value))
                .unwrap_or_else(|| e.into_inner().to_string())
        } else {
            format!("{path}: {}", e.into_inner())
        };
        Box::new(bad_arguments(tool, &message))
    })
}

/// A tool's answer: its result, or the failure as an error result.
pub(crate) fn settle(result: Result<CallToolResult, BackendError>) -> CallToolResult {
    result.unwrap_or_else(|e| failure(&e))
}

/// A tool's input schema, generated from its arguments' type.
pub(crate) fn input_schema<T: schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|e| panic!("the schema of {} is not an object: {e}", std::any::type_name::<T>()))
}

#[tool_handler(router = self.tool_router)]
impl<B: Backend> ServerHandler for GatehouseMcp<B> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gatehouse", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
