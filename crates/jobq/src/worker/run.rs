//! One job's run: its handler under the time-out and the stop signal, with panics caught; the verdict
//! on how it ended (decided in `outcome.rs`); the verdict handed to the acknowledger; and then, while
//! prefetched jobs wait in the local queue, the next of them in the same task and slot.
//!
//! A run never writes to the store: every verdict, and every prefetched job given back, goes to the
//! acknowledger (`ack.rs`), which batches the writes and fences each by its lease. A handler that
//! does not stop within its grace is abandoned rather than waited for, so a stuck handler can hold
//! its slot no longer than the kill grace past its stop.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;

use super::ack::{Ack, AckSender};
use super::outcome::{self, RunEnd, Verdict};
use super::{Queued, Registered, Shared, spawn};
use crate::handler::{self, JobContext, Outcome, StopReason};
use crate::job::{Job, NewJob};
use crate::store::{Finish, Lease, ReadEdges, StoreError, Transition};

/// Time a stopped handler gets beyond the kill grace before the worker abandons it.
const STOP_MARGIN: Duration = Duration::from_secs(1);

/// Runs one job's handler and hands its verdict to the acknowledger; then, while prefetched jobs
/// wait, runs those in the same task and slot.
pub(super) async fn run_job(s: Arc<Shared>, job: Job, reg: Arc<Registered>, cx: JobContext, acks: AckSender, seq: u64) {
    let mut next = Some(Queued { job, reg, cx, seq });
    while let Some(queued) = next.take() {
        next = run_one(&s, queued, &acks).await;
        // Handlers turned slow: the rest of the local queue goes back for other workers to take.
        if next.is_some() && ((s.control.stop.is_cancelled() && !s.control.keeps_prefetched()) || s.turned_slow()) {
            release_queued(&s, &acks);
        }
    }
}

/// Runs one job and hands its verdict over; returns the prefetched job that takes its slot, if any.
async fn run_one(s: &Shared, Queued { mut job, reg, cx, seq }: Queued, acks: &AckSender) -> Option<Queued> {
    // Its handler is owed how its dependencies ended. A store out of reach gives the job back, its
    // attempt unused, for a later claim; any other failure to read them is the attempt's, retried
    // with back-off like a handler's error, so that a job whose edges cannot be read ends dead
    // rather than coming back for ever.
    let unread = if job.has_dependencies {
        read_dependencies(s, &mut job).await.err()
    } else {
        None
    };
    if let Some(e) = unread.as_ref().filter(|e| e.is_unavailable()) {
        tracing::warn!(job_id = %job.id, error = %e, "cannot read the job's dependencies: it goes back to pending");
        let next = s.end_run(&job, seq, reg.concurrency.is_some(), false);
        hand_over(acks, Verdict::Release, None, &job, &cx, seq, Vec::new());
        return next;
    }
    let timeout = job.timeout_ms.map(Duration::from_millis).or(reg.timeout);
    let started = tokio::time::Instant::now();
    // A prefetched job may have been cancelled (or the worker stopped) while it waited.
    let end = if cx.is_cancelled() {
        RunEnd::Abandoned
    } else if let Some(e) = unread {
        RunEnd::Answered(Outcome::retry(format!("cannot read the job's dependencies: {e}")))
    } else {
        run_handler(&reg, &job, &cx, timeout).await
    };
    s.record_run(started.elapsed());
    let (end, children) = spawn::children_of(s.store.as_ref(), &job, &cx, end, s.clock.now());
    let allowance = outcome::Allowance {
        attempts: outcome::max_attempts(&job, &reg.retry, &reg.default_retry),
        snoozes: reg.max_snoozes,
    };
    let stop = cx.stop_reason();
    let unit = rand::random();
    if stop.is_none()
        && let RunEnd::Answered(Outcome::RateLimited { delay }) = &end
    {
        let delay = delay.unwrap_or_else(|| outcome::back_pressure_delay(&job, &reg.retry, unit));
        s.back_pressure(&job, &reg, delay);
    }
    let mut verdict = outcome::verdict(end, stop, &job, &reg.retry, allowance, s.clock.now(), unit);
    if let (Verdict::Finish(Transition::Retry { run_at, expires_at, .. }), Some(within)) =
        (&mut verdict, reg.expires_per_attempt)
    {
        *expires_at = Some(run_at.plus(within));
    }
    // Hand the slot on (or free it) before handing the verdict over: the acknowledger stops
    // waiting for company once no handler is running, and the dispatcher can claim while the
    // outcome is being written.
    let next = s.end_run(&job, seq, reg.concurrency.is_some(), matches!(verdict, Verdict::Forget));
    hand_over(acks, verdict, stop, &job, &cx, seq, children);
    next
}

/// Reads how a job's dependencies ended, with their results, for its envelope (`deps`).
async fn read_dependencies(s: &Shared, job: &mut Job) -> Result<(), StoreError> {
    let read = ReadEdges {
        ids: vec![job.id.clone()],
        queue: Some(job.queue.clone()),
        dependents: false,
        results: true,
    };
    let mut edges = s.store.edges(&read).await?;
    job.deps = edges.pop().map(|e| e.dependencies).unwrap_or_default();
    Ok(())
}

/// Sends a verdict to the acknowledger, with the run's children (`spawn::children_of` kept them only
/// for a success or an await); a job to forget only gets its log line.
fn hand_over(
    acks: &AckSender,
    verdict: Verdict,
    stop: Option<StopReason>,
    job: &Job,
    cx: &JobContext,
    seq: u64,
    children: Vec<NewJob>,
) {
    let lease = Lease::of(job);
    match verdict {
        Verdict::Finish(outcome) => {
            let _ = acks.send(Ack::Finish {
                finish: Finish {
                    lease,
                    outcome,
                    // The last report, which a job quicker than the progress heartbeat (or a
                    // heartbeat overtaken by this outcome) would otherwise lose.
                    progress: cx.last_progress(),
                    spawn: children,
                },
                seq,
            });
        }
        Verdict::Release => {
            let _ = acks.send(Ack::Release { lease, seq });
        }
        Verdict::Forget => match stop {
            Some(StopReason::Cancelled) => tracing::info!(
                job_id = %job.id, job_type = %job.job_type, attempt = job.attempt,
                "job cancelled: its handler was stopped"
            ),
            _ => tracing::warn!(
                job_id = %job.id, job_type = %job.job_type, attempt = job.attempt,
                "lease lost (the job was rescued or deleted meanwhile): its handler was stopped and its outcome dropped"
            ),
        },
    }
}

/// Gives prefetched jobs back to pending (no attempt used).
pub(super) fn release_queued(s: &Shared, acks: &AckSender) {
    let queued = s.unqueue();
    if queued.is_empty() {
        return;
    }
    tracing::debug!("releasing {} prefetched jobs", queued.len());
    for q in queued {
        q.cx.stop(StopReason::Shutdown);
        {
            let mut st = s.lock();
            if let Some(h) = st.leases.get_mut(&q.job.id).filter(|h| h.seq == q.seq) {
                h.done = true;
            }
        }
        let _ = acks.send(Ack::Release {
            lease: Lease::of(&q.job),
            seq: q.seq,
        });
    }
}

/// Runs a handler under its time-out and the stop signal, catching panics. A stopped handler gets
/// the kill grace (plus a margin) to return, or none when stopping is forced; then it is abandoned
/// (dropping an exec handler's future kills its process group).
async fn run_handler(reg: &Registered, job: &Job, cx: &JobContext, timeout: Option<Duration>) -> RunEnd {
    let run = AssertUnwindSafe(reg.handler.run(job, cx)).catch_unwind();
    tokio::pin!(run);
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        end = &mut run => return end_of(end),
        _ = cx.cancelled() => {}
        _ = deadline => cx.stop(StopReason::TimedOut(timeout.unwrap_or_default())),
    }
    tokio::select! {
        biased;
        end = &mut run => end_of(end),
        _ = tokio::time::sleep(cx.kill_grace() + STOP_MARGIN) => RunEnd::Abandoned,
        _ = cx.kill_now() => match tokio::time::timeout(STOP_MARGIN, &mut run).await {
            Ok(end) => end_of(end),
            Err(_) => RunEnd::Abandoned,
        },
    }
}

fn end_of(end: std::thread::Result<handler::Outcome>) -> RunEnd {
    match end {
        Ok(outcome) => RunEnd::Answered(outcome),
        Err(panic) => RunEnd::Panicked(panic_message(panic.as_ref())),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

impl Shared {
    /// Ends a handler's run: marks its hold done (or drops it when nothing will be written for it),
    /// and hands the slot to the next prefetched job, or frees it.
    fn end_run(&self, job: &Job, seq: u64, limited: bool, forget: bool) -> Option<Queued> {
        let next = {
            let mut st = self.lock();
            if st.leases.get(&job.id).is_some_and(|h| h.seq == seq) {
                if forget {
                    st.leases.remove(&job.id);
                } else if let Some(h) = st.leases.get_mut(&job.id) {
                    h.done = true;
                }
            }
            let next = if self.control.stop.is_cancelled() && !self.control.keeps_prefetched() {
                None
            } else {
                st.queued.pop_front()
            };
            if next.is_none() {
                st.busy = st.busy.saturating_sub(1);
                if limited && let Some(n) = st.by_type.get_mut(&job.job_type) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        st.by_type.remove(&job.job_type);
                    }
                }
            }
            next
        };
        // A freed slot, or room in the local queue: either way the dispatcher may claim.
        self.slot_freed.notify_one();
        next
    }

    /// Takes every prefetched job out of the local queue (shutdown, or handlers turned slow).
    fn unqueue(&self) -> Vec<Queued> {
        self.lock().queued.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_are_read_from_str_and_string_payloads() {
        assert_eq!(panic_message(&"boom"), "boom");
        assert_eq!(panic_message(&String::from("bang")), "bang");
        assert_eq!(panic_message(&42u8), "a panic without a message");
    }
}
