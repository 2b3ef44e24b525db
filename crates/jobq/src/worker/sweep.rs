//! Retention: a worker configured with `retention` (or a retention per status) deletes terminal jobs
//! (succeeded, dead, cancelled, discarded, expired) that finished longer ago than their status keeps
//! them, in the background.
//!
//! It deletes in bounded batches with pauses in between, so it never holds the store's write lock for
//! long against the workers' own writes. It never deletes a job that is not terminal, and never one
//! younger than its status's retention: the store's cleanup applies both conditions in the statement
//! itself (one cleanup per group of statuses kept alike).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Shared, WorkerSettings};
use crate::job::JobStatus;
use crate::store::{Cleanup, JobFilter};
use crate::time::format_duration;

/// Jobs deleted per store call by retention.
const RETENTION_BATCH: u32 = 1000;
/// Pause between two retention batches, leaving the store to the workers' own writes.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

/// How often retention looks for expired jobs: twice per retention period, between every second and
/// every five minutes.
pub(crate) fn retention_interval(keep: Duration) -> Duration {
    (keep / 2).clamp(Duration::from_secs(1), Duration::from_secs(300))
}

/// What retention deletes: each time to keep jobs for, with the terminal statuses kept that long,
/// shortest first; empty when nothing is ever deleted.
pub(crate) fn plan(settings: &WorkerSettings) -> Vec<(Duration, Vec<JobStatus>)> {
    let mut by_time: BTreeMap<Duration, Vec<JobStatus>> = BTreeMap::new();
    for status in JobStatus::ALL.into_iter().filter(|s| s.is_terminal()) {
        let keep = settings
            .retention_by_status
            .get(&status)
            .copied()
            .or(settings.retention);
        if let Some(keep) = keep {
            by_time.entry(keep).or_default().push(status);
        }
    }
    by_time.into_iter().collect()
}

/// Deletes terminal jobs older than their status's time in `plan` (see [`plan`]) at start and every
/// [`retention_interval`] of the shortest until `stop` fires.
pub(crate) async fn run(s: Arc<Shared>, plan: Vec<(Duration, Vec<JobStatus>)>, stop: CancellationToken) {
    let Some(&(shortest, _)) = plan.first() else {
        return;
    };
    let every = retention_interval(shortest);
    loop {
        for (keep, statuses) in &plan {
            let Some(deleted) = delete_older(&s, *keep, statuses, &stop).await else {
                return;
            };
            if deleted > 0 {
                tracing::info!(
                    "retention: deleted {deleted} finished jobs ({}) older than {}",
                    statuses.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                    format_duration(*keep)
                );
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Deletes the jobs of `statuses` that finished longer than `keep` ago, a batch at a time; returns
/// how many, or `None` when `stop` fired.
async fn delete_older(s: &Shared, keep: Duration, statuses: &[JobStatus], stop: &CancellationToken) -> Option<u64> {
    let mut deleted = 0u64;
    loop {
        let cleanup = Cleanup {
            filter: JobFilter {
                statuses: statuses.to_vec(),
                ..Default::default()
            },
            finished_before: Some(s.clock.now().minus(keep)),
            limit: RETENTION_BATCH,
            ..Default::default()
        };
        match s.store.cleanup(&cleanup).await {
            Ok(n) => {
                deleted += n;
                if n < u64::from(RETENTION_BATCH) {
                    return Some(deleted);
                }
            }
            Err(e) => {
                s.outage
                    .failed("retention cleanup", &e, "cleaning up again at the next round");
                return Some(deleted);
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tokio::time::sleep(RETENTION_PAUSE) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_runs_twice_per_period_within_bounds() {
        assert_eq!(
            retention_interval(Duration::from_secs(7 * 86_400)),
            Duration::from_secs(300)
        );
        assert_eq!(retention_interval(Duration::from_secs(240)), Duration::from_secs(120));
        assert_eq!(retention_interval(Duration::from_millis(100)), Duration::from_secs(1));
    }

    #[test]
    fn each_terminal_status_is_kept_for_its_own_time_or_the_default() {
        let (hour, day) = (Duration::from_secs(3600), Duration::from_secs(86_400));
        let mut settings = WorkerSettings::default();
        assert!(plan(&settings).is_empty(), "no retention: nothing is ever deleted");
        settings.retention_by_status.insert(JobStatus::Succeeded, hour);
        assert_eq!(plan(&settings), [(hour, vec![JobStatus::Succeeded])]);
        settings.retention = Some(day);
        settings.retention_by_status.insert(JobStatus::Dead, 30 * day);
        assert_eq!(
            plan(&settings),
            [
                (hour, vec![JobStatus::Succeeded]),
                (
                    day,
                    vec![JobStatus::Cancelled, JobStatus::Discarded, JobStatus::Expired]
                ),
                (30 * day, vec![JobStatus::Dead]),
            ]
        );
    }
}
