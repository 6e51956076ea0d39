//! What can go wrong talking to a Gatehouse server: its own refusal
//! ([`ApiError`]: the status and the body's code, message and field, kept
//! as the server sent them), not reaching it ([`Transport`], with what kind
//! of failure it was so each program can say what to do), or an answer this
//! client cannot read.

use chrono::{DateTime, Utc};
pub use gatehouse_engine::api_error::ApiErrorCode;
use reqwest::StatusCode;
use serde::Deserialize;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an error.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The server could not be reached, or its answer not heard.
    #[error(transparent)]
    Transport(#[from] Transport),
    /// The server answered success in a shape this client does not read.
    #[error(
        "the server at {server} answered (HTTP {status}) in a shape this gatehouse does not understand; \
         are the server and this client the same version?"
    )]
    Unreadable {
        /// The server's address.
        server: String,
        /// The answer's status.
        status: StatusCode,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
    /// The HTTP client could not be set up (its TLS roots, say).
    #[error("cannot set up the HTTP client")]
    Setup(#[source] reqwest::Error),
}

impl ClientError {
    /// The server's refusal, when that is what this is.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }
}

/// An error answer from the server: `{code, message, field}` with its status.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (HTTP {status})")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What kind of error, as the server's body says (from the status when it sent no body).
    pub code: ApiErrorCode,
    /// The server's explanation.
    pub message: String,
    /// The offending field, parameter or path segment, where the server named one.
    pub field: Option<String>,
    /// For a gate conflict: who decided first.
    pub resolved_by: Option<String>,
    /// For a gate conflict: when the gate closed.
    pub resolved_at: Option<DateTime<Utc>>,
    /// Whether the body was Gatehouse's error body; `false` when the code
    /// comes from the status and the message from raw text (a proxy's page,
    /// another server at the address).
    pub from_gatehouse: bool,
}

/// The error body, read leniently: a code this client does not know yet
/// still leaves the message and field.
#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    code: serde_json::Value,
    message: String,
    #[serde(default)]
    field: Option<String>,
    #[serde(default)]
    resolved_by: Option<String>,
    #[serde(default)]
    resolved_at: Option<DateTime<Utc>>,
}

impl ApiError {
    /// The error a non-2xx answer with `body` stands for.
    pub fn from_answer(status: StatusCode, body: &str) -> Self {
        let from_status = ApiErrorCode::for_status(status.as_u16());
        match serde_json::from_str::<Body>(body) {
            Ok(b) => Self {
                status,
                code: serde_json::from_value(b.code).unwrap_or(from_status),
                message: b.message,
                field: b.field,
                resolved_by: b.resolved_by,
                resolved_at: b.resolved_at,
                from_gatehouse: true,
            },
            Err(_) => {
                let text: String = body.trim().chars().take(200).collect();
                let message = if status == StatusCode::NOT_FOUND || status == StatusCode::METHOD_NOT_ALLOWED {
                    "the server does not offer this endpoint; is it an older Gatehouse than this client?".to_owned()
                } else if text.is_empty() {
                    status.canonical_reason().unwrap_or("the server refused the request").to_owned()
                } else {
                    text
                };
                Self {
                    status,
                    code: from_status,
                    message,
                    field: None,
                    resolved_by: None,
                    resolved_at: None,
                    from_gatehouse: false,
                }
            }
        }
    }
}

/// What kind of failure kept the answer away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The server did not answer in time.
    Timeout,
    /// The TLS handshake refused the server's certificate.
    Certificate,
    /// Nothing answered at the address.
    Connect,
    /// The exchange broke off some other way.
    Other,
}

/// The server could not be reached, or its answer not heard.
#[derive(Debug, thiserror::Error)]
#[error("the exchange with the Gatehouse server at {server} failed")]
pub struct Transport {
    /// The server's address.
    pub server: String,
    /// The HTTP library's account.
    #[source]
    pub source: reqwest::Error,
}

impl Transport {
    /// What kind of failure this was.
    pub fn kind(&self) -> TransportKind {
        if self.source.is_timeout() {
            TransportKind::Timeout
        } else if is_certificate_problem(&self.source) {
            TransportKind::Certificate
        } else if self.source.is_connect() {
            TransportKind::Connect
        } else {
            TransportKind::Other
        }
    }
}

/// Whether the TLS handshake refused the server's certificate (rustls says so in its message).
fn is_certificate_problem(e: &reqwest::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(error) = source {
        if error.to_string().contains("certificate") {
            return true;
        }
        source = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_keeps_its_code_message_and_field() {
        let body = r#"{"code":"invalid","message":"limit: must be at most 500","field":"limit"}"#;
        let e = ApiError::from_answer(StatusCode::UNPROCESSABLE_ENTITY, body);
        assert_eq!(e.code, ApiErrorCode::Invalid);
        assert_eq!(e.field.as_deref(), Some("limit"));
        assert_eq!(e.to_string(), "limit: must be at most 500 (HTTP 422 Unprocessable Entity)");
        assert!(e.from_gatehouse);
    }

    #[test]
    fn a_code_this_client_does_not_know_falls_back_to_the_status() {
        let body = r#"{"code":"teapot","message":"short and stout"}"#;
        let e = ApiError::from_answer(StatusCode::FORBIDDEN, body);
        assert_eq!((e.code, e.message.as_str()), (ApiErrorCode::Forbidden, "short and stout"));
    }

    #[test]
    fn an_answer_without_a_body_says_what_it_can() {
        let e = ApiError::from_answer(StatusCode::NOT_FOUND, "");
        assert!(e.message.contains("does not offer this endpoint"), "{e}");
        assert_eq!(e.code, ApiErrorCode::NotFound);
        let e = ApiError::from_answer(StatusCode::BAD_GATEWAY, "<html>proxy down</html>");
        assert_eq!((e.code, e.message.as_str()), (ApiErrorCode::Unavailable, "<html>proxy down</html>"));
        assert!(!e.from_gatehouse, "a proxy's page is not Gatehouse speaking");
        assert_eq!(ApiError::from_answer(StatusCode::INTERNAL_SERVER_ERROR, " ").message, "Internal Server Error");
    }
}
