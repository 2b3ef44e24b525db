//! Store errors, mapped to meaning at the store boundary: a driver error becomes "unavailable",
//! "invalid URL" or "failed to `<operation>`", always with the redacted URL and never a password.

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
    #[error("cannot reach the {kind} store at {url} ({})", reach_hint(*kind))]
    Unavailable {
        /// Backend.
        kind: StoreKind,
        /// Where, password removed.
        url: String,
        /// The driver's error.
        #[source]
        source: BoxError,
    },
    /// Another process held the store's lock for longer than the store waits for it (SQLite's
    /// `busy_timeout`): the store is there and answering, and the same call later may well succeed.
    #[error(
        "{kind} store: {operation} waited {} for another process's lock on {url} (raise busy_timeout in the URL, or stop the process that holds it)",
        crate::time::format_duration(*waited)
    )]
    Locked {
        /// Backend.
        kind: StoreKind,
        /// What was being done, e.g. "claim".
        operation: &'static str,
        /// Where, password removed.
        url: String,
        /// How long jobq waited before giving up.
        waited: std::time::Duration,
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
    #[error("the {kind} store's schema is at version {found}, newer than this jobq knows ({known}); upgrade jobq")]
    SchemaTooNew {
        /// Backend.
        kind: StoreKind,
        /// Version found.
        found: u32,
        /// Latest version this build knows.
        known: u32,
    },
    /// Jobs of an enqueue wait for jobs that do not exist; nothing was enqueued.
    #[error("no job with id {} (named as a dependency)", ids.join(", "))]
    UnknownDependency {
        /// The ids that name no job.
        ids: Vec<String>,
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

/// What to check when a store cannot be reached.
fn reach_hint(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Sqlite => "check the path, and that its folder exists and is writable",
        StoreKind::Postgres | StoreKind::Mysql | StoreKind::Redis => {
            "check that the server is running and the URL's host, port, user and database are right"
        }
    }
}

/// A driver error reduced to its most specific message. Drivers wrap one error in another whose
/// message repeats the inner one ("error returned from database: (code: 14) unable to open database
/// file" around "(code: 14) unable to open database file"); printing the whole chain would say it
/// twice, so the chain is cut to its deepest message.
#[derive(Debug)]
pub struct DriverError(String);

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DriverError {}

impl DriverError {
    /// A driver's message as it is, for a driver whose error chain would not cut to it.
    pub fn new(message: String) -> DriverError {
        DriverError(message)
    }

    /// The deepest message of `err`'s source chain.
    pub fn deepest(err: &(dyn std::error::Error + 'static)) -> DriverError {
        let mut current = err;
        while let Some(next) = current.source() {
            current = next;
        }
        DriverError(current.to_string())
    }
}

impl StoreError {
    /// The store at `url` cannot be reached; `source` is the driver's error.
    pub fn unavailable(kind: StoreKind, url: &super::RedactedUrl, source: &(dyn std::error::Error + 'static)) -> Self {
        StoreError::Unavailable {
            kind,
            url: url.to_string(),
            source: Box::new(DriverError::deepest(source)),
        }
    }

    /// Another process held the lock of the store at `url` for all of `waited` while this one was
    /// doing `operation`; `source` is the driver's error.
    pub fn locked(
        kind: StoreKind,
        operation: &'static str,
        url: &super::RedactedUrl,
        waited: std::time::Duration,
        source: &(dyn std::error::Error + 'static),
    ) -> Self {
        StoreError::Locked {
            kind,
            operation,
            url: url.to_string(),
            waited,
            source: Box::new(DriverError::deepest(source)),
        }
    }

    /// Wraps a driver error met while doing `operation`.
    pub fn query(kind: StoreKind, operation: &'static str, source: impl Into<BoxError>) -> Self {
        StoreError::Query {
            kind,
            operation,
            source: source.into(),
        }
    }

    /// True when the store could not be reached (rather than refusing a request).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}
