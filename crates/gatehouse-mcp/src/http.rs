//! The backend for `gatehouse mcp` (stdio): a running Gatehouse server over
//! its HTTP API, through `gatehouse-client`. The reviewer decides in the
//! desktop app or `gatehouse serve`, a different process, so waits are the
//! API's long polls, which answer the moment the decision is committed.

use std::time::Duration;

use gatehouse_client::{ApiErrorCode, Client, ClientError, TransportKind};
use gatehouse_engine::plan::ProgressState;
use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::{Gate, GateId, NewGate, RunId, RunStatus};
use reqwest::Url;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::json;

use crate::backend::{finished_its_work, Backend, BackendError, Failure, PlanSnapshot, SessionRun, SESSION_CLOSED};

/// A running Gatehouse server and the token to call it with.
#[derive(Clone)]
pub struct HttpBackend {
    client: Client,
}

impl HttpBackend {
    /// A backend for the server at `base` (e.g. `http://127.0.0.1:7777`) calling with `token`.
    pub fn new(base: Url, token: impl Into<String>) -> Result<Self, BackendError> {
        Self::trusting(base, token, Vec::new())
    }

    /// As [`HttpBackend::new`], also trusting `roots` (certificate
    /// authorities) for an HTTPS server, beside the built-in ones.
    pub fn trusting(
        base: Url,
        token: impl Into<String>,
        roots: Vec<reqwest::Certificate>,
    ) -> Result<Self, BackendError> {
        let agent = concat!("gatehouse-mcp/", env!("CARGO_PKG_VERSION"));
        let client = Client::new(base, token, agent, roots)
            .map_err(|e| BackendError::new(Failure::Internal, format!("cannot set up the HTTP client: {e}")))?;
        Ok(Self { client })
    }

    /// The server's address, for messages.
    pub fn server(&self) -> &str {
        self.client.server()
    }

    /// The tools' account of a failed call: the server's own message (and
    /// HTTP status) with the failure its code stands for.
    fn refusal(&self, e: ClientError) -> BackendError {
        match e {
            ClientError::Api(e) => BackendError::new(failure_of(e.code), e.to_string()),
            ClientError::Transport(t) if t.kind() == TransportKind::Timeout => BackendError::new(
                Failure::Unreachable,
                format!("the Gatehouse server at {} did not answer in time", self.server()),
            ),
            // What to do about it is the failure's hint (`outcome::failure`), said once.
            ClientError::Transport(_) => BackendError::new(
                Failure::Unreachable,
                format!("cannot reach the Gatehouse server at {}", self.server()),
            ),
            other => BackendError::new(Failure::Internal, format!("{other}: {}", source_of(&other))),
        }
    }
}

/// What went wrong beneath `e`, for a message that has room for one line.
fn source_of(e: &ClientError) -> String {
    std::error::Error::source(e).map(ToString::to_string).unwrap_or_default()
}

/// The tools' failure for the server's error code.
fn failure_of(code: ApiErrorCode) -> Failure {
    match code {
        ApiErrorCode::Unauthorized => Failure::Unauthorized,
        ApiErrorCode::Forbidden => Failure::Forbidden,
        ApiErrorCode::NotFound => Failure::NotFound,
        ApiErrorCode::Conflict => Failure::Conflict,
        ApiErrorCode::Invalid | ApiErrorCode::PayloadTooLarge => Failure::Invalid,
        ApiErrorCode::MethodNotAllowed | ApiErrorCode::Unavailable | ApiErrorCode::Internal => Failure::Internal,
    }
}

impl Backend for HttpBackend {
    type Caller = ();

    fn caller(&self, _: &RequestContext<RoleServer>) -> Result<(), BackendError> {
        Ok(())
    }

    async fn start_run(&self, _: &(), run: SessionRun) -> Result<RunId, BackendError> {
        let body = |agent: Option<&str>| json!({ "run_input": run.input, "title": run.title, "agent": agent });
        match self.client.start_run(&body(Some(&run.agent))).await {
            Ok(started) => Ok(started.run_id),
            // An agent token's runs are its own: the run takes the token's name instead.
            Err(ClientError::Api(e)) if e.code == ApiErrorCode::Forbidden => {
                let started = self.client.start_run(&body(None)).await.map_err(|e| self.refusal(e))?;
                Ok(started.run_id)
            }
            Err(e) => Err(self.refusal(e)),
        }
    }

    async fn open_gate(&self, _: &(), run: &RunId, gate: NewGate) -> Result<Gate, BackendError> {
        self.client.open_gate(run, &gate, None).await.map_err(|e| self.refusal(e))
    }

    async fn wait_gate(&self, _: &(), gate: &GateId, within: Duration) -> Result<Gate, BackendError> {
        self.client.wait_gate(gate, within).await.map_err(|e| self.refusal(e))
    }

    async fn read_plan(&self, _: &(), run: &RunId) -> Result<PlanSnapshot, BackendError> {
        self.client.get(&["runs", run.as_str(), "plan"]).await.map_err(|e| self.refusal(e))
    }

    async fn change_plan(&self, _: &(), run: &RunId, op: PlanOperation) -> Result<PlanRevision, BackendError> {
        self.client.change_plan(run, &op).await.map_err(|e| self.refusal(e))
    }

    /// Over the API: an agent token may complete or fail its run but not
    /// cancel it (controlling runs is a reviewer's), so an unfinished run of
    /// an agent token fails with the reason; other tokens cancel it.
    async fn end_run(&self, _: &(), run: &RunId) -> Result<RunStatus, BackendError> {
        let now: RunNow = self.client.get(&["run", run.as_str(), "status"]).await.map_err(|e| self.refusal(e))?;
        if now.status.is_terminal() {
            return Ok(now.status);
        }
        let ended: Result<Ended, ClientError> =
            if finished_its_work(now.status, now.pending_actions.len(), &now.progress) {
                self.client.post(&["runs", run.as_str(), "complete"], &json!({ "result": null })).await
            } else {
                let cancel = self
                    .client
                    .request(reqwest::Method::DELETE, &["run", run.as_str()])
                    .query(&[("reason", SESSION_CLOSED)]);
                match self.client.send(cancel).await {
                    Err(ClientError::Api(e)) if e.code == ApiErrorCode::Forbidden => {
                        self.client.post(&["runs", run.as_str(), "fail"], &json!({ "reason": SESSION_CLOSED })).await
                    }
                    other => other,
                }
            };
        Ok(ended.map_err(|e| self.refusal(e))?.status)
    }
}

/// What `GET /run/{id}/status` says that ending a session's run needs.
#[derive(serde::Deserialize)]
struct RunNow {
    status: RunStatus,
    progress: ProgressState,
    pending_actions: Vec<serde_json::Value>,
}

/// The run as it ended.
#[derive(serde::Deserialize)]
struct Ended {
    status: RunStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_server_is_said_once_with_its_address_and_what_to_do() {
        // Nothing listens on the discard port of loopback.
        let backend = HttpBackend::new("http://127.0.0.1:9".parse().unwrap(), "t").unwrap();
        let refused = backend.wait_gate(&(), &GateId::from_string("gate_1"), Duration::ZERO).await.unwrap_err();
        assert_eq!(refused.failure, Failure::Unreachable, "{}", refused.message);
        let result = crate::outcome::failure(&refused);
        let summary = result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default();
        assert!(summary.contains("cannot reach the Gatehouse server at http://127.0.0.1:9"), "{summary}");
        assert_eq!(summary.matches("gatehouse serve").count(), 1, "the hint is said once: {summary}");
        assert_eq!(summary.matches("--url").count(), 1, "the hint is said once: {summary}");
    }
}
