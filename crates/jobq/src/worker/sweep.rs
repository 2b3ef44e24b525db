//! Retention: a worker configured with `retention` deletes terminal jobs (succeeded, dead, cancelled,
//! discarded) that finished longer ago than that, in the background.
//!
//! It deletes in bounded batches with pauses in between, so it never holds the store's write lock for
//! long against the workers' own writes. It never deletes a job that is not terminal, and never one
//! younger than `retention`: the store's cleanup applies both conditions in the statement itself.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::store::Cleanup;

/// Jobs deleted per store call by retention.
const RETENTION_BATCH: u32 = 1000;
/// Pause between two retention batches, leaving the store to the workers' own writes.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

/// How often retention looks for expired jobs: twice per retention period, between every second and
/// every five minutes.
pub(crate) fn retention_interval(keep: Duration) -> Duration {
    (keep / 2).clamp(Duration::from_secs(1), Duration::from_secs(300))
}

/// Deletes terminal jobs older than `keep` at start and every [`retention_interval`] until `stop`
/// fires.
pub(crate) async fn run(s: Arc<Shared>, keep: Duration, stop: CancellationToken) {
    let every = retention_interval(keep);
    loop {
        let mut deleted = 0u64;
        loop {
            let cleanup = Cleanup {
                finished_before: Some(s.clock.now().minus(keep)),
                limit: RETENTION_BATCH,
                ..Default::default()
            };
            match s.store.cleanup(&cleanup).await {
                Ok(n) => {
                    deleted += n;
                    if n < u64::from(RETENTION_BATCH) {
                        break;
                    }
                }
                Err(e) => {
                    s.outage
                        .failed("retention cleanup", &e, "cleaning up again at the next round");
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
    fn retention_runs_twice_per_period_within_bounds() {
        assert_eq!(
            retention_interval(Duration::from_secs(7 * 86_400)),
            Duration::from_secs(300)
        );
        assert_eq!(retention_interval(Duration::from_secs(240)), Duration::from_secs(120));
        assert_eq!(retention_interval(Duration::from_millis(100)), Duration::from_secs(1));
    }
}
