//! `jobq bench`: reproducible throughput and latency figures for any store, measured through the
//! calls every user makes ([`Client`] and [`Worker`]), never through a concrete store.
//!
//! A bench works in a queue of its own, `jobq-bench-<random>`, with a job type of its own
//! ([`BENCH_TYPE`]). Its workers serve only that queue, keep no retention and rescue only jobs whose
//! heartbeat stopped a day ago, so a bench never claims, rescues or deletes a user's jobs.
//! [`Bench::finish`] stops whatever still runs, cancels the queue's live jobs (cleanup deletes only
//! terminal ones) and deletes every job of the queue: after a normal end, an error or an interrupt
//! alike. Between workloads the queue is emptied the same way, so each starts from nothing.
//!
//! The workloads live in their own files: [`enqueue`], [`drain`], [`steady`] and [`latency`]. What
//! the figures mean (from when to when) is stated in each report's `measured` text and in
//! BENCHMARKS.md; the durability in force comes from the store's own [`StoreInfo`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinHandle;

use jobq::client::{CleanupRequest, Client};
use jobq::job::{Job, JobStatus};
use jobq::store::{JobFilter, List, StoreError, StoreInfo, StoreKind, StoreUrl};
use jobq::worker::WorkerHandle;
use jobq::worker::WorkerSettings;

pub mod drain;
pub mod enqueue;
mod fleet;
pub mod latency;
pub mod machine;
pub mod steady;
mod summary;

pub use latency::produce;
pub use machine::Machine;
pub use summary::Summary;

/// The job type of every bench job: no user's handler serves it, and the bench's workers serve nothing else.
pub const BENCH_TYPE: &str = "jobq.bench";

/// How long a bench worker lets a running job go without a heartbeat before rescuing it: a day, so
/// that a bench worker, whose rescue sweep sees every queue, leaves other workers' jobs to them.
const STALE_AFTER: Duration = Duration::from_secs(86_400);

/// How long a stopped worker gets to finish before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(15);

/// Why a bench failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A library call failed.
    #[error(transparent)]
    Jobq(#[from] jobq::Error),
    /// A worker or producer process could not be started.
    #[error("cannot start {what} ({program})")]
    Spawn {
        /// What it was for.
        what: String,
        /// The executable.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A worker or producer process failed.
    #[error("{what} exited with {status}: {stderr}")]
    Process {
        /// What it was for.
        what: String,
        /// Its exit status.
        status: String,
        /// The last lines it printed on stderr.
        stderr: String,
    },
    /// The config file for worker processes could not be written.
    #[error("cannot write the bench's worker config {path}")]
    ConfigFile {
        /// Where.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A workload did not end as it must (jobs left unfinished, jobs left behind).
    #[error("{0}")]
    Incomplete(String),
}

impl From<StoreError> for BenchError {
    fn from(e: StoreError) -> Self {
        BenchError::Jobq(e.into())
    }
}

/// Shorthand for bench results.
pub type BenchResult<T> = std::result::Result<T, BenchError>;

/// One workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Enqueue one at a time and in bulk.
    Enqueue,
    /// Work off a queue of pre-enqueued jobs.
    Drain,
    /// Enqueue at a steady rate while workers run.
    Steady,
    /// Enqueue→start latency from a separate producer process to idle workers.
    Latency,
}

impl Workload {
    /// Every workload, in the order `all` runs them.
    pub const ALL: [Workload; 4] = [Workload::Enqueue, Workload::Drain, Workload::Steady, Workload::Latency];
}

/// What a bench job's handler does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BenchHandler {
    /// The builtin `noop`: measures the queue itself.
    Noop,
    /// Runs this program (no arguments) per job, as an `exec` handler: measures process spawning too.
    Exec(String),
    /// Hands every job to this program (no arguments) kept running, as a persistent handler with
    /// `in_flight` jobs per copy and `processes` copies.
    Persistent {
        /// The program.
        program: String,
        /// Jobs one copy holds at once.
        in_flight: u32,
        /// Copies of the program.
        processes: u32,
    },
}

impl BenchHandler {
    /// The handler as a config file would name it.
    pub(crate) fn config_kind(&self) -> jobq::handler::HandlerKind {
        match self {
            BenchHandler::Noop => jobq::handler::HandlerKind::Builtin { name: "noop".into() },
            BenchHandler::Exec(program) => jobq::handler::HandlerKind::Exec {
                argv: vec![program.clone()],
            },
            BenchHandler::Persistent {
                program,
                in_flight,
                processes,
            } => jobq::handler::HandlerKind::Persistent {
                argv: vec![program.clone()],
                options: jobq::handler::PersistentOptions {
                    in_flight: *in_flight,
                    processes: *processes,
                    ..Default::default()
                },
            },
        }
    }

    /// A short description for reports: `noop`, `exec /bin/true`.
    pub fn describe(&self) -> String {
        match self {
            BenchHandler::Noop => "noop".into(),
            BenchHandler::Exec(program) => format!("exec {program}"),
            BenchHandler::Persistent {
                program,
                in_flight,
                processes,
            } => format!("persistent {program} (in_flight {in_flight}, processes {processes})"),
        }
    }
}

/// Sizes and rates of a bench run. [`Plan::default`] has the documented defaults.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Workloads to run (in [`Workload::ALL`] order, each once).
    pub workloads: Vec<Workload>,
    /// Jobs enqueued one at a time.
    pub single_jobs: u64,
    /// Producers sharing those one-at-a-time jobs, each awaiting its own calls.
    pub producers: u32,
    /// Jobs enqueued in bulk.
    pub bulk_jobs: u64,
    /// Jobs per bulk call.
    pub batch_size: usize,
    /// Jobs pre-enqueued for the drain.
    pub drain_jobs: u64,
    /// Handlers run at once by each worker.
    pub concurrency: u32,
    /// Worker processes for drain and steady; 0 runs one worker inside the bench process.
    pub processes: u32,
    /// Jobs per second the steady workload enqueues.
    pub rate: u32,
    /// How long the steady workload enqueues.
    pub duration: Duration,
    /// Jobs the latency producer enqueues.
    pub latency_jobs: u32,
    /// Pause between two of the latency producer's jobs.
    pub spacing: Duration,
    /// The unique mode of the one-at-a-time jobs, and how many keys they share (cycled: job `i`
    /// has key `k<i mod keys>`); `None`: no unique keys.
    pub unique: Option<(jobq::job::UniqueMode, u64)>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            workloads: Workload::ALL.to_vec(),
            single_jobs: 5_000,
            producers: 1,
            bulk_jobs: 100_000,
            batch_size: 10_000,
            drain_jobs: 20_000,
            concurrency: WorkerSettings::default().concurrency,
            processes: 0,
            rate: 1_000,
            duration: Duration::from_secs(10),
            latency_jobs: 500,
            spacing: Duration::from_millis(20),
            unique: None,
        }
    }
}

impl Plan {
    fn check(&self) -> BenchResult<()> {
        let invalid = |what: &str| {
            Err(jobq::Error::invalid(jobq::error::Input::Bench, format!("{what} must be at least 1")).into())
        };
        if self.batch_size == 0 {
            return invalid("the batch size");
        }
        if self.concurrency == 0 {
            return invalid("the concurrency");
        }
        if self.producers == 0 {
            return invalid("the number of producers");
        }
        let runs = |w: Workload| self.workloads.contains(&w);
        if runs(Workload::Drain) && self.drain_jobs == 0 {
            return invalid("the number of drain jobs");
        }
        if runs(Workload::Enqueue) && self.single_jobs + self.bulk_jobs == 0 {
            return invalid("the number of enqueue jobs");
        }
        if runs(Workload::Steady) && (self.rate == 0 || self.duration.is_zero()) {
            return invalid("the steady rate and duration");
        }
        if runs(Workload::Latency) && self.latency_jobs == 0 {
            return invalid("the number of latency jobs");
        }
        if self.unique.is_some_and(|(_, keys)| keys == 0) {
            return invalid("the number of unique keys");
        }
        Ok(())
    }
}

/// Hears how a bench is getting on (the CLI draws a progress bar). Every method has a silent default.
pub trait Progress: Send + Sync {
    /// A phase begins: `total` items of `what`.
    fn begin(&self, what: &str, total: u64) {
        let _ = (what, total);
    }

    /// Items done so far in the current phase.
    fn set(&self, done: u64) {
        let _ = done;
    }

    /// The current phase ended.
    fn end(&self) {}

    /// Whether anyone looks: counting progress that costs a store call (a drain's) happens only then.
    fn visible(&self) -> bool {
        false
    }
}

/// What a bench needs from its caller.
pub struct Setup {
    /// The store to measure, migrated.
    pub client: Client,
    /// Its URL, handed to worker and producer processes.
    pub url: StoreUrl,
    /// The `jobq` executable, for worker and producer processes.
    pub exe: PathBuf,
    /// The worker settings in force (heartbeat and poll interval are kept; queues, concurrency,
    /// retention and rescue are the bench's own).
    pub settings: WorkerSettings,
    /// What the bench jobs' handler does in drain and steady.
    pub handler: BenchHandler,
    /// Progress reports.
    pub progress: Arc<dyn Progress>,
}

/// One bench run on its own queue. Call [`Bench::finish`] when done, whatever happened.
pub struct Bench {
    client: Client,
    url: StoreUrl,
    exe: PathBuf,
    queue: String,
    settings: WorkerSettings,
    handler: BenchHandler,
    progress: Arc<dyn Progress>,
    /// Workers and processes started and not yet known to be done, for `finish` to stop.
    live: Mutex<Vec<Live>>,
    /// The config file of worker processes, once written.
    config_file: Mutex<Option<PathBuf>>,
}

impl std::fmt::Debug for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("url", &self.url)
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

/// Something running that `finish` must stop.
struct Live {
    stop: Stop,
    task: JoinHandle<()>,
}

/// How to ask a running thing to stop.
#[derive(Clone)]
enum Stop {
    /// An in-process worker.
    Worker(WorkerHandle),
    /// A child process, signalled only while the task waiting for it has not reaped it.
    Process {
        /// Its pid.
        pid: u32,
        /// Set once reaped: the pid may then belong to another process.
        reaped: Arc<AtomicBool>,
    },
}

/// Everything a bench measured, and under which conditions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The jobq build.
    pub jobq: Build,
    /// The store and its durability settings.
    pub store: StoreReport,
    /// The machine, and its load before and after.
    pub machine: Machine,
    /// When the bench started (UTC, RFC 3339).
    pub date: String,
    /// The throwaway queue (removed afterwards).
    pub queue: String,
    /// What the handler did in drain and steady.
    pub handler: String,
    /// Enqueue figures.
    pub enqueue: Option<enqueue::EnqueueReport>,
    /// Drain figures.
    pub drain: Option<drain::DrainReport>,
    /// Steady-rate figures.
    pub steady: Option<steady::SteadyReport>,
    /// Latency figures.
    pub latency: Option<latency::LatencyReport>,
}

/// The jobq that measured.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Build {
    /// Crate version.
    pub version: String,
    /// `release` or `debug` (debug figures say little).
    pub profile: String,
}

impl Build {
    /// This build.
    pub fn current() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").into(),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        }
    }
}

/// The store measured.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreReport {
    /// Backend.
    pub kind: StoreKind,
    /// Where (password removed).
    pub url: String,
    /// Server or library version.
    pub version: String,
    /// Durability and speed settings as the store reports them.
    pub settings: BTreeMap<String, String>,
}

impl From<StoreInfo> for StoreReport {
    fn from(info: StoreInfo) -> Self {
        StoreReport {
            kind: info.kind,
            url: info.url,
            version: info.version,
            settings: info.settings.into_iter().collect(),
        }
    }
}

/// How the workers of a drain or steady run were set up.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerSetup {
    /// `in-process` (one worker inside the bench) or `processes` (`jobq worker` processes).
    pub mode: String,
    /// Worker processes (0 in process).
    pub processes: u32,
    /// Handlers run at once by each worker.
    pub concurrency: u32,
    /// What the handler does.
    pub handler: String,
    /// The idle poll interval of each worker, in milliseconds (new work written to the store wakes
    /// a worker sooner where the store can tell).
    pub poll_interval_ms: u64,
}

impl Bench {
    /// A bench on a fresh queue `jobq-bench-<random>`.
    pub fn new(setup: Setup) -> Bench {
        let queue = format!("jobq-bench-{:08x}", rand::random::<u32>());
        Bench {
            client: setup.client,
            url: setup.url,
            exe: setup.exe,
            queue,
            settings: setup.settings,
            handler: setup.handler,
            progress: setup.progress,
            live: Mutex::new(Vec::new()),
            config_file: Mutex::new(None),
        }
    }

    /// The queue this bench works in.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Runs the plan's workloads one after another, emptying the queue after each.
    pub async fn run(&self, plan: &Plan) -> BenchResult<Report> {
        plan.check()?;
        let info = self.client.store().info().await?;
        let mut report = Report {
            jobq: Build::current(),
            store: info.into(),
            machine: Machine::read(),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            queue: self.queue.clone(),
            handler: self.handler.describe(),
            enqueue: None,
            drain: None,
            steady: None,
            latency: None,
        };
        for workload in Workload::ALL {
            if !plan.workloads.contains(&workload) {
                continue;
            }
            match workload {
                Workload::Enqueue => report.enqueue = Some(enqueue::run(self, plan).await?),
                Workload::Drain => report.drain = Some(drain::run(self, plan).await?),
                Workload::Steady => report.steady = Some(steady::run(self, plan).await?),
                Workload::Latency => report.latency = Some(latency::run(self, plan).await?),
            }
            self.clear().await?;
        }
        report.machine.load_after = machine::load_average();
        Ok(report)
    }

    /// Stops every worker and process still running, deletes every job of the queue, removes the
    /// worker config file, and checks that the queue is gone. Returns how many jobs it deleted.
    pub async fn finish(&self) -> BenchResult<u64> {
        self.stop_all().await;
        let deleted = self.clear().await?;
        if let Some(path) = self.config_file.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = std::fs::remove_file(path);
        }
        let left = self.counts().await?.map(|q| q.total()).unwrap_or(0);
        if left > 0 {
            return Err(BenchError::Incomplete(format!(
                "{left} jobs are left in queue {} (remove them with `jobq cancel --queue {0} --yes` and `jobq cleanup --queue {0} --yes`)",
                self.queue
            )));
        }
        Ok(deleted)
    }

    /// Cancels the queue's live jobs and deletes all of its jobs; returns how many it deleted.
    async fn clear(&self) -> BenchResult<u64> {
        self.client.cancel_matching(self.own_jobs()).await?;
        let request = CleanupRequest {
            queues: vec![self.queue.clone()],
            ..Default::default()
        };
        Ok(self.client.cleanup(&request).await?)
    }

    /// The filter that picks the bench queue's jobs.
    fn own_jobs(&self) -> JobFilter {
        JobFilter {
            queues: vec![self.queue.clone()],
            ..Default::default()
        }
    }

    /// Up to `n` jobs of the queue, newest first.
    async fn jobs(&self, n: u64) -> BenchResult<Vec<Job>> {
        let params = List {
            filter: self.own_jobs(),
            limit: u32::try_from(n).unwrap_or(u32::MAX),
            offset: 0,
            after: None,
        };
        Ok(self.client.list(&params).await?)
    }

    /// Counts of the bench queue, if it has jobs.
    async fn counts(&self) -> BenchResult<Option<jobq::store::QueueStats>> {
        let stats = self.client.stats(std::slice::from_ref(&self.queue)).await?;
        Ok(stats.queues.into_iter().find(|q| q.queue == self.queue))
    }

    /// Jobs of the queue that are not terminal.
    async fn live_jobs(&self) -> BenchResult<u64> {
        let Some(q) = self.counts().await? else { return Ok(0) };
        Ok(q.count(JobStatus::Pending) + q.count(JobStatus::Running) + q.count(JobStatus::Waiting))
    }

    /// Waits, looking every 5 ms, until the queue holds no live job; past `limit` it stops the fleet
    /// and fails, saying the workers did not finish `what`.
    async fn wait_worked_off(&self, fleet: &fleet::Fleet, limit: Duration, what: &str) -> BenchResult<()> {
        let deadline = std::time::Instant::now() + limit;
        while self.live_jobs().await? > 0 {
            if std::time::Instant::now() >= deadline {
                fleet.stop();
                return Err(BenchError::Incomplete(format!(
                    "the workers did not finish {what} within {}s",
                    limit.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(())
    }

    /// Remembers something running, forgetting what has finished meanwhile.
    fn track(&self, stop: Stop, task: JoinHandle<()>) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|l| !l.task.is_finished());
        live.push(Live { stop, task });
    }

    /// Asks everything still running to stop, waits up to [`STOP_GRACE`], then kills what remains.
    async fn stop_all(&self) {
        let live: Vec<Live> = std::mem::take(&mut *self.live.lock().unwrap_or_else(|e| e.into_inner()));
        for l in &live {
            if !l.task.is_finished() {
                signal(&l.stop, libc::SIGTERM);
            }
        }
        for mut l in live {
            if tokio::time::timeout(STOP_GRACE, &mut l.task).await.is_err() {
                signal(&l.stop, libc::SIGKILL);
                l.task.abort();
                let _ = l.task.await;
            }
        }
    }

    /// Settings of an in-process bench worker: the configured heartbeat and poll interval; the
    /// bench's queue and concurrency; no retention; rescue only of jobs stale for a day.
    fn worker_settings(&self, concurrency: u32) -> WorkerSettings {
        let mut s = self.settings.clone();
        s.queues = vec![self.queue.clone()];
        s.concurrency = concurrency;
        s.retention = None;
        s.stale_after = STALE_AFTER.max(s.heartbeat * 2);
        s.shutdown_timeout = Duration::from_secs(10);
        s
    }

    /// The worker name bench workers register under (`jobq workers` shows it).
    fn worker_name(&self) -> String {
        self.queue.clone()
    }

    /// How the workers of a drain or steady run are set up.
    fn setup_of(&self, plan: &Plan) -> WorkerSetup {
        WorkerSetup {
            mode: if plan.processes == 0 { "in-process" } else { "processes" }.into(),
            processes: plan.processes,
            concurrency: plan.concurrency,
            handler: self.handler.describe(),
            poll_interval_ms: self.settings.poll_interval.as_millis() as u64,
        }
    }

    /// Enqueues `n` bench jobs in batches (not timed; for drain), with progress.
    async fn fill(&self, n: u64, batch_size: usize) -> BenchResult<()> {
        self.progress.begin("enqueueing", n);
        self.enqueue_batches(n, batch_size).await?;
        self.progress.end();
        Ok(())
    }

    /// Validates and enqueues bench jobs `0..n`, `batch_size` to a call, moving the progress bar
    /// after each call.
    async fn enqueue_batches(&self, n: u64, batch_size: usize) -> BenchResult<()> {
        let mut done = 0u64;
        while done < n {
            let count = (n - done).min(batch_size as u64);
            let jobs = (done..done + count)
                .map(|i| self.client.validate(self.spec(i)))
                .collect::<jobq::Result<Vec<_>>>()?;
            self.client.enqueue_validated(&jobs).await?;
            done += count;
            self.progress.set(done);
        }
        Ok(())
    }

    /// The `i`-th bench job.
    fn spec(&self, i: u64) -> jobq::JobSpec {
        jobq::JobSpec::new(BENCH_TYPE, serde_json::json!({ "n": i })).queue(self.queue.clone())
    }

    /// Waits until every worker (in-process or not) of this bench is in the registry: `n` entries
    /// under the bench's worker name. Gives up after 30 s.
    async fn wait_registered(&self, n: usize) -> BenchResult<()> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let seen = self.client.workers(Duration::from_secs(60)).await?;
            if seen.iter().filter(|w| w.name == self.worker_name()).count() >= n {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(BenchError::Incomplete(format!(
                    "the bench's {n} worker(s) did not register within 30s"
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Sends `sig` to a process, or asks an in-process worker to stop (gracefully for SIGTERM, at once
/// for SIGKILL).
fn signal(stop: &Stop, sig: libc::c_int) {
    match stop {
        Stop::Worker(handle) if sig == libc::SIGKILL => handle.stop_now(),
        Stop::Worker(handle) => handle.shutdown(),
        Stop::Process { pid, reaped } => {
            if *pid != 0 && !reaped.load(Ordering::Acquire) {
                // SAFETY: kill only sends a signal, to a child this bench started and has not reaped.
                unsafe {
                    libc::kill(*pid as libc::pid_t, sig);
                }
            }
        }
    }
}

/// Jobs per second, 0 for no time.
fn rate(jobs: u64, seconds: f64) -> f64 {
    if seconds > 0.0 { jobs as f64 / seconds } else { 0.0 }
}
