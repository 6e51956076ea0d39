//! What can go wrong preparing or calling a model, in terms a reviewer can
//! act on. Transient failures are retried inside the providers; only what
//! outlasts the retries, or needs a person, comes back as a
//! [`ProviderError`], and each one lists the [`Remedy`]s an error gate can
//! offer. Errors serialize as `{"code": ..., ...}` so a gate can carry them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::report::ValidationReport;

/// A failure that may pass if the request is sent again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransientFailure {
    /// The provider could not be reached (the request never left).
    Connect {
        /// What the network stack said.
        message: String,
    },
    /// The connection broke after the request was sent.
    Network {
        /// What the network stack said.
        message: String,
    },
    /// No answer within the time allowed.
    Timeout {
        /// What timed out.
        message: String,
    },
    /// 408, 429 or a 5xx status.
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// How long the provider asked us to wait, in milliseconds.
        retry_after_ms: Option<u64>,
    },
}

impl TransientFailure {
    /// The HTTP status, if there was an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl fmt::Display for TransientFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { message } => write!(f, "cannot connect: {message}"),
            Self::Network { message } => write!(f, "connection failed: {message}"),
            Self::Timeout { message } => write!(f, "timed out: {message}"),
            Self::Status { status, message, .. } => write!(f, "status {status}: {message}"),
        }
    }
}

/// What a reviewer can do about a failure (the error/retry gate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// Edit the payload, then call again.
    FixPayload,
    /// Send the payload as it is, despite failing validation.
    OverrideValidation,
    /// Call again unchanged (after waiting, or after fixing the configuration).
    Retry,
    /// End the run.
    Cancel,
}

/// Everything a provider step can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum ProviderError {
    /// No provider offers this tool.
    #[error("no provider offers a tool named `{tool}`")]
    UnknownTool {
        /// The tool asked for.
        tool: String,
    },
    /// The run input cannot make a payload for the tool.
    #[error("cannot prepare a payload for `{tool}`: `{field}` {message}")]
    InvalidInput {
        /// The tool.
        tool: String,
        /// The run input's field at fault.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The payload breaks the tool's input schema.
    #[error("the payload for `{tool}` does not match its input schema: {}", report.summary())]
    InvalidPayload {
        /// The tool.
        tool: String,
        /// Every problem found, and the suggested fixes.
        report: ValidationReport,
    },
    /// The provider refused the request (a 4xx other than 408 and 429).
    #[error("{provider} refused the request (HTTP {status}): {message}")]
    Rejected {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's own explanation.
        message: String,
        /// The provider's error type or code (`invalid_request_error`...).
        error_type: Option<String>,
        /// The payload field the provider blamed, when it named one.
        field: Option<String>,
    },
    /// Transient failures went on past the retries.
    #[error("{provider} is unavailable after {attempts} attempt(s): {failure}")]
    Unavailable {
        /// The provider.
        provider: String,
        /// Requests sent.
        attempts: u32,
        /// The last failure.
        failure: TransientFailure,
    },
    /// The provider answered something that is not its protocol.
    #[error("{provider} sent a response Gatehouse cannot read (HTTP {status}): {detail}")]
    MalformedResponse {
        /// The provider.
        provider: String,
        /// The HTTP status of that response.
        status: u16,
        /// What was wrong with it.
        detail: String,
    },
    /// A Replicate prediction ended without output.
    #[error("{provider} prediction {id} {status}: {message}")]
    PredictionFailed {
        /// The provider.
        provider: String,
        /// The prediction's id.
        id: String,
        /// `failed` or `canceled`.
        status: String,
        /// The prediction's error.
        message: String,
    },
}

impl ProviderError {
    /// What a reviewer can do about it, most useful first.
    pub fn remedies(&self) -> &'static [Remedy] {
        use Remedy::*;
        match self {
            Self::UnknownTool { .. } => &[Cancel],
            Self::InvalidInput { .. } => &[FixPayload, Cancel],
            Self::InvalidPayload { .. } => &[FixPayload, OverrideValidation, Cancel],
            Self::Rejected { status: 401 | 403, .. } => &[Retry, Cancel],
            Self::Rejected { .. } | Self::PredictionFailed { .. } => &[FixPayload, Retry, Cancel],
            Self::Unavailable { .. } | Self::MalformedResponse { .. } => &[Retry, Cancel],
        }
    }

    /// The field at fault, when one is known: the first invalid payload
    /// field, the field a provider blamed, or the run input's field.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::InvalidInput { field, .. } => Some(field),
            Self::InvalidPayload { report, .. } => report.errors().next().map(|issue| issue.field.as_str()),
            Self::Rejected { field, .. } => field.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status behind it, if a provider answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Rejected { status, .. } | Self::MalformedResponse { status, .. } => Some(*status),
            Self::Unavailable { failure, .. } => failure.status(),
            _ => None,
        }
    }

    /// Whether sending the same request later may succeed without a change.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_error_serializes_with_its_code_for_a_gate() {
        let error = ProviderError::Rejected {
            provider: "openai".into(),
            status: 400,
            message: "temperature must be at most 2".into(),
            error_type: Some("invalid_request_error".into()),
            field: Some("temperature".into()),
        };
        let value = serde_json::to_value(&error).unwrap();
        assert_eq!(value["code"], json!("rejected"));
        assert_eq!(value["field"], json!("temperature"));
        assert_eq!(serde_json::from_value::<ProviderError>(value).unwrap(), error);
        assert_eq!(error.field(), Some("temperature"));
        assert_eq!(error.status(), Some(400));
        assert_eq!(error.remedies(), &[Remedy::FixPayload, Remedy::Retry, Remedy::Cancel]);
    }

    #[test]
    fn only_an_unavailable_provider_is_transient() {
        let failure = TransientFailure::Status { status: 503, message: "busy".into(), retry_after_ms: None };
        let unavailable = ProviderError::Unavailable { provider: "p".into(), attempts: 3, failure };
        assert!(unavailable.is_transient());
        assert_eq!(unavailable.status(), Some(503));
        assert_eq!(unavailable.to_string(), "p is unavailable after 3 attempt(s): status 503: busy");
        assert!(!ProviderError::UnknownTool { tool: "t".into() }.is_transient());
    }
}
