//! The acknowledger: writes finished outcomes and releases to the store in batches.
//!
//! Job tasks send their verdicts here instead of writing them: while a batch is being written, the
//! next one gathers, and while other handlers are still running a batch lingers a moment for company,
//! so a busy worker pays one store round trip per batch rather than per job (group commit). The first
//! outcome after a quiet spell is written at once. A store error never drops an outcome: the batch is
//! retried with back-off (the jobs' heartbeats go on meanwhile, so no other worker takes them), and
//! only a forced stop gives up on it, leaving the jobs to the rescue sweep. It logs one line per retry,
//! death, discard and wait, with the job's id and type.
//!
//! Under cluster-wide limits it also claims: a slot frees in the store only when an outcome is
//! written, so it writes its outcomes and claims their replacements in one call
//! ([`crate::store::Store::finish_and_claim`]), sized as the dispatcher sizes its claims and in the
//! same turn (a claim the dispatcher is making meanwhile leaves the outcomes to be written alone).
//! The dispatcher is woken only when that claim fell short of the room the worker has: the rest may
//! be there to take.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Shared, backoff};
use crate::store::{Finish, Lease, Transition};
use crate::time::format_duration;

/// How long a batch waits for more outcomes while other handlers are running.
const LINGER: Duration = Duration::from_millis(2);
/// Most outcomes written in one call.
const MAX_BATCH: usize = 1000;
/// Failed writes in a row after which a stopping worker gives up on a batch.
const GIVE_UP_WHEN_STOPPING: u32 = 8;

/// A verdict waiting to be written.
#[derive(Debug)]
pub(crate) enum Ack {
    /// Record an outcome.
    Finish {
        /// The fenced outcome.
        finish: Finish,
        /// The hold it ends.
        seq: u64,
    },
    /// Put a job back to pending without using an attempt.
    Release {
        /// The lease to give up.
        lease: Lease,
        /// The hold it ends.
        seq: u64,
    },
}

pub(crate) type AckSender = mpsc::UnboundedSender<Ack>;

/// The acknowledger's own way to hand jobs it claims a sender: one that does not keep the channel
/// open once the worker's senders are gone.
pub(crate) type WeakAckSender = mpsc::WeakUnboundedSender<Ack>;

/// Runs until every sender is gone and everything received is written.
pub(crate) async fn run(s: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Ack>, acks: WeakAckSender) {
    let mut batch = Vec::with_capacity(64);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        // Wait for company only while handlers are still running: their outcomes are due soon.
        if s.busy() > 0 {
            let until = Instant::now() + LINGER;
            while batch.len() < MAX_BATCH && s.busy() > 0 {
                match tokio::time::timeout_at(until, rx.recv()).await {
                    Ok(Some(ack)) => batch.push(ack),
                    _ => break,
                }
            }
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(ack) => batch.push(ack),
                Err(_) => break,
            }
        }
        tracing::trace!(worker = %s.id, outcomes = batch.len(), "writing outcomes");
        write(&s, &mut batch, &acks).await;
    }
}

async fn write(s: &Arc<Shared>, batch: &mut Vec<Ack>, acks: &WeakAckSender) {
    let mut finishes = Vec::new();
    let mut finish_seqs = Vec::new();
    let mut releases = Vec::new();
    let mut release_seqs = Vec::new();
    for ack in batch.drain(..) {
        match ack {
            Ack::Finish { finish, seq } => {
                finishes.push(finish);
                finish_seqs.push(seq);
            }
            Ack::Release { lease, seq } => {
                releases.push(lease);
                release_seqs.push(seq);
            }
        }
    }
    if !finishes.is_empty() {
        let (applied, claim_more) = record(s, &finishes, acks).await;
        let applied = applied.unwrap_or_else(|| vec![false; finishes.len()]);
        log_finishes(s, &finishes, &applied);
        forget(s, finishes.iter().map(|f| &f.lease).zip(finish_seqs.iter().copied()));
        // Under a cluster-wide limit the store counts a job's slot until its outcome is written: a
        // claim that found the limit full may now find room. In burst mode the worker ends on an
        // empty claim made holding nothing, which it may do once the last outcomes are written.
        if claim_more && (s.claims_under_limits() || s.burst) {
            s.outcomes_written.notify_one();
        }
    }
    if !releases.is_empty() {
        let list = &releases;
        let released = with_retries(s, "releasing jobs", |_now| async move { s.store.release(list).await }).await;
        let released = released.unwrap_or_else(|| vec![false; releases.len()]);
        for (lease, ok) in releases.iter().zip(&released) {
            if *ok {
                tracing::info!(job_id = %lease.id, job_type = %lease.job_type, attempt = lease.attempt, "job released to pending (attempt not used)");
            }
        }
        forget(s, releases.iter().zip(release_seqs.iter().copied()));
    }
}

/// Writes outcomes, under cluster-wide limits with the claim of their replacements when the turn
/// to claim is free (see the module documentation). What applied (`None`: given up), and whether
/// the dispatcher may find more to claim.
async fn record(s: &Arc<Shared>, finishes: &[Finish], acks: &WeakAckSender) -> (Option<Vec<bool>>, bool) {
    let replacing = s.claims_under_limits() && !s.control.stop.is_cancelled();
    let turn = if replacing { s.claiming.try_lock().ok() } else { None };
    let window = turn.as_ref().map(|_| s.window_freeing(&s.live(), finishes));
    let (Some(_turn), Some(window), Some(acks)) = (turn, window.filter(|w| w.limit > 0), acks.upgrade()) else {
        let applied = with_retries(s, "recording outcomes", |now| async move {
            s.store.finish(finishes, now).await
        })
        .await;
        return (applied, true);
    };
    let window = &window;
    let done = with_retries(s, "recording outcomes", |now| async move {
        s.store.finish_and_claim(finishes, &s.claim_of(window, now)).await
    })
    .await;
    let Some(done) = done else {
        return (None, true);
    };
    match done.claimed {
        Ok(jobs) => {
            let got = jobs.len();
            tracing::trace!(worker = %s.id, asked = window.limit, got, "claimed with outcomes");
            s.start(&s.live(), jobs, &acks).await;
            (Some(done.applied), got < window.limit as usize || s.max_jobs.is_some())
        }
        Err(e) => {
            s.outage.failed("claiming jobs", &e, "the next claim tries again");
            (Some(done.applied), true)
        }
    }
}

/// Calls `op` until it succeeds; `None` when a stopping worker gives up.
async fn with_retries<T, F, Fut>(s: &Shared, what: &str, op: F) -> Option<T>
where
    F: Fn(crate::time::UnixMillis) -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::store::StoreError>>,
{
    let mut failures = 0;
    loop {
        match op(s.clock.now()).await {
            Ok(v) => {
                s.outage.answered();
                return Some(v);
            }
            Err(e) => {
                failures += 1;
                let forced = s.control.kill_now.is_cancelled();
                if (forced && failures >= 2) || (s.control.stop.is_cancelled() && failures >= GIVE_UP_WHEN_STOPPING) {
                    tracing::error!(
                        "{what} failed {failures} times; giving up (the rescue sweep will return these jobs): {}",
                        crate::error::causes(&e)
                    );
                    return None;
                }
                let pause = backoff(failures);
                s.outage
                    .failed(what, &e, &format!("trying again in {}", format_duration(pause)));
                tokio::time::sleep(pause).await;
            }
        }
    }
}

fn log_finishes(s: &Shared, finishes: &[Finish], applied: &[bool]) {
    let now = s.clock.now();
    for (finish, ok) in finishes.iter().zip(applied) {
        let lease = &finish.lease;
        let job_type = &lease.job_type;
        if !ok {
            tracing::info!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "outcome not recorded: the job was cancelled, rescued or deleted meanwhile"
            );
            continue;
        }
        s.jobs_done.fetch_add(1, Ordering::Relaxed);
        match &finish.outcome {
            Transition::Succeeded { .. } => {
                tracing::debug!(job_id = %lease.id, job_type = %job_type, attempt = lease.attempt, "job succeeded")
            }
            Transition::Retry { error, run_at, .. } => tracing::warn!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job failed, retrying in {}: {error}", format_duration(run_at.since(now))
            ),
            Transition::Dead { error } => tracing::error!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job is dead: {error}"
            ),
            Transition::Discarded { reason } => tracing::info!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job discarded: {reason}"
            ),
            Transition::Cancelled { reason } => tracing::info!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job cancelled: {reason}"
            ),
            Transition::Waiting => tracing::info!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job handed off: waiting for resolve"
            ),
            Transition::AwaitChildren => tracing::debug!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job awaits its children ({} spawned)", finish.spawn.len()
            ),
            Transition::Snooze { run_at } => tracing::debug!(
                job_id = %lease.id, job_type = %job_type, attempt = lease.attempt,
                "job snoozed for {}", format_duration(run_at.since(now))
            ),
        }
    }
}

/// Drops written holds, unless the job has been taken on again since (another `seq`).
fn forget<'a>(s: &Shared, holds: impl Iterator<Item = (&'a Lease, u64)>) {
    let mut st = s.lock();
    for (lease, seq) in holds {
        if st.leases.get(&lease.id).is_some_and(|h| h.seq == seq) {
            st.leases.remove(&lease.id);
        }
    }
}
