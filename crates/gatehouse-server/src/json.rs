//! A JSON body extractor whose errors name the offending field. Malformed
//! JSON and schema violations are 422 with `{code: "invalid", message}`
//! whose message starts with the field's path; oversized bodies are 413.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ApiErrorCode};

/// `Json<T>` with field-naming errors.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let content_type = req.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        if content_type.is_some_and(|ct| !ct.starts_with("application/json")) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ApiErrorCode::Invalid,
                "send the body as application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    ApiErrorCode::PayloadTooLarge,
                    "the body is larger than this server accepts",
                )
            } else {
                ApiError::invalid(format!("cannot read the body: {e}"))
            }
        })?;
        parse(&bytes).map(ApiJson)
    }
}

/// An optional body: absent (empty) is `None`, anything else must parse.
impl<S: Send + Sync, T: DeserializeOwned> axum::extract::OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let empty = req.headers().get(axum::http::header::CONTENT_LENGTH).is_some_and(|l| l == "0")
            || (req.headers().get(axum::http::header::CONTENT_TYPE).is_none()
                && req.headers().get(axum::http::header::CONTENT_LENGTH).is_none()
                && req.headers().get(axum::http::header::TRANSFER_ENCODING).is_none());
        if empty {
            return Ok(None);
        }
        <Self as FromRequest<S>>::from_request(req, state).await.map(Some)
    }
}

/// Reads `value` as a `T`, naming the path of the first bad field (for
/// bodies read in parts, where `#[serde(flatten)]` would lose the path).
pub fn from_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, ApiError> {
    // Tracking the path costs every field of every good body; only a bad one needs it.
    T::deserialize(value).or_else(|_| serde_path_to_error::deserialize(value).map_err(path_error))
}

/// Parses JSON, naming the path of the first bad field, and refuses a
/// string or key holding U+0000 ([`refuse_nul`]).
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // JSON can only spell U+0000 as the escape `\u0000`: a body without it
    // holds none, and is not read twice.
    if memchr::memmem::find(bytes, br"\u0000").is_some() {
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) {
            if let Some(path) = nul_in(&value, String::new()) {
                return Err(refuse_nul(if path.is_empty() { "body".into() } else { path }));
            }
        }
    }
    // A good body is read once without tracking its path; a bad one is read
    // again with it, which fails at the same place and names it.
    serde_json::from_slice(bytes).or_else(|_| {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize(de).map_err(path_error)
    })
}

/// A 422 naming `field`, whose value holds U+0000: PostgreSQL's text cannot
/// store it, so Gatehouse refuses it on every backend alike, before
/// anything is stored.
pub fn refuse_nul(field: impl Into<String>) -> ApiError {
    ApiError::invalid_field(field, "holds a NUL character (U+0000), which Gatehouse does not store")
}

/// The path (as serde_path_to_error writes it) of the first string or key
/// in `value` holding U+0000, if any.
fn nul_in(value: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) if s.contains('\0') => Some(path),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| nul_in(item, format!("{path}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            if key.contains('\0') {
                return Some(at);
            }
            nul_in(item, at)
        }),
        _ => None,
    }
}

/// A 422 whose message starts with the bad field's path (or `body`).
fn path_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> ApiError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    if path.is_empty() || path == "." {
        // serde names a missing field only in its message: name it as a field, so clients need not parse text.
        let text = inner.to_string();
        match text.strip_prefix("missing field `").and_then(|rest| rest.split_once('`')) {
            Some((field, _)) => ApiError::invalid_field(field, "is required"),
            None => ApiError::invalid(format!("body: {text}")),
        }
    } else {
        ApiError::invalid_field(path, inner)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Body {
        prompt: String,
        #[serde(default)]
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        size: u32,
    }

    #[test]
    fn a_missing_or_wrong_field_is_named_as_the_field() {
        let missing = from_value::<Body>(&serde_json::json!({})).unwrap_err();
        assert_eq!((missing.field(), missing.message()), (Some("prompt"), "prompt: is required"));
        let wrong = from_value::<Body>(&serde_json::json!({"prompt": "x", "inner": {"size": "big"}})).unwrap_err();
        assert_eq!(wrong.field(), Some("inner.size"), "{}", wrong.message());
        let nested = from_value::<Body>(&serde_json::json!({"prompt": "x", "inner": {}})).unwrap_err();
        assert_eq!(nested.field(), Some("inner"), "a missing inner field names its parent: {}", nested.message());
    }
}
