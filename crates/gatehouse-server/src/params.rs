//! Query and path parameters whose errors are the API's JSON error body
//! naming the parameter (`field`), as [`crate::json::ApiJson`] names a body
//! field, and the last resort for every other error: a 4xx or 5xx that is
//! not JSON (a 404 or 405 from the router, one of rmcp's at `/mcp`) gets
//! the same body, so a client never parses plain text. Also the listings'
//! shared parameters (`limit`, `offset`, blank meaning not given).

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ApiErrorCode, ApiResult};

/// `Query<T>` whose errors are 422 naming the parameter.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query().unwrap_or_default()).map(ApiQuery)
    }
}

/// Reads a query string as a `T`, naming the first bad parameter.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    if let Some((name, _)) =
        form_urlencoded::parse(query.as_bytes()).find(|(n, v)| n.contains('\0') || v.contains('\0'))
    {
        return Err(crate::json::refuse_nul(name));
    }
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| query_error(query, &e))
}

fn query_error(query: &str, e: &serde_path_to_error::Error<serde_urlencoded::de::Error>) -> ApiError {
    let field = e.path().to_string();
    if field.is_empty() || field == "." {
        // A missing parameter: serde names it in the message.
        return ApiError::invalid(format!("query: {}", e.inner()));
    }
    // Say which value was refused: serde's reason alone ("invalid digit found in string") does not.
    match form_urlencoded::parse(query.as_bytes()).find(|(name, _)| *name == field) {
        Some((_, value)) => ApiError::invalid_field(field, format!("`{value}` is not accepted: {}", e.inner())),
        None => ApiError::invalid_field(field, e.inner()),
    }
}

/// `Path<T>` whose errors are 422 naming the path parameter.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Ok(raw) = axum::extract::RawPathParams::from_request_parts(parts, state).await {
            if let Some((key, _)) = raw.iter().find(|(_, value)| value.contains('\0')) {
                return Err(crate::json::refuse_nul(key));
            }
        }
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(path_error(rejection)),
        }
    }
}

fn path_error(rejection: PathRejection) -> ApiError {
    use axum::extract::path::ErrorKind;
    let PathRejection::FailedToDeserializePathParams(e) = &rejection else {
        // The route and the handler disagree: Gatehouse's mistake, not the client's.
        return ApiError::internal(rejection.body_text());
    };
    let field = match e.kind() {
        ErrorKind::ParseErrorAtKey { key, .. }
        | ErrorKind::InvalidUtf8InPathParam { key }
        | ErrorKind::DeserializeError { key, .. } => Some(key.clone()),
        _ => None,
    };
    let message = e.body_text();
    match field {
        Some(field) => ApiError::invalid_field(field, message),
        None => ApiError::invalid(format!("path: {message}")),
    }
}

/// The largest plain-text error body kept as a message.
const MAX_MESSAGE: usize = 1024;

/// Middleware: turns an error response that is not JSON into the API's
/// JSON error body, keeping its status, its other headers (`Allow`,
/// `WWW-Authenticate`) and its text as the message.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_MESSAGE).await.map(|b| String::from_utf8_lossy(&b).trim().to_owned());
    let message = match text {
        Ok(text) if !text.is_empty() => text,
        _ => default_message(status).to_owned(),
    };
    let code = match status {
        StatusCode::UNAUTHORIZED => ApiErrorCode::Unauthorized,
        StatusCode::FORBIDDEN => ApiErrorCode::Forbidden,
        StatusCode::NOT_FOUND => ApiErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ApiErrorCode::MethodNotAllowed,
        StatusCode::CONFLICT => ApiErrorCode::Conflict,
        StatusCode::PAYLOAD_TOO_LARGE => ApiErrorCode::PayloadTooLarge,
        StatusCode::SERVICE_UNAVAILABLE => ApiErrorCode::Unavailable,
        s if s.is_server_error() => ApiErrorCode::Internal,
        _ => ApiErrorCode::Invalid,
    };
    let json = ApiError::new(status, code, message).into_response();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, json.into_body())
}

fn default_message(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "no such path; the API is under /api/hitl (its description: /api/hitl/openapi.json)",
        StatusCode::METHOD_NOT_ALLOWED => "this path does not take that method; the Allow header lists those it takes",
        _ => status.canonical_reason().unwrap_or("the request failed"),
    }
}

/// A query value, unless it is missing or blank.
pub(crate) fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

/// Parses `limit`, naming the parameter when it is not a number in range.
pub(crate) fn parse_limit(raw: Option<String>, default: u32, max: u32) -> ApiResult<u32> {
    let Some(raw) = non_empty(raw) else { return Ok(default) };
    match raw.trim().parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(ApiError::invalid_field("limit", format!("`{raw}` is not a whole number from 1 to {max}"))),
    }
}

/// Parses `offset`, naming the parameter when it is not a whole number.
pub(crate) fn parse_offset(raw: Option<String>) -> ApiResult<Option<u32>> {
    let Some(raw) = non_empty(raw) else { return Ok(None) };
    raw.trim()
        .parse::<u32>()
        .map(Some)
        .map_err(|_| ApiError::invalid_field("offset", format!("`{raw}` is not a whole number from 0 to {}", u32::MAX)))
}
