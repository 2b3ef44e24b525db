//! Stopping a worker: gracefully (stop claiming, let running jobs finish within `shutdown_timeout`,
//! then stop their handlers and release their jobs without using an attempt), by itself (burst,
//! `--max-jobs`, `--max-memory`: stop claiming and drain), or at once (a second signal: handlers are
//! killed without a grace period, their jobs still released).
//!
//! This module owns the decision to stop and its deadline; the run loop in `mod.rs` carries it out.
//! It never exits the process: the worker returns, and the caller exits, so every guard (process-group
//! kills, lease releases, unregistering) runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Why a worker stopped claiming. New limits bring new causes, so a match needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopCause {
    /// [`WorkerHandle::shutdown`] (SIGTERM or SIGINT in `jobq worker`).
    Shutdown,
    /// Burst mode found no ready job.
    Burst,
    /// The `max_jobs` budget was used.
    MaxJobs,
    /// The process grew past `max_memory`.
    MaxMemory,
}

impl std::fmt::Display for StopCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopCause::Shutdown => "shutdown requested",
            StopCause::Burst => "no ready job left (burst mode)",
            StopCause::MaxJobs => "max jobs reached",
            StopCause::MaxMemory => "memory limit reached",
        })
    }
}

/// The stop state shared by a worker and its handles.
#[derive(Debug)]
pub(crate) struct Control {
    /// Fired when the worker must stop claiming.
    pub(crate) stop: CancellationToken,
    /// Fired when running handlers must be stopped without waiting for a grace period.
    pub(crate) kill_now: CancellationToken,
    /// Why claiming stopped (the first cause wins).
    cause: Mutex<Option<StopCause>>,
    /// When running handlers get stopped; `None` while draining without a limit.
    deadline: Mutex<Option<Instant>>,
    /// Signalled whenever the deadline changes, so the drain re-reads it.
    changed: Notify,
    /// Signalled when new work may be ready (an in-process enqueue).
    pub(crate) wake: Arc<Notify>,
    /// How long a graceful shutdown waits for running jobs.
    shutdown_timeout: Duration,
}

impl Control {
    pub(crate) fn new(shutdown_timeout: Duration, wake: Arc<Notify>) -> Control {
        Control {
            stop: CancellationToken::new(),
            kill_now: CancellationToken::new(),
            cause: Mutex::new(None),
            deadline: Mutex::new(None),
            changed: Notify::new(),
            wake,
            shutdown_timeout,
        }
    }

    /// Stops claiming; running jobs finish in their own time.
    pub(crate) fn drain(&self, cause: StopCause) {
        {
            let mut c = self.cause.lock().unwrap_or_else(|e| e.into_inner());
            if c.is_none() {
                *c = Some(cause);
            }
        }
        self.stop.cancel();
        self.changed.notify_waiters();
    }

    /// Stops claiming, and stops running handlers once `shutdown_timeout` has passed.
    pub(crate) fn shutdown(&self) {
        {
            let mut d = self.deadline.lock().unwrap_or_else(|e| e.into_inner());
            if d.is_none() {
                *d = Some(Instant::now() + self.shutdown_timeout);
            }
        }
        self.drain(StopCause::Shutdown);
    }

    /// Stops claiming and stops running handlers now, without a grace period.
    pub(crate) fn stop_now(&self) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        self.kill_now.cancel();
        self.drain(StopCause::Shutdown);
    }

    /// Whether jobs already prefetched still run while draining: yes when the worker stops by its own
    /// limits (burst, max jobs, max memory), which count those jobs as taken on; no once a shutdown
    /// was asked for, which gives them back to pending at once for other workers.
    pub(crate) fn keeps_prefetched(&self) -> bool {
        let cause = *self.cause.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
        cause.is_some_and(|c| c != StopCause::Shutdown) && deadline.is_none()
    }

    /// Resolves at the next change of the stop state (a shutdown asked for, a deadline moved).
    pub(crate) async fn changed(&self) {
        self.changed.notified().await;
    }

    pub(crate) fn cause(&self) -> Option<StopCause> {
        *self.cause.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Resolves when running handlers must be stopped: at the deadline, which a later shutdown may
    /// set or bring forward.
    pub(crate) async fn handlers_must_stop(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Register interest before reading, so a change between the read and the wait is seen.
            changed.as_mut().enable();
            let deadline = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
            match deadline {
                Some(at) => {
                    tokio::select! {
                        _ = tokio::time::sleep_until(at) => return,
                        _ = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// Controls a running [`super::Worker`] from elsewhere (a signal handler, a test, an application's
/// own shutdown path): stops it, wakes it, and reloads its handlers and settings
/// ([`WorkerHandle::reload`]). Cheap to clone.
#[derive(Debug, Clone)]
pub struct WorkerHandle {
    pub(crate) control: Arc<Control>,
    /// What a reload swaps (only that: a handle keeps neither the store nor the jobs alive).
    pub(crate) live: Arc<super::LiveCell>,
}

impl WorkerHandle {
    /// Graceful shutdown: stop claiming, wait up to `shutdown_timeout` for running jobs, then stop
    /// their handlers and release their jobs to pending without using an attempt.
    pub fn shutdown(&self) {
        self.control.shutdown();
    }

    /// Immediate stop: running handlers are stopped now (programs get SIGKILL without a grace
    /// period) and their jobs released. The worker still returns normally.
    pub fn stop_now(&self) {
        self.control.stop_now();
    }

    /// Tells the worker that work may be ready, e.g. right after this process enqueued a job, so it
    /// claims at once instead of at its next poll.
    pub fn wake(&self) {
        self.control.wake.notify_one();
    }

    /// True once the worker has stopped claiming.
    pub fn is_stopping(&self) -> bool {
        self.control.stop.is_cancelled()
    }
}

/// Turns SIGTERM and SIGINT into [`WorkerHandle::shutdown`], and a second one into
/// [`WorkerHandle::stop_now`]. Runs until the second signal; spawn it beside the worker.
pub async fn on_signals(handle: WorkerHandle, shutdown_timeout: Duration) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!(
        "{name} received: no new jobs; waiting up to {} for running jobs (send it again to stop now)",
        crate::time::format_duration(shutdown_timeout)
    );
    handle.shutdown();
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::warn!("second {name}: stopping running jobs now and releasing them");
    handle.stop_now();
    Ok(())
}

/// How often the memory limit is checked.
const MEMORY_CHECK_EVERY: Duration = Duration::from_secs(1);

/// Drains the worker once its resident memory exceeds `limit` bytes, so a supervisor restarts a fresh
/// process; checks every second until `stop` fires.
pub(crate) async fn watch_memory(control: Arc<Control>, limit: u64, stop: CancellationToken) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(MEMORY_CHECK_EVERY) => {}
        }
        if let Some(rss) = crate::memory::resident_bytes()
            && rss > limit
        {
            tracing::warn!(
                "resident memory {} MiB is over the limit of {} MiB: draining",
                rss >> 20,
                limit >> 20
            );
            control.drain(StopCause::MaxMemory);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn shutdown_sets_a_deadline_and_stop_now_brings_it_forward() {
        let c = Arc::new(Control::new(Duration::from_millis(100), Arc::new(Notify::new())));
        c.drain(StopCause::MaxJobs);
        assert!(c.stop.is_cancelled());
        // Draining alone sets no deadline.
        let waited = tokio::time::timeout(Duration::from_millis(300), c.handlers_must_stop()).await;
        assert!(waited.is_err());
        // A shutdown while draining does, and the first cause is kept.
        let c2 = c.clone();
        let waiter = tokio::spawn(async move { c2.handlers_must_stop().await });
        let start = Instant::now();
        c.shutdown();
        waiter.await.unwrap();
        assert!(start.elapsed() >= Duration::from_millis(100), "{:?}", start.elapsed());
        assert_eq!(c.cause(), Some(StopCause::MaxJobs));
        // stop_now fires at once, however long the time-out.
        let c = Arc::new(Control::new(Duration::from_secs(3600), Arc::new(Notify::new())));
        c.shutdown();
        let c2 = c.clone();
        let waiter = tokio::spawn(async move { c2.handlers_must_stop().await });
        c.stop_now();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(c.kill_now.is_cancelled());
    }

    #[test]
    fn resident_memory_is_read_from_proc() {
        let rss = crate::memory::resident_bytes().expect("/proc/self/statm is readable on Linux");
        assert!(rss > 1 << 20 && rss < 1 << 40, "{rss}");
    }
}
