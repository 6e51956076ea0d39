//! The backend for `gatehouse mcp` (stdio): a running Gatehouse server over
//! its HTTP API. The reviewer decides in the desktop app or `gatehouse
//! serve`, a different process, so waits are the API's long polls, which
//! answer the moment the decision is committed.

use std::time::Duration;

use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::{Gate, GateId, NewGate, RunId};
use reqwest::{Client, Method, RequestBuilder, StatusCode, Url};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;

use crate::backend::{Backend, BackendError, Failure, PlanSnapshot, SessionRun};

/// How long an ordinary request may take; long polls add their own wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A running Gatehouse server and the token to call it with.
#[derive(Clone)]
pub struct HttpBackend {
    http: Client,
    base: Url,
    token: String,
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
        let builder = Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .user_agent(concat!("gatehouse-mcp/", env!("CARGO_PKG_VERSION")));
        let http = roots
            .into_iter()
            .fold(builder, |b, root| b.add_root_certificate(root))
            .build()
            .map_err(|e| BackendError::new(Failure::Internal, format!("cannot set up the HTTP client: {e}")))?;
        Ok(Self { http, base, token: token.into() })
    }

    /// The server's address, for messages.
    pub fn server(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["api", "hitl"]).extend(segments);
        }
        self.http.request(method, url).bearer_auth(&self.token).timeout(REQUEST_TIMEOUT)
    }

    async fn send<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T, BackendError> {
        let response = request.send().await.map_err(|e| self.transport(&e))?;
        let status = response.status();
        let body = response.text().await.map_err(|e| self.transport(&e))?;
        if !status.is_success() {
            return Err(refusal(status, &body));
        }
        serde_json::from_str(&body).map_err(|e| {
            BackendError::new(
                Failure::Internal,
                format!("the server at {} answered in a shape this gatehouse does not understand ({e}); are both the same version?", self.server()),
            )
        })
    }

    fn transport(&self, e: &reqwest::Error) -> BackendError {
        let message = if e.is_timeout() {
            format!("the Gatehouse server at {} did not answer in time", self.server())
        } else {
            format!(
                "cannot reach the Gatehouse server at {}; start it (the desktop app or `gatehouse serve`) or point \
                 --url (GATEHOUSE_URL) at a running one",
                self.server()
            )
        };
        BackendError::new(Failure::Unreachable, message)
    }
}

/// The server's `{code, message}` error body.
#[derive(Deserialize)]
struct ErrorBody {
    message: String,
}

fn refusal(status: StatusCode, body: &str) -> BackendError {
    let message = serde_json::from_str::<ErrorBody>(body)
        .map(|b| b.message)
        .unwrap_or_else(|_| status.canonical_reason().unwrap_or("the server refused the request").to_owned());
    BackendError::new(Failure::from_status(status.as_u16()), format!("{message} (HTTP {})", status.as_u16()))
}

#[derive(Deserialize)]
struct Started {
    run_id: RunId,
}

#[derive(Deserialize)]
struct Opened {
    gate: Gate,
}

impl Backend for HttpBackend {
    type Caller = ();

    fn caller(&self, _: &RequestContext<RoleServer>) -> Result<(), BackendError> {
        Ok(())
    }

    async fn start_run(&self, _: &(), run: SessionRun) -> Result<RunId, BackendError> {
        let body = |agent: Option<&str>| json!({ "run_input": run.input, "title": run.title, "agent": agent });
        let named = self.request(Method::POST, &["run"]).json(&body(Some(&run.agent)));
        match self.send::<Started>(named).await {
            Ok(started) => Ok(started.run_id),
            // An agent token's runs are its own: the run takes the token's name instead.
            Err(e) if e.failure == Failure::Forbidden => {
                let own = self.request(Method::POST, &["run"]).json(&body(None));
                Ok(self.send::<Started>(own).await?.run_id)
            }
            Err(e) => Err(e),
        }
    }

    async fn open_gate(&self, _: &(), run: &RunId, gate: NewGate) -> Result<Gate, BackendError> {
        let request = self.request(Method::POST, &["runs", run.as_str(), "gates"]).json(&gate);
        Ok(self.send::<Opened>(request).await?.gate)
    }

    async fn wait_gate(&self, _: &(), gate: &GateId, within: Duration) -> Result<Gate, BackendError> {
        let within = within.min(Duration::from_secs(60));
        let request = self
            .request(Method::GET, &["gates", gate.as_str(), "wait"])
            .query(&[("timeout", within.as_secs_f64())])
            .timeout(REQUEST_TIMEOUT + within);
        self.send(request).await
    }

    async fn read_plan(&self, _: &(), run: &RunId) -> Result<PlanSnapshot, BackendError> {
        self.send(self.request(Method::GET, &["runs", run.as_str(), "plan"])).await
    }

    async fn change_plan(&self, _: &(), run: &RunId, op: PlanOperation) -> Result<PlanRevision, BackendError> {
        self.send(self.request(Method::POST, &["runs", run.as_str(), "plan"]).json(&op)).await
    }
}
