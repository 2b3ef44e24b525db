//! Handlers: what runs a job. A handler takes the [`Job`] and a [`JobContext`] and answers with an
//! [`Outcome`]; the worker turns that outcome into a store transition (DESIGN §3).
//!
//! Every kind shares the one [`Handler`] trait: [`exec`] runs a program per job, [`persistent`] keeps
//! one running and hands it jobs as lines, [`http`] POSTs the envelope, [`builtin`] has the
//! smoke-test handlers, and library users implement the trait or pass an async closure to
//! [`handler_fn`]. Applications describe handlers of kinds the library does not know with a
//! [`HandlerFactory`] (`jobq`'s `publish` handlers hand jobs to a message broker). A handler never talks to the store: it learns of cancellation, time-outs
//! and shutdown through its context's stop signal, and reports progress through the context, which the
//! worker's heartbeat carries to the store.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::job::{Job, Progress, Spawn};

pub mod builtin;
pub mod exec;
#[cfg(feature = "http")]
pub mod http;
pub mod persistent;
pub mod spec;
mod typed;

pub use builtin::Builtin;
pub use exec::ExecHandler;
#[cfg(feature = "http")]
pub use http::HttpHandler;
pub use persistent::{PersistentHandler, PersistentOptions};
pub use spec::{BUILTINS, CustomKind, DEFAULT_MAX_SNOOZES, HandlerFactory, HandlerKind, HandlerSpec};
pub use typed::TypedHandler;

/// What a handler decided about one run of a job. Handlers make these with the constructors below;
/// new decisions may be added, so a match needs a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// Done: the job succeeds, with an optional JSON result.
    Success {
        /// Stored as the job's `result`.
        result: Option<serde_json::Value>,
    },
    /// Failed for now: run again after the back-off (or `retry_after`), or go dead when the attempts
    /// are used up.
    Retry {
        /// Why, recorded in the job's error history.
        error: String,
        /// Overrides the back-off delay.
        retry_after: Option<Duration>,
    },
    /// Failed for good: the job goes dead at once, whatever attempts remain.
    Fail {
        /// Why, recorded in the job's error history.
        error: String,
    },
    /// The job should not run at all (obsolete, duplicate…): it becomes `discarded`.
    Discard {
        /// Why, recorded in the job's error history.
        reason: String,
    },
    /// The work was handed to a third party; the job waits in `waiting` until `resolve` finishes it.
    Wait,
    /// Not now: the job goes back to start again after `delay` without spending an attempt (after
    /// its type's `max_snoozes` snoozes, a snooze counts as a retry).
    Snooze {
        /// How long to wait before starting it again.
        delay: Duration,
    },
    /// The upstream said "too many requests": no job of this type (or of this job's partition, when
    /// the type has one) starts on any worker for `delay`, and this job snoozes that long. Without a
    /// delay, the type's retry back-off for this attempt.
    RateLimited {
        /// How long the upstream asked to be left alone.
        delay: Option<Duration>,
    },
    /// Done for now: the job waits, `blocked`, until the children this attempt spawned
    /// ([`JobContext::spawn`]) have ended, however they ended, and then runs again, without having
    /// spent an attempt, with their outcomes in its `deps`. An attempt that spawned no new child
    /// has nothing to wait for, and fails.
    AwaitChildren,
}

impl Outcome {
    /// Success without a result.
    pub fn success() -> Outcome {
        Outcome::Success { result: None }
    }

    /// Success with a JSON result.
    pub fn success_with(result: serde_json::Value) -> Outcome {
        Outcome::Success { result: Some(result) }
    }

    /// A retry after the configured back-off.
    pub fn retry(error: impl Into<String>) -> Outcome {
        Outcome::Retry {
            error: error.into(),
            retry_after: None,
        }
    }

    /// A retry after `delay` rather than the back-off.
    pub fn retry_after(error: impl Into<String>, delay: Duration) -> Outcome {
        Outcome::Retry {
            error: error.into(),
            retry_after: Some(delay),
        }
    }

    /// A permanent failure.
    pub fn fail(error: impl Into<String>) -> Outcome {
        Outcome::Fail { error: error.into() }
    }

    /// A discard.
    pub fn discard(reason: impl Into<String>) -> Outcome {
        Outcome::Discard { reason: reason.into() }
    }

    /// A snooze: start again after `delay`, no attempt spent.
    pub fn snooze(delay: Duration) -> Outcome {
        Outcome::Snooze { delay }
    }

    /// Upstream back-pressure: hold the type (or partition) on every worker, and snooze the job.
    pub fn rate_limited(delay: Option<Duration>) -> Outcome {
        Outcome::RateLimited { delay }
    }

    /// Waits, blocked, for the children this attempt spawned; then runs again.
    pub fn await_children() -> Outcome {
        Outcome::AwaitChildren
    }

    /// A short word for logs: `success`, `retry`, `fail`, `discard`, `wait`, `snooze`,
    /// `rate-limited`, `await-children`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Success { .. } => "success",
            Outcome::Retry { .. } => "retry",
            Outcome::Fail { .. } => "fail",
            Outcome::Discard { .. } => "discard",
            Outcome::Wait => "wait",
            Outcome::Snooze { .. } => "snooze",
            Outcome::RateLimited { .. } => "rate-limited",
            Outcome::AwaitChildren => "await-children",
        }
    }
}

/// Why the worker asked a handler to stop before it answered. New reasons may be added, so a match
/// needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// An operator cancelled the job; it stays cancelled and the handler's answer is dropped.
    Cancelled,
    /// The worker lost the lease (the job was rescued or deleted); the answer is dropped.
    Lost,
    /// The run took longer than its time-out; it becomes a retry.
    TimedOut(Duration),
    /// The worker is shutting down; the job is released without using an attempt.
    Shutdown,
    /// A newer job of its unique key asked it to stop (unique mode `cancel-running`); it is
    /// recorded `cancelled`, and the newer job starts once it has.
    Superseded,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Cancelled => f.write_str("cancelled"),
            StopReason::Lost => f.write_str("lease lost"),
            StopReason::TimedOut(d) => write!(f, "timed out after {}", exact_duration(*d)),
            StopReason::Shutdown => f.write_str("worker shutting down"),
            StopReason::Superseded => f.write_str("cancelled by a newer job of its unique key"),
        }
    }
}

/// A duration for an error message, exact to the millisecond below a minute (`1.5s`, `250ms`), where
/// `format_duration` would round a time-out of 1.5 s down to `1s`.
pub(crate) fn exact_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 60_000 && !ms.is_multiple_of(1000) && ms > 1000 {
        let text = format!("{:.3}", d.as_secs_f64());
        format!("{}s", text.trim_end_matches('0'))
    } else {
        crate::time::format_duration(d)
    }
}

/// What a running handler can see of the worker: the stop signal and a progress reporter. Cheap to
/// clone; every clone speaks for the same run.
#[derive(Clone)]
pub struct JobContext {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    /// Fired once when the worker wants the handler to stop.
    stop: CancellationToken,
    /// Why `stop` fired; set before it fires.
    reason: Mutex<Option<StopReason>>,
    /// Fired when stopping must not wait for a grace period any more (a second shutdown signal).
    kill_now: CancellationToken,
    /// How long a stopped program gets between SIGTERM and SIGKILL.
    kill_grace: Duration,
    /// Latest progress not yet carried by a heartbeat.
    progress: Mutex<Option<Progress>>,
    /// True while `progress` holds a report the store has not seen.
    progress_dirty: AtomicBool,
    /// Tells the worker's heartbeat that there is progress to carry.
    progress_notify: Option<Arc<Notify>>,
    /// The children this run asked for, or why one of them was refused.
    spawned: Mutex<Result<Vec<Spawn>, String>>,
}

impl fmt::Debug for JobContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobContext")
            .field("stopped", &self.inner.stop.is_cancelled())
            .field("reason", &self.stop_reason())
            .finish()
    }
}

/// Default time a stopped program gets to exit after SIGTERM before SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

impl JobContext {
    /// A context not attached to any worker: it is never stopped unless [`JobContext::stop`] is
    /// called, and progress goes nowhere. For running a handler by hand, in tests or tools.
    pub fn detached() -> JobContext {
        JobContext::new(CancellationToken::new(), DEFAULT_KILL_GRACE, None)
    }

    /// A context whose stop can also be forced by `kill_now`, whose progress wakes `progress_notify`.
    pub(crate) fn new(kill_now: CancellationToken, kill_grace: Duration, progress_notify: Option<Arc<Notify>>) -> Self {
        JobContext {
            inner: Arc::new(ContextInner {
                stop: CancellationToken::new(),
                reason: Mutex::new(None),
                kill_now,
                kill_grace,
                progress: Mutex::new(None),
                progress_dirty: AtomicBool::new(false),
                progress_notify,
                spawned: Mutex::new(Ok(Vec::new())),
            }),
        }
    }

    /// Resolves when the worker wants this run to stop (cancelled, timed out, lease lost, shutdown).
    /// Handlers that run long should select on it and return promptly; the answer they give then is
    /// replaced according to [`JobContext::stop_reason`].
    pub async fn cancelled(&self) {
        self.inner.stop.cancelled().await
    }

    /// True once the worker has asked this run to stop.
    pub fn is_cancelled(&self) -> bool {
        self.inner.stop.is_cancelled()
    }

    /// Why the run was asked to stop, if it was.
    pub fn stop_reason(&self) -> Option<StopReason> {
        *lock(&self.inner.reason)
    }

    /// Reports progress (0–100, clamped) with an optional short message. Cheap: the latest report is
    /// kept and the worker's heartbeat stores it, throttled, so calling this often costs nothing.
    pub fn progress(&self, percent: u8, message: Option<&str>) {
        let progress = Progress {
            percent: percent.min(100),
            message: message.map(str::to_string),
        };
        *lock(&self.inner.progress) = Some(progress);
        self.inner.progress_dirty.store(true, Ordering::Release);
        if let Some(n) = &self.inner.progress_notify {
            n.notify_one();
        }
    }

    /// Asks for a child job, written with this attempt's outcome when the attempt succeeds or awaits
    /// its children ([`Outcome::AwaitChildren`]), and never when it fails: its id is this job's and
    /// the child's key (`<id>.<key>`, or `<id>.<n>` for the n-th child spawned without a key), so an
    /// attempt that runs again spawns the same children and none twice. Its queue is this job's
    /// unless it names another (on a Redis Cluster it must be this job's).
    pub fn spawn(&self, child: Spawn) {
        if let Ok(children) = &mut *lock(&self.inner.spawned) {
            children.push(child);
        }
    }

    /// A child as a handler's program wrote it (a `::spawn` line, a `spawn` list's item): one that
    /// cannot be read fails the attempt, naming it, rather than going missing.
    pub(crate) fn spawn_json(&self, child: Result<serde_json::Value, String>) {
        match child.and_then(|value| Spawn::from_json(value).map_err(String::from)) {
            Ok(child) => self.spawn(child),
            Err(e) => self.refuse_spawn(e),
        }
    }

    fn refuse_spawn(&self, error: String) {
        let mut spawned = lock(&self.inner.spawned);
        if spawned.is_ok() {
            *spawned = Err(format!("cannot spawn: {error}"));
        }
    }

    /// The children the run asked for, or the first refusal among them; taken once.
    pub(crate) fn take_spawned(&self) -> Result<Vec<Spawn>, String> {
        std::mem::replace(&mut *lock(&self.inner.spawned), Ok(Vec::new()))
    }

    /// Asks the run to stop. The first reason given wins; later calls change nothing.
    pub fn stop(&self, reason: StopReason) {
        {
            let mut r = lock(&self.inner.reason);
            if r.is_some() {
                return;
            }
            *r = Some(reason);
        }
        self.inner.stop.cancel();
    }

    /// How long a stopped program gets between SIGTERM and SIGKILL.
    pub fn kill_grace(&self) -> Duration {
        self.inner.kill_grace
    }

    /// Resolves when stopping must not wait for the grace period any more.
    pub async fn kill_now(&self) {
        self.inner.kill_now.cancelled().await
    }

    /// The last progress reported, if any, whether or not a heartbeat carried it already: the outcome
    /// carries it too, since a heartbeat in flight may reach the store after the outcome and be refused.
    pub(crate) fn last_progress(&self) -> Option<Progress> {
        lock(&self.inner.progress).clone()
    }

    /// The progress reported since the last call, if any (the heartbeat takes it).
    pub(crate) fn take_progress(&self) -> Option<Progress> {
        if !self.inner.progress_dirty.swap(false, Ordering::AcqRel) {
            return None;
        }
        lock(&self.inner.progress).clone()
    }
}

/// Locks a mutex, ignoring poisoning: the data behind these locks is always left consistent (single
/// assignments), so a panic elsewhere does not make it unusable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs jobs of one or more types. Implementations must be idempotent: delivery is at least once, so
/// a job may run again after a crash between the work and its acknowledgement (use
/// [`Job::idempotency_key`]). A panic is caught by the worker and becomes a retry.
#[async_trait]
pub trait Handler: Send + Sync {
    /// Runs one attempt of `job` (`job.attempt` is this run's number, 1 on the first run).
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome;

    /// Called when the worker stops, after its last run has returned: a handler that keeps
    /// something running between jobs (a persistent handler's programs) ends it here, giving it
    /// `grace` to exit (zero when the worker must stop at once). The default does nothing.
    async fn close(&self, _grace: Duration) {}
}

/// A handler made from an async closure; see [`handler_fn`].
pub struct FnHandler<F>(F);

/// Wraps an async closure as a [`Handler`]. The closure gets its own copies of the job and context:
///
/// ```
/// use jobq::handler::{handler_fn, Outcome};
/// let h = handler_fn(|job, _cx| async move {
///     let n: u64 = job.payload_as().unwrap_or(0);
///     Outcome::success_with(serde_json::json!(n * 2))
/// });
/// # let _ = h;
/// ```
pub fn handler_fn<F, Fut>(f: F) -> FnHandler<F>
where
    F: Fn(Job, JobContext) -> Fut + Send + Sync,
    Fut: Future<Output = Outcome> + Send,
{
    FnHandler(f)
}

#[async_trait]
impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(Job, JobContext) -> Fut + Send + Sync,
    Fut: Future<Output = Outcome> + Send,
{
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        (self.0)(job.clone(), cx.clone()).await
    }
}

#[async_trait]
impl<H: Handler + ?Sized> Handler for Arc<H> {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        (**self).run(job, cx).await
    }

    async fn close(&self, grace: Duration) {
        (**self).close(grace).await
    }
}

/// Builds the handler a spec describes. `job_type` names the entry in errors. Checks that an
/// exec handler's program exists and reads an http handler's signing key from its `secret_env`
/// variable now, so a missing program or secret stops the worker at start (or refuses a reload)
/// rather than failing every job.
pub fn build(job_type: &str, kind: &HandlerKind) -> crate::Result<Arc<dyn Handler>> {
    Ok(match kind {
        HandlerKind::Exec { argv } => {
            let handler = ExecHandler::new(argv.clone()).map_err(|e| handler_error(job_type, "exec", e))?;
            // A missing program would fail every job of the type; refuse it up front (a worker's start
            // or reload) instead.
            exec::check_program(&argv[0]).map_err(|e| handler_error(job_type, "exec", e))?;
            Arc::new(handler)
        }
        HandlerKind::Persistent { argv, options } => {
            let handler = PersistentHandler::new(job_type, argv.clone(), options.clone())
                .map_err(|e| handler_error(job_type, "exec", e))?;
            exec::check_program(&argv[0]).map_err(|e| handler_error(job_type, "exec", e))?;
            Arc::new(handler)
        }
        #[cfg(feature = "http")]
        HandlerKind::Http { url, secret_env } => {
            let secret = match secret_env {
                Some(var) => match std::env::var(var) {
                    Ok(v) if !v.is_empty() => Some(v.into_bytes()),
                    _ => {
                        return Err(handler_error(
                            job_type,
                            "secret_env",
                            format!(
                                "environment variable {var} is not set (it holds the HMAC key for signing requests)"
                            ),
                        ));
                    }
                },
                None => None,
            };
            Arc::new(HttpHandler::new(url, secret).map_err(|e| handler_error(job_type, "http", e))?)
        }
        #[cfg(not(feature = "http"))]
        HandlerKind::Http { .. } => {
            return Err(handler_error(
                job_type,
                "http",
                "this build of jobq has no http handler (the library's cargo feature \"http\")",
            ));
        }
        HandlerKind::Custom(custom) => custom.factory().build(job_type)?,
        HandlerKind::Builtin { name } => Arc::new(Builtin::from_name(name).ok_or_else(|| crate::Error::Config {
            file: None,
            key: Some(format!("[handlers.{job_type:?}] builtin")),
            reason: format!("[handlers.{job_type:?}] unknown builtin {name:?} (expected noop, sleep, echo or fail)"),
            source: None,
        })?),
    })
}

/// A config error about the key `field` of the handler entry for `job_type`.
fn handler_error(job_type: &str, field: &str, reason: impl std::fmt::Display) -> crate::Error {
    let key = format!("[handlers.{job_type:?}] {field}");
    crate::Error::Config {
        file: None,
        reason: format!("{key}: {reason}"),
        key: Some(key),
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::test_job;

    #[test]
    fn the_first_stop_reason_wins() {
        let cx = JobContext::detached();
        assert!(!cx.is_cancelled());
        cx.stop(StopReason::Cancelled);
        cx.stop(StopReason::Shutdown);
        assert!(cx.is_cancelled());
        assert_eq!(cx.stop_reason(), Some(StopReason::Cancelled));
    }

    #[test]
    fn progress_is_taken_once_and_clamped() {
        let cx = JobContext::detached();
        assert_eq!(cx.take_progress(), None);
        cx.progress(40, Some("a"));
        cx.progress(250, Some("b"));
        assert_eq!(
            cx.take_progress(),
            Some(Progress {
                percent: 100,
                message: Some("b".into())
            })
        );
        assert_eq!(cx.take_progress(), None);
    }

    #[test]
    fn time_out_reasons_read_as_sentences() {
        for (ms, sentence) in [
            (1500, "timed out after 1.5s"),
            (250, "timed out after 250ms"),
            (2_000, "timed out after 2s"),
            (90_000, "timed out after 1m30s"),
        ] {
            assert_eq!(StopReason::TimedOut(Duration::from_millis(ms)).to_string(), sentence);
        }
    }

    #[tokio::test]
    async fn closures_are_handlers() {
        let h = handler_fn(|job, _cx| async move { Outcome::success_with(serde_json::json!(job.job_type)) });
        let job = test_job("t.x", "{}");
        assert_eq!(
            h.run(&job, &JobContext::detached()).await,
            Outcome::success_with(serde_json::json!("t.x"))
        );
    }
}
