//! Sweeps every worker runs in the background: rescue of jobs whose worker died, and retention.
//!
//! Rescue takes back running jobs whose heartbeat is older than `stale_after`: any worker may sweep,
//! and the store rescues each job atomically, so concurrent sweeps never take one job twice. Retention
//! deletes terminal jobs that finished longer ago than `retention`, in bounded batches with pauses in
//! between, so it never holds the store's write lock for long.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::job::JobStatus;
use crate::store::{Cleanup, Rescue};

/// Jobs rescued per store call.
const RESCUE_BATCH: u32 = 500;
/// Jobs deleted per store call by retention.
const RETENTION_BATCH: u32 = 1000;
/// Pause between two retention batches, leaving the store to the workers' own writes.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

/// How often the rescue sweep runs: twice per `stale_after`, between 1 s and 1 min, so a lost job is
/// noticed at most 1.5 × `stale_after` after its last heartbeat.
pub(crate) fn rescue_interval(stale_after: Duration) -> Duration {
    (stale_after / 2).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// Sweeps at start, then every [`rescue_interval`], until `stop` fires.
pub(crate) async fn rescue(s: Arc<Shared>, stop: CancellationToken) {
    let every = rescue_interval(s.settings.stale_after);
    loop {
        sweep(&s).await;
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

async fn sweep(s: &Shared) {
    loop {
        let now = s.clock.now();
        let params = Rescue {
            stale_before: now.minus(s.settings.stale_after),
            now,
            limit: RESCUE_BATCH,
        };
        let rescued = {
            let _guard = s.gate().await;
            s.store.rescue(&params).await
        };
        let rescued = match rescued {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("the rescue sweep failed: {e}");
                return;
            }
        };
        for job in &rescued {
            let to = if job.status == JobStatus::Dead {
                "dead (no attempts left)"
            } else {
                "pending"
            };
            tracing::warn!(
                job_id = %job.id, job_type = %job.job_type, attempt = job.attempt,
                "rescued a job from a lost worker (no heartbeat for {}): now {to}",
                crate::time::format_duration(s.settings.stale_after)
            );
        }
        if !rescued.is_empty() {
            // Rescued jobs are ready now: let the dispatcher look at once.
            s.control.wake.notify_one();
        }
        if rescued.len() < RESCUE_BATCH as usize {
            return;
        }
    }
}

/// How often retention looks for expired jobs: twice per retention period, between every second and
/// every five minutes.
pub(crate) fn retention_interval(keep: Duration) -> Duration {
    (keep / 2).clamp(Duration::from_secs(1), Duration::from_secs(300))
}

/// Deletes terminal jobs older than `keep` at start and every [`retention_interval`] until `stop`
/// fires.
pub(crate) async fn retention(s: Arc<Shared>, keep: Duration, stop: CancellationToken) {
    let every = retention_interval(keep);
    loop {
        let mut deleted = 0u64;
        loop {
            let cleanup = Cleanup {
                finished_before: Some(s.clock.now().minus(keep)),
                limit: RETENTION_BATCH,
                ..Default::default()
            };
            let result = {
                let _guard = s.gate().await;
                s.store.cleanup(&cleanup).await
            };
            match result {
                Ok(n) => {
                    deleted += n;
                    if n < u64::from(RETENTION_BATCH) {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!("retention cleanup failed: {e}");
                    break;
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(RETENTION_PAUSE) => {}
            }
        }
        if deleted > 0 {
            tracing::info!(
                "retention: deleted {deleted} finished jobs older than {}",
                crate::time::format_duration(keep)
            );
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
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

    #[test]
    fn retention_runs_twice_per_period_within_bounds() {
        assert_eq!(
            retention_interval(Duration::from_secs(7 * 86_400)),
            Duration::from_secs(300)
        );
        assert_eq!(retention_interval(Duration::from_secs(240)), Duration::from_secs(120));
        assert_eq!(retention_interval(Duration::from_millis(100)), Duration::from_secs(1));
    }
}
