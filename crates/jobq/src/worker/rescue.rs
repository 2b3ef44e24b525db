//! The rescue sweep every worker runs in the background: running jobs whose heartbeat is older than
//! `stale_after` (their worker died or lost the store) go back to pending, or to dead when their
//! attempts are used up, with the error `worker lost`.
//!
//! Any worker may sweep, and the store rescues each job atomically, so concurrent sweeps never take
//! one job twice. After each sweep the same task gives up on jobs that waited too long on a third
//! party (`waits.rs`). The sweep never touches a job with a fresh heartbeat: `stale_after` must
//! exceed the heartbeat interval, which the builder checks, so workers never rescue each other's live
//! jobs.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Shared;
use super::settings::rescue_interval;
use crate::job::JobStatus;
use crate::store::Rescue;

/// Jobs rescued per store call.
const RESCUE_BATCH: u32 = 500;

/// Sweeps at start, then every [`rescue_interval`], until `stop` fires.
pub(crate) async fn run(s: Arc<Shared>, stop: CancellationToken) {
    let every = rescue_interval(s.settings.stale_after);
    loop {
        sweep(&s).await;
        // Jobs waiting on a third party past their type's limit, and jobs past their expiry, at the
        // same cadence.
        super::waits::sweep(&s).await;
        super::expiry::sweep(&s).await;
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// One sweep: rescues stale jobs batch by batch until a batch comes back short.
async fn sweep(s: &Shared) {
    loop {
        let now = s.clock.now();
        let params = Rescue {
            stale_before: now.minus(s.settings.stale_after),
            now,
            limit: RESCUE_BATCH,
        };
        let rescued = match s.store.rescue(&params).await {
            Ok(r) => r,
            Err(e) => {
                s.outage
                    .failed("the rescue sweep", &e, "sweeping again at the next round");
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
