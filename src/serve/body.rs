//! Reading requests: a JSON body within the size cap (too large → 413, not JSON or the wrong shape →
//! 400, both in the API's error shape), and query strings whose parameters may repeat or hold
//! comma-separated lists, as the CLI's repeatable flags do.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::state::AppState;

/// A JSON request body, read whole (up to the cap) and then parsed. An empty body reads as `{}`, so
/// an action without options needs none.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let limit = state.max_body;
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                too_large(limit)
            } else {
                ApiError::bad_request(format!("cannot read the request body: {}", e.body_text()))
            }
        })?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        let value = serde_json::from_slice(text).map_err(|e| ApiError::bad_request(format!("request body: {e}")))?;
        Ok(JsonBody(value))
    }
}

/// The answer for a body over the cap.
pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!(
            "the request body is over {limit} bytes (the payload limit, max_payload_bytes, plus headroom); send fewer jobs per request"
        ),
    )
}

/// A query string as name–value pairs, in order, each name possibly repeated.
pub struct QueryPairs(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let pairs = url::form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Ok(QueryPairs(pairs))
    }
}

impl QueryPairs {
    /// Refuses a parameter not among `known` (a misspelt filter must not widen a listing silently).
    pub fn only(&self, known: &[&str]) -> Result<(), ApiError> {
        match self.0.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            Some((k, _)) => Err(ApiError::bad_request(format!(
                "unknown query parameter {k:?} (expected {})",
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// Every value of `name`, comma-separated lists split, empty ones dropped.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// The one value of `name`, if given (the last, if given twice).
    pub fn one(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// A number, if given; a value that is not one is refused naming the parameter.
    pub fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, ApiError> {
        self.one(name)
            .map(|v| {
                v.trim().parse().map_err(|_| {
                    ApiError::bad_request(format!("query parameter {name}={v:?} is not a whole number in range"))
                })
            })
            .transpose()
    }

    /// A flag: `true` or `false` (absent is false).
    pub fn flag(&self, name: &str) -> Result<bool, ApiError> {
        match self.one(name) {
            None => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(v) => Err(ApiError::bad_request(format!(
                "query parameter {name}={v:?} must be true or false"
            ))),
        }
    }
}
