//! Store errors, mapped to meaning at the store boundary: a driver error becomes "unavailable",
//! "invalid URL" or "failed to <operation>", always with the redacted URL and never a password.

use super::url::StoreKind;

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL cannot name a store.
    #[error("invalid store URL {url}: {reason}")]
    InvalidUrl {
        /// The URL as given, password removed.
        url: String,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// The store cannot be reached or opened.
    #[error("cannot reach the {kind} store at {url}")]
    Unavailable {
        /// Backend.
        kind: StoreKind,
        /// Where, password removed.
        url: String,
        /// The driver's error.
        #[source]
        source: BoxError,
    },
    /// This store cannot do what was asked.
    #[error("the {store} store does not support {operation}")]
    Unsupported {
        /// Backend.
        store: StoreKind,
        /// What was asked.
        operation: &'static str,
    },
    /// The schema could not be brought up to date.
    #[error("migrating the {kind} store failed at migration {version}")]
    Migration {
        /// Backend.
        kind: StoreKind,
        /// The migration that failed.
        version: u32,
        /// The driver's error.
        #[source]
        source: BoxError,
    },
    /// The schema is newer than this jobq knows.
    #[error(
        "the {kind} store's schema is at version {found}, newer than this jobq knows ({known}); upgrade jobq"
    )]
    SchemaTooNew {
        /// Backend.
        kind: StoreKind,
        /// Version found.
        found: u32,
        /// Latest version this build knows.
        known: u32,
    },
    /// A query failed.
    #[error("{kind} store: {operation} failed")]
    Query {
        /// Backend.
        kind: StoreKind,
        /// What was being done, e.g. "claim".
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: BoxError,
    },
    /// A stored row could not be read back.
    #[error("{kind} store: job {id} is unreadable: {reason}")]
    Corrupt {
        /// Backend.
        kind: StoreKind,
        /// The job.
        id: String,
        /// What could not be decoded.
        reason: String,
    },
}

impl StoreError {
    /// Wraps a driver error met while doing `operation`.
    pub fn query(kind: StoreKind, operation: &'static str, source: impl Into<BoxError>) -> Self {
        StoreError::Query { kind, operation, source: source.into() }
    }

    /// True when the store could not be reached (rather than refusing a request).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}
