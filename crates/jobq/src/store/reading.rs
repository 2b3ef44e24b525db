//! What `list` and `stats` read: the job filter shared by list, cancel and stats, a page's keyset
//! cursor, and the counts per queue and status.

use serde::Serialize;

use crate::job::{Job, JobId, JobStatus};
use crate::time::UnixMillis;

/// Filters shared by list, cancel and stats. Empty vectors and `None` mean "any".
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    /// Only these queues.
    pub queues: Vec<String>,
    /// Only these types.
    pub job_types: Vec<String>,
    /// Only these statuses.
    pub statuses: Vec<JobStatus>,
    /// Created at or after.
    pub created_since: Option<UnixMillis>,
    /// Created before.
    pub created_until: Option<UnixMillis>,
}

/// Parameters of [`Store::list`](crate::store::Store::list): newest first.
#[derive(Debug, Clone, Default)]
pub struct List {
    /// Which jobs.
    pub filter: JobFilter,
    /// Page size.
    pub limit: u32,
    /// Jobs to skip (after `after`, when given).
    pub offset: u64,
    /// Only jobs that come after this one in list order: the keyset cursor of the page before, which
    /// costs the same however deep the page is, where an offset costs the jobs it skips.
    pub after: Option<ListCursor>,
}

/// A place in list order (`created_at`, then id, both descending): the last job of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCursor {
    /// The job's creation time.
    pub created_at: UnixMillis,
    /// The job's id.
    pub id: JobId,
}

impl ListCursor {
    /// The cursor just past `job`.
    pub fn of(job: &Job) -> ListCursor {
        ListCursor {
            created_at: job.created_at,
            id: job.id.clone(),
        }
    }
}

/// Counts by queue and status, from [`Store::stats`](crate::store::Store::stats).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatsReport {
    /// One row per queue that has jobs, ordered by name.
    pub queues: Vec<QueueStats>,
}

/// One queue's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueStats {
    /// The queue.
    pub queue: String,
    /// Waiting for other jobs to end.
    pub blocked: u64,
    /// Pending and ready to run now.
    pub ready: u64,
    /// Pending with `run_at` in the future (delayed, scheduled or backing off).
    pub scheduled: u64,
    /// Running.
    pub running: u64,
    /// Waiting on a third party.
    pub waiting: u64,
    /// Succeeded.
    pub succeeded: u64,
    /// Dead.
    pub dead: u64,
    /// Cancelled.
    pub cancelled: u64,
    /// Discarded.
    pub discarded: u64,
    /// Expired: not started before their expiry.
    pub expired: u64,
    /// `run_at` of the oldest ready job: how long the queue has kept someone waiting.
    pub oldest_ready_at: Option<UnixMillis>,
}

impl QueueStats {
    /// Counts `n` jobs of `status` (text as stored). Pending ones all count as ready until
    /// [`QueueStats::split_pending`] takes the scheduled ones out; an unknown status is left out.
    pub fn count_status(&mut self, status: &str, n: u64) {
        match status.parse::<JobStatus>() {
            Ok(JobStatus::Blocked) => self.blocked = n,
            Ok(JobStatus::Pending) => self.ready = n,
            Ok(JobStatus::Running) => self.running = n,
            Ok(JobStatus::Waiting) => self.waiting = n,
            Ok(JobStatus::Succeeded) => self.succeeded = n,
            Ok(JobStatus::Dead) => self.dead = n,
            Ok(JobStatus::Cancelled) => self.cancelled = n,
            Ok(JobStatus::Discarded) => self.discarded = n,
            Ok(JobStatus::Expired) => self.expired = n,
            Err(_) => {}
        }
    }

    /// Takes the `scheduled` (pending, due later) out of the pending counted as ready, and records
    /// the oldest ready job's `run_at`.
    pub fn split_pending(&mut self, scheduled: u64, oldest_ready_at: Option<UnixMillis>) {
        self.scheduled = scheduled.min(self.ready);
        self.ready -= self.scheduled;
        self.oldest_ready_at = oldest_ready_at;
    }

    /// Every job in the queue.
    pub fn total(&self) -> u64 {
        self.blocked
            + self.ready
            + self.scheduled
            + self.running
            + self.waiting
            + self.succeeded
            + self.dead
            + self.cancelled
            + self.discarded
            + self.expired
    }

    /// The count for one status (`pending` is ready + scheduled).
    pub fn count(&self, status: JobStatus) -> u64 {
        match status {
            JobStatus::Blocked => self.blocked,
            JobStatus::Pending => self.ready + self.scheduled,
            JobStatus::Running => self.running,
            JobStatus::Waiting => self.waiting,
            JobStatus::Succeeded => self.succeeded,
            JobStatus::Dead => self.dead,
            JobStatus::Cancelled => self.cancelled,
            JobStatus::Discarded => self.discarded,
            JobStatus::Expired => self.expired,
        }
    }
}

/// Parameters of [`Store::stats`](crate::store::Store::stats).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Only these queues (all when empty).
    pub queues: Vec<String>,
    /// The present, to tell ready from scheduled.
    pub now: UnixMillis,
}
