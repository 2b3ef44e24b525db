//! The worker runtime: claim → run → finish, with heartbeats, rescue, retention and shutdown around
//! it (DESIGN §4).
//!
//! This module owns [`Worker`] and its run from start to end, and the state its parts share
//! (`Shared`): the jobs held, the slots taken, the handlers. Each part lives in its own file. The
//! dispatcher (`dispatch.rs`) claims jobs in batches sized to the free capacity (total and per type)
//! and spawns a task per job (`run.rs`) that runs its handler under the time-out and the stop signal.
//! When handlers take well under a millisecond, it also claims a few milliseconds of work ahead into
//! a local queue that finishing tasks take their next job from. Outcomes go to one acknowledger that
//! writes them in batches (`ack.rs`), so a busy worker pays a store round trip per batch, never per
//! job. Beside them run the job heartbeat and the registry refresh (`heartbeat.rs`), the rescue sweep
//! (`rescue.rs`) with the wait time-out and expiry sweeps after it (`waits.rs`, `expiry.rs`),
//! retention (`sweep.rs`), the memory check and the signal handling ([`shutdown`]). The builder
//! (`builder.rs`) checks the settings before any of this starts. The handlers, their settings, the
//! concurrency and the schedules sit behind one swappable pointer (`live.rs`), which
//! [`WorkerHandle::reload`] replaces while the worker runs (`reload.rs`).
//!
//! Nothing here decides a job's fate by itself: `outcome.rs` maps each run's end to a transition, and
//! every transition is fenced by the job's lease in the store, so a worker that lost a job (rescued,
//! cancelled, deleted) can never overwrite what happened to it meanwhile. Nothing here exits the
//! process either: [`Worker::run`] returns once every job it held is written or released.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::handler::{JobContext, StopReason};
use crate::job::{Job, JobId, Limits};
use crate::store::{DynStore, Lease, WorkerInfo};
use crate::time::Clock;

mod ack;
mod builder;
mod dispatch;
mod expiry;
mod flow;
mod heartbeat;
mod live;
mod outage;
mod outcome;
mod reload;
mod rescue;
mod run;
mod settings;
pub mod shutdown;
mod spawn;
mod sweep;
mod waits;

use ack::AckSender;
pub use builder::registry_entry;
pub use builder::{HandlerOptions, WorkerBuilder};
use live::{Live, LiveCell, Registered};
pub use reload::{Reload, ReloadReport};
pub use settings::{Retention, WorkerSettings, rescue_interval};
pub use shutdown::{StopCause, WorkerHandle, on_signals};

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

    /// A handle to stop, wake or reload the worker from elsewhere.
    pub fn handle(&self) -> WorkerHandle {
        WorkerHandle {
            control: self.shared.control.clone(),
            live: self.shared.live.clone(),
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
        let live = s.live();
        tracing::info!(
            worker = %s.id,
            queues = ?s.settings.queues,
            concurrency = live.concurrency,
            handlers = ?live.handler_names(),
            "worker started"
        );
        drop(live);
        let background = CancellationToken::new();
        let (ack_tx, ack_rx) = tokio::sync::mpsc::unbounded_channel();
        let acks = tokio::spawn(ack::run(s.clone(), ack_rx, ack_tx.downgrade()));
        flow::start(&s).await;
        let tasks = spawn_background(&s, &background);
        dispatch::dispatch(&s, &ack_tx, self.watch).await;
        let cause = s.control.cause().unwrap_or(StopCause::Shutdown);
        drain(&s, &ack_tx, cause).await;
        // Job tasks hold the other senders; they are all done, so the acknowledger sees the channel
        // close once it has written everything.
        drop(ack_tx);
        if let Err(e) = acks.await {
            tracing::error!("the acknowledger failed: {}", crate::error::causes(&e));
        }
        background.cancel();
        for task in tasks {
            let _ = task.await;
        }
        close_handlers(&s).await;
        Ok(leave(&s, cause).await)
    }
}

/// Starts the tasks that run beside the dispatcher until `stop` fires: the heartbeat, the registry
/// refresh, the rescue sweep, the scheduler and the events expander (unless in a burst), and, when
/// configured, retention and the memory check.
fn spawn_background(s: &Arc<Shared>, stop: &CancellationToken) -> Vec<JoinHandle<()>> {
    let mut tasks = vec![
        tokio::spawn(heartbeat::run(s.clone(), stop.clone())),
        tokio::spawn(flow::run(s.clone(), stop.clone())),
        tokio::spawn(heartbeat::registry(s.clone(), stop.clone())),
        tokio::spawn(rescue::run(s.clone(), stop.clone())),
    ];
    // Even with no schedules yet: a reload may bring some, and an idle scheduler makes no store calls.
    if s.settings.schedules && !s.burst {
        tasks.push(tokio::spawn(crate::schedule::run_scheduler(
            s.store.clone(),
            s.clock.clone(),
            s.limits,
            s.live.scheduled.subscribe(),
            stop.clone(),
        )));
    }
    // Even with no subscriptions yet (a reload may bring some): until then it makes no store calls
    // and leaves stored events to workers that subscribe.
    if !s.burst {
        tasks.push(tokio::spawn(crate::events::run_expander(
            s.store.clone(),
            s.clock.clone(),
            s.limits,
            s.live.events.subscribe(),
            stop.clone(),
        )));
    }
    let retention = sweep::plan(&s.settings);
    if !retention.is_empty() {
        tasks.push(tokio::spawn(sweep::run(s.clone(), retention, stop.clone())));
    }
    if let Some(limit) = s.max_memory {
        tasks.push(tokio::spawn(shutdown::watch_memory(
            s.control.clone(),
            limit,
            stop.clone(),
        )));
    }
    tasks
}

/// Waits for running handlers to finish; once the shutdown deadline passes, stops them (their jobs
/// are released) and waits for them to return.
async fn drain(s: &Shared, acks: &AckSender, cause: StopCause) {
    let held = s.busy();
    if held > 0 {
        tracing::info!(
            "{cause}: waiting for {held} running job{}",
            if held == 1 { "" } else { "s" }
        );
    }
    loop {
        // Prefetched jobs run on in the busy slots when the worker stops by its own limits; on a
        // shutdown (or with no slot left to run them) they go back to pending.
        if !s.control.keeps_prefetched() || s.busy() == 0 {
            run::release_queued(s, acks);
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
    run::release_queued(s, acks);
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

/// Ends what handlers keep running between jobs (a persistent handler's programs), once no job is
/// left: with the kill grace, or none after a second signal.
async fn close_handlers(s: &Shared) {
    let grace = if s.control.kill_now.is_cancelled() {
        Duration::ZERO
    } else {
        s.kill_grace
    };
    let live = s.live();
    let handlers = live.handlers.values().chain(live.fallback.iter());
    futures_util::future::join_all(handlers.map(|r| r.handler.close(grace))).await;
}

/// Leaves the registry once everything is written, and says how the run ended.
async fn leave(s: &Shared, cause: StopCause) -> RunReport {
    if let Err(e) = s.store.unregister_worker(&s.id).await {
        tracing::warn!("could not leave the worker registry: {}", crate::error::causes(&e));
    }
    let jobs_done = s.jobs_done.load(Ordering::Relaxed);
    tracing::info!(worker = %s.id, jobs_done, "worker stopped: {cause}");
    RunReport {
        worker_id: s.id.clone(),
        jobs_done,
        cause,
    }
}

/// State shared by the dispatcher, the job tasks and the background tasks of one worker.
pub(crate) struct Shared {
    store: DynStore,
    clock: Arc<dyn Clock>,
    id: String,
    /// The registry entry, refreshed with the time and count.
    info: WorkerInfo,
    /// The settings the worker started with. Its `concurrency` is only the starting value: the
    /// current one is the live setup's.
    settings: WorkerSettings,
    /// Handlers, their settings, concurrency and schedules: what a reload swaps.
    live: Arc<LiveCell>,
    state: Mutex<State>,
    /// Signalled whenever a handler finishes and frees a slot.
    slot_freed: Notify,
    /// Signalled when the acknowledger has written outcomes of a worker under cluster-wide limits:
    /// the slots the store counted for those jobs are free now.
    outcomes_written: Notify,
    /// Signalled when a handler reports progress.
    progress: Arc<Notify>,
    control: Arc<shutdown::Control>,
    jobs_done: AtomicU64,
    /// Jobs taken on so far, against `max_jobs`.
    taken_on: AtomicU64,
    /// The turn to claim: the dispatcher's, or under cluster-wide limits the acknowledger's, which
    /// claims the replacements for the outcomes it writes (`ack.rs`). Held from sizing a claim to
    /// taking its jobs on, so that the two never claim for the same free slots.
    claiming: tokio::sync::Mutex<()>,
    next_seq: AtomicU64,
    /// Moving average of handler run time in microseconds (`u64::MAX` before the first run).
    mean_run_us: AtomicU64,
    burst: bool,
    max_jobs: Option<u64>,
    max_memory: Option<u64>,
    kill_grace: Duration,
    /// Enqueue limits for the jobs the worker makes itself.
    limits: Limits,
    /// The pauses, blocks and limits its claims carry.
    flow: flow::FlowView,
    /// The store's outage, told once (see `outage.rs`).
    outage: outage::Outage,
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
    queued: VecDeque<Queued>,
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
    cx: JobContext,
    /// The handler has returned; the outcome waits for the acknowledger.
    done: bool,
    /// Tells this hold apart from a later one of the same job.
    seq: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn busy(&self) -> u32 {
        self.lock().busy
    }

    fn holds_nothing(&self) -> bool {
        let st = self.lock();
        st.busy == 0 && st.leases.is_empty()
    }

    /// The handlers and limits as they are now; take one per claim round, not one per job.
    fn live(&self) -> Arc<Live> {
        self.live.snapshot()
    }

    fn new_context(&self) -> JobContext {
        JobContext::new(
            self.control.kill_now.clone(),
            self.kill_grace,
            Some(self.progress.clone()),
        )
    }
}

/// Pause after `failures` store errors in a row: 100 ms doubling to 5 s.
fn backoff(failures: u32) -> Duration {
    crate::time::doubling(Duration::from_millis(100), failures, Duration::from_secs(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_failures_back_off_up_to_five_seconds() {
        let pauses: Vec<u64> = (1..=9).map(|n| backoff(n).as_millis() as u64).collect();
        assert_eq!(pauses, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    }
}
