//! Making a worker: [`WorkerBuilder`] gathers the store, queues, concurrency, handlers, limits and
//! clock, and [`WorkerBuilder::build`] checks them all at once, resolves each handler's options
//! against the worker's defaults (the reloadable part, `live.rs`) and sets up the state the run
//! shares.
//!
//! Every refusal happens here, before a worker exists, so a run never starts with settings that
//! would make workers rescue each other's live jobs or spin. Building never touches the store and
//! never spawns a task: nothing runs until [`super::Worker::run`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::live::{Given, HandlerSet, Live, LiveCell};
use super::{Retention, WorkerSettings};
use super::{Shared, State, Worker, shutdown};
use crate::error::{Error, Input, Result};
use crate::events::Subscriptions;
use crate::handler::{DEFAULT_KILL_GRACE, Handler, HandlerSpec, JobContext, Outcome, TypedHandler};
use crate::job::Limits;
use crate::job::{JobStatus, JobType};
use crate::retry::RetryPolicy;
use crate::schedule::Schedule;
use crate::store::{DynStore, WorkerInfo};
use crate::time::{Clock, SystemClock, UnixMillis, format_duration};

/// Per-type settings of a handler registered in code.
#[derive(Debug, Clone, Default)]
pub struct HandlerOptions {
    /// Longest run; a job's own `timeout_ms` wins.
    pub timeout: Option<Duration>,
    /// At most this many jobs of one type at once in this worker.
    pub concurrency: Option<u32>,
    /// Back-off and attempts for this type; the worker's default policy when `None`.
    pub retry: Option<RetryPolicy>,
    /// Cluster-wide limits on this type (its scope must be the type it is registered for).
    pub limit: Option<crate::store::Limit>,
    /// Snoozes before a snooze counts as a retry ([`crate::handler::DEFAULT_MAX_SNOOZES`] when `None`).
    pub max_snoozes: Option<u32>,
    /// Longest a job of this type may wait in `waiting` (handed to a third party) before the worker
    /// retries it with `wait timed out after …` (or, with no attempts left, kills it); no limit when
    /// `None`.
    pub wait_timeout: Option<Duration>,
    /// Each retry of a job of this type gets an expiry this long after its run time, in place of the
    /// one the job was enqueued with (`expires_per_attempt`); a retry keeps the job's when `None`.
    pub expires_per_attempt: Option<Duration>,
}

impl From<&HandlerSpec> for HandlerOptions {
    fn from(c: &HandlerSpec) -> Self {
        HandlerOptions {
            timeout: c.timeout,
            concurrency: c.concurrency,
            retry: Some(c.retry),
            limit: c.limit.clone(),
            max_snoozes: Some(c.max_snoozes),
            wait_timeout: c.wait_timeout,
            expires_per_attempt: c.expires_in.filter(|_| c.expires_per_attempt),
        }
    }
}

/// Builds a [`Worker`]: store, queues, concurrency, handlers, limits, clock.
pub struct WorkerBuilder {
    store: DynStore,
    clock: Arc<dyn Clock>,
    settings: WorkerSettings,
    retry: RetryPolicy,
    handlers: HandlerSet,
    name: Option<String>,
    burst: bool,
    max_jobs: Option<u64>,
    max_memory: Option<u64>,
    kill_grace: Duration,
    watch: bool,
    schedules: Vec<Schedule>,
    events: Subscriptions,
    limits: Limits,
}

impl std::fmt::Debug for WorkerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerBuilder")
            .field("settings", &self.settings)
            .field("handlers", &self.handlers.types())
            .finish_non_exhaustive()
    }
}

impl WorkerBuilder {
    pub(super) fn new(store: DynStore) -> WorkerBuilder {
        WorkerBuilder {
            store,
            clock: Arc::new(SystemClock),
            settings: WorkerSettings::default(),
            retry: RetryPolicy::default(),
            handlers: HandlerSet::default(),
            name: None,
            burst: false,
            max_jobs: None,
            max_memory: None,
            kill_grace: DEFAULT_KILL_GRACE,
            watch: true,
            schedules: Vec::new(),
            events: Subscriptions::default(),
            limits: Limits::default(),
        }
    }

    /// Schedules whose ticks this worker's scheduler enqueues (unless the settings turn the scheduler
    /// off); every worker of a store may run the same ones, and each tick is enqueued once.
    pub fn schedules(mut self, schedules: Vec<Schedule>) -> WorkerBuilder {
        self.schedules = schedules;
        self
    }

    /// Which jobs each event becomes: the worker expands the events applications stored themselves
    /// (see [`crate::store::Store::expand_events`]) with these. A worker with none leaves stored
    /// events alone.
    pub fn events(mut self, events: Subscriptions) -> WorkerBuilder {
        self.events = events;
        self
    }

    /// Enqueue limits for the jobs the worker itself makes (schedules' ticks, expanded events).
    pub fn limits(mut self, limits: Limits) -> WorkerBuilder {
        self.limits = limits;
        self
    }

    /// Queues, concurrency, heartbeat, rescue threshold, shutdown time-out, retention and poll interval.
    pub fn settings(mut self, settings: &WorkerSettings) -> WorkerBuilder {
        self.settings = settings.clone();
        self
    }

    /// Serves jobs of the [`JobType`] `T` with `f`, which receives each payload decoded as `T`:
    /// `.handle(|mail: SendEmail, cx| async move { … })`. A payload that does not decode fails its
    /// job for good, naming the type and what serde found. For the job's id, attempt or meta, use
    /// [`WorkerBuilder::handler`] with [`crate::handler::handler_fn`] and [`crate::Job::payload_as`].
    pub fn handle<T, F, Fut>(self, f: F) -> WorkerBuilder
    where
        T: JobType,
        F: Fn(T, JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome> + Send + 'static,
    {
        self.handler(T::NAME, TypedHandler::new(f))
    }

    /// Handlers described by specs (a config's `[handlers]` table): exec, persistent, http, builtin or
    /// a kind of the application's own; built now, so one that cannot be built refuses the worker.
    pub fn configured_handlers(mut self, handlers: &BTreeMap<String, HandlerSpec>) -> Result<WorkerBuilder> {
        self.handlers.insert_configured(handlers)?;
        Ok(self)
    }

    /// Registers a handler for a job type (`*` for every type without its own), with default options.
    pub fn handler(self, job_type: impl Into<String>, handler: impl Handler + 'static) -> WorkerBuilder {
        self.handler_with(job_type, handler, HandlerOptions::default())
    }

    /// Registers a handler with a time-out, a per-type concurrency limit or a retry policy.
    pub fn handler_with(
        mut self,
        job_type: impl Into<String>,
        handler: impl Handler + 'static,
        options: HandlerOptions,
    ) -> WorkerBuilder {
        self.handlers.insert(job_type.into(), Given::code(handler, options));
        self
    }

    /// The retry policy of types that have none of their own (the config's `[retry]`).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> WorkerBuilder {
        self.retry = policy;
        self
    }

    /// Queues to take jobs from, all alike (smallest priority, then oldest `run_at` first).
    pub fn queues<I: IntoIterator<Item = S>, S: Into<String>>(mut self, queues: I) -> WorkerBuilder {
        self.settings.queues = queues.into_iter().map(Into::into).collect();
        self
    }

    /// Jobs run at once.
    pub fn concurrency(mut self, n: u32) -> WorkerBuilder {
        self.settings.concurrency = n;
        self
    }

    /// How often running jobs signal life (and carry progress).
    pub fn heartbeat(mut self, every: Duration) -> WorkerBuilder {
        self.settings.heartbeat = every;
        self
    }

    /// How long a running job may go without a heartbeat before any worker rescues it.
    pub fn stale_after(mut self, after: Duration) -> WorkerBuilder {
        self.settings.stale_after = after;
        self
    }

    /// How long a graceful shutdown waits for running jobs before stopping and releasing them.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> WorkerBuilder {
        self.settings.shutdown_timeout = timeout;
        self
    }

    /// Deletes terminal jobs older than this in the background (those of a status that
    /// [`WorkerBuilder::retention_for`] names: after its own time instead).
    pub fn retention(mut self, keep: Option<Duration>) -> WorkerBuilder {
        self.settings.retention = keep;
        self
    }

    /// Keeps terminal jobs of `status` for `keep`, whatever [`WorkerBuilder::retention`] says for
    /// the others (`build` refuses a status that is not terminal: retention deletes only finished
    /// jobs).
    pub fn retention_for(mut self, status: JobStatus, keep: Duration) -> WorkerBuilder {
        self.settings.retention_by_status.insert(status, keep);
        self
    }

    /// Keeps only the newest `count` terminal jobs of each queue and status, whatever their age
    /// (`build` refuses 0).
    pub fn retention_keep_last(mut self, count: u32) -> WorkerBuilder {
        self.settings.retention_keep_last = Some(count);
        self
    }

    /// Gives the jobs of `job_type` a retention of their own, over the worker's for the statuses
    /// and the count it names.
    pub fn retention_for_type(mut self, job_type: impl Into<String>, retention: Retention) -> WorkerBuilder {
        self.settings.retention_by_type.insert(job_type.into(), retention);
        self
    }

    /// Longest time an idle worker goes without looking for work (new work written to a watched
    /// store wakes it sooner; delayed jobs and back-offs become ready silently, so this bounds how
    /// late they start).
    pub fn poll_interval(mut self, every: Duration) -> WorkerBuilder {
        self.settings.poll_interval = every;
        self
    }

    /// How long a stopped program gets between SIGTERM and SIGKILL.
    pub fn kill_grace(mut self, grace: Duration) -> WorkerBuilder {
        self.kill_grace = grace;
        self
    }

    /// The clock (tests drive a manual one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> WorkerBuilder {
        self.clock = clock;
        self
    }

    /// The name shown by `jobq workers` (the host name by default).
    pub fn name(mut self, name: impl Into<String>) -> WorkerBuilder {
        self.name = Some(name.into());
        self
    }

    /// Stops (after draining) as soon as no job is ready.
    pub fn burst(mut self, burst: bool) -> WorkerBuilder {
        self.burst = burst;
        self
    }

    /// Stops claiming after this many jobs, then drains.
    pub fn max_jobs(mut self, n: Option<u64>) -> WorkerBuilder {
        self.max_jobs = n;
        self
    }

    /// Stops claiming and drains once the process's resident memory exceeds this many bytes.
    pub fn max_memory(mut self, bytes: Option<u64>) -> WorkerBuilder {
        self.max_memory = bytes;
        self
    }

    /// Whether to listen for new work: the store's notifications, or a watch on its files (default
    /// on; off means plain polling).
    pub fn watch_store(mut self, watch: bool) -> WorkerBuilder {
        self.watch = watch;
        self
    }

    /// Checks the settings and makes the worker.
    pub fn build(self) -> Result<Worker> {
        self.check()?;
        let live = Live::new(
            self.handlers,
            self.retry,
            self.settings.concurrency,
            Arc::new(self.schedules),
            self.limits.default_max_attempts,
        )?;
        let live = Arc::new(LiveCell::new(live, self.events, self.settings.clone()));
        let info = registry_entry(self.name, &self.settings.queues, self.clock.now());
        let wake = Arc::new(Notify::new());
        let control = Arc::new(shutdown::Control::new(self.settings.shutdown_timeout, wake));
        let shared = Shared {
            id: info.id.clone(),
            info,
            store: self.store,
            clock: self.clock,
            settings: self.settings,
            live,
            state: Mutex::new(State::default()),
            slot_freed: Notify::new(),
            outcomes_written: Notify::new(),
            progress: Arc::new(Notify::new()),
            control,
            jobs_done: AtomicU64::new(0),
            taken_on: AtomicU64::new(0),
            claiming: tokio::sync::Mutex::new(()),
            next_seq: AtomicU64::new(0),
            mean_run_us: AtomicU64::new(u64::MAX),
            burst: self.burst,
            max_jobs: self.max_jobs,
            max_memory: self.max_memory,
            kill_grace: self.kill_grace,
            limits: self.limits,
            flow: Default::default(),
            outage: Default::default(),
        };
        Ok(Worker {
            shared: Arc::new(shared),
            watch: self.watch,
        })
    }

    /// Refuses settings a worker cannot run with.
    fn check(&self) -> Result<()> {
        let s = &self.settings;
        if s.queues.is_empty() {
            return Err(Error::invalid(Input::Queue, "a worker needs at least one queue"));
        }
        for q in &s.queues {
            crate::job::validate_queue(q)?;
        }
        if s.concurrency == 0 {
            return Err(Error::invalid(Input::Concurrency, "concurrency must be at least 1"));
        }
        if s.heartbeat.is_zero() {
            return Err(Error::invalid(
                Input::Heartbeat,
                "the heartbeat interval must be longer than zero",
            ));
        }
        if s.stale_after <= s.heartbeat {
            return Err(Error::invalid(
                Input::StaleAfter,
                format!(
                    "stale_after ({}) must be longer than heartbeat ({}), or workers would rescue each other's live jobs",
                    format_duration(s.stale_after),
                    format_duration(s.heartbeat)
                ),
            ));
        }
        if s.poll_interval.is_zero() {
            return Err(Error::invalid(
                Input::PollInterval,
                "the poll interval must be longer than zero",
            ));
        }
        if self.max_jobs == Some(0) {
            return Err(Error::invalid(Input::MaxJobs, "max jobs must be at least 1"));
        }
        let statuses = s
            .retention_by_status
            .keys()
            .chain(s.retention_by_type.values().flat_map(|r| r.by_status.keys()));
        if let Some(status) = statuses.into_iter().find(|s| !s.is_terminal()) {
            return Err(Error::invalid(
                Input::Status,
                format!(
                    "retention for {status}: only finished jobs (succeeded, dead, cancelled, discarded, expired) are ever deleted"
                ),
            ));
        }
        let counts = std::iter::once(s.retention_keep_last).chain(s.retention_by_type.values().map(|r| r.keep_last));
        if counts.into_iter().any(|n| n == Some(0)) {
            return Err(Error::invalid(
                Input::Limit,
                "retention keep_last must be at least 1 (leave it out to keep jobs by age alone)",
            ));
        }
        Ok(())
    }
}

/// A new worker's registry entry. Its id names it (the host name unless `name` says otherwise), the
/// host and the process, plus a random suffix that tells two workers of one process apart.
pub fn registry_entry(name: Option<String>, queues: &[String], now: UnixMillis) -> WorkerInfo {
    let host = host_name();
    let name = name.unwrap_or_else(|| host.clone());
    let pid = std::process::id();
    let id = format!("{name}@{host}:{pid}:{:06x}", rand::random::<u32>() & 0xff_ffff);
    WorkerInfo {
        id,
        name,
        host,
        pid,
        queues: queues.to_vec(),
        started_at: now,
        last_seen_at: now,
        jobs_done: 0,
        bridge: None,
    }
}

/// This machine's name, for the registry.
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    if name.is_empty() { "localhost".into() } else { name }
}
