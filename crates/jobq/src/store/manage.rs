//! What an operator (or a third party's callback) does to jobs it names, as the store sees it: resolving
//! a waiting job ([`super::Store::resolve`]), deleting jobs for good ([`super::Store::delete`],
//! [`super::Store::delete_matching`]) and putting a finished job back to pending
//! ([`super::Store::retry`]). The params and answers live here; the contracts are on the trait.
//!
//! What each change writes is worked out once, on a [`Job`], by [`Resolution::apply`] and
//! [`retry_job`], so the SQL stores (which read the locked row, change it and write it back) and the
//! tests agree on every field; Redis's scripts write the same fields.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::job::{ERROR_HISTORY_CAP, Job, JobError, JobId, JobStatus};
use crate::store::JobFilter;
use crate::time::UnixMillis;

/// How a waiting job is finished from outside.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Resolution {
    /// → succeeded, with an optional JSON result.
    Succeed {
        /// Stored as the job's result.
        result: Option<Box<RawValue>>,
    },
    /// → dead, the error recorded.
    Fail {
        /// Why, appended to the error history.
        error: String,
    },
    /// → pending at `run_at`, its attempt unchanged (the next claim makes it the next attempt).
    Retry {
        /// When it may run again.
        run_at: UnixMillis,
        /// Appended to the error history when given.
        error: Option<String>,
    },
    /// → discarded, the reason recorded as the last error.
    Discard {
        /// Why.
        reason: String,
    },
}

impl Resolution {
    /// The status this resolution leads to.
    pub fn status(&self) -> JobStatus {
        match self {
            Resolution::Succeed { .. } => JobStatus::Succeeded,
            Resolution::Fail { .. } => JobStatus::Dead,
            Resolution::Retry { .. } => JobStatus::Pending,
            Resolution::Discard { .. } => JobStatus::Discarded,
        }
    }

    /// The text appended to the error history, if any.
    pub fn error(&self) -> Option<&str> {
        match self {
            Resolution::Fail { error } => Some(error),
            Resolution::Discard { reason } => Some(reason),
            Resolution::Retry { error, .. } => error.as_deref(),
            Resolution::Succeed { .. } => None,
        }
    }

    /// What resolving `job` (waiting) at `now` makes of it: the new status; the result of a success;
    /// the error appended (history capped, oldest entries first out, recorded under the attempt that
    /// parked the job); `finished_at = now` for a terminal outcome, none for a retry, which also moves
    /// `run_at`. The worker was cleared when the job started waiting.
    pub(crate) fn apply(&self, job: &mut Job, now: UnixMillis) {
        job.status = self.status();
        if let Some(error) = self.error() {
            push_error(job, now, error);
        }
        match self {
            Resolution::Succeed { result } => job.result = result.clone(),
            Resolution::Retry { run_at, .. } => job.run_at = *run_at,
            Resolution::Fail { .. } | Resolution::Discard { .. } => {}
        }
        job.finished_at = if job.status.is_terminal() { Some(now) } else { None };
        job.worker_id = None;
    }
}

/// Appends one error to a job's history, dropping the oldest entries past [`ERROR_HISTORY_CAP`].
fn push_error(job: &mut Job, now: UnixMillis, error: &str) {
    push_to_history(&mut job.errors, job.attempt, now, error);
}

/// Appends one error to an error history, dropping the oldest entries past [`ERROR_HISTORY_CAP`].
pub(crate) fn push_to_history(errors: &mut Vec<JobError>, attempt: u32, at: UnixMillis, error: &str) {
    errors.push(JobError {
        attempt,
        at,
        error: error.to_string(),
    });
    let over = errors.len().saturating_sub(ERROR_HISTORY_CAP);
    errors.drain(..over);
}

/// One waiting job to resolve, for [`super::Store::resolve`].
#[derive(Debug, Clone)]
pub struct Resolve {
    /// The job.
    pub id: JobId,
    /// Only while the job waits after this attempt, when given: a job resolved and parked again
    /// meanwhile (a later attempt) is left as it is. A sweep that read the job earlier fences with it.
    pub attempt: Option<u32>,
    /// Where it goes.
    pub action: Resolution,
}

/// What [`super::Store::resolve`] did with one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ResolveAnswer {
    /// It was waiting and now has this status.
    Resolved {
        /// Its new status.
        status: JobStatus,
    },
    /// It was not waiting (or was waiting after another attempt than asked); nothing changed.
    NotWaiting {
        /// Its status.
        status: JobStatus,
    },
    /// No such job.
    NotFound,
}

/// Parameters of [`super::Store::delete`].
#[derive(Debug, Clone, Default)]
pub struct Delete {
    /// The jobs.
    pub ids: Vec<JobId>,
    /// Delete running and waiting jobs too (otherwise they are refused).
    pub force: bool,
}

/// What [`super::Store::delete`] did with one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DeleteAnswer {
    /// Deleted; it had this status.
    Deleted {
        /// Its status before.
        previous: JobStatus,
    },
    /// Running or waiting, and the call did not force: left as it is.
    Refused {
        /// Its status.
        status: JobStatus,
    },
    /// No such job.
    NotFound,
}

/// Parameters of [`super::Store::delete_matching`].
#[derive(Debug, Clone, Default)]
pub struct DeleteMatching {
    /// Which jobs: queues, types, statuses (any when empty) and creation times.
    pub filter: JobFilter,
    /// Delete running and waiting jobs too (otherwise they are left and counted).
    pub force: bool,
    /// Delete at most this many in this call (bounded batches keep locks short).
    pub limit: u32,
}

/// What [`super::Store::delete_matching`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedCount {
    /// Jobs deleted.
    pub deleted: u64,
    /// Running or waiting jobs that match and were left because the call did not force.
    pub refused: u64,
}

/// Parameters of [`super::Store::retry`].
#[derive(Debug, Clone, Default)]
pub struct Retry {
    /// The jobs.
    pub ids: Vec<JobId>,
    /// The present: the jobs run from now.
    pub now: UnixMillis,
}

/// What [`super::Store::retry`] did with one job.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RetryAnswer {
    /// Back to pending; the job as it is now.
    Retried(Box<Job>),
    /// It has not finished (pending, running or waiting): left as it is.
    NotTerminal {
        /// Its status.
        status: JobStatus,
    },
    /// A live job of its queue holds its unique key: left as it is.
    KeyTaken {
        /// The live job holding the key.
        holder: JobId,
    },
    /// No such job.
    NotFound,
}

/// What [`super::Store::retry`] does to a finished job (the same as a replay of a dead one): pending,
/// runnable at `now`, attempt 0, error history kept, and its last run forgotten (result, start, finish,
/// worker, heartbeat, progress).
pub(crate) fn retry_job(job: &mut Job, now: UnixMillis) {
    job.status = JobStatus::Pending;
    job.attempt = 0;
    job.snoozes = 0;
    job.run_at = now;
    job.result = None;
    job.started_at = None;
    job.finished_at = None;
    job.worker_id = None;
    job.heartbeat_at = None;
    job.progress = None;
    job.expires_at = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::test_job;

    fn waiting(attempt: u32, errors: usize) -> Job {
        let mut job = test_job("t", "{}");
        job.status = JobStatus::Waiting;
        job.attempt = attempt;
        job.finished_at = Some(UnixMillis(5));
        job.errors = (0..errors)
            .map(|n| JobError {
                attempt: 1,
                at: UnixMillis(n as i64),
                error: format!("e{n}"),
            })
            .collect();
        job
    }

    #[test]
    fn each_resolution_writes_its_status_times_and_error() {
        let now = UnixMillis(1_000);
        let mut job = waiting(2, 0);
        let result = RawValue::from_string("{\"ok\":true}".into()).unwrap();
        Resolution::Succeed { result: Some(result) }.apply(&mut job, now);
        assert_eq!((job.status, job.finished_at), (JobStatus::Succeeded, Some(now)));
        assert_eq!(job.result.as_ref().map(|r| r.get()), Some("{\"ok\":true}"));
        assert!(job.errors.is_empty());

        let mut job = waiting(2, 0);
        Resolution::Fail { error: "no".into() }.apply(&mut job, now);
        assert_eq!((job.status, job.finished_at), (JobStatus::Dead, Some(now)));
        assert_eq!(
            job.errors,
            vec![JobError {
                attempt: 2,
                at: now,
                error: "no".into()
            }]
        );

        let mut job = waiting(2, 0);
        let later = UnixMillis(9_000);
        Resolution::Retry {
            run_at: later,
            error: None,
        }
        .apply(&mut job, now);
        assert_eq!(
            (job.status, job.finished_at, job.run_at),
            (JobStatus::Pending, None, later)
        );
        assert_eq!((job.attempt, job.errors.len()), (2, 0));

        let mut job = waiting(2, 0);
        Resolution::Discard { reason: "stale".into() }.apply(&mut job, now);
        assert_eq!((job.status, job.finished_at), (JobStatus::Discarded, Some(now)));
        assert_eq!(job.errors.last().map(|e| e.error.as_str()), Some("stale"));
    }

    #[test]
    fn a_resolution_keeps_the_error_history_capped() {
        let mut job = waiting(3, ERROR_HISTORY_CAP);
        let error = Some("late".to_string());
        Resolution::Retry {
            run_at: UnixMillis(2),
            error,
        }
        .apply(&mut job, UnixMillis(1));
        assert_eq!(job.errors.len(), ERROR_HISTORY_CAP);
        assert_eq!(job.errors.first().map(|e| e.error.as_str()), Some("e1"));
        assert_eq!(job.errors.last().map(|e| e.error.as_str()), Some("late"));
    }

    #[test]
    fn a_retried_job_forgets_its_last_run_and_keeps_its_errors() {
        let mut job = waiting(4, 2);
        job.status = JobStatus::Succeeded;
        job.started_at = Some(UnixMillis(1));
        job.heartbeat_at = Some(UnixMillis(2));
        job.worker_id = Some("w".into());
        retry_job(&mut job, UnixMillis(77));
        assert_eq!(
            (job.status, job.attempt, job.run_at),
            (JobStatus::Pending, 0, UnixMillis(77))
        );
        assert_eq!((job.started_at, job.finished_at, job.heartbeat_at), (None, None, None));
        assert!(job.worker_id.is_none() && job.result.is_none() && job.progress.is_none());
        assert_eq!(job.errors.len(), 2);
    }
}
