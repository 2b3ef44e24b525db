//! [`WorkerSettings`]: how a worker runs (queues, concurrency, heartbeat, rescue, shutdown,
//! retention, polling, the scheduler, queue limits), resolved. The application reads them from its
//! config file and flags; the worker only takes them.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::job::JobStatus;

/// Worker settings, resolved.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WorkerSettings {
    /// Queues to serve.
    pub queues: Vec<String>,
    /// Jobs at once.
    pub concurrency: u32,
    /// Heartbeat interval.
    pub heartbeat: Duration,
    /// Rescue threshold.
    pub stale_after: Duration,
    /// Shutdown grace.
    pub shutdown_timeout: Duration,
    /// Delete terminal jobs older than this (every terminal status that `retention_by_status` does
    /// not name).
    pub retention: Option<Duration>,
    /// How long terminal jobs of a status are kept, in place of `retention` for that status (dead
    /// letters for 30 days, successes for an hour). Only terminal statuses count.
    pub retention_by_status: BTreeMap<JobStatus, Duration>,
    /// Keep only the newest this many terminal jobs of each queue and status, whatever their age
    /// (older ones go as if their time had passed).
    pub retention_keep_last: Option<u32>,
    /// A job type's own retention, over the rules above for the statuses (and the count) it names.
    pub retention_by_type: BTreeMap<String, Retention>,
    /// Idle poll interval.
    pub poll_interval: Duration,
    /// Runs the scheduler beside the dispatcher.
    pub schedules: bool,
    /// Cluster-wide limits per queue (`[queues.name]`).
    pub queue_limits: Vec<crate::store::Limit>,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings {
            queues: vec![crate::job::DEFAULT_QUEUE.to_string()],
            concurrency: 8,
            heartbeat: Duration::from_secs(10),
            stale_after: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(30),
            retention: None,
            retention_by_status: BTreeMap::new(),
            retention_keep_last: None,
            retention_by_type: BTreeMap::new(),
            poll_interval: Duration::from_millis(200),
            schedules: true,
            queue_limits: Vec::new(),
        }
    }
}

/// A job type's own retention ([`WorkerSettings::retention_by_type`]): what it names replaces the
/// worker's rule for that status (or count); what it does not name follows the worker's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retention {
    /// How long the type's terminal jobs of a status are kept.
    pub by_status: BTreeMap<JobStatus, Duration>,
    /// Keep only the newest this many of the type's terminal jobs of each queue and status.
    pub keep_last: Option<u32>,
}

/// How often the rescue sweep runs: twice per `stale_after`, between 1 s and 1 min, so a lost job is
/// noticed at most 1.5 × `stale_after` after its last heartbeat (the doctor judges a late rescue by
/// the same cadence).
pub fn rescue_interval(stale_after: Duration) -> Duration {
    (stale_after / 2).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_runs_twice_per_stale_period_within_bounds() {
        assert_eq!(rescue_interval(Duration::from_secs(60)), Duration::from_secs(30));
        assert_eq!(rescue_interval(Duration::from_millis(500)), Duration::from_secs(1));
        assert_eq!(rescue_interval(Duration::from_secs(3600)), Duration::from_secs(60));
    }
}
