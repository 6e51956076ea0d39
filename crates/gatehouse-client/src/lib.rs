//! A client of Gatehouse's own HTTP API (`/api/hitl`), written once for
//! every Rust program that talks to a running server: the CLI's server-facing
//! commands, `gatehouse mcp` on stdio and the desktop app's tray and alerts.
//!
//! Replies are the engine's wire types ([`Gate`], [`PlanRevision`],
//! [`Event`](gatehouse_engine::Event)); a refusal is an [`ApiError`] with the
//! server's [`ApiErrorCode`], message and field, never a string to parse.
//! The token travels only in the `Authorization` header, never in a URL.
//! It depends on neither the server nor Tauri.
//!
//! ```no_run
//! # async fn demo() -> Result<(), gatehouse_client::ClientError> {
//! use gatehouse_client::Client;
//! let base = "http://127.0.0.1:7777".parse().expect("a URL");
//! let client = Client::new(base, "gh_...", "my-tool/1.0", Vec::new())?;
//! let pending = client.pending().await?;
//! println!("{} gates wait for a reviewer", pending.total);
//! # Ok(()) }
//! ```

mod error;
mod events;

use std::time::Duration;

use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::{DecisionInput, Gate, GateId, NewGate, RunId, RunStatus};
use reqwest::{Method, RequestBuilder, Url};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use error::{ApiError, ApiErrorCode, ClientError, Transport, TransportKind};
pub use events::{Burst, EventStream, Message, SseParser};
pub use reqwest::{Certificate, StatusCode};

/// How long an ordinary request may take; long polls add their own wait.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest long poll the server holds (`GET /gates/{id}/wait`).
pub const MAX_WAIT: Duration = Duration::from_secs(60);
/// How long an idle connection is kept for the next request: well under
/// the 10 s the server gives an idle connection to send its next request's
/// headers before closing it, so a request is never sent on a connection
/// the server is closing at that moment (which fails it with "connection
/// closed before message completed", and a POST is not retried).
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// One server and the token to call it with. Cloning is cheap (the
/// connection pool is shared).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("base", &self.base.as_str()).field("token", &"[redacted]").finish()
    }
}

/// The answer to starting a run.
#[derive(Debug, Clone, Deserialize)]
pub struct StartedRun {
    /// The new run.
    pub run_id: RunId,
    /// Its status (`created`).
    pub status: RunStatus,
}

/// How many gates wait for a reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Pending {
    /// The pending gates the token can see.
    pub total: u64,
    /// The event log's head when they were counted: follow the events from here and nothing is missed.
    pub head_seq: u64,
}

/// The envelopes around a gate (`{gate, ...}`).
#[derive(Deserialize)]
struct WithGate {
    gate: Gate,
}

impl Client {
    /// A client for the server at `base` (e.g. `http://127.0.0.1:7777`)
    /// calling with `token`, sending `user_agent` and also trusting `roots`
    /// (certificate authorities, for an HTTPS server a private CA signed)
    /// beside the built-in ones.
    pub fn new(
        base: Url,
        token: impl Into<String>,
        user_agent: &str,
        roots: Vec<Certificate>,
    ) -> Result<Self, ClientError> {
        let builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .user_agent(user_agent);
        let http = roots
            .into_iter()
            .fold(builder, |b, root| b.add_root_certificate(root))
            .build()
            .map_err(ClientError::Setup)?;
        Ok(Self::with_http(http, base, token))
    }

    /// A client over an HTTP client of the caller's (its own roots and
    /// timeouts; the desktop app shares one across servers).
    pub fn with_http(http: reqwest::Client, base: Url, token: impl Into<String>) -> Self {
        Self { http, base, token: token.into() }
    }

    /// The server's address, for messages.
    pub fn server(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// A request to `/api/hitl/<segments...>` (each segment
    /// percent-encoded), carrying the token in the `Authorization` header,
    /// limited to [`REQUEST_TIMEOUT`] unless it sets its own.
    pub fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.unlimited(method, segments).timeout(REQUEST_TIMEOUT)
    }

    /// As [`Client::request`], with no overall limit (a stream).
    fn unlimited(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["api", "hitl"]).extend(segments);
        }
        self.http.request(method, url).bearer_auth(&self.token)
    }

    /// Sends a request and reads its JSON answer; a non-2xx answer is an [`ApiError`].
    pub async fn send<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T, ClientError> {
        let response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        let body = response.text().await.map_err(|e| self.transport(e))?;
        if !status.is_success() {
            return Err(ApiError::from_answer(status, &body).into());
        }
        serde_json::from_str(&body).map_err(|source| ClientError::Unreadable {
            server: self.server().to_owned(),
            status,
            source,
        })
    }

    /// GETs `segments`.
    pub async fn get<T: DeserializeOwned>(&self, segments: &[&str]) -> Result<T, ClientError> {
        self.send(self.request(Method::GET, segments)).await
    }

    /// POSTs `body` as JSON to `segments`.
    pub async fn post<T: DeserializeOwned>(&self, segments: &[&str], body: &impl Serialize) -> Result<T, ClientError> {
        self.send(self.request(Method::POST, segments).json(body)).await
    }

    fn transport(&self, source: reqwest::Error) -> ClientError {
        Transport { server: self.server().to_owned(), source }.into()
    }

    /// Starts a run (`POST /run`) with `body` (`run_input`, `title`, `agent`, ...).
    pub async fn start_run(&self, body: &impl Serialize) -> Result<StartedRun, ClientError> {
        self.post(&["run"], body).await
    }

    /// Opens `gate` on `run`; with `idempotency_key`, a retry returns the first gate.
    pub async fn open_gate(
        &self,
        run: &RunId,
        gate: &NewGate,
        idempotency_key: Option<&str>,
    ) -> Result<Gate, ClientError> {
        let mut request = self.request(Method::POST, &["runs", run.as_str(), "gates"]).json(gate);
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        Ok(self.send::<WithGate>(request).await?.gate)
    }

    /// One gate as it is now.
    pub async fn gate(&self, gate: &GateId) -> Result<Gate, ClientError> {
        Ok(self.get::<WithGate>(&["gates", gate.as_str()]).await?.gate)
    }

    /// The gate as soon as it leaves `pending`, or as it is once `within`
    /// has passed (at most [`MAX_WAIT`]); `Duration::ZERO` answers at once.
    pub async fn wait_gate(&self, gate: &GateId, within: Duration) -> Result<Gate, ClientError> {
        let within = within.min(MAX_WAIT);
        let request = self
            .request(Method::GET, &["gates", gate.as_str(), "wait"])
            .query(&[("timeout", format!("{:.3}", within.as_secs_f64()))])
            .timeout(REQUEST_TIMEOUT + within);
        self.send(request).await
    }

    /// Decides a gate as the token's identity.
    pub async fn resolve_gate(&self, gate: &GateId, decision: &DecisionInput) -> Result<Gate, ClientError> {
        self.post(&["gates", gate.as_str(), "resolve"], decision).await
    }

    /// How many gates are pending, with the log's head when they were counted.
    pub async fn pending(&self) -> Result<Pending, ClientError> {
        let request = self.request(Method::GET, &["gates"]).query(&[("status", "pending"), ("limit", "1")]);
        self.send(request).await
    }

    /// Applies one plan operation to `run`'s plan.
    pub async fn change_plan(&self, run: &RunId, op: &PlanOperation) -> Result<PlanRevision, ClientError> {
        self.post(&["runs", run.as_str(), "plan"], op).await
    }

    /// The event stream after sequence number `after` (`GET /events`); it
    /// runs until the server ends it, so it has no overall time limit.
    pub async fn events(&self, after: u64) -> Result<EventStream, ClientError> {
        let request = self.unlimited(Method::GET, &["events"]).query(&[("after", after)]);
        let answer = request.send().await.map_err(|e| self.transport(e))?;
        let status = answer.status();
        if !status.is_success() {
            let body = answer.text().await.map_err(|e| self.transport(e))?;
            return Err(ApiError::from_answer(status, &body).into());
        }
        Ok(EventStream { answer, parser: SseParser::default(), server: self.server().to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_in_the_authorization_header_and_never_in_the_address() {
        let client = Client::with_http(reqwest::Client::new(), "http://127.0.0.1:7777/".parse().unwrap(), "s3cret");
        let request = client.request(Method::GET, &["gates", "a b/c"]).build().unwrap();
        assert_eq!(request.url().as_str(), "http://127.0.0.1:7777/api/hitl/gates/a%20b%2Fc");
        assert_eq!(request.headers()["authorization"], "Bearer s3cret");
        let stream = client.unlimited(Method::GET, &["events"]).query(&[("after", 3)]).build().unwrap();
        assert!(!stream.url().as_str().contains("s3cret"), "{}", stream.url());
        assert!(!format!("{client:?}").contains("s3cret"));
    }

    #[test]
    fn a_base_under_a_path_keeps_it() {
        let client = Client::with_http(reqwest::Client::new(), "https://example.com/gh/".parse().unwrap(), "t");
        let request = client.request(Method::GET, &["run"]).build().unwrap();
        assert_eq!(request.url().as_str(), "https://example.com/gh/api/hitl/run");
    }
}
