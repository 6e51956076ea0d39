//! The boundary between the MCP tools and Gatehouse: the handful of
//! operations the tools need (start a run, open a gate, wait for it, read
//! and change a plan, end a session's run). The server implements it over its engine in-process;
//! [`crate::HttpBackend`] implements it over a running server's API.

use std::future::Future;
use std::time::Duration;

use gatehouse_engine::plan::{PlanOperation, PlanRevision, ProgressState};
use gatehouse_engine::{Gate, GateId, NewGate, RunId, RunStatus};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::{Deserialize, Serialize};

/// What Gatehouse does for the MCP tools. Every call carries the caller the
/// backend found in the MCP request ([`Backend::caller`]), so each call acts
/// with the identity of the request that made it.
pub trait Backend: Send + Sync + 'static {
    /// Who is calling, as this backend knows it (the in-process backend: the
    /// bearer token's caller; over HTTP: nobody, the client holds the token).
    type Caller: Clone + Send + Sync + 'static;

    /// The caller of one MCP request, or why there is none.
    fn caller(&self, request: &RequestContext<RoleServer>) -> Result<Self::Caller, BackendError>;

    /// Starts a run for an MCP session and returns its id.
    fn start_run(
        &self,
        caller: &Self::Caller,
        run: SessionRun,
    ) -> impl Future<Output = Result<RunId, BackendError>> + Send;

    /// Opens `gate` on `run` (a retry with the same idempotency key returns the first gate).
    fn open_gate(
        &self,
        caller: &Self::Caller,
        run: &RunId,
        gate: NewGate,
    ) -> impl Future<Output = Result<Gate, BackendError>> + Send;

    /// The gate as soon as it leaves `pending`, or as it is once `within` has
    /// passed (at most 60 s); `Duration::ZERO` answers at once.
    fn wait_gate(
        &self,
        caller: &Self::Caller,
        gate: &GateId,
        within: Duration,
    ) -> impl Future<Output = Result<Gate, BackendError>> + Send;

    /// The run's plan (newest revision) and its progress.
    fn read_plan(
        &self,
        caller: &Self::Caller,
        run: &RunId,
    ) -> impl Future<Output = Result<PlanSnapshot, BackendError>> + Send;

    /// Applies one plan operation and returns the revision it produced.
    fn change_plan(
        &self,
        caller: &Self::Caller,
        run: &RunId,
        op: PlanOperation,
    ) -> impl Future<Output = Result<PlanRevision, BackendError>> + Send;

    /// Ends the run an MCP session started, as `caller` (the token that
    /// started it): completed when [`finished_its_work`], else cancelled
    /// with the reason [`SESSION_CLOSED`]. A run that has ended already is
    /// left as it is. Answers the status the run ended in (or had).
    fn end_run(
        &self,
        caller: &Self::Caller,
        run: &RunId,
    ) -> impl Future<Output = Result<RunStatus, BackendError>> + Send;
}

/// The reason a session's unfinished run is cancelled with.
pub const SESSION_CLOSED: &str = "MCP session closed";

/// Whether a session's run finished its work: it is at work (not waiting
/// for a reviewer, not paused), no gate of it is pending and, if it has a
/// plan, every task is done.
pub fn finished_its_work(status: RunStatus, pending_gates: usize, progress: &ProgressState) -> bool {
    status == RunStatus::Active && pending_gates == 0 && progress.completed == progress.total
}

/// The run an MCP session works in.
#[derive(Debug, Clone)]
pub struct SessionRun {
    /// The MCP client's name (`clientInfo.name`): the run's agent when the
    /// token may name one (an agent token's runs are always its own).
    pub agent: String,
    /// The run's title, naming the client.
    pub title: String,
    /// The run's input: the client's name and version.
    pub input: serde_json::Value,
    /// The client speaks the sessionless protocol (2026-07-28, no `initialize`): over HTTP each of
    /// its requests may reach a new server instance, so a backend may hand back the live run it
    /// started for the same caller and client instead of starting one per request.
    pub sessionless: bool,
}

/// A run's plan as the plan tools show it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanSnapshot {
    /// The newest revision, if the run has a plan yet.
    pub plan: Option<PlanRevision>,
    /// Tasks done of all.
    pub progress: ProgressState,
}

/// Why a backend call failed, in the API's own categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// No token, or an unknown or revoked one.
    Unauthorized,
    /// The token may not do this (another agent's run, say).
    Forbidden,
    /// No such run or gate.
    NotFound,
    /// The state forbids it (a finished run takes no gates).
    Conflict,
    /// An argument breaks a rule.
    Invalid,
    /// The Gatehouse server cannot be reached.
    Unreachable,
    /// Gatehouse itself failed.
    Internal,
}

impl Failure {
    /// The failure an HTTP status stands for.
    pub fn from_status(status: u16) -> Self {
        match status {
            401 => Self::Unauthorized,
            403 => Self::Forbidden,
            404 => Self::NotFound,
            409 => Self::Conflict,
            400 | 413 | 415 | 422 => Self::Invalid,
            _ => Self::Internal,
        }
    }
}

/// A failed backend call: what kind, and the server's explanation.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct BackendError {
    /// The kind of failure.
    pub failure: Failure,
    /// What went wrong and what to do.
    pub message: String,
}

impl BackendError {
    /// A failure with its explanation.
    pub fn new(failure: Failure, message: impl Into<String>) -> Self {
        Self { failure, message: message.into() }
    }
}
