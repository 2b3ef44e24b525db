//! `Client`: the library's front door for producers and operators.
//!
//! It validates input once, fills defaults, takes the time from its clock and calls the store; stores
//! never see unvalidated values. The CLI is a thin layer over these calls. Single-job conveniences live
//! here; the store itself is batch-first.

mod batch;
mod flow;
mod graph;
mod health;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
mod transaction;
mod transfer;

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Input, Result};
use crate::events::{MAX_EVENT_ID_BYTES, Subscriptions};
use crate::job::{Flow, IntoJobSpec, Job, JobId, JobSpec, JobStatus, Limits, NewJob};
use crate::schedule::Schedule;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::store::{
    self, Cancel, CancelAnswer, CancelTarget, Cancelled, Cleanup, Delete, DeleteAnswer, DeleteMatching, DeletedCount,
    DynStore, Emit, EmitOutcome, Enqueued, Event, JobEdges, JobFilter, List, ReadEdges, RejectedInbox, RejectedItem,
    ReplayDead, Resolution, Resolve, ResolveAnswer, Retry, RetryAnswer, ScheduleState, SetSchedulePaused, Stats,
    StatsReport, StoreUrl, WakeOn, WorkerInfo,
};
use crate::time::{Clock, SystemClock, UnixMillis};

pub use batch::{BatchEnqueued, BatchStatus, ON_FAILURE_SUFFIX, OnFailureStatus};
pub use flow::{LimitReport, QueueReport, QueuesReport, TypeReport};
pub use graph::{GRAPH_LIMIT, GraphEdge, GraphJob, JobGraph};
pub use health::MAX_BUCKETS;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub use transaction::EmittedIn;
pub use transfer::{ImportOptions, ImportReport, StateCopied};

/// Rows deleted per statement by cleanup and retention, so no lock is held long.
pub const CLEANUP_BATCH: u32 = 5_000;

/// [`Client::wait`]'s re-reads of the job start this often and slow down to [`SLOWEST_POLL`] while
/// nothing changes.
const FIRST_POLL: Duration = Duration::from_millis(50);
/// Slowest re-read interval without wake-ups from the store.
const SLOWEST_POLL: Duration = Duration::from_millis(500);
/// Slowest re-read interval when the store announces changes (it only guards against missed ones).
const SLOWEST_POLL_WATCHED: Duration = Duration::from_secs(2);
/// Least time between two reads when changes keep coming.
const MIN_GAP: Duration = Duration::from_millis(20);

/// A handle on a store for enqueueing and managing jobs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    store: DynStore,
    clock: Arc<dyn Clock>,
    limits: Limits,
}

/// What `cancel` by id did with each id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CancelReport {
    /// Cancelled, with their previous status.
    pub cancelled: Vec<Cancelled>,
    /// Already terminal, left alone.
    pub already_terminal: Vec<(JobId, JobStatus)>,
    /// No such job.
    pub not_found: Vec<String>,
    /// With a cascade: the jobs cancelled because they descend from one of those asked about (they
    /// wait for it, or for a job that does, and so on), with their previous status.
    pub descendants: Vec<Cancelled>,
}

/// What [`Client::delete`] did with each id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteReport {
    /// Deleted, with the status each had.
    pub deleted: Vec<(JobId, JobStatus)>,
    /// Running or waiting and not forced: left as they are.
    pub refused: Vec<(JobId, JobStatus)>,
    /// No such job.
    pub not_found: Vec<String>,
}

/// What [`Client::retry`] did with each id.
#[derive(Debug, Clone, Default)]
pub struct RetryReport {
    /// Back to pending, as they are now.
    pub retried: Vec<Job>,
    /// Not finished (blocked, pending, running, waiting): left as they are.
    pub not_terminal: Vec<(JobId, JobStatus)>,
    /// Finished, but a live job of the queue holds the unique key: (the job, the live job).
    pub key_taken: Vec<(JobId, JobId)>,
    /// No such job.
    pub not_found: Vec<String>,
}

/// What a refusal tells to do instead of deleting a running or waiting job.
const DELETE_WAY_OUT: &str = "cancel it first or use --force";

impl CancelReport {
    /// Ids that name no job refuse the call (a job already finished is left alone, and is no error).
    pub fn refusal(&self) -> Option<Error> {
        (!self.not_found.is_empty()).then(|| Error::NotFound {
            ids: self.not_found.clone(),
        })
    }
}

impl DeleteReport {
    /// A job left because it runs or waits is a conflict (naming the ids not found too); ids that
    /// name no job alone are not found.
    pub fn refusal(&self) -> Option<Error> {
        if self.refused.is_empty() {
            return (!self.not_found.is_empty()).then(|| Error::NotFound {
                ids: self.not_found.clone(),
            });
        }
        let held: Vec<String> = self
            .refused
            .iter()
            .map(|(id, status)| format!("job {id} is {status}"))
            .collect();
        let way_out = if self.refused.len() == 1 {
            DELETE_WAY_OUT.to_string()
        } else {
            DELETE_WAY_OUT.replace(" it ", " them ")
        };
        let mut reason = format!("{}: {way_out}", held.join(" and "));
        if !self.not_found.is_empty() {
            let missing = Error::NotFound {
                ids: self.not_found.clone(),
            };
            reason.push_str(&format!("; {missing}"));
        }
        let ids = self.refused.iter().map(|(id, _)| id.clone()).collect();
        Some(Error::conflict(ids, reason))
    }
}

impl RetryReport {
    /// A job that has not finished, or whose unique key a live job holds, is a conflict (naming the
    /// ids not found too); ids that name no job alone are not found.
    pub fn refusal(&self) -> Option<Error> {
        let mut refused: Vec<JobId> = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        for (id, status) in &self.not_terminal {
            reasons.push(format!("job {id} is {status}: only a finished job can be retried"));
            refused.push(id.clone());
        }
        for (id, holder) in &self.key_taken {
            reasons.push(format!(
                "job {id} stays as it is: live job {holder} holds its unique key"
            ));
            refused.push(id.clone());
        }
        let missing = (!self.not_found.is_empty()).then(|| Error::NotFound {
            ids: self.not_found.clone(),
        });
        if refused.is_empty() {
            return missing;
        }
        reasons.extend(missing.map(|e| e.to_string()));
        Some(Error::conflict(refused, reasons.join("; ")))
    }
}

/// An event for [`Client::emit`].
#[derive(Debug, Clone, Default)]
pub struct EventSpec {
    /// Its name, e.g. `user.registered`.
    pub name: String,
    /// Its payload, which every job it becomes carries.
    pub payload: serde_json::Value,
    /// Its id (a producer that may retry should give one); a UUIDv7 when absent.
    pub id: Option<String>,
    /// Meta every job it becomes carries.
    pub meta: std::collections::BTreeMap<String, String>,
    /// Accept an event nobody subscribes to (it is recorded, and becomes no job).
    pub allow_none: bool,
}

/// What [`Client::emit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// The event's id.
    pub event_id: String,
    /// Emitted now, or a duplicate of an earlier emit.
    pub outcome: EmitOutcome,
    /// The ids of its jobs, in the order of the subscriptions.
    pub jobs: Vec<JobId>,
}

/// What `cleanup` should delete.
#[derive(Debug, Clone, Default)]
pub struct CleanupRequest {
    /// Only jobs that finished longer ago than this.
    pub older_than: Option<Duration>,
    /// Terminal statuses (every one when empty).
    pub statuses: Vec<JobStatus>,
    /// Only these queues.
    pub queues: Vec<String>,
    /// Only these job types (every one when empty).
    pub job_types: Vec<String>,
    /// Keeps the newest this many of each queue and status (at least 1).
    pub keep_last: Option<u32>,
    /// Count instead of deleting.
    pub dry_run: bool,
}

impl Client {
    /// Connects to the store the URL names and brings its schema up to date.
    pub async fn connect(url: &StoreUrl) -> Result<Client> {
        let client = Client::new(store::connect(url).await?);
        client.migrate().await?;
        Ok(client)
    }

    /// Closes the store's connections with the server's goodbye (see [`crate::store::Store::close`]):
    /// a program's last call on its client, so that the database server does not log its connections
    /// as aborted.
    pub async fn close(&self) {
        self.store.close().await
    }

    /// A client over an open store, with the system clock and default limits.
    pub fn new(store: DynStore) -> Client {
        Client {
            store,
            clock: Arc::new(SystemClock),
            limits: Limits::default(),
        }
    }

    /// Uses other enqueue limits.
    pub fn with_limits(mut self, limits: Limits) -> Client {
        self.limits = limits;
        self
    }

    /// The store underneath.
    pub fn store(&self) -> &DynStore {
        &self.store
    }

    /// The present, by the client's clock.
    pub fn now(&self) -> UnixMillis {
        self.clock.now()
    }

    /// Creates or upgrades the store's schema (under the store's lock, so concurrent processes apply
    /// each migration once); returns the schema version the store is now at.
    pub async fn migrate(&self) -> Result<u32> {
        self.store.migrate().await?;
        Ok(self.store.schema_version())
    }

    /// Checks a job and fills its defaults, without enqueueing it.
    pub fn validate(&self, spec: JobSpec) -> Result<NewJob> {
        Ok(NewJob::check(spec, self.now(), &self.limits)?)
    }

    /// Enqueues one job: a [`JobSpec`], or a [`crate::JobType`] value as the payload of a job of its
    /// type (`client.enqueue(SendEmail { … })`).
    pub async fn enqueue(&self, job: impl IntoJobSpec) -> Result<Enqueued> {
        let job = self.validate(job.into_job_spec()?)?;
        let mut out = self.store.enqueue(std::slice::from_ref(&job)).await?;
        Ok(out.remove(0))
    }

    /// Enqueues many jobs in one store transaction. Every job is validated first: one bad job refuses
    /// the whole batch and nothing is written.
    pub async fn enqueue_many(&self, specs: Vec<JobSpec>) -> Result<Vec<Enqueued>> {
        let now = self.now();
        let jobs = specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                NewJob::check(spec, now, &self.limits).map_err(|e| e.at(format_args!("job {}", i + 1)).into())
            })
            .collect::<Result<Vec<_>>>()?;
        self.enqueue_validated(&jobs).await
    }

    /// Enqueues a whole graph of jobs in one call to the store (all of it or nothing; on a Redis
    /// Cluster, queue by queue), each job waiting for those it names; answers per job, in the
    /// flow's order, with its ref.
    pub async fn flow(&self, flow: &Flow) -> Result<Vec<(String, Enqueued)>> {
        let (names, specs): (Vec<String>, Vec<JobSpec>) = flow.specs()?.into_iter().unzip();
        let enqueued = self.enqueue_many(specs).await?;
        Ok(names.into_iter().zip(enqueued).collect())
    }

    /// Enqueues jobs that [`Client::validate`] already accepted.
    pub async fn enqueue_validated(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.store.enqueue(jobs).await?)
    }

    /// What the store recorded of each schedule, in order (`None` for one never seen by a worker).
    pub async fn schedule_states(&self, schedules: &[Schedule]) -> Result<Vec<Option<ScheduleState>>> {
        let keys: Vec<_> = schedules.iter().map(Schedule::key).collect();
        Ok(self.store.schedules(&keys).await?)
    }

    /// Enqueues one run of a schedule now, outside its tick sequence (its ticks are not affected).
    pub async fn trigger_schedule(&self, schedule: &Schedule) -> Result<Enqueued> {
        let job = schedule.triggered_job(self.now(), &self.limits);
        let mut out = self.store.enqueue(std::slice::from_ref(&job)).await?;
        Ok(out.remove(0))
    }

    /// Pauses a schedule for every worker of the store, or resumes it; a resume skips the ticks
    /// missed while paused unless `catch_up`.
    pub async fn set_schedule_paused(&self, schedule: &Schedule, paused: bool, catch_up: bool) -> Result<()> {
        Ok(self
            .store
            .set_schedule_paused(&SetSchedulePaused {
                key: &schedule.key(),
                paused,
                now: self.now(),
                skip_missed: !catch_up,
            })
            .await?)
    }

    /// Emits an event: records it and enqueues the jobs `subscriptions` says it becomes, all in one
    /// store transaction (all or none). Emitting an id that was emitted before changes nothing
    /// (`EmitOutcome::Duplicate`, with the ids its jobs have). An event nobody subscribes to is refused,
    /// so that a misspelt name does not drop work silently, unless `event.allow_none`.
    pub async fn emit(&self, subscriptions: &Subscriptions, event: EventSpec) -> Result<Emitted> {
        let event = self.checked_event(event, Some(subscriptions))?;
        let now = self.now();
        let jobs = subscriptions.jobs_of(&event, now, &self.limits);
        let job_ids = jobs.iter().map(|j| j.id.clone()).collect();
        let emit = Emit { event, jobs, now };
        let outcome = self.store.emit(std::slice::from_ref(&emit)).await?.remove(0);
        Ok(Emitted {
            event_id: emit.event.id,
            outcome,
            jobs: job_ids,
        })
    }

    /// An event as [`Client::emit`] records it: its name a valid type name, its id given (1 to
    /// [`MAX_EVENT_ID_BYTES`] bytes, no control characters) or a new UUIDv7, something subscribed to
    /// it (when `subscriptions` are given) unless `allow_none`, its payload JSON within the payload
    /// limit.
    fn checked_event(&self, event: EventSpec, subscriptions: Option<&Subscriptions>) -> Result<Event> {
        crate::job::validate_type(&event.name)
            .map_err(|e| Error::invalid(Input::Event, format!("event name: {}", e.reason)))?;
        let id = match event.id {
            Some(id) => {
                if id.is_empty() || id.len() > MAX_EVENT_ID_BYTES || id.chars().any(char::is_control) {
                    return Err(Error::invalid(
                        Input::Event,
                        format!("event id must be 1 to {MAX_EVENT_ID_BYTES} bytes long, without control characters"),
                    ));
                }
                id
            }
            None => JobId::generate().to_string(),
        };
        if let Some(subscriptions) = subscriptions
            && subscriptions.of(&event.name).is_empty()
            && !event.allow_none
        {
            return Err(Error::invalid(
                Input::Event,
                format!(
                    "no jobs subscribe to event {:?}: add [events.{:?}] with jobs = [...] to the config, or allow it with --allow-none",
                    event.name, event.name
                ),
            ));
        }
        let payload = serde_json::value::to_raw_value(&event.payload)
            .map_err(|e| Error::invalid(Input::Payload, format!("payload: {e}")))?;
        if payload.get().len() > self.limits.max_payload_bytes {
            return Err(Error::invalid(
                Input::Payload,
                format!(
                    "payload is {} bytes, over the limit of {} bytes (max_payload_bytes in the config)",
                    payload.get().len(),
                    self.limits.max_payload_bytes
                ),
            ));
        }
        Ok(Event {
            id,
            name: event.name,
            payload,
            meta: event.meta,
        })
    }

    /// One job; `NotFound` when there is none.
    pub async fn get(&self, id: &str) -> Result<Job> {
        self.read(&JobId::parse(id)?).await
    }

    /// A job's edges: the jobs it waits (or waited) for and those that wait (or waited) for it, each
    /// as it is now. Empty for a job without any. Takes the job as read (`Client::get`): its queue
    /// spares a store that finds jobs by queue (Redis) looking for it again.
    pub async fn edges(&self, job: &Job) -> Result<JobEdges> {
        let read = ReadEdges {
            ids: vec![job.id.clone()],
            queue: Some(job.queue.clone()),
            dependents: true,
            ..Default::default()
        };
        Ok(self.store.edges(&read).await?.pop().unwrap_or_default())
    }

    /// One job by a parsed id; `NotFound` when there is none.
    async fn read(&self, id: &JobId) -> Result<Job> {
        self.store.get(id).await?.ok_or_else(|| Error::not_found(id.as_str()))
    }

    /// Follows a job until it ends and returns it as it ended. `on_read` sees every read of the job,
    /// the first and the last included, so a caller can show its progress. Re-reads come at once when
    /// the store announces a change, else on a poll that backs off while nothing changes.
    /// `NotFound` when there is no such job; [`Error::TimedOut`] when `timeout` passes first.
    pub async fn wait(&self, id: &JobId, timeout: Option<Duration>, mut on_read: impl FnMut(&Job)) -> Result<Job> {
        let started = Instant::now();
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep_until(started + t).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline);
        let mut job = self.read(id).await?;
        // Any write may be the job's: a store that announces changes wakes the waiter at once.
        let changed = Arc::new(Notify::new());
        let watch = self.store.subscribe(&WakeOn::Changes, changed.clone());
        let slowest = if watch.is_some() {
            SLOWEST_POLL_WATCHED
        } else {
            SLOWEST_POLL
        };
        let mut poll = FIRST_POLL;
        let mut last_read = Instant::now();
        loop {
            on_read(&job);
            if job.status.is_terminal() {
                return Ok(job);
            }
            tokio::select! {
                _ = changed.notified(), if watch.is_some() => {}
                _ = tokio::time::sleep(poll) => poll = (poll * 2).min(slowest),
                _ = &mut deadline => {
                    return Err(Error::TimedOut {
                        id: id.clone(),
                        status: job.status,
                        waited: started.elapsed(),
                    });
                }
            }
            tokio::time::sleep_until(last_read + MIN_GAP).await;
            last_read = Instant::now();
            let before = (job.status, job.progress.clone());
            job = self.read(id).await?;
            if (job.status, job.progress.clone()) != before {
                poll = FIRST_POLL;
            }
        }
    }

    /// Jobs matching a filter, newest first.
    pub async fn list(&self, params: &List) -> Result<Vec<Job>> {
        validate_filter(&params.filter)?;
        Ok(self.store.list(params).await?)
    }

    /// Counts by queue and status.
    pub async fn stats(&self, queues: &[String]) -> Result<StatsReport> {
        for q in queues {
            crate::job::validate_queue(q)?;
        }
        Ok(self
            .store
            .stats(&Stats {
                queues: queues.to_vec(),
                now: self.now(),
            })
            .await?)
    }

    /// Cancels jobs by id. A running job's worker stops it at its next heartbeat.
    pub async fn cancel(&self, ids: &[String]) -> Result<CancelReport> {
        self.cancel_ids(ids, false).await
    }

    /// Cancels jobs by id and, with `cascade`, every job descending from them that has not ended: the
    /// jobs that wait for them, those that wait for those, and so on, whatever their rules (a
    /// dependent by `finish` or `failure` would otherwise run once they are cancelled), through
    /// descendants that have ended too. The descendants are read first, then cancelled with the jobs
    /// asked about in one call of the store (one transaction on the SQL stores; on Redis one script per
    /// queue): a dependent enqueued in between is left to its rule.
    pub async fn cancel_ids(&self, ids: &[String], cascade: bool) -> Result<CancelReport> {
        let ids = ids
            .iter()
            .map(|i| JobId::parse(i).map_err(Error::from))
            .collect::<Result<Vec<_>>>()?;
        let asked: std::collections::HashSet<JobId> = ids.iter().cloned().collect();
        let mut target = ids.clone();
        if cascade {
            target.extend(self.live_descendants(&ids).await?);
        }
        let answers = self.cancel_target(CancelTarget::Ids(target)).await?;
        let mut report = CancelReport::default();
        for answer in answers {
            match answer {
                CancelAnswer::Cancelled(c) if !asked.contains(&c.id) => report.descendants.push(c),
                CancelAnswer::Cancelled(c) => report.cancelled.push(c),
                // A descendant that ended or went meanwhile is nobody's concern.
                CancelAnswer::AlreadyTerminal { id, .. } | CancelAnswer::NotFound(id) if !asked.contains(&id) => {}
                CancelAnswer::AlreadyTerminal { id, status } => report.already_terminal.push((id, status)),
                CancelAnswer::NotFound(id) => report.not_found.push(id.to_string()),
            }
        }
        report.descendants.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(report)
    }

    /// The descendants of `ids` that have not ended, by id: read level by level through every
    /// descendant, one `edges` call per level.
    async fn live_descendants(&self, ids: &[JobId]) -> Result<Vec<JobId>> {
        let mut seen: std::collections::HashSet<JobId> = ids.iter().cloned().collect();
        let mut live = Vec::new();
        let mut level = ids.to_vec();
        while !level.is_empty() {
            let read = ReadEdges {
                ids: std::mem::take(&mut level),
                dependents: true,
                ..Default::default()
            };
            for edges in self.store.edges(&read).await? {
                for dependent in edges.dependents {
                    if seen.insert(dependent.job_id.clone()) {
                        if dependent.status.is_some_and(|s| !s.is_terminal()) {
                            live.push(dependent.job_id.clone());
                        }
                        level.push(dependent.job_id);
                    }
                }
            }
        }
        live.sort();
        Ok(live)
    }

    /// Cancels every live job matching the filter.
    pub async fn cancel_matching(&self, filter: JobFilter) -> Result<Vec<Cancelled>> {
        validate_filter(&filter)?;
        if let Some(s) = filter.statuses.iter().find(|s| s.is_terminal()) {
            return Err(Error::invalid(
                Input::Status,
                format!("cannot cancel {s} jobs (only pending, running and waiting)"),
            ));
        }
        let answers = self.cancel_target(CancelTarget::Filter(filter)).await?;
        Ok(answers
            .into_iter()
            .filter_map(|a| match a {
                CancelAnswer::Cancelled(c) => Some(c),
                _ => None,
            })
            .collect())
    }

    /// The store's answer for each job `target` names, cancelled as of now.
    async fn cancel_target(&self, target: CancelTarget) -> Result<Vec<CancelAnswer>> {
        let cancel = Cancel {
            target,
            now: self.now(),
        };
        Ok(self.store.cancel(&cancel).await?)
    }

    /// Moves dead jobs back to pending (attempt reset, errors kept), or on a dry run tells which jobs
    /// that would be, oldest death first: the store's one selection decides both.
    pub async fn replay_dead(&self, mut replay: ReplayDead) -> Result<Vec<Job>> {
        validate_filter(&replay.filter)?;
        replay.now = self.now();
        Ok(self.store.replay_dead(&replay).await?)
    }

    /// Finishes a waiting job from outside (a third party's callback, an operator): succeed with a
    /// result, fail (dead), retry at `run_at` (absolute: `client.now().plus(delay)`), or discard. Only
    /// a job that is waiting at that moment changes; the answer says what it became, or the status it
    /// has when it was not waiting. `NotFound` when there is no such job. Resolving a job twice the
    /// same way answers `NotWaiting` with the status the first resolve gave it, which a caller may take
    /// as done.
    ///
    /// ```no_run
    /// # async fn demo(client: jobq::Client, job_id: &str) -> jobq::Result<()> {
    /// use jobq::store::{Resolution, ResolveAnswer};
    /// let result = serde_json::value::to_raw_value(&serde_json::json!({"paid": true})).ok();
    /// match client.resolve(job_id, Resolution::Succeed { result }).await? {
    ///     ResolveAnswer::Resolved { status } => println!("{job_id} is {status}"),
    ///     // Delivered twice, or resolved otherwise (or timed out) meanwhile.
    ///     other => println!("{job_id}: {other:?}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn resolve(&self, id: &str, action: Resolution) -> Result<ResolveAnswer> {
        let id = JobId::parse(id)?;
        self.check_resolution(&action)?;
        let resolve = Resolve {
            id: id.clone(),
            attempt: None,
            action,
        };
        match self.store.resolve(&[resolve], self.now()).await?.pop() {
            Some(ResolveAnswer::NotFound) | None => Err(Error::not_found(id.as_str())),
            Some(answer) => Ok(answer),
        }
    }

    /// Refuses a resolution's empty texts and a result over the payload limit.
    fn check_resolution(&self, action: &Resolution) -> Result<()> {
        let refuse = |reason: &str| Err(Error::invalid(Input::Resolution, reason));
        match action {
            Resolution::Fail { error } if error.trim().is_empty() => refuse("a failure needs an error message"),
            Resolution::Discard { reason } if reason.trim().is_empty() => refuse("a discard needs a reason"),
            Resolution::Retry { error: Some(e), .. } if e.trim().is_empty() => {
                refuse("a retry's error, when given, must not be empty")
            }
            Resolution::Succeed { result: Some(r) } if r.get().len() > self.limits.max_payload_bytes => {
                Err(Error::invalid(
                    Input::Resolution,
                    format!(
                        "result is {} bytes, over the limit of {} bytes (max_payload_bytes in the config)",
                        r.get().len(),
                        self.limits.max_payload_bytes
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Deletes jobs by id, for good. Running and waiting jobs are refused unless `force`, which deletes
    /// them too: a running job's worker stops its handler at its next heartbeat and drops its outcome.
    pub async fn delete(&self, ids: &[String], force: bool) -> Result<DeleteReport> {
        let ids = distinct_ids(ids)?;
        let answers = self
            .store
            .delete(&Delete {
                ids: ids.clone(),
                force,
            })
            .await?;
        let mut report = DeleteReport::default();
        for (id, answer) in ids.into_iter().zip(answers) {
            match answer {
                DeleteAnswer::Deleted { previous } => report.deleted.push((id, previous)),
                DeleteAnswer::Refused { status } => report.refused.push((id, status)),
                _ => report.not_found.push(id.to_string()),
            }
        }
        Ok(report)
    }

    /// Deletes every job matching the filter (statuses as named, every status when none), in bounded
    /// batches; running and waiting ones only with `force`, otherwise they are left and counted.
    pub async fn delete_matching(&self, filter: JobFilter, force: bool) -> Result<DeletedCount> {
        validate_filter(&filter)?;
        let delete = DeleteMatching {
            filter,
            force,
            limit: CLEANUP_BATCH,
        };
        let mut total = DeletedCount::default();
        loop {
            let n = self.store.delete_matching(&delete).await?;
            total.deleted += n.deleted;
            total.refused = n.refused;
            if n.deleted < u64::from(delete.limit) {
                return Ok(total);
            }
        }
    }

    /// Puts finished jobs (succeeded, dead, cancelled, discarded) back to pending, runnable now, attempt
    /// reset, errors kept. Jobs that have not finished, and jobs whose unique key a live job holds,
    /// are left as they are.
    pub async fn retry(&self, ids: &[String]) -> Result<RetryReport> {
        let ids = distinct_ids(ids)?;
        let retry = Retry {
            ids: ids.clone(),
            now: self.now(),
        };
        let answers = self.store.retry(&retry).await?;
        let mut report = RetryReport::default();
        for (id, answer) in ids.into_iter().zip(answers) {
            match answer {
                RetryAnswer::Retried(job) => report.retried.push(*job),
                RetryAnswer::NotTerminal { status } => report.not_terminal.push((id, status)),
                RetryAnswer::KeyTaken { holder } => report.key_taken.push((id, holder)),
                _ => report.not_found.push(id.to_string()),
            }
        }
        Ok(report)
    }

    /// Deletes terminal jobs, in bounded batches; returns how many (or, on a dry run, would be).
    pub async fn cleanup(&self, request: &CleanupRequest) -> Result<u64> {
        if let Some(s) = request.statuses.iter().find(|s| !s.is_terminal()) {
            return Err(Error::invalid(
                Input::Status,
                format!("cleanup deletes only terminal jobs (succeeded, dead, cancelled, discarded, expired), not {s}"),
            ));
        }
        if request.keep_last == Some(0) {
            return Err(Error::invalid(
                Input::Limit,
                "keep_last must be at least 1 (leave it out to keep none by count)",
            ));
        }
        validate_filter(&JobFilter {
            queues: request.queues.clone(),
            job_types: request.job_types.clone(),
            ..Default::default()
        })?;
        let cleanup = Cleanup {
            filter: JobFilter {
                queues: request.queues.clone(),
                statuses: request.statuses.clone(),
                job_types: request.job_types.clone(),
                ..Default::default()
            },
            keep_last: request.keep_last,
            finished_before: request.older_than.map(|d| self.now().minus(d)),
            limit: if request.dry_run { u32::MAX } else { CLEANUP_BATCH },
            dry_run: request.dry_run,
            ..Default::default()
        };
        let mut total = 0;
        loop {
            let n = self.store.cleanup(&cleanup).await?;
            total += n;
            if request.dry_run || n < u64::from(cleanup.limit) {
                return Ok(total);
            }
        }
    }

    /// The inbox items of `queues` (every queue when empty) that could not become jobs, oldest first,
    /// at most `limit` per queue (stores without an inbox refuse: unsupported).
    pub async fn rejected_inbox_items(&self, queues: &[String], limit: usize) -> Result<Vec<RejectedItem>> {
        for q in queues {
            crate::job::validate_queue(q)?;
        }
        Ok(self
            .store
            .rejected_inbox_items(&RejectedInbox { queues, limit })
            .await?)
    }

    /// Deletes the rejected inbox items of `queues` (every queue when empty); returns how many.
    pub async fn clear_rejected_inbox_items(&self, queues: &[String]) -> Result<u64> {
        for q in queues {
            crate::job::validate_queue(q)?;
        }
        Ok(self.store.clear_rejected_inbox_items(queues).await?)
    }

    /// Workers seen within `within`, after forgetting those not seen since then (they died without
    /// leaving the registry).
    pub async fn workers(&self, within: Duration) -> Result<Vec<WorkerInfo>> {
        let since = self.now().minus(within);
        self.store.forget_workers(since).await?;
        Ok(self.store.workers(since).await?)
    }
}

/// Parsed ids, each once, in the order first given.
fn distinct_ids(ids: &[String]) -> Result<Vec<JobId>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let id = JobId::parse(id)?;
        if seen.insert(id.clone()) {
            out.push(id);
        }
    }
    Ok(out)
}

fn validate_filter(filter: &JobFilter) -> Result<()> {
    for q in &filter.queues {
        crate::job::validate_queue(q)?;
    }
    for t in &filter.job_types {
        crate::job::validate_type(t)?;
    }
    Ok(())
}
