//! The HTTP API's error codes, the `code` of every error body: here, beside
//! the other wire types, so the server that sends them and the clients that
//! read them (`gatehouse-client`) share one enum without a client depending
//! on the server. The server maps engine errors to codes and statuses.

use serde::{Deserialize, Serialize};

/// Machine-readable error codes of the API.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiErrorCode {
    /// No token, or an unknown or revoked one (401).
    Unauthorized,
    /// The token's role may not do this (403), or the request's origin is refused.
    Forbidden,
    /// No such run, gate, key or token, or no such path (404).
    NotFound,
    /// The path exists but not with this method (405).
    MethodNotAllowed,
    /// Someone decided first, or the state forbids the change (409).
    Conflict,
    /// The body is too large (413).
    PayloadTooLarge,
    /// Malformed JSON, a bad parameter or a field that breaks a rule (422;
    /// 400, 406 or 415 for a request that is not HTTP the route can read).
    Invalid,
    /// The server is at its connection limit (503); retry shortly.
    Unavailable,
    /// Gatehouse itself failed (500); never caused by a client's mistake.
    Internal,
}

impl ApiErrorCode {
    /// The code the server gives with HTTP status `status`, for an error
    /// answer without a readable body (a proxy's page, say).
    pub fn for_status(status: u16) -> Self {
        match status {
            401 => Self::Unauthorized,
            403 => Self::Forbidden,
            404 => Self::NotFound,
            405 => Self::MethodNotAllowed,
            409 => Self::Conflict,
            413 => Self::PayloadTooLarge,
            400..=499 => Self::Invalid,
            502..=504 => Self::Unavailable,
            _ => Self::Internal,
        }
    }

    /// The code as the JSON body spells it (`not_found`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict => "conflict",
            Self::PayloadTooLarge => "payload_too_large",
            Self::Invalid => "invalid",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ApiErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ApiErrorCode;

    #[test]
    fn each_code_is_spelled_in_json_as_it_displays() {
        for code in [
            ApiErrorCode::Unauthorized,
            ApiErrorCode::Forbidden,
            ApiErrorCode::NotFound,
            ApiErrorCode::MethodNotAllowed,
            ApiErrorCode::Conflict,
            ApiErrorCode::PayloadTooLarge,
            ApiErrorCode::Invalid,
            ApiErrorCode::Unavailable,
            ApiErrorCode::Internal,
        ] {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
            assert_eq!(serde_json::from_value::<ApiErrorCode>(json).unwrap(), code);
        }
    }

    #[test]
    fn a_status_without_a_body_still_has_a_code() {
        assert_eq!(ApiErrorCode::for_status(404), ApiErrorCode::NotFound);
        assert_eq!(ApiErrorCode::for_status(400), ApiErrorCode::Invalid);
        assert_eq!(ApiErrorCode::for_status(503), ApiErrorCode::Unavailable);
        assert_eq!(ApiErrorCode::for_status(500), ApiErrorCode::Internal);
    }
}
