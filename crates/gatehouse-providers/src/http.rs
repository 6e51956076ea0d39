//! The HTTP exchange every real provider shares: send JSON with the key in
//! a sensitive header, sort failures into transient (retried here, with
//! backoff) and permanent (returned at once, with the provider's own
//! message), and scrub the key from anything that comes back.

use std::fmt;
use std::time::Duration;

use chrono::Utc;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Method, StatusCode, Url};
use serde_json::Value;

use crate::config::{ConfigError, ProviderConfig};
use crate::error::{ProviderError, TransientFailure};
use crate::retry::{self, RetryPolicy};
use crate::secret::ApiKey;

/// The most of a provider's text quoted in an error.
const QUOTE_CHARS: usize = 300;

/// What a provider said in an error body.
#[derive(Debug, Default)]
pub(crate) struct ProviderMessage {
    pub message: String,
    pub error_type: Option<String>,
    pub field: Option<String>,
}

/// Which failures a request may be sent again after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// Any transient failure: sending twice costs at most a second answer.
    Always,
    /// Only when the provider cannot have acted (no connection, 429, 503):
    /// sending twice would start a second (paid) prediction.
    IfUnprocessed,
}

impl Replay {
    fn allows(self, failure: &TransientFailure) -> bool {
        match self {
            Self::Always => true,
            Self::IfUnprocessed => match failure {
                TransientFailure::Connect { .. } => true,
                TransientFailure::Status { status, .. } => matches!(status, 429 | 503),
                TransientFailure::Network { .. } | TransientFailure::Timeout { .. } => false,
            },
        }
    }
}

/// One request to send.
pub(crate) struct Request<'a> {
    pub method: Method,
    pub url: Url,
    pub body: Option<&'a Value>,
    pub headers: HeaderMap,
    pub replay: Replay,
    /// Reads the provider's error body.
    pub read_error: fn(&Value) -> ProviderMessage,
}

/// A successful answer.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub status: StatusCode,
    pub body: Value,
    pub attempts: u32,
}

/// A provider's HTTP client, its key and its retry policy.
pub(crate) struct Transport {
    provider: String,
    client: Client,
    auth: Option<(HeaderName, HeaderValue)>,
    key: Option<ApiKey>,
    retry: RetryPolicy,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("provider", &self.provider)
            .field("key", &self.key)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

enum Failure {
    Transient(TransientFailure),
    Permanent(ProviderError),
}

impl Transport {
    /// A client for `config`; the key goes in `auth_header`, after `prefix`.
    pub fn new(config: &ProviderConfig, auth_header: HeaderName, prefix: &str) -> Result<Self, ConfigError> {
        let key = config.api_key.clone().filter(|k| !k.is_empty());
        let auth = match &key {
            None => None,
            Some(key) => Some((
                auth_header,
                key.header_value(prefix).ok_or_else(|| ConfigError::Invalid {
                    setting: format!("{} API key", config.name),
                    message: "has characters a header cannot carry".to_owned(),
                })?,
            )),
        };
        let client = Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("gatehouse/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::Invalid { setting: config.name.clone(), message: e.to_string() })?;
        let retry = RetryPolicy { max_attempts: config.retry.max_attempts.max(1), ..config.retry.clone() };
        Ok(Self { provider: config.name.clone(), client, auth, key, retry })
    }

    /// Sends `request`, retrying transient failures as far as its `replay` and the policy allow.
    pub async fn send(&self, request: &Request<'_>) -> Result<Exchange, ProviderError> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let failure = match self.attempt(request).await {
                Ok((status, body)) => return Ok(Exchange { status, body, attempts }),
                Err(Failure::Permanent(error)) => return Err(error),
                Err(Failure::Transient(failure)) => failure,
            };
            let retry_after = match &failure {
                TransientFailure::Status { retry_after_ms, .. } => retry_after_ms.map(Duration::from_millis),
                _ => None,
            };
            let wait = (attempts < self.retry.max_attempts && request.replay.allows(&failure))
                .then(|| self.retry.delay(attempts, retry_after))
                .flatten();
            let Some(wait) = wait else {
                return Err(ProviderError::Unavailable { provider: self.provider.clone(), attempts, failure });
            };
            tracing::warn!(
                provider = %self.provider,
                attempt = attempts,
                wait_ms = wait.as_millis() as u64,
                %failure,
                "transient provider failure; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    async fn attempt(&self, request: &Request<'_>) -> Result<(StatusCode, Value), Failure> {
        let mut builder =
            self.client.request(request.method.clone(), request.url.clone()).headers(request.headers.clone());
        if let Some((name, value)) = &self.auth {
            builder = builder.header(name, value.clone());
        }
        if let Some(body) = request.body {
            builder = builder.json(body);
        }
        let response = builder.send().await.map_err(|e| Failure::Transient(self.network_failure(&e)))?;
        let status = response.status();
        let retry_after = retry::retry_after(response.headers(), Utc::now());
        let bytes = response.bytes().await.map_err(|e| Failure::Transient(self.network_failure(&e)))?;

        if status.is_success() {
            return serde_json::from_slice(&bytes).map(|body| (status, body)).map_err(|e| {
                Failure::Permanent(
                    self.malformed(status, format!("the body is not JSON ({e}): {}", self.quote(&bytes))),
                )
            });
        }
        let parsed = serde_json::from_slice::<Value>(&bytes).ok().map(|v| (request.read_error)(&v));
        let said = parsed.filter(|m| !m.message.is_empty()).unwrap_or_else(|| ProviderMessage {
            message: if bytes.is_empty() { status.to_string() } else { self.quote(&bytes) },
            ..ProviderMessage::default()
        });
        let message = self.scrub(&said.message);
        if is_transient(status) {
            let retry_after_ms = retry_after.map(|d| d.as_millis().min(u64::MAX as u128) as u64);
            return Err(Failure::Transient(TransientFailure::Status {
                status: status.as_u16(),
                message,
                retry_after_ms,
            }));
        }
        Err(Failure::Permanent(ProviderError::Rejected {
            provider: self.provider.clone(),
            status: status.as_u16(),
            message,
            error_type: said.error_type.map(|t| self.scrub(&t)),
            field: said.field,
        }))
    }

    /// The error for a successful status with a body that is not the protocol.
    pub fn malformed(&self, status: StatusCode, detail: impl AsRef<str>) -> ProviderError {
        ProviderError::MalformedResponse {
            provider: self.provider.clone(),
            status: status.as_u16(),
            detail: self.scrub(detail.as_ref()),
        }
    }

    /// `text` without the key.
    pub fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        }
    }

    /// The provider's name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    fn network_failure(&self, error: &reqwest::Error) -> TransientFailure {
        let mut message = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        let message = self.scrub(&message);
        if error.is_timeout() {
            TransientFailure::Timeout { message }
        } else if error.is_connect() {
            TransientFailure::Connect { message }
        } else {
            TransientFailure::Network { message }
        }
    }

    fn quote(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        let mut quoted: String = text.chars().take(QUOTE_CHARS).collect();
        if text.chars().nth(QUOTE_CHARS).is_some() {
            quoted.push('…');
        }
        self.scrub(quoted.trim())
    }
}

/// 408, 429 and every 5xx (Anthropic's 529 "overloaded" included).
fn is_transient(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429) || status.is_server_error()
}

/// The error message of an OpenAI-style body: `{"error": {"message", "type", "code", "param"}}`,
/// or `{"error": "text"}` as Ollama sends.
pub(crate) fn openai_style_error(body: &Value) -> ProviderMessage {
    let error = &body["error"];
    if let Some(text) = error.as_str() {
        return ProviderMessage { message: text.to_owned(), ..ProviderMessage::default() };
    }
    let text = |v: &Value| v.as_str().map(str::to_owned).or_else(|| v.as_i64().map(|n| n.to_string()));
    ProviderMessage {
        message: text(&error["message"]).or_else(|| text(&body["message"])).unwrap_or_default(),
        error_type: text(&error["type"]).or_else(|| text(&error["code"])),
        field: text(&error["param"]).filter(|p| !p.is_empty()),
    }
}
