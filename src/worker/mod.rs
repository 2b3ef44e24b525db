//! The worker runtime: claim → run → finish, with heartbeats, rescue, retention and shutdown around
//! it (DESIGN §4).
//!
//! One dispatcher loop claims jobs in batches sized to the free capacity (total and per type), and
//! spawns a task per job that runs its handler under the time-out and the stop signal. When handlers
//! take well under a millisecond, it also claims a few milliseconds of work ahead into a local queue
//! that finishing tasks take their next job from (see `Shared::prefetch_room`). Outcomes go to
//! one acknowledger that writes them in batches (`ack.rs`), so a busy worker pays a store round trip per
//! batch, never per job. Beside them run the job heartbeat and the registry refresh (`heartbeat.rs`), the
//! rescue and retention sweeps (`rescue.rs`), the memory check and the signal handling ([`shutdown`]),
//! and the store watch that wakes an idle dispatcher as soon as work is written ([`wake`]).
//!
//! Nothing here decides a job's fate by itself: `outcome.rs` maps each run's end to a transition, and
//! every transition is fenced by the job's lease in the store, so a worker that lost a job (rescued,
//! cancelled, deleted) can never overwrite what happened to it meanwhile.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, HandlerConfig, WorkerSettings};
use crate::error::{Error, Result};
use crate::handler::{self, DEFAULT_KILL_GRACE, Handler, JobContext, StopReason};
use crate::job::{Job, JobId};
use crate::retry::RetryPolicy;
use crate::store::{Claim, DynStore, Finish, Lease, StoreKind, WakeOn, WorkerInfo};
use crate::time::{Clock, SystemClock, format_duration};

mod ack;
mod heartbeat;
mod outcome;
mod rescue;
pub mod shutdown;

use ack::{Ack, AckSender};
use outcome::{RunEnd, Verdict};
pub use shutdown::{StopCause, WorkerHandle, on_signals};

/// First re-poll interval after work was found, when no store watch wakes the dispatcher; it doubles
/// up to `poll_interval` while the queue stays empty.
const FAST_POLL: Duration = Duration::from_millis(5);
/// Prefetch is for handlers faster than this on average: the local queue then holds about
/// [`PREFETCH_WINDOW`] of work, at most [`PREFETCH_MAX`] jobs.
const PREFETCH_BELOW: Duration = Duration::from_millis(1);
/// How much work, in time, prefetched jobs may represent.
const PREFETCH_WINDOW: Duration = Duration::from_millis(5);
/// Most jobs waiting in the local queue.
const PREFETCH_MAX: u64 = 1000;
/// Longest wait for more free slots before a claim smaller than a quarter of the concurrency.
const GATHER: Duration = Duration::from_millis(1);
/// Time a stopped handler gets beyond the kill grace before the worker abandons it.
const STOP_MARGIN: Duration = Duration::from_secs(1);

/// Per-type settings of a handler registered in code.
#[derive(Debug, Clone, Default)]
pub struct HandlerOptions {
    /// Longest run; a job's own `timeout_ms` wins.
    pub timeout: Option<Duration>,
    /// At most this many jobs of one type at once in this worker.
    pub concurrency: Option<u32>,
    /// Back-off and attempts for this type; the worker's default policy when `None`.
    pub retry: Option<RetryPolicy>,
}

impl From<&HandlerConfig> for HandlerOptions {
    fn from(c: &HandlerConfig) -> Self {
        HandlerOptions {
            timeout: c.timeout,
            concurrency: c.concurrency,
            retry: Some(c.retry),
        }
    }
}

/// A handler as the runtime uses it.
struct Registered {
    handler: Arc<dyn Handler>,
    timeout: Option<Duration>,
    concurrency: Option<u32>,
    retry: RetryPolicy,
}

/// Builds a [`Worker`]: store, queues, concurrency, handlers, limits, clock.
pub struct WorkerBuilder {
    store: DynStore,
    clock: Arc<dyn Clock>,
    settings: WorkerSettings,
    retry: RetryPolicy,
    handlers: HashMap<String, (Arc<dyn Handler>, HandlerOptions)>,
    name: Option<String>,
    burst: bool,
    max_jobs: Option<u64>,
    max_memory: Option<u64>,
    kill_grace: Duration,
    watch: bool,
}

impl std::fmt::Debug for WorkerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut types: Vec<&String> = self.handlers.keys().collect();
        types.sort();
        f.debug_struct("WorkerBuilder")
            .field("settings", &self.settings)
            .field("handlers", &types)
            .finish_non_exhaustive()
    }
}

impl WorkerBuilder {
    fn new(store: DynStore) -> WorkerBuilder {
        WorkerBuilder {
            store,
            clock: Arc::new(SystemClock),
            settings: WorkerSettings::default(),
            retry: RetryPolicy::default(),
            handlers: HashMap::new(),
            name: None,
            burst: false,
            max_jobs: None,
            max_memory: None,
            kill_grace: DEFAULT_KILL_GRACE,
            watch: true,
        }
    }

    /// Everything a config file says: worker settings, the default retry policy, and its handlers.
    pub fn config(self, config: &Config) -> Result<WorkerBuilder> {
        self.settings(&config.worker)
            .retry_policy(config.retry)
            .configured_handlers(&config.handlers)
    }

    /// Queues, concurrency, heartbeat, rescue threshold, shutdown time-out, retention and poll interval.
    pub fn settings(mut self, settings: &WorkerSettings) -> WorkerBuilder {
        self.settings = settings.clone();
        self
    }

    /// Handlers from a config's `[handlers]` table (exec, http, builtin).
    pub fn configured_handlers(
        mut self,
        handlers: &std::collections::BTreeMap<String, HandlerConfig>,
    ) -> Result<WorkerBuilder> {
        for (job_type, config) in handlers {
            let handler = handler::from_config(job_type, &config.kind)?;
            self.handlers
                .insert(job_type.clone(), (handler, HandlerOptions::from(config)));
        }
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
        self.handlers.insert(job_type.into(), (Arc::new(handler), options));
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

    /// Deletes terminal jobs older than this in the background.
    pub fn retention(mut self, keep: Option<Duration>) -> WorkerBuilder {
        self.settings.retention = keep;
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
        let s = &self.settings;
        if s.queues.is_empty() {
            return Err(Error::Invalid("a worker needs at least one queue".into()));
        }
        for q in &s.queues {
            crate::job::validate_queue(q).map_err(Error::Invalid)?;
        }
        if s.concurrency == 0 {
            return Err(Error::Invalid("concurrency must be at least 1".into()));
        }
        if s.heartbeat.is_zero() {
            return Err(Error::Invalid("the heartbeat interval must be longer than zero".into()));
        }
        if s.stale_after <= s.heartbeat {
            return Err(Error::Invalid(format!(
                "stale_after ({}) must be longer than heartbeat ({}), or workers would rescue each other's live jobs",
                format_duration(s.stale_after),
                format_duration(s.heartbeat)
            )));
        }
        if s.poll_interval.is_zero() {
            return Err(Error::Invalid("the poll interval must be longer than zero".into()));
        }
        if self.max_jobs == Some(0) {
            return Err(Error::Invalid("max jobs must be at least 1".into()));
        }
        let mut handlers = HashMap::new();
        for (job_type, (handler, options)) in self.handlers {
            if options.concurrency == Some(0) {
                return Err(Error::Invalid(format!(
                    "the concurrency of {job_type:?} must be at least 1"
                )));
            }
            let registered = Registered {
                handler,
                timeout: options.timeout,
                concurrency: options.concurrency,
                retry: options.retry.unwrap_or(self.retry),
            };
            handlers.insert(job_type, Arc::new(registered));
        }
        let fallback = handlers.remove("*");
        let may_prefetch = handlers
            .values()
            .chain(fallback.iter())
            .all(|h| h.concurrency.is_none());
        let host = host_name();
        let name = self.name.unwrap_or_else(|| host.clone());
        let pid = std::process::id();
        let id = format!("{name}@{host}:{pid}:{:06x}", rand::random::<u32>() & 0xff_ffff);
        let wake = Arc::new(Notify::new());
        let control = Arc::new(shutdown::Control::new(s.shutdown_timeout, wake));
        let gate = (self.store.kind() == StoreKind::Sqlite).then(|| tokio::sync::Mutex::new(()));
        let shared = Shared {
            info: WorkerInfo {
                id: id.clone(),
                name,
                host,
                pid,
                queues: s.queues.clone(),
                started_at: self.clock.now(),
                last_seen_at: self.clock.now(),
                jobs_done: 0,
            },
            id,
            store: self.store,
            clock: self.clock,
            settings: self.settings,
            default_retry: self.retry,
            handlers,
            fallback,
            gate,
            state: Mutex::new(State::default()),
            slot_freed: Notify::new(),
            progress: Arc::new(Notify::new()),
            control,
            jobs_done: AtomicU64::new(0),
            next_seq: AtomicU64::new(0),
            mean_run_us: AtomicU64::new(u64::MAX),
            may_prefetch,
            burst: self.burst,
            max_jobs: self.max_jobs,
            max_memory: self.max_memory,
            kill_grace: self.kill_grace,
        };
        Ok(Worker {
            shared: Arc::new(shared),
            watch: self.watch,
        })
    }
}

/// A configured worker, ready to run. See [`Worker::builder`].
pub struct Worker {
    shared: Arc<Shared>,
    watch: bool,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

/// How a run of a worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// The worker's id in the registry.
    pub worker_id: String,
    /// Outcomes it recorded.
    pub jobs_done: u64,
    /// Why it stopped.
    pub cause: StopCause,
}

impl Worker {
    /// A builder over `store`: queue `default`, concurrency 8, no handlers.
    ///
    /// ```no_run
    /// # async fn demo(store: jobq::store::DynStore) -> jobq::Result<()> {
    /// use jobq::handler::{handler_fn, Outcome};
    /// use jobq::worker::Worker;
    /// let worker = Worker::builder(store)
    ///     .queues(["default", "mail"])
    ///     .concurrency(16)
    ///     .handler("mail.send", handler_fn(|job, _cx| async move {
    ///         println!("sending {}", job.payload.get());
    ///         Outcome::success()
    ///     }))
    ///     .build()?;
    /// worker.run_until(async { tokio::signal::ctrl_c().await.ok(); }).await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(store: DynStore) -> WorkerBuilder {
        WorkerBuilder::new(store)
    }

    /// The id this worker registers under and records as the lease holder of its jobs.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// A handle to stop or wake the worker from elsewhere.
    pub fn handle(&self) -> WorkerHandle {
        WorkerHandle {
            control: self.shared.control.clone(),
        }
    }

    /// Runs until `signal` resolves, then shuts down gracefully (see [`WorkerHandle::shutdown`]).
    pub async fn run_until(self, signal: impl Future<Output = ()> + Send + 'static) -> Result<RunReport> {
        let handle = self.handle();
        let watcher = tokio::spawn(async move {
            signal.await;
            handle.shutdown();
        });
        let report = self.run().await;
        watcher.abort();
        report
    }

    /// Runs until stopped through a [`WorkerHandle`] or by itself (burst, max jobs, max memory).
    /// Returns once every job it held is finished or released and it has left the registry.
    pub async fn run(self) -> Result<RunReport> {
        let s = self.shared;
        heartbeat::register(&s).await?;
        tracing::info!(
            worker = %s.id,
            queues = ?s.settings.queues,
            concurrency = s.settings.concurrency,
            handlers = ?s.handler_names(),
            "worker started"
        );
        let background = CancellationToken::new();
        let (ack_tx, ack_rx) = tokio::sync::mpsc::unbounded_channel();
        let acks = tokio::spawn(ack::run(s.clone(), ack_rx));
        let mut tasks = vec![
            tokio::spawn(heartbeat::run(s.clone(), background.clone())),
            tokio::spawn(heartbeat::registry(s.clone(), background.clone())),
            tokio::spawn(rescue::rescue(s.clone(), background.clone())),
        ];
        if let Some(keep) = s.settings.retention {
            tasks.push(tokio::spawn(rescue::retention(s.clone(), keep, background.clone())));
        }
        if let Some(limit) = s.max_memory {
            tasks.push(tokio::spawn(shutdown::watch_memory(
                s.control.clone(),
                limit,
                background.clone(),
            )));
        }
        // Wake-ups: the store's own (PostgreSQL LISTEN/NOTIFY, a watch on SQLite's files), else
        // polling alone.
        let subscription = if self.watch {
            s.store
                .subscribe(&WakeOn::Ready(s.settings.queues.clone()), s.control.wake.clone())
        } else {
            None
        };
        dispatch(&s, &ack_tx, subscription.is_some()).await;
        drop(subscription);
        let cause = s.control.cause().unwrap_or(StopCause::Shutdown);
        let held = s.busy();
        if held > 0 {
            tracing::info!(
                "{cause}: waiting for {held} running job{}",
                if held == 1 { "" } else { "s" }
            );
        }
        drain(&s, &ack_tx).await;
        // Job tasks hold the other senders; they are all done, so the acknowledger sees the channel
        // close once it has written everything.
        drop(ack_tx);
        if let Err(e) = acks.await {
            tracing::error!("the acknowledger failed: {e}");
        }
        background.cancel();
        for task in tasks {
            let _ = task.await;
        }
        let _guard = s.gate().await;
        if let Err(e) = s.store.unregister_worker(&s.id).await {
            tracing::warn!("could not leave the worker registry: {e}");
        }
        let jobs_done = s.jobs_done.load(Ordering::Relaxed);
        tracing::info!(worker = %s.id, jobs_done, "worker stopped: {cause}");
        Ok(RunReport {
            worker_id: s.id.clone(),
            jobs_done,
            cause,
        })
    }
}

/// State shared by the dispatcher, the job tasks and the background tasks of one worker.
pub(crate) struct Shared {
    store: DynStore,
    clock: Arc<dyn Clock>,
    id: String,
    /// The registry entry, refreshed with the time and count.
    info: WorkerInfo,
    settings: WorkerSettings,
    default_retry: RetryPolicy,
    handlers: HashMap<String, Arc<Registered>>,
    fallback: Option<Arc<Registered>>,
    /// Serializes this process's writes to a single-writer store (SQLite): waiting here is a cheap
    /// async wait, where two connections colliding would wait in SQLite's busy handler, which sleeps
    /// in whole milliseconds.
    gate: Option<tokio::sync::Mutex<()>>,
    state: Mutex<State>,
    /// Signalled whenever a handler finishes and frees a slot.
    slot_freed: Notify,
    /// Signalled when a handler reports progress.
    progress: Arc<Notify>,
    control: Arc<shutdown::Control>,
    jobs_done: AtomicU64,
    next_seq: AtomicU64,
    /// Moving average of handler run time in microseconds (`u64::MAX` before the first run).
    mean_run_us: AtomicU64,
    /// True when no handler has a per-type limit, which prefetching would have to respect.
    may_prefetch: bool,
    burst: bool,
    max_jobs: Option<u64>,
    max_memory: Option<u64>,
    kill_grace: Duration,
}

/// What the worker holds right now.
#[derive(Default)]
struct State {
    /// Handlers running (each takes a slot of `concurrency`).
    busy: u32,
    /// Handlers running per job type, for types with a concurrency limit.
    by_type: HashMap<String, u32>,
    /// Every job leased to this worker whose outcome is not yet written: heartbeats keep these alive.
    leases: HashMap<JobId, Held>,
    /// Prefetched jobs waiting for a slot (only for fast handlers without type limits; see
    /// [`Shared::prefetch_room`]). Each is also in `leases`.
    queued: std::collections::VecDeque<Queued>,
}

/// A prefetched job waiting for a slot.
struct Queued {
    job: Job,
    reg: Arc<Registered>,
    cx: JobContext,
    seq: u64,
}

/// One job this worker holds.
pub(crate) struct Held {
    lease: Lease,
    job_type: String,
    cx: JobContext,
    /// The handler has returned; the outcome waits for the acknowledger.
    done: bool,
    /// Tells this hold apart from a later one of the same job.
    seq: u64,
}

/// How many jobs to claim, and which types not to.
struct Window {
    limit: u32,
    exclude: Vec<String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match &self.gate {
            Some(g) => Some(g.lock().await),
            None => None,
        }
    }

    fn busy(&self) -> u32 {
        self.lock().busy
    }

    fn holds_nothing(&self) -> bool {
        let st = self.lock();
        st.busy == 0 && st.leases.is_empty()
    }

    fn handler_for(&self, job_type: &str) -> Option<&Arc<Registered>> {
        self.handlers.get(job_type).or(self.fallback.as_ref())
    }

    fn handler_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.handlers.keys().cloned().collect();
        names.sort();
        if self.fallback.is_some() {
            names.push("*".into());
        }
        names
    }

    fn new_context(&self) -> JobContext {
        JobContext::new(
            self.control.kill_now.clone(),
            self.kill_grace,
            Some(self.progress.clone()),
        )
    }

    /// How many jobs may wait in the local queue. Claiming only for free slots costs a claim and an
    /// acknowledgement per handful of jobs when handlers take microseconds, and those round trips
    /// then bound the rate; so for handlers that average under [`PREFETCH_BELOW`] the worker also
    /// claims about [`PREFETCH_WINDOW`] of work ahead. Slower handlers get none: a prefetched job
    /// waits holding its lease while other workers might have run it.
    fn prefetch_room(&self) -> u32 {
        let mean = self.mean_run_us.load(Ordering::Relaxed);
        if !self.may_prefetch || self.control.stop.is_cancelled() || mean >= PREFETCH_BELOW.as_micros() as u64 {
            return 0;
        }
        let per_slot = PREFETCH_WINDOW.as_micros() as u64 / mean.max(1);
        (u64::from(self.settings.concurrency) * per_slot).min(PREFETCH_MAX) as u32
    }

    /// True when handlers take clearly longer than prefetching is for (a single hiccup of a fast
    /// handler does not count).
    fn turned_slow(&self) -> bool {
        let mean = self.mean_run_us.load(Ordering::Relaxed);
        mean != u64::MAX && mean >= 4 * PREFETCH_BELOW.as_micros() as u64
    }

    /// Folds one run's duration into the moving average (weight 1/8).
    fn record_run(&self, took: Duration) {
        let us = took.as_micros().min(u128::from(u64::MAX - 1)) as u64;
        let old = self.mean_run_us.load(Ordering::Relaxed);
        let new = if old == u64::MAX { us } else { old - old / 8 + us / 8 };
        self.mean_run_us.store(new, Ordering::Relaxed);
    }

    /// The next claim's size: free slots, the rest of the `max_jobs` budget, and, when every type this
    /// worker serves has a limit, the room left under those limits; types at their limit are excluded.
    fn window(&self, claimed: u64) -> Window {
        let st = self.lock();
        let mut limit = self.settings.concurrency.saturating_sub(st.busy);
        let prefetch = self.prefetch_room().saturating_sub(st.queued.len() as u32);
        limit = limit.saturating_add(prefetch);
        if let Some(max) = self.max_jobs {
            limit = limit.min(u32::try_from(max.saturating_sub(claimed)).unwrap_or(u32::MAX));
        }
        let exclude: Vec<String> = st
            .by_type
            .iter()
            .filter(|(t, n)| {
                self.handler_for(t)
                    .and_then(|h| h.concurrency)
                    .is_some_and(|max| **n >= max)
            })
            .map(|(t, _)| t.clone())
            .collect();
        if self.fallback.is_none() && self.handlers.values().all(|h| h.concurrency.is_some()) {
            let room: u32 = self
                .handlers
                .iter()
                .map(|(t, h)| {
                    h.concurrency
                        .unwrap_or(0)
                        .saturating_sub(st.by_type.get(t).copied().unwrap_or(0))
                })
                .sum();
            limit = limit.min(room.max(1));
        }
        Window { limit, exclude }
    }

    /// Takes claimed jobs on: spawns a task per job within the limits, answers unregistered types at
    /// once, and releases what it cannot start (over a type's limit, or claimed as shutdown began).
    /// Returns how many jobs it took on.
    async fn start(self: &Arc<Self>, jobs: Vec<Job>, acks: &AckSender) -> u64 {
        let stopping = self.control.stop.is_cancelled();
        let mut excess = Vec::new();
        let mut taken = 0;
        {
            let mut st = self.lock();
            for job in jobs {
                let lease = Lease::of(&job);
                if stopping {
                    excess.push(lease);
                    continue;
                }
                let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
                let Some(reg) = self.handler_for(&job.job_type).cloned() else {
                    let finish = Finish {
                        progress: None,
                        lease: lease.clone(),
                        outcome: outcome::unregistered(&job.job_type),
                    };
                    let held = Held {
                        lease,
                        job_type: job.job_type.clone(),
                        cx: self.new_context(),
                        done: true,
                        seq,
                    };
                    st.leases.insert(job.id.clone(), held);
                    let _ = acks.send(Ack::Finish {
                        finish,
                        job_type: job.job_type,
                        seq,
                    });
                    taken += 1;
                    continue;
                };
                if let Some(max) = reg.concurrency {
                    let n = st.by_type.entry(job.job_type.clone()).or_insert(0);
                    if *n >= max {
                        excess.push(lease);
                        continue;
                    }
                    *n += 1;
                }
                let cx = self.new_context();
                st.leases.insert(
                    job.id.clone(),
                    Held {
                        lease,
                        job_type: job.job_type.clone(),
                        cx: cx.clone(),
                        done: false,
                        seq,
                    },
                );
                if st.busy < self.settings.concurrency {
                    st.busy += 1;
                    tokio::spawn(run_job(self.clone(), job, reg, cx, acks.clone(), seq));
                } else {
                    st.queued.push_back(Queued { job, reg, cx, seq });
                }
                taken += 1;
            }
        }
        if !excess.is_empty() {
            tracing::debug!("releasing {} claimed jobs this worker cannot start now", excess.len());
            let _guard = self.gate().await;
            if let Err(e) = self.store.release(&excess).await {
                // They stay running without heartbeats; the rescue sweep returns them to pending.
                tracing::warn!("could not release {} jobs over their type's limit: {e}", excess.len());
            }
        }
        taken
    }

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
                if limited {
                    if let Some(n) = st.by_type.get_mut(&job.job_type) {
                        *n = n.saturating_sub(1);
                        if *n == 0 {
                            st.by_type.remove(&job.job_type);
                        }
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

/// The claim loop: runs until the worker stops claiming.
async fn dispatch(s: &Arc<Shared>, acks: &AckSender, watched: bool) {
    let mut claimed: u64 = 0;
    let mut failures: u32 = 0;
    let mut idle_poll = if watched { s.settings.poll_interval } else { FAST_POLL };
    let gather = (s.settings.concurrency / 4).max(1);
    loop {
        if s.control.stop.is_cancelled() {
            return;
        }
        let mut window = s.window(claimed);
        if window.limit == 0 {
            if s.max_jobs.is_some_and(|max| claimed >= max) {
                tracing::info!("took on {claimed} jobs (max jobs): draining");
                s.control.drain(StopCause::MaxJobs);
                return;
            }
            tokio::select! {
                _ = s.slot_freed.notified() => {}
                _ = s.control.stop.cancelled() => return,
            }
            continue;
        }
        // While handlers are finishing one after another, a moment's wait gathers their slots into
        // one claim instead of a claim per freed slot.
        if window.limit < gather && s.busy() > 0 {
            let until = tokio::time::Instant::now() + GATHER;
            loop {
                tokio::select! {
                    _ = s.slot_freed.notified() => {}
                    _ = tokio::time::sleep_until(until) => break,
                    _ = s.control.stop.cancelled() => return,
                }
                window = s.window(claimed);
                if window.limit >= gather || s.busy() == 0 {
                    break;
                }
            }
        }
        let claim = Claim {
            queues: s.settings.queues.clone(),
            exclude_types: window.exclude.clone(),
            worker: s.id.clone(),
            limit: window.limit,
            now: s.clock.now(),
        };
        // Burst mode ends on an empty claim only if the worker held nothing when the claim began: a job
        // it released meanwhile may have been locked (and so skipped) while the claim looked.
        let held_nothing = s.holds_nothing();
        let result = {
            let _guard = s.gate().await;
            s.store.claim(&claim).await
        };
        let jobs = match result {
            Ok(jobs) => {
                failures = 0;
                jobs
            }
            Err(e) => {
                failures += 1;
                let pause = backoff(failures);
                tracing::warn!("claiming jobs failed (trying again in {}): {e}", format_duration(pause));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = s.control.stop.cancelled() => return,
                }
                continue;
            }
        };
        let got = jobs.len();
        tracing::trace!(asked = window.limit, got, "claimed");
        claimed += s.start(jobs, acks).await;
        if got as u32 >= window.limit {
            // A full batch: more may be ready; claim again as soon as slots free up.
            continue;
        }
        // A claim that left types out (at their limit) proves nothing about those types' jobs: burst
        // mode ends only on a claim that asked for everything, with nothing held (when it began, too).
        if s.burst && got == 0 && window.exclude.is_empty() && held_nothing && s.holds_nothing() {
            tracing::info!("no ready job left: burst mode ends");
            s.control.drain(StopCause::Burst);
            return;
        }
        if !watched {
            idle_poll = if got > 0 {
                FAST_POLL
            } else {
                (idle_poll * 2).min(s.settings.poll_interval)
            };
        }
        // Nothing more is ready for now. Wait for a write to the store, the poll interval (delayed
        // jobs and back-offs become ready silently), or, when a type limit or burst mode held the
        // claim back, for a slot to free up.
        let on_slot = s.burst || !window.exclude.is_empty();
        tokio::select! {
            biased;
            _ = s.control.stop.cancelled() => return,
            _ = s.control.wake.notified() => {}
            _ = s.slot_freed.notified(), if on_slot => {}
            _ = tokio::time::sleep(idle_poll) => {}
        }
    }
}

/// Waits for running handlers to finish; once the shutdown deadline passes, stops them (their jobs
/// are released) and waits for them to return.
async fn drain(s: &Shared, acks: &AckSender) {
    loop {
        // Prefetched jobs run on in the busy slots when the worker stops by its own limits; on a
        // shutdown (or with no slot left to run them) they go back to pending.
        if !s.control.keeps_prefetched() || s.busy() == 0 {
            release_queued(s, acks);
        }
        if s.busy() == 0 {
            return;
        }
        tokio::select! {
            _ = s.slot_freed.notified() => {}
            _ = s.control.changed() => {}
            _ = s.control.handlers_must_stop() => break,
        }
    }
    release_queued(s, acks);
    let stopped = {
        let st = s.lock();
        let running: Vec<&Held> = st.leases.values().filter(|h| !h.done).collect();
        for h in &running {
            h.cx.stop(StopReason::Shutdown);
        }
        running.len()
    };
    if stopped > 0 {
        tracing::info!(
            "stopping {stopped} running job{} and releasing {} to pending without using an attempt",
            if stopped == 1 { "" } else { "s" },
            if stopped == 1 { "it" } else { "them" }
        );
    }
    // Each runner returns within the kill grace (plus a margin), abandoning handlers that do not stop.
    while s.busy() > 0 {
        s.slot_freed.notified().await;
    }
}

/// Runs one job's handler and hands its verdict to the acknowledger; then, while prefetched jobs
/// wait, runs those in the same task and slot.
async fn run_job(s: Arc<Shared>, job: Job, reg: Arc<Registered>, cx: JobContext, acks: AckSender, seq: u64) {
    let mut next = Some(Queued { job, reg, cx, seq });
    while let Some(Queued { job, reg, cx, seq }) = next.take() {
        let timeout = job.timeout_ms.map(Duration::from_millis).or(reg.timeout);
        let started = tokio::time::Instant::now();
        // A prefetched job may have been cancelled (or the worker stopped) while it waited.
        let end = if cx.is_cancelled() {
            RunEnd::Abandoned
        } else {
            run_handler(&reg, &job, &cx, timeout).await
        };
        s.record_run(started.elapsed());
        let max_attempts = outcome::max_attempts(&job, &reg.retry, &s.default_retry);
        let stop = cx.stop_reason();
        let verdict = outcome::verdict(end, stop, &job, &reg.retry, max_attempts, s.clock.now(), rand::random());
        let lease = Lease::of(&job);
        // Hand the slot on (or free it) before handing the verdict over: the acknowledger stops
        // waiting for company once no handler is running, and the dispatcher can claim while the
        // outcome is being written.
        next = s.end_run(&job, seq, reg.concurrency.is_some(), matches!(verdict, Verdict::Forget));
        match verdict {
            Verdict::Finish(outcome) => {
                let _ = acks.send(Ack::Finish {
                    finish: Finish {
                        lease,
                        outcome,
                        // The last report, which a job quicker than the progress heartbeat (or a
                        // heartbeat overtaken by this outcome) would otherwise lose.
                        progress: cx.last_progress(),
                    },
                    job_type: job.job_type.clone(),
                    seq,
                });
            }
            Verdict::Release => {
                let _ = acks.send(Ack::Release {
                    lease,
                    job_type: job.job_type.clone(),
                    seq,
                });
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
        // Handlers turned slow: the rest of the local queue goes back for other workers to take.
        if next.is_some() && ((s.control.stop.is_cancelled() && !s.control.keeps_prefetched()) || s.turned_slow()) {
            release_queued(&s, &acks);
        }
    }
}

/// Gives prefetched jobs back to pending (no attempt used).
fn release_queued(s: &Shared, acks: &AckSender) {
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
            job_type: q.job.job_type.clone(),
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

/// Pause after `failures` store errors in a row: 100 ms doubling to 5 s.
fn backoff(failures: u32) -> Duration {
    let ms = 100u64.saturating_mul(1 << failures.saturating_sub(1).min(6));
    Duration::from_millis(ms.min(5_000))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_failures_back_off_up_to_five_seconds() {
        let pauses: Vec<u64> = (1..=9).map(|n| backoff(n).as_millis() as u64).collect();
        assert_eq!(pauses, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    }

    #[test]
    fn panic_messages_are_read_from_str_and_string_payloads() {
        assert_eq!(panic_message(&"boom"), "boom");
        assert_eq!(panic_message(&String::from("bang")), "bang");
        assert_eq!(panic_message(&42u8), "a panic without a message");
    }
}
