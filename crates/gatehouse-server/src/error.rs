//! The API's one error type. Engine errors become HTTP statuses here and
//! nowhere else; every error body is `{code, message}` (plus the offending
//! `field` where there is one, and who resolved a gate first, for
//! conflicts) so clients branch on codes and fields, not on text. The codes
//! themselves (`ApiErrorCode`) are the engine's, shared with the clients. A
//! 500 says only that Gatehouse failed, with an error id: what failed is
//! logged under that id, never sent. A database that cannot be reached
//! for now (restarting) is a 503 with `Retry-After`, never a 500.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
pub use gatehouse_engine::api_error::ApiErrorCode;
use gatehouse_engine::{EngineError, ErrorCode};
use serde::Serialize;
use utoipa::ToSchema;

/// An error response body.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApiErrorBody {
    /// What kind of error.
    pub code: ApiErrorCode,
    /// What went wrong and what to do.
    pub message: String,
    /// The offending field, parameter or path segment, where there is one:
    /// a body field's path (`options[1].title`), a query parameter
    /// (`limit`), a path parameter (`id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For a gate conflict: who decided first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    /// For a gate conflict: when the gate closed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<DateTime<Utc>>,
}

/// An error on its way to becoming a response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ApiErrorBody,
    /// Seconds for `Retry-After`, for a 503.
    retry_after: Option<u32>,
}

/// What a 503 for an unreachable database asks the client to wait: a fast
/// restart of PostgreSQL takes a second or two.
const DATABASE_RETRY_AFTER_SECONDS: u32 = 2;

impl ApiError {
    /// An error with a status, a code and a message.
    pub fn new(status: StatusCode, code: ApiErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ApiErrorBody { code, message: message.into(), field: None, resolved_by: None, resolved_at: None },
            retry_after: None,
        }
    }
    /// 503 with `Retry-After`: the database cannot be reached for now (what
    /// failed, which may name its host, goes to the log only).
    pub fn database_unavailable(detail: impl std::fmt::Display) -> Self {
        tracing::warn!(%detail, "the database is unavailable");
        let mut error = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ApiErrorCode::Unavailable,
            format!(
                "Gatehouse's database cannot be reached for now (it may be restarting); nothing was changed by \
                 this request that was not already done; retry in {DATABASE_RETRY_AFTER_SECONDS} s"
            ),
        );
        error.retry_after = Some(DATABASE_RETRY_AFTER_SECONDS);
        error
    }
    /// 422 about `field`, whose `message` starts with the field's name.
    pub fn invalid_field(field: impl Into<String>, message: impl std::fmt::Display) -> Self {
        let field = field.into();
        let message = format!("{field}: {message}");
        Self::invalid(message).with_field(field)
    }
    /// The same error, naming the offending `field`.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.body.field = Some(field.into());
        self
    }
    /// 401.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ApiErrorCode::Unauthorized, message)
    }
    /// 403.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, ApiErrorCode::Forbidden, message)
    }
    /// 422 naming a field.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, ApiErrorCode::Invalid, message)
    }
    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, ApiErrorCode::NotFound, message)
    }
    /// A 500: what failed (a storage error may quote SQL, a table or a
    /// file path) goes only to the log, under a short error id; the client
    /// gets a fixed message naming that id, to quote when reporting it.
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        let error_id = error_id();
        tracing::error!(%error_id, %message, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ApiErrorCode::Internal,
            format!("Gatehouse could not carry out this request (error id {error_id}); its log has the details"),
        )
    }
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }
    /// What went wrong, as the body's `message` says it.
    pub fn message(&self) -> &str {
        &self.body.message
    }
    /// The offending field, as the body's `field` says it.
    pub fn field(&self) -> Option<&str> {
        self.body.field.as_deref()
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        let field = e.field();
        let mut error = match (&e, e.code()) {
            (EngineError::GateClosed { resolved_by, resolved_at, .. }, _) => Self {
                retry_after: None,
                status: StatusCode::CONFLICT,
                body: ApiErrorBody {
                    code: ApiErrorCode::Conflict,
                    message,
                    field: None,
                    resolved_by: resolved_by.clone(),
                    resolved_at: *resolved_at,
                },
            },
            (EngineError::ActionDecided { decided_by, decided_at, .. }, _) => Self {
                retry_after: None,
                status: StatusCode::CONFLICT,
                body: ApiErrorBody {
                    code: ApiErrorCode::Conflict,
                    message,
                    field: None,
                    resolved_by: Some(decided_by.clone()),
                    resolved_at: Some(*decided_at),
                },
            },
            (_, ErrorCode::NotFound) => Self::not_found(message),
            (_, ErrorCode::Conflict) => Self::new(StatusCode::CONFLICT, ApiErrorCode::Conflict, message),
            (_, ErrorCode::Invalid) => Self::invalid(message),
            (_, ErrorCode::Forbidden) => Self::forbidden(message),
            (_, ErrorCode::Storage) => Self::internal(message),
            (_, ErrorCode::Unavailable) => Self::database_unavailable(message),
        };
        error.body.field = field;
        error
    }
}

impl ApiError {
    /// The same error with `prefix` taken off the field it names and off
    /// the start of its message: for an endpoint whose body is what another
    /// endpoint nests under `prefix`.
    pub fn without_field_prefix(mut self, prefix: &str) -> Self {
        if let Some(field) = self.body.field.as_deref().and_then(|f| f.strip_prefix(prefix)) {
            self.body.field = Some(field.to_owned());
        }
        if let Some(message) = self.body.message.strip_prefix(prefix) {
            self.body.message = message.to_owned();
        }
        self
    }
}

/// A short id tying a 500's body to its line in the log: eight hex digits
/// from a random UUID, enough to find one failure among a day's.
fn error_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_owned()
}

/// The built-in secret patterns, for error messages: one may quote what a
/// client sent (a name, a parameter), and a secret in it is not echoed back.
static MESSAGE_REDACTOR: std::sync::LazyLock<gatehouse_engine::redact::Redactor> =
    std::sync::LazyLock::new(gatehouse_engine::redact::Redactor::default);

impl IntoResponse for ApiError {
    fn into_response(mut self) -> Response {
        if let std::borrow::Cow::Owned(clean) = MESSAGE_REDACTOR.redact_str(&self.body.message) {
            self.body.message = clean;
        }
        let mut response = (self.status, Json(self.body)).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        response
    }
}

/// The handlers' result type.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    struct Log(Arc<Mutex<Vec<u8>>>);

    impl Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("log").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_unreachable_database_is_a_503_with_retry_after_naming_no_host() {
        let error =
            ApiError::from(EngineError::Unavailable("PostgreSQL: connection refused (db.internal:5432)".into()));
        assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(error.body.code, ApiErrorCode::Unavailable);
        assert!(error.message().contains("retry in 2 s"), "{}", error.message());
        assert!(!error.message().contains("db.internal"), "{}", error.message());
        let response = error.into_response();
        assert_eq!(response.headers().get(axum::http::header::RETRY_AFTER).map(|v| v.as_bytes()), Some(&b"2"[..]));
    }

    #[test]
    fn other_errors_carry_no_retry_after() {
        let response = ApiError::from(EngineError::Storage("disk full".into())).into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(response.headers().get(axum::http::header::RETRY_AFTER).is_none());
    }

    #[test]
    fn an_internal_error_is_logged_in_full_under_the_id_its_body_names() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt().with_writer(move || Log(sink.clone())).finish();
        let failure = "storage: no such table: gates in /var/lib/gatehouse/gatehouse.db";
        // Another thread may have met the logging call site first, with no
        // subscriber in scope, and cached "nobody listens": ask again now
        // that this test's subscriber exists.
        let error = tracing::subscriber::with_default(subscriber, || {
            tracing::callsite::rebuild_interest_cache();
            ApiError::internal(failure)
        });

        assert_eq!(error.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!error.message().contains("gates") && !error.message().contains('/'), "{}", error.message());
        let id = error.message().split("error id ").nth(1).and_then(|rest| rest.split(')').next()).expect("an id");
        assert_eq!(id.len(), 8, "{id}");
        let logged = String::from_utf8(log.lock().expect("log").clone()).expect("utf-8");
        let line = logged.lines().find(|line| line.contains(id)).expect("the id is logged");
        assert!(line.contains(failure), "{line}");

        // Each failure has its own id. Made here rather than in a test of its
        // own: a parallel test hitting the call site unsubscribed is what can
        // make the log above miss its line.
        let (a, b) = (ApiError::internal("x"), ApiError::internal("x"));
        assert_ne!(a.message(), b.message());
    }
}
