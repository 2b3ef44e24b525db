//! Signs of life: the job heartbeat, which keeps this worker's leases from being rescued, carries
//! handlers' progress and brings back cancellation; and the registry entry `jobq workers` lists.
//!
//! Every `heartbeat` interval one batched call covers every job the worker holds. Progress reports
//! wake the heartbeat early, but at most once per [`PROGRESS_EVERY`], and then only the jobs with news
//! are sent. The store's answer per lease steers the handler: `Cancelled` stops it and the job stays
//! cancelled; `Lost` (rescued elsewhere, deleted) stops it and its outcome is dropped.
//!
//! It never writes an outcome: a cancelled or lost lease only stops the handler, and the run's verdict
//! (`run.rs`) decides what, if anything, the acknowledger writes for the job.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::handler::{JobContext, StopReason};
use crate::store::{Heartbeat, LeaseState, WorkerInfo};

/// Least time between two progress-only heartbeats.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Beats until `stop` fires.
pub(crate) async fn run(s: Arc<Shared>, stop: CancellationToken) {
    let every = s.settings.heartbeat;
    let mut next_full = Instant::now() + every;
    let mut last_progress = Instant::now() - PROGRESS_EVERY;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep_until(next_full) => {
                beat(&s, true).await;
                next_full = Instant::now() + every;
            }
            _ = s.progress.notified() => {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep_until(last_progress + PROGRESS_EVERY) => {}
                }
                beat(&s, false).await;
                last_progress = Instant::now();
            }
        }
    }
}

/// One heartbeat call: for every held job (`all`), or only those with progress to report.
async fn beat(s: &Shared, all: bool) {
    let (beats, contexts): (Vec<Heartbeat>, Vec<(JobContext, bool, String)>) = {
        let st = s.lock();
        st.leases
            .values()
            // A job being stopped for cancellation or a lost lease is no longer this worker's to keep.
            .filter(|h| !matches!(h.cx.stop_reason(), Some(StopReason::Cancelled | StopReason::Lost)))
            .filter_map(|h| {
                let progress = h.cx.take_progress();
                if !all && progress.is_none() {
                    return None;
                }
                Some((
                    Heartbeat {
                        lease: h.lease.clone(),
                        progress,
                    },
                    (h.cx.clone(), h.done, h.lease.job_type.clone()),
                ))
            })
            .unzip()
    };
    if beats.is_empty() {
        return;
    }
    let states = match s.store.heartbeat(&beats, s.clock.now()).await {
        Ok(states) => {
            s.outage.answered();
            states
        }
        Err(e) => {
            let what = format!("the heartbeat of {} jobs", beats.len());
            s.outage.failed(&what, &e, "beating again at the next heartbeat");
            return;
        }
    };
    for ((beat, (cx, done, job_type)), state) in beats.iter().zip(contexts).zip(states) {
        // A finished handler's outcome is on its way; the acknowledger reports what became of it.
        if done {
            continue;
        }
        let lease = &beat.lease;
        match state {
            LeaseState::Held => {}
            LeaseState::Cancelled => {
                tracing::debug!(job_id = %lease.id, job_type = %job_type, "job cancelled; stopping its handler");
                cx.stop(StopReason::Cancelled);
            }
            LeaseState::CancelRequested => {
                tracing::debug!(job_id = %lease.id, job_type = %job_type, "a newer job of its unique key cancels it; stopping its handler");
                cx.stop(StopReason::Superseded);
            }
            LeaseState::Lost => {
                tracing::debug!(job_id = %lease.id, job_type = %job_type, "lease lost; stopping its handler");
                cx.stop(StopReason::Lost);
            }
        }
    }
}

/// Enters the worker in the registry.
pub(crate) async fn register(s: &Shared) -> crate::Result<()> {
    // The store answered moments ago (the worker connected and migrated), so a failure here is a
    // passing one, such as a connection killed under it: try again a few times before giving up.
    let mut failures = 0;
    loop {
        match s.store.register_worker(&entry(s)).await {
            Ok(()) => return Ok(()),
            Err(e) if failures < REGISTER_TRIES => {
                failures += 1;
                let pause = super::backoff(failures);
                tracing::warn!(
                    "joining the worker registry failed (trying again in {}): {}",
                    crate::time::format_duration(pause),
                    crate::error::causes(&e)
                );
                tokio::time::sleep(pause).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Tries of the first registration beyond the first (100 ms doubling: about 6 s in all).
const REGISTER_TRIES: u32 = 6;

/// Refreshes the registry entry every heartbeat interval until `stop` fires.
pub(crate) async fn registry(s: Arc<Shared>, stop: CancellationToken) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(s.settings.heartbeat) => {}
        }
        match s.store.register_worker(&entry(&s)).await {
            Ok(()) => s.outage.answered(),
            Err(e) => s
                .outage
                .failed("refreshing the worker registry", &e, "again at the next heartbeat"),
        }
    }
}

fn entry(s: &Shared) -> WorkerInfo {
    let mut info = s.info.clone();
    info.last_seen_at = s.clock.now();
    info.jobs_done = s.jobs_done.load(Ordering::Relaxed);
    info
}
