//! `jobq::Error`: what a library call can fail with, said in fields as well as words, so a caller
//! (the CLI's exit codes, an HTTP API's status codes) can tell refused input from a missing job from
//! a broken store without reading the message.
//!
//! Each `Display` is this layer's own sentence, exactly what `jobq` prints after `error: `; a cause
//! from below (an io error, the store's error) is the `source()`, never repeated in the sentence.
//! Nothing here knows about exit codes: the CLI maps these kinds to them (`cli/exit.rs`), as an
//! HTTP API would map them to status codes.

use std::path::PathBuf;
use std::time::Duration;

pub use crate::input::{Input, InvalidInput};
use crate::job::{JobId, JobStatus};
use crate::store::StoreError;
use crate::time::format_duration;

/// A cause below jobq's own error (an io error, most often).
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why a jobq call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's input was refused (bad payload, queue name, duration…); nothing was written.
    #[error("{reason}")]
    #[non_exhaustive]
    Invalid {
        /// Which input was refused.
        input: Input,
        /// What is wrong with it, as the sentence shown to people.
        reason: String,
        /// What failed underneath, e.g. reading the file the input was to come from.
        #[source]
        source: Option<Cause>,
    },
    /// The jobs asked for do not exist.
    #[error("{}", describe_not_found(ids))]
    #[non_exhaustive]
    NotFound {
        /// The ids that name no job (one, unless a call asked for several).
        ids: Vec<String>,
    },
    /// The jobs are not in a status the call acts on (resolving a job that is not waiting, deleting a
    /// running job without force, retrying a job that has not finished or whose unique key a live job
    /// holds); nothing was changed for them. The sentence names each job, its status and the way out.
    #[error("{reason}")]
    #[non_exhaustive]
    Conflict {
        /// The jobs refused.
        ids: Vec<JobId>,
        /// What is in the way, as the sentence shown to people.
        reason: String,
    },
    /// No schedule of that name is configured.
    #[error("no schedule named {name:?} in the config (jobq schedules lists them)")]
    #[non_exhaustive]
    NoSuchSchedule {
        /// The name asked for.
        name: String,
    },
    /// The configuration is unusable.
    #[error("{reason}")]
    #[non_exhaustive]
    Config {
        /// The config file at fault, when the problem is in one.
        file: Option<PathBuf>,
        /// The key, section or variable at fault, e.g. `[worker] heartbeat` or `JOBQ_CONCURRENCY`.
        key: Option<String>,
        /// What is wrong, as the sentence shown to people.
        reason: String,
        /// What failed underneath, e.g. reading the file.
        #[source]
        source: Option<Cause>,
    },
    /// A wait gave up: the job had not ended when the wait's timeout passed. The sentence names no way
    /// out, which is the caller's to say (the CLI's is its `--timeout` flag).
    #[error("job {id} is still {status} after {}", format_duration(*waited))]
    #[non_exhaustive]
    TimedOut {
        /// The job waited for.
        id: JobId,
        /// Its status when the wait gave up.
        status: JobStatus,
        /// How long the wait lasted.
        waited: Duration,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A message broker (a bridge's source, a `publish` handler's target) could not be reached or
    /// refused what was asked of it. The sentence names the broker without its password.
    #[error("{reason}")]
    #[non_exhaustive]
    Broker {
        /// What failed, naming the broker without its password.
        reason: String,
    },
}

fn describe_not_found(ids: &[String]) -> String {
    match ids {
        [one] => format!("no job with id {one}"),
        many => format!("no jobs with ids {}", many.join(", ")),
    }
}

impl Error {
    /// A broker failure, for `reason` (which must not hold a password).
    pub fn broker(reason: impl Into<String>) -> Error {
        Error::Broker { reason: reason.into() }
    }

    /// `input` refused, for `reason`.
    pub fn invalid(input: Input, reason: impl Into<String>) -> Error {
        Error::Invalid {
            input,
            reason: reason.into(),
            source: None,
        }
    }

    /// `input` refused, for `reason`, because `cause` failed (reading the input, most often).
    pub fn invalid_because(input: Input, reason: impl Into<String>, cause: impl Into<Cause>) -> Error {
        Error::Invalid {
            input,
            reason: reason.into(),
            source: Some(cause.into()),
        }
    }

    /// No job has `id`.
    pub fn not_found(id: impl Into<String>) -> Error {
        Error::NotFound { ids: vec![id.into()] }
    }

    /// The jobs of `ids` are in no status the call acts on, for `reason`.
    pub fn conflict(ids: Vec<JobId>, reason: impl Into<String>) -> Error {
        Error::Conflict {
            ids,
            reason: reason.into(),
        }
    }

    /// No schedule of that name is configured.
    pub fn no_such_schedule(name: impl Into<String>) -> Error {
        Error::NoSuchSchedule { name: name.into() }
    }

    /// The configuration is unusable, for `reason`, about `key` in `file` where one is at fault, with
    /// what failed underneath.
    pub fn config_at(
        file: Option<PathBuf>,
        key: Option<String>,
        reason: impl Into<String>,
        source: Option<Cause>,
    ) -> Error {
        Error::Config {
            file,
            key,
            reason: reason.into(),
            source,
        }
    }

    /// The configuration is unusable, for `reason`, in no particular file or key.
    pub fn config(reason: impl Into<String>) -> Error {
        Error::Config {
            file: None,
            key: None,
            reason: reason.into(),
            source: None,
        }
    }
}

impl From<InvalidInput> for Error {
    fn from(e: InvalidInput) -> Error {
        Error::invalid(e.input, e.reason)
    }
}

/// Shorthand for results of jobq calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error with its causes, each after a colon: what a log line shows, where nothing prints the
/// chain the way the CLI's `error:` line does.
pub fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        // A layer that already repeats its cause's words adds nothing.
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_the_source_and_never_repeated_in_the_sentence() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = Error::invalid_because(Input::Payload, "cannot read payload file p.json", io);
        assert_eq!(err.to_string(), "cannot read payload file p.json");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("no such file"));
        assert!(matches!(
            err,
            Error::Invalid {
                input: Input::Payload,
                ..
            }
        ));
    }

    #[test]
    fn not_found_names_one_id_or_several() {
        assert_eq!(Error::not_found("j1").to_string(), "no job with id j1");
        let many = Error::NotFound {
            ids: vec!["j1".into(), "j2".into()],
        };
        assert_eq!(many.to_string(), "no jobs with ids j1, j2");
    }

    #[test]
    fn a_timed_out_wait_names_the_job_its_status_and_how_long() {
        let err = Error::TimedOut {
            id: JobId::from_stored("j1".into()),
            status: JobStatus::Running,
            waited: Duration::from_millis(2_300),
        };
        assert_eq!(err.to_string(), "job j1 is still running after 2s");
    }

    #[test]
    fn a_job_model_refusal_keeps_its_input_and_takes_a_place() {
        let refusal = InvalidInput::new(Input::Queue, "invalid queue name").at("jobs.ndjson:3");
        assert_eq!(refusal.to_string(), "jobs.ndjson:3: invalid queue name");
        let err = Error::from(refusal);
        assert!(
            matches!(err, Error::Invalid { input: Input::Queue, ref reason, .. } if reason == "jobs.ndjson:3: invalid queue name")
        );
    }

    #[test]
    fn causes_follow_the_error_once_each() {
        let store = StoreError::query(crate::store::StoreKind::Sqlite, "claim", "near \"ORDER\": syntax error");
        assert_eq!(
            causes(&store),
            "sqlite store: claim failed: near \"ORDER\": syntax error"
        );
    }
}
