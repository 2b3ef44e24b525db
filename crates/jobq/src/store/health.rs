//! What `jobq doctor` asks a store about, and what the store answers: its own health (a server
//! setting or a file-system fact that puts jobs at risk, [`Store::health`]), the jobs workers keep
//! losing ([`Store::often_rescued`]), a queue's load over a recent window ([`Store::queue_load`],
//! which the autoscaling signal reads), and the jobs finished per time bucket ([`Store::throughput`],
//! which the dashboard charts).
//!
//! A [`Finding`] is one thing that is wrong, with what to do about it. The store makes the findings
//! only it can see (a PostgreSQL setting, a Redis `CONFIG`, the file system under a SQLite file); the
//! findings about jobs are made from the store's answers in `crate::doctor`, so they read the same on
//! every store. Nothing here writes.
//!
//! [`Store::health`]: super::Store::health
//! [`Store::often_rescued`]: super::Store::often_rescued
//! [`Store::queue_load`]: super::Store::queue_load
//! [`Store::throughput`]: super::Store::throughput

use serde::Serialize;

use crate::job::{Job, JobStatus};
use crate::time::UnixMillis;

/// The error a rescue appends to a job's history (`Store::rescue`). The job model keeps no rescue
/// counter: the history, capped at [`crate::job::ERROR_HISTORY_CAP`] entries, is the record, so a job
/// with more errors than that shows only its recent rescues.
pub const RESCUE_ERROR: &str = "worker lost";

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// Jobs are at risk or stuck: act now.
    Error,
    /// Something is drifting and will hurt if left alone.
    Warning,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One thing that is wrong, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// A stable kebab-case name for the kind of finding (`stuck-running`, `redis-no-persistence` …),
    /// for scripts and alert rules.
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it, in one sentence.
    pub advice: String,
    /// The queue it concerns, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// How many jobs (or rows, or bytes) it concerns, if it counts something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Some of the jobs it concerns (at most a handful), to look at with `jobq show`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
}

impl Finding {
    /// A finding with no queue, count or ids.
    pub fn new(code: &'static str, severity: Severity, message: String, advice: String) -> Finding {
        Finding {
            code,
            severity,
            message,
            advice,
            queue: None,
            count: None,
            ids: Vec::new(),
        }
    }

    /// With the queue it concerns.
    pub fn queue(mut self, queue: impl Into<String>) -> Finding {
        self.queue = Some(queue.into());
        self
    }

    /// With what it counts.
    pub fn count(mut self, count: u64) -> Finding {
        self.count = Some(count);
        self
    }

    /// With some of the jobs it concerns.
    pub fn ids(mut self, ids: Vec<String>) -> Finding {
        self.ids = ids;
        self
    }
}

/// Parameters of [`super::Store::health`]: the limits past which a store-specific fact is a finding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Health {
    /// SQLite: a write-ahead log larger than this has not been checkpointed back (a reader that never
    /// ends holds it), and grows without bound.
    pub sqlite_wal_bytes: u64,
    /// PostgreSQL: a jobq table with more dead rows than this, and more than
    /// [`Health::postgres_dead_ratio`] of its live rows, is not being vacuumed fast enough.
    pub postgres_dead_rows: u64,
    /// See `postgres_dead_rows`.
    pub postgres_dead_ratio: f64,
}

impl Default for Health {
    fn default() -> Health {
        Health {
            sqlite_wal_bytes: 1 << 30,
            postgres_dead_rows: 100_000,
            postgres_dead_ratio: 0.2,
        }
    }
}

/// Parameters of [`super::Store::often_rescued`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OftenRescued {
    /// Jobs whose error history holds at least this many [`RESCUE_ERROR`] entries.
    pub at_least: u32,
    /// At most this many jobs.
    pub limit: u32,
}

/// How many rescues a job's error history records.
pub fn rescues(job: &Job) -> usize {
    job.errors.iter().filter(|e| e.error == RESCUE_ERROR).count()
}

/// Parameters of [`super::Store::queue_load`]: one queue, over the window `[since, now]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLoad {
    /// The queue.
    pub queue: String,
    /// The window's start.
    pub since: UnixMillis,
    /// The present, the window's end.
    pub now: UnixMillis,
}

/// A queue's load over a window, from [`super::Store::queue_load`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Load {
    /// Jobs that came due in the window (`run_at` within it), whatever became of them since: new
    /// jobs, retries and replays. Jobs delayed past the window are not demand yet.
    pub arrived: u64,
    /// Jobs that finished a run in the window: succeeded, dead or discarded, with a start time.
    pub finished: u64,
    /// The run times of those, added up (finish minus start of each one's last run), in milliseconds.
    pub busy_ms: u64,
    /// Jobs ready now (pending, `run_at` passed): the backlog.
    pub ready: u64,
    /// Jobs running now.
    pub running: u64,
}

/// Parameters of [`super::Store::throughput`]: the jobs that finished in `buckets` consecutive
/// buckets of `bucket_ms` from `since`, that is in `[since, since + buckets × bucket_ms)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throughput {
    /// These queues (every queue when empty).
    pub queues: Vec<String>,
    /// The first bucket's start.
    pub since: UnixMillis,
    /// A bucket's width in milliseconds (at least 1).
    pub bucket_ms: i64,
    /// How many buckets.
    pub buckets: u32,
}

impl Throughput {
    /// The end of the last bucket (excluded).
    pub fn until(&self) -> UnixMillis {
        UnixMillis(self.since.0 + self.bucket_ms * i64::from(self.buckets))
    }
}

/// How many jobs of a queue finished in a bucket with a status, from [`super::Store::throughput`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishedCount {
    /// The queue.
    pub queue: String,
    /// The bucket, counted from 0 at `since`.
    pub bucket: u32,
    /// The status the jobs finished in (`succeeded`, `dead`, `discarded` or `cancelled`).
    pub status: JobStatus,
    /// How many (never 0: empty buckets are left out).
    pub count: u64,
}
