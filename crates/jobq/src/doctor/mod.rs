//! `jobq doctor` as a library: what is wrong with a store's jobs and with the store itself, and what
//! to do about each, as a [`Report`] (which `jobq doctor` prints and `jobq serve` can show).
//!
//! [`Client::doctor`] reads what the store knows ([`gather`]: the live workers, the counts per queue,
//! the pauses, the running jobs, the waiting jobs of types with a `wait_timeout`, the often rescued
//! jobs, and the store's own findings from [`crate::store::Store::health`]), and `checks.rs` turns
//! those facts into findings with pure functions, tested without a store. It never writes: not even
//! the worker registry's forgetting of dead workers that `jobq workers` does.
//!
//! [`Client::doctor`]: crate::client::Client::doctor

mod checks;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::handler::HandlerSpec;
use crate::job::{Job, JobId, JobStatus};
use crate::store::{
    DynStore, Finding, Health, JobFilter, List, OftenRescued, Pause, QueueStats, Stats, StoreError, StoreKind,
    WorkerInfo,
};
use crate::time::UnixMillis;
use crate::worker::WorkerSettings;

pub use checks::findings;

/// Jobs read per `list` call while gathering running and waiting jobs.
const PAGE: u32 = 500;

/// Often rescued (and stranded blocked) jobs read at most (the finding counts up to this many).
const RESCUED_LIMIT: u32 = 1_000;

/// What the doctor checks against: the workers' settings it judges jobs by, and the thresholds past
/// which a fact is a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Doctor {
    /// The workers' `stale_after`: a running job without a heartbeat for longer has lost its worker.
    pub stale_after: Duration,
    /// A worker not seen in the registry for longer is presumed gone.
    pub worker_seen_within: Duration,
    /// The `wait_timeout` of each job type whose handler has one.
    pub wait_timeouts: BTreeMap<String, Duration>,
    /// The catch-all handler's `wait_timeout`, for the other types.
    pub fallback_wait_timeout: Option<Duration>,
    /// The thresholds.
    pub thresholds: Thresholds,
}

/// The limits past which the doctor reports something.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// A queue whose oldest ready job has waited longer than this, while no worker runs its jobs.
    pub ready_late: Duration,
    /// A pause older than this.
    pub paused_for: Duration,
    /// A job rescued more than this many times.
    pub rescues: u32,
    /// A queue with at least this many dead jobs.
    pub dead_letters: u64,
    /// The store-specific limits.
    pub health: Health,
    /// Ids named per finding, at most.
    pub sample: usize,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            ready_late: Duration::from_secs(5 * 60),
            paused_for: Duration::from_secs(24 * 3600),
            rescues: 2,
            dead_letters: 100,
            health: Health::default(),
            sample: 5,
        }
    }
}

impl Doctor {
    /// The settings of the workers and their handlers (by job type, `*` for the rest), with default
    /// thresholds.
    pub fn new(worker: &WorkerSettings, handlers: &BTreeMap<String, HandlerSpec>) -> Doctor {
        let w = worker;
        let mut wait_timeouts = BTreeMap::new();
        let mut fallback_wait_timeout = None;
        for (job_type, handler) in handlers {
            match (job_type.as_str(), handler.wait_timeout) {
                (_, None) => {}
                ("*", Some(t)) => fallback_wait_timeout = Some(t),
                (_, Some(t)) => {
                    wait_timeouts.insert(job_type.clone(), t);
                }
            }
        }
        Doctor {
            stale_after: w.stale_after,
            // As `jobq workers` judges them: a worker refreshes its entry every heartbeat.
            worker_seen_within: w.stale_after.max(w.heartbeat * 3),
            wait_timeouts,
            fallback_wait_timeout,
            thresholds: Thresholds::default(),
        }
    }

    /// The `wait_timeout` a job of `job_type` waits under, if any.
    pub fn wait_timeout(&self, job_type: &str) -> Option<Duration> {
        self.wait_timeouts.get(job_type).copied().or(self.fallback_wait_timeout)
    }
}

/// What the doctor found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The store examined.
    pub store: StoreKind,
    /// When.
    pub checked_at: UnixMillis,
    /// Whether nothing was found.
    pub healthy: bool,
    /// What was found, errors first.
    pub findings: Vec<Finding>,
}

/// What the store says, read once, for the checks.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The present.
    pub now: UnixMillis,
    /// Workers seen within [`Doctor::worker_seen_within`].
    pub workers: Vec<WorkerInfo>,
    /// Counts per queue that has jobs.
    pub queues: Vec<QueueStats>,
    /// Pauses in force.
    pub pauses: Vec<Pause>,
    /// Every running job.
    pub running: Vec<Job>,
    /// The waiting jobs of types with a `wait_timeout`.
    pub waiting: Vec<Job>,
    /// Jobs rescued more than the threshold allows.
    pub often_rescued: Vec<Job>,
    /// Blocked jobs that wait for no job which has not ended (never expected: a missed release).
    pub stranded: Vec<JobId>,
    /// What the store found of its own health.
    pub store: Vec<Finding>,
}

/// Examines `store` at `now`.
pub async fn examine(store: &DynStore, doctor: &Doctor, now: UnixMillis) -> Result<Report, StoreError> {
    let facts = gather(store, doctor, now).await?;
    let findings = findings(&facts, doctor);
    Ok(Report {
        store: store.kind(),
        checked_at: now,
        healthy: findings.is_empty(),
        findings,
    })
}

/// Reads the facts the checks need. Only reads.
pub async fn gather(store: &DynStore, doctor: &Doctor, now: UnixMillis) -> Result<Facts, StoreError> {
    // A bridge registers beside the workers but runs no jobs: it is none of the workers judged here.
    let mut workers = store.workers(now.minus(doctor.worker_seen_within)).await?;
    workers.retain(|w| w.bridge.is_none());
    let queues = store
        .stats(&Stats {
            queues: Vec::new(),
            now,
        })
        .await?
        .queues;
    let pauses = store.flow_state(now).await?.pauses;
    let running = list_all(
        store,
        JobFilter {
            statuses: vec![JobStatus::Running],
            ..Default::default()
        },
    )
    .await?;
    let waiting = if doctor.wait_timeouts.is_empty() && doctor.fallback_wait_timeout.is_none() {
        Vec::new()
    } else {
        let job_types = if doctor.fallback_wait_timeout.is_some() {
            Vec::new()
        } else {
            doctor.wait_timeouts.keys().cloned().collect()
        };
        list_all(
            store,
            JobFilter {
                statuses: vec![JobStatus::Waiting],
                job_types,
                ..Default::default()
            },
        )
        .await?
    };
    let often_rescued = store
        .often_rescued(&OftenRescued {
            at_least: doctor.thresholds.rescues.saturating_add(1),
            limit: RESCUED_LIMIT,
        })
        .await?;
    let stranded = store.stranded(RESCUED_LIMIT).await?;
    let store = store.health(&doctor.thresholds.health).await?;
    Ok(Facts {
        now,
        workers,
        queues,
        pauses,
        running,
        waiting,
        often_rescued,
        stranded,
        store,
    })
}

/// Every job matching `filter`, page by page.
async fn list_all(store: &DynStore, filter: JobFilter) -> Result<Vec<Job>, StoreError> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    loop {
        let page = store
            .list(&List {
                filter: filter.clone(),
                limit: PAGE,
                offset,
                after: None,
            })
            .await?;
        let n = page.len();
        out.extend(page);
        if n < PAGE as usize {
            return Ok(out);
        }
        offset += u64::from(PAGE);
    }
}
