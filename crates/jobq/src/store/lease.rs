//! A job's lease, from the claim that takes it to the outcome that ends it: [`Claim`], [`Lease`],
//! [`Heartbeat`] and its [`LeaseState`], [`Transition`] and [`Finish`], and the rescue of a lease
//! whose worker went quiet ([`Rescue`]). The contract of each call is on
//! [`Store`](super::Store).

use std::sync::Arc;

use serde_json::value::RawValue;

use super::{Flow, StoreError};
// Read by the doc links to the calls these types are for.
#[cfg(doc)]
use super::Store;
use crate::job::{Job, JobId, JobStatus, NewJob, Progress};
use crate::time::UnixMillis;

/// Who holds a running job: fences every transition out of `running`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The job.
    pub id: JobId,
    /// The job's queue: a store that keeps each queue's jobs apart (Redis, one hash slot per queue)
    /// finds the job by it.
    pub queue: String,
    /// The job's type: the slots of cluster-wide limits that an outcome frees are counted by it
    /// ([`Store::finish_and_claim`]).
    pub job_type: String,
    /// The attempt the worker is running.
    pub attempt: u32,
    /// The worker that claimed it.
    pub worker: String,
}

impl Lease {
    /// The lease a worker holds on a job it claimed.
    pub fn of(job: &Job) -> Lease {
        Lease {
            id: job.id.clone(),
            queue: job.queue.clone(),
            job_type: job.job_type.clone(),
            attempt: job.attempt,
            worker: job.worker_id.clone().unwrap_or_default(),
        }
    }
}

/// Parameters of [`Store::claim`].
#[derive(Debug, Clone)]
pub struct Claim {
    /// Queues to take from, all treated alike: the job with the smallest (priority, run_at) goes first.
    pub queues: Vec<String>,
    /// Job types not to take now (their per-type limit is reached in this worker).
    pub exclude_types: Vec<String>,
    /// The claiming worker's id, recorded as the lease holder.
    pub worker: String,
    /// At most this many jobs.
    pub limit: u32,
    /// The present; jobs with `run_at <= now` are ready.
    pub now: UnixMillis,
    /// The limits, pauses and blocks the claim respects (see [`Claim::plan`]); empty for a claim that
    /// takes whatever is ready.
    pub flow: Arc<Flow>,
}

impl Claim {
    /// What this claim does to a job it leases (running, next attempt, this worker, started and beating
    /// now, no progress): for stores that read a job before the statement that leases it.
    pub fn lease(&self, job: &mut Job) {
        job.status = JobStatus::Running;
        job.attempt += 1;
        job.worker_id = Some(self.worker.clone());
        job.started_at = Some(self.now);
        job.heartbeat_at = Some(self.now);
        job.progress = None;
    }
}

/// One running job's sign of life.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    /// The lease it is held under.
    pub lease: Lease,
    /// New progress, if the handler reported any since the last beat.
    pub progress: Option<Progress>,
}

/// What a heartbeat learned about one lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// Still running under this lease; the heartbeat was recorded.
    Held,
    /// The job was cancelled; the handler should stop.
    Cancelled,
    /// Still running under this lease (the heartbeat was recorded), but asked to stop: a newer job
    /// of its unique key (mode `cancel-running`) waits for it. The handler should stop, and the job
    /// be recorded [`Transition::Cancelled`].
    CancelRequested,
    /// The lease is gone (rescued, released, finished or deleted); the handler's outcome will be ignored.
    Lost,
}

/// Where a finished attempt sends its job (the handler's [`crate::handler::Outcome`], decided).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Transition {
    /// → succeeded, with the handler's result.
    Succeeded {
        /// JSON result, if any.
        result: Option<Box<RawValue>>,
    },
    /// → pending at `run_at`, error recorded. The caller has checked that attempts remain.
    Retry {
        /// Why the attempt failed.
        error: String,
        /// When to try again.
        run_at: UnixMillis,
        /// The next attempt's own expiry (its type's `expires_per_attempt`), in place of the job's;
        /// `None` keeps the job's expiry.
        expires_at: Option<UnixMillis>,
    },
    /// → dead, error recorded.
    Dead {
        /// Why.
        error: String,
    },
    /// → discarded, reason recorded as the last error.
    Discarded {
        /// Why the handler dropped it.
        reason: String,
    },
    /// → cancelled, reason recorded as the last error: the worker stopped the job because it was
    /// asked to ([`LeaseState::CancelRequested`]).
    Cancelled {
        /// Why.
        reason: String,
    },
    /// → waiting (handed to a third party).
    Waiting,
    /// → pending at `run_at` without spending an attempt (`attempt` goes back to what it was before
    /// the claim) and with `snoozes` counted up; no error recorded. The caller has checked that the
    /// job has snoozes left.
    Snooze {
        /// When to start it again.
        run_at: UnixMillis,
    },
    /// → `blocked` until the children of [`Finish::spawn`] have ended (each edge with the rule
    /// `finish`), then `pending` to run again; the attempt is given back (`attempt` goes back to
    /// what it was before the claim), no error recorded. With no child left to wait for (each has
    /// ended, or already had its edge) it is `pending` at once.
    AwaitChildren,
}

impl Transition {
    /// The status this transition leads to.
    pub fn status(&self) -> JobStatus {
        match self {
            Transition::Succeeded { .. } => JobStatus::Succeeded,
            Transition::Retry { .. } | Transition::Snooze { .. } => JobStatus::Pending,
            Transition::Dead { .. } => JobStatus::Dead,
            Transition::Discarded { .. } => JobStatus::Discarded,
            Transition::Cancelled { .. } => JobStatus::Cancelled,
            Transition::Waiting => JobStatus::Waiting,
            Transition::AwaitChildren => JobStatus::Blocked,
        }
    }

    /// The text recorded in the job's error history, if any.
    pub fn error(&self) -> Option<&str> {
        match self {
            Transition::Retry { error, .. } | Transition::Dead { error } => Some(error),
            Transition::Discarded { reason } | Transition::Cancelled { reason } => Some(reason),
            Transition::Succeeded { .. }
            | Transition::Waiting
            | Transition::Snooze { .. }
            | Transition::AwaitChildren => None,
        }
    }
}

/// One attempt's outcome, for [`Store::finish`].
#[derive(Debug, Clone)]
pub struct Finish {
    /// The lease the attempt ran under.
    pub lease: Lease,
    /// Where the job goes.
    pub outcome: Transition,
    /// Progress reported since the last heartbeat, recorded with the outcome so that the last report
    /// of a quick job is kept; `None` leaves the stored progress as it is.
    pub progress: Option<Progress>,
    /// Jobs the attempt spawned, written with the outcome when it applies (as [`Store::enqueue`]
    /// writes jobs: an id already taken is not written again, a held unique key coalesces); only
    /// with [`Transition::Succeeded`] or [`Transition::AwaitChildren`]. Without dependencies, and on
    /// a store whose [`Store::spawns_across_queues`] is false, all of the job's queue.
    pub spawn: Vec<NewJob>,
}

impl Finish {
    /// Whether the outcome writes more than its job: children, or an await of them.
    pub fn spawns(&self) -> bool {
        !self.spawn.is_empty() || matches!(self.outcome, Transition::AwaitChildren)
    }
}

/// What [`Store::finish_and_claim`] did.
#[derive(Debug)]
pub struct FinishedAndClaimed {
    /// Per outcome, in input order, whether it applied (as [`Store::finish`] answers).
    pub applied: Vec<bool>,
    /// The jobs claimed, in claim order; an error when the claim failed after the outcomes were
    /// written.
    pub claimed: Result<Vec<Job>, StoreError>,
}

/// Parameters of [`Store::rescue`].
#[derive(Debug, Clone, Copy)]
pub struct Rescue {
    /// Running jobs whose last heartbeat is older than this are taken back.
    pub stale_before: UnixMillis,
    /// The present.
    pub now: UnixMillis,
    /// At most this many jobs per call.
    pub limit: u32,
}

/// One job [`Store::rescue`] took back from a lost worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rescued {
    /// The job.
    pub id: JobId,
    /// Its type, for the log line.
    pub job_type: String,
    /// The attempt that was lost.
    pub attempt: u32,
    /// `pending`, or `dead` when its attempts were used up.
    pub status: JobStatus,
}
