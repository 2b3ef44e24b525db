//! `jobq::Error`: what a library call can fail with, and the exit code each kind maps to.

use crate::store::StoreError;

/// Why a jobq call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's input was refused (bad payload, queue name, duration…); nothing was written.
    #[error("{0}")]
    Invalid(String),
    /// The job (or other thing) asked for does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The configuration is unusable.
    #[error("{0}")]
    Config(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Error {
    /// The process exit code for this error (DESIGN §5): 2 bad input, 3 not found, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Invalid(_) | Error::Config(_) => 2,
            Error::NotFound(_) => 3,
            Error::Store(StoreError::InvalidUrl { .. }) => 2,
            Error::Store(_) => 1,
        }
    }
}

/// Shorthand for results of jobq calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
