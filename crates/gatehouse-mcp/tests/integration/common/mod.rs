//! A backend straight over an engine (no server, no tokens), and an MCP
//! client connected to a [`GatehouseMcp`] over an in-memory pipe: the tool
//! layer exercised through the real protocol.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::{Engine, EngineConfig, Gate, GateId, NewGate, NewRun, RunId, RunStatus};
use gatehouse_mcp::{
    finished_its_work, Backend, BackendError, Failure, GatehouseMcp, McpOptions, PlanSnapshot, SessionRun,
    SESSION_CLOSED,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{RoleClient, RoleServer, ServiceExt};

/// The engine, called directly; waits poll it.
#[derive(Clone)]
pub struct EngineBackend {
    pub engine: Engine,
    /// How many of the next waits fail as if Gatehouse could not be reached.
    pub outage: Arc<AtomicU32>,
}

impl EngineBackend {
    pub fn new(engine: Engine) -> Self {
        Self { engine, outage: Arc::default() }
    }
}

fn refused(e: gatehouse_engine::EngineError) -> BackendError {
    let failure = match e.code() {
        gatehouse_engine::ErrorCode::NotFound => Failure::NotFound,
        gatehouse_engine::ErrorCode::Conflict => Failure::Conflict,
        gatehouse_engine::ErrorCode::Invalid => Failure::Invalid,
        gatehouse_engine::ErrorCode::Forbidden => Failure::Forbidden,
        gatehouse_engine::ErrorCode::Storage => Failure::Internal,
        gatehouse_engine::ErrorCode::Unavailable => Failure::Unreachable,
    };
    BackendError::new(failure, e.to_string())
}

impl Backend for EngineBackend {
    type Caller = ();

    fn caller(&self, _: &RequestContext<RoleServer>) -> Result<(), BackendError> {
        Ok(())
    }

    async fn start_run(&self, _: &(), run: SessionRun) -> Result<RunId, BackendError> {
        let new = NewRun { title: run.title, agent: run.agent.clone(), input: run.input, ..NewRun::default() };
        self.engine.create_run(new, &run.agent).map(|r| r.id).map_err(refused)
    }

    async fn open_gate(&self, _: &(), run: &RunId, gate: NewGate) -> Result<Gate, BackendError> {
        self.engine.open_gate(run, gate, "agent").map_err(refused)
    }

    async fn wait_gate(&self, _: &(), gate: &GateId, within: Duration) -> Result<Gate, BackendError> {
        if self.outage.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(BackendError::new(Failure::Unreachable, "cannot reach the Gatehouse server"));
        }
        let deadline = Instant::now() + within;
        loop {
            let now = self.engine.gate(gate).map_err(refused)?;
            if now.status.is_terminal() || Instant::now() >= deadline {
                return Ok(now);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn read_plan(&self, _: &(), run: &RunId) -> Result<PlanSnapshot, BackendError> {
        let plan = self.engine.plan(run).map_err(refused)?;
        Ok(PlanSnapshot { plan, progress: self.engine.progress(run).map_err(refused)? })
    }

    async fn change_plan(&self, _: &(), run: &RunId, op: PlanOperation) -> Result<PlanRevision, BackendError> {
        self.engine.plan_apply(run, op, "agent").map_err(refused)
    }

    async fn end_run(&self, _: &(), run: &RunId) -> Result<RunStatus, BackendError> {
        let now = self.engine.run_status(run).map_err(refused)?;
        if now.run.status.is_terminal() {
            return Ok(now.run.status);
        }
        let ended = if finished_its_work(now.run.status, now.pending.len(), &now.progress) {
            self.engine.complete_run(run, "agent", None)
        } else {
            self.engine.cancel_run(run, "agent", Some(SESSION_CLOSED))
        };
        Ok(ended.map_err(refused)?.status)
    }
}

/// An engine on a fresh database in `dir`.
pub fn engine(dir: &tempfile::TempDir) -> Engine {
    Engine::open(dir.path().join("g.db"), EngineConfig::default()).expect("open the engine")
}

/// A client named `client_name` talking to a Gatehouse MCP server over `backend`.
pub async fn connect(
    backend: EngineBackend,
    options: McpOptions,
    client_name: &str,
) -> anyhow::Result<RunningService<RoleClient, Client>> {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let server = GatehouseMcp::new(Arc::new(backend), options);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    Ok(Client::named(client_name).serve(client_end).await?)
}

/// A client that counts the progress notifications it receives.
#[derive(Clone, Default)]
pub struct Client {
    pub name: String,
    pub progress: Arc<std::sync::Mutex<Vec<rmcp::model::ProgressNotificationParam>>>,
}

impl Client {
    pub fn named(name: &str) -> Self {
        Self { name: name.to_owned(), ..Self::default() }
    }
}

impl rmcp::ClientHandler for Client {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new(self.name.clone(), "1.0.0"),
        )
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if let Ok(mut seen) = self.progress.lock() {
            seen.push(params);
        }
    }
}
