//! The API's one error shape, `{"error": {"code", "message", …}}`, and the HTTP status each jobq
//! error stands for: the CLI's exit codes carried over (2, bad input → 422, or 400 for a request that
//! cannot be read at all; 3, not found → 404; a job in the way → 409; the store down → 503).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use jobq::error::Error;
use jobq::store::StoreError;

/// An error answer (boxed: handlers return it on every path, and most paths succeed). Cloned when
/// one shared count fails for every request that waited for it (`flight.rs`).
#[derive(Debug, Clone)]
pub struct ApiError(Box<Parts>);

#[derive(Debug, Clone)]
struct Parts {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// The input refused, in the job JSON's words (`queue`, `jobType`, …).
    input: Option<&'static str>,
    /// The jobs the refusal is about.
    ids: Vec<String>,
    /// What was done before the refusal: the document a partial success would have answered.
    details: Option<Value>,
}

impl ApiError {
    /// An error with its own status, code and sentence.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError(Box::new(Parts {
            status,
            code,
            message: message.into(),
            input: None,
            ids: Vec::new(),
            details: None,
        }))
    }

    /// A request that cannot be read: not JSON, the wrong shape, an unknown field.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// Carries the document of what was done before the refusal.
    pub fn with_details(mut self, details: Value) -> ApiError {
        self.0.details = Some(details);
        self
    }

    /// The sentence it answers with.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The status it answers with.
    pub fn status(&self) -> StatusCode {
        self.0.status
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let message = e.to_string();
        let (status, code) = match &e {
            Error::Invalid { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input"),
            Error::Config { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_config"),
            Error::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            Error::NoSuchSchedule { .. } => (StatusCode::NOT_FOUND, "no_such_schedule"),
            Error::Conflict { .. } => (StatusCode::CONFLICT, "conflict"),
            Error::TimedOut { .. } => (StatusCode::GATEWAY_TIMEOUT, "timed_out"),
            Error::Broker { .. } => (StatusCode::BAD_GATEWAY, "broker_error"),
            Error::Store(StoreError::Unavailable { .. }) => (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
            // Another process held SQLite's lock past busy_timeout: the same request later may pass.
            Error::Store(StoreError::Locked { .. }) => (StatusCode::SERVICE_UNAVAILABLE, "store_locked"),
            Error::Store(StoreError::Unsupported { .. }) => (StatusCode::NOT_IMPLEMENTED, "unsupported"),
            Error::Store(StoreError::UnknownDependency { .. }) => (StatusCode::NOT_FOUND, "not_found"),
            Error::Store(_) => (StatusCode::INTERNAL_SERVER_ERROR, "store_error"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "error"),
        };
        let mut err = ApiError::new(status, code, message);
        match e {
            Error::Invalid { input, .. } => err.0.input = Some(input.as_str()),
            Error::NotFound { ids, .. } | Error::Store(StoreError::UnknownDependency { ids }) => err.0.ids = ids,
            Error::Conflict { ids, .. } => err.0.ids = ids.iter().map(|i| i.to_string()).collect(),
            _ => {}
        }
        err
    }
}

impl From<jobq::error::InvalidInput> for ApiError {
    fn from(e: jobq::error::InvalidInput) -> ApiError {
        ApiError::from(Error::from(e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let this = *self.0;
        let mut error = json!({ "code": this.code, "message": this.message });
        if let Some(fields) = error.as_object_mut() {
            if let Some(input) = this.input {
                fields.insert("input".into(), input.into());
            }
            if !this.ids.is_empty() {
                fields.insert("ids".into(), this.ids.into());
            }
            if let Some(details) = this.details {
                fields.insert("details".into(), details);
            }
        }
        let mut response = (this.status, axum::Json(json!({ "error": error }))).into_response();
        if this.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// What a handler answers.
pub type ApiResult<T> = Result<T, ApiError>;
