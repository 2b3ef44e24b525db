//! The Store seam: one object-safe trait that every backend implements, picked at run time by URL.
//!
//! The contract is batch-first (enqueue, claim, heartbeat, finish and release take slices), takes a
//! params struct past two inputs, and gets time passed in: stores never read the wall clock. Every exit
//! from `running` is fenced by a [`Lease`]: it applies only while the job is still running at that
//! attempt under that worker, so a late answer from a worker whose job was rescued, released or
//! cancelled meanwhile changes nothing. Stores trust their inputs: `Client` validates before calling.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

pub(crate) mod batch;
mod edges;
mod error;
mod events;
mod flow;
mod health;
mod lease;
mod manage;
pub mod migrate;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
mod reading;
#[cfg(feature = "redis")]
pub mod redis;
mod registry;
mod schedules;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub(crate) mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod transfer;
pub mod url;

pub use edges::{Edge, EdgeState, JobEdges, ReadEdges};
pub use error::StoreError;
pub use events::{Emit, EmitOutcome, Event, ExpandEvents, Expander, MAX_EVENT_ID_BYTES};
pub use flow::{
    Admission, Block, Candidate, ClaimPlan, FieldPath, Flow, FlowState, Headroom, Limit, Pause, Rate, RecordLimits,
    RecordedLimit, Scope, SetPaused, SlotKey,
};
pub use health::{
    Finding, FinishedCount, Health, Load, OftenRescued, QueueLoad, RESCUE_ERROR, Severity, Throughput, rescues,
};
pub use lease::{Claim, Finish, FinishedAndClaimed, Heartbeat, Lease, LeaseState, Rescue, Rescued, Transition};
pub(crate) use manage::retry_job;
pub use manage::{
    Delete, DeleteAnswer, DeleteMatching, DeletedCount, Resolution, Resolve, ResolveAnswer, Retry, RetryAnswer,
};
pub use reading::{JobFilter, List, ListCursor, QueueStats, Stats, StatsReport};
pub use registry::{BridgeInfo, RejectedInbox, RejectedItem, WorkerInfo};
pub(crate) use schedules::decide as decide_tick;
pub use schedules::{Overlap, ScheduleKey, ScheduleState, SetSchedulePaused, Tick, TickOutcome};
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub use sql::exec::{AppConnection, AppDatabase};
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
pub use sql::in_transaction::SqlTables;
pub use transfer::{Import, ImportAnswer, ImportEdge, ImportEdges, OnConflict};
pub use url::{RedactedUrl, StoreKind, StoreUrl};

/// A store shared by the tasks of a process.
pub type DynStore = Arc<dyn Store>;

/// What happened to one job handed to [`Store::enqueue`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enqueued {
    /// The id of the job that now stands for the request: the new job, or the existing one it
    /// coalesced into.
    pub id: JobId,
    /// Whether a job was created.
    pub outcome: EnqueueOutcome,
}

/// Whether an enqueue created a job.
///
/// Exhaustive on purpose, as [`crate::JobStatus`] is: a new outcome changes what every caller must
/// do with an answer, so it comes with a new minor version before 1.0 (a major one after), and the
/// compiler points each `match` at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueOutcome {
    /// A new pending job.
    Created,
    /// A non-terminal job with the same queue and unique key exists; its id is returned.
    Coalesced,
    /// A job with this id exists already (a producer retrying its send); nothing changed.
    Duplicate,
    /// Unique mode `replace`: the holder, which had not started, took the new job's fields; its
    /// id is returned.
    Replaced,
    /// Unique mode `debounce`: as `Replaced`, and the holder's run was put off by the window.
    Debounced,
    /// Unique mode `throttle`: the key's window since its holder was created has not passed; the
    /// new job was dropped and the holder's id is returned.
    Throttled,
    /// Unique mode `keep-last` (or a running rule `queue-behind`): the key's holder was running, so
    /// the new job was created `blocked` behind it, holding the key, and starts once that job has
    /// ended; the new job's id is returned.
    QueuedBehind,
    /// Unique mode `cancel-running`: as `QueuedBehind`, and the running holder was asked to stop
    /// (its worker stops it at its next heartbeat and records it `cancelled`); the new job's id is
    /// returned.
    CancelledPrevious,
}

impl EnqueueOutcome {
    /// The lowercase word every answer uses (`created`, `coalesced`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EnqueueOutcome::Created => "created",
            EnqueueOutcome::Coalesced => "coalesced",
            EnqueueOutcome::Duplicate => "duplicate",
            EnqueueOutcome::Replaced => "replaced",
            EnqueueOutcome::Debounced => "debounced",
            EnqueueOutcome::Throttled => "throttled",
            EnqueueOutcome::QueuedBehind => "queued-behind",
            EnqueueOutcome::CancelledPrevious => "cancelled-previous",
        }
    }
}

/// As [`EnqueueOutcome::as_str`] says it.
impl Serialize for EnqueueOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Which jobs [`Store::cancel`] targets.
#[derive(Debug, Clone)]
pub enum CancelTarget {
    /// These jobs.
    Ids(Vec<JobId>),
    /// Every job matching (statuses default to pending, running and waiting; terminal ones never match).
    Filter(JobFilter),
}

/// Parameters of [`Store::cancel`].
#[derive(Debug, Clone)]
pub struct Cancel {
    /// Which jobs.
    pub target: CancelTarget,
    /// The present, recorded as `finished_at`.
    pub now: UnixMillis,
}

/// One job [`Store::cancel`] cancelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cancelled {
    /// The job.
    pub id: JobId,
    /// Its status before: a `running` job's worker learns of it at its next heartbeat.
    pub previous: JobStatus,
}

/// What [`Store::cancel`] did with one job it was asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelAnswer {
    /// Cancelled now.
    Cancelled(Cancelled),
    /// Already terminal, left as it is.
    AlreadyTerminal {
        /// The job.
        id: JobId,
        /// Its status.
        status: JobStatus,
    },
    /// No such job.
    NotFound(JobId),
}

/// Parameters of [`Store::replay_dead`].
#[derive(Debug, Clone, Default)]
pub struct ReplayDead {
    /// Which dead jobs, by queue and type (its statuses and times are not looked at).
    pub filter: JobFilter,
    /// Only these ids (on top of the filter).
    pub ids: Vec<JobId>,
    /// At most this many, oldest death first.
    pub limit: Option<u32>,
    /// The present: the replayed jobs run from now.
    pub now: UnixMillis,
    /// Tell which jobs would come back, and change nothing.
    pub dry_run: bool,
    /// Also bring back, `blocked`, the jobs that the replayed jobs' failure cancelled (see
    /// [`Store::replay_dead`]); not with `dry_run`.
    pub cascade: bool,
}

/// Parameters of [`Store::cleanup`].
#[derive(Debug, Clone, Default)]
pub struct Cleanup {
    /// Which jobs, by queue, terminal status and type (every one when it names none; non-terminal
    /// statuses are never deleted; its creation times are not looked at).
    pub filter: JobFilter,
    /// Not jobs of these types (a retention whose types have their own rules).
    pub exclude_types: Vec<String>,
    /// Only jobs that finished before this instant.
    pub finished_before: Option<UnixMillis>,
    /// Keeps, of each queue and status, the newest this many (by finish time, then id) of the jobs
    /// the other conditions select: only older ones are deleted.
    pub keep_last: Option<u32>,
    /// Delete at most this many in this call (bounded batches keep locks short).
    pub limit: u32,
    /// Count instead of deleting.
    pub dry_run: bool,
}

/// Parameters of [`Store::expire`].
#[derive(Debug, Clone, Default)]
pub struct Expire {
    /// These queues (every queue when empty).
    pub queues: Vec<String>,
    /// End at most this many in this call (bounded batches keep locks short).
    pub limit: u32,
}

/// What a store says about itself, for `stats` and `bench`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreInfo {
    /// Backend kind.
    pub kind: StoreKind,
    /// Where it is, password removed.
    pub url: String,
    /// Server or library version.
    pub version: String,
    /// Settings that matter for durability and speed (journal mode, synchronous level…).
    pub settings: Vec<(String, String)>,
}

/// What a subscriber of [`Store::subscribe`] wants to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WakeOn {
    /// Work may have become ready in one of these queues (any queue when empty): what an idle worker
    /// waits for.
    Ready(Vec<String>),
    /// Anything may have changed, a job finishing too: what `jobq wait`, following one job, waits for.
    Changes,
}

/// A running subscription to a store's wake-up hints (see [`Store::subscribe`]). Dropping it ends the
/// subscription and closes whatever connection it held.
#[derive(Debug)]
pub struct Subscription {
    task: JoinHandle<()>,
    /// Set for a task that ends by itself when asked (see [`Subscription::ending`]).
    stop: Option<CancellationToken>,
}

impl Subscription {
    /// Wraps the task that delivers the hints; the task is aborted when the subscription drops.
    pub fn new(task: JoinHandle<()>) -> Subscription {
        Subscription { task, stop: None }
    }

    /// Wraps a task that holds a connection to a server: when the subscription drops, `stop` is
    /// cancelled and the task ends by itself, closing its connection with the server's goodbye
    /// (an aborted task would drop it mid-conversation, which the server logs as aborted).
    pub fn ending(task: JoinHandle<()>, stop: CancellationToken) -> Subscription {
        Subscription { task, stop: Some(stop) }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        match &self.stop {
            Some(stop) => stop.cancel(),
            None => self.task.abort(),
        }
    }
}

/// The contract every backend keeps. Each method is one atomic operation in the store unless its
/// documentation says otherwise; two workers racing on it never both win.
#[async_trait]
pub trait Store: Send + Sync + fmt::Debug {
    // The store itself.

    /// Which backend this is.
    fn kind(&self) -> StoreKind;

    /// Version, location and durability settings.
    async fn info(&self) -> Result<StoreInfo, StoreError>;

    /// Creates or upgrades the schema, under a lock so concurrent processes apply each migration once.
    async fn migrate(&self) -> Result<(), StoreError>;

    /// Closes the store's connections with the server's goodbye (PostgreSQL's Terminate, MySQL's
    /// `COM_QUIT`), so that the server does not log them as aborted: the owner's last call, after the
    /// calls under way are done (waited for a few seconds at most). On the stores that close
    /// anything, a call after it fails with [`StoreError::Unavailable`]; SQLite (a file has nobody to
    /// tell, and closing its last connection would checkpoint the log on the way out) and Redis (whose
    /// server logs nothing of a connection that goes) keep working. Closing twice is harmless.
    async fn close(&self) {}

    /// Where an application's own connection to the same database finds jobq's tables, for enqueueing
    /// and emitting inside the application's transaction ([`crate::Client::enqueue_in`]): the SQL
    /// stores' tables, qualified with the schema or database their URL names; `None` for a store that
    /// keeps no SQL tables (Redis).
    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
    fn sql_tables(&self) -> Option<SqlTables> {
        None
    }

    /// The schema version `migrate` brings the store to: its newest SQL migration, or for a store
    /// without SQL its own layout version.
    fn schema_version(&self) -> u32 {
        migrate::latest(self.kind())
    }

    // Lifecycle: a job from its enqueue to its outcome.

    /// Inserts jobs as `pending`. Per job, in order: an existing job with the same id is left alone
    /// (`Duplicate`, even when it also holds the unique key); else an existing non-terminal job with the
    /// same queue and unique key is returned instead (`Coalesced`, with its id); otherwise the job is
    /// created. Within one batch a later job coalesces into (or duplicates) an earlier one. Returns one
    /// answer per input, in input order. The batch is applied in one transaction.
    ///
    /// A created job with dependencies (`after`) waits for each of them by its rule
    /// ([`crate::job::DependOn`]). A dependency may be a job of the store or of the same batch (one
    /// that coalesced stands for its holder); one that names no job refuses the whole batch
    /// ([`StoreError::UnknownDependency`], nothing written). A dependency that has already ended is
    /// resolved at once. The job is created `blocked` while any dependency has not ended, `cancelled`
    /// (with the error of [`crate::job::broken_dependency_error`]) when one ended against its rule, and
    /// `pending` otherwise. When a dependency ends, by whatever path ends it, its dependents are
    /// resolved in the same transaction or script: each edge once (a transition written twice
    /// resolves nothing twice); a blocked job becomes `pending` when its last edge is met, or is
    /// cancelled at its first broken one, which resolves that job's own dependents in turn. The
    /// caller keeps a batch's dependencies free of cycles. On a Redis Cluster, where a script keeps to
    /// one queue's hash slot, a dependency in another queue is released through an outbox in its slot
    /// that the next claim of the dependent's queue applies (see [`Store::claim`]) rather than in its
    /// own script, and a batch is written queue by queue, a dependency's queue before its dependent's.
    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError>;

    /// Atomically leases up to `limit` ready jobs (`pending`, `run_at <= now`, queue in `queues`, type
    /// not excluded), smallest (priority, run_at, id) first: sets them `running`, increments `attempt`,
    /// records the worker and `started_at = heartbeat_at = now`, clears progress. Returns the jobs in that
    /// claim order. Two concurrent claims never return the same job.
    ///
    /// With a [`Flow`], jobs of a paused queue (or of a type paused in its queue) and of a blocked type
    /// (or blocked partition) are passed over, and so is a job that a limit of `flow.limits` holds
    /// back: one whose (scope, partition) has `global_concurrency` running jobs holding slots, or
    /// whose rate bucket is empty. Jobs behind a passed-over one are still taken in claim order. A
    /// limited claim is atomic with the limits' state, so however many workers claim at once, a limit
    /// is never exceeded; a job it leases holds a slot of each concurrency limit over it for as long
    /// as it runs at that attempt. (On a Redis Cluster, a type's limits are counted per queue.)
    ///
    /// On a Redis Cluster a claim first applies, even when `limit` is 0, the ends of dependencies in
    /// other hash slots that jobs of `queues` wait for (each edge once, however often an end is
    /// delivered); then those dependents are blocked, pending or cancelled as they would be on one
    /// server. Other stores release a dependent in the transaction that ends its dependency.
    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError>;

    /// Records `now` (and progress) for each held lease. Answers per input, in order: `Held`, or why
    /// the lease no longer holds (`Cancelled` when the job was cancelled, `Lost` otherwise).
    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError>;

    /// Applies attempt outcomes, each only if its lease still holds (running, same attempt and worker).
    /// Errors are appended to the history (capped at [`crate::job::ERROR_HISTORY_CAP`]); terminal
    /// outcomes and `waiting` set `finished_at`; the worker id is cleared. Returns per input whether it
    /// applied (`false` = stale, ignored). An outcome's children ([`Finish::spawn`]) and its await
    /// ([`Transition::AwaitChildren`]) are written with it, in its transaction or script, or not at
    /// all: a stale outcome writes no child.
    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError>;

    /// Applies `finishes` as [`Store::finish`] does at `claim.now`, then claims as [`Store::claim`]
    /// does for `claim`, seeing those outcomes: a worker under cluster-wide limits takes the
    /// replacements for the jobs it finished in one call.
    ///
    /// For a limited claim ([`ClaimPlan::Limited`]) every store writes both at once (one transaction
    /// or one script), so an error means neither was written, and the claim may take, in the scope
    /// of each concurrency limit, the slots that this call's applied outcomes freed there (within the
    /// limit: one lowered meanwhile still binds). Taking more, where the limits have room, is up to
    /// the store: Redis's scripts are atomic and take what the limits admit; the SQL stores hand the
    /// freed slots over without locking the limits (the scope's running jobs, counted together, do
    /// not grow), leave the rest to a later claim, and lock them as [`Store::claim`] does only when a
    /// limit of the claim has a partition or a rate. Any other claim is made after the outcomes are
    /// written, and its failure is returned in [`FinishedAndClaimed::claimed`] beside them.
    async fn finish_and_claim(&self, finishes: &[Finish], claim: &Claim) -> Result<FinishedAndClaimed, StoreError> {
        let applied = self.finish(finishes, claim.now).await?;
        let claimed = self.claim(claim).await;
        Ok(FinishedAndClaimed { applied, claimed })
    }

    /// Puts leased jobs back to `pending` without using up an attempt (`attempt` is decremented), for
    /// shutdown and for jobs a worker claimed but cannot start. Fenced like `finish`.
    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError>;

    /// Whether a job's spawned children ([`Finish::spawn`]) may go to queues other than its own:
    /// true but on a Redis Cluster, whose scripts keep to one queue's hash slot.
    fn spawns_across_queues(&self) -> bool {
        true
    }

    /// Takes back running jobs whose heartbeat is older than `stale_before`: to `pending` (runnable now)
    /// or, when the lost attempt was the last, to `dead`; error `worker lost` appended. Atomic per job, so
    /// concurrent sweeps never rescue one job twice.
    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError>;

    // Reads.

    /// One job by id.
    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError>;

    /// Jobs matching the filter, newest first (`created_at`, then id, descending), from just past
    /// `after` when given, then skipping `offset`.
    async fn list(&self, list: &List) -> Result<Vec<Job>, StoreError>;

    /// Counts by queue and status.
    async fn stats(&self, stats: &Stats) -> Result<StatsReport, StoreError>;

    /// The edges of each job of `read.ids`: one answer per id, in input order (empty for a job with
    /// none, or an unknown id). A job's dependencies are every edge it was enqueued with, kept as long
    /// as it is, each with its state and the dependency as it is now (its fields `None` once it has
    /// been deleted), and its result when `read.results`. Its dependents (when `read.dependents`) are
    /// the jobs that wait or waited for it and still exist. Both oldest first (by id). A read, not a
    /// snapshot: edges resolved meanwhile may be seen either way.
    async fn edges(&self, read: &ReadEdges) -> Result<Vec<JobEdges>, StoreError>;

    // Operator actions.

    /// Cancels non-terminal jobs (blocked, pending, running, waiting) atomically; terminal ones are untouched.
    /// By ids: one answer per distinct id, in input order (cancelled with its previous status, already
    /// terminal with its status, or not found). By filter: one `Cancelled` answer per job cancelled.
    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<CancelAnswer>, StoreError>;

    /// Moves dead jobs back to `pending` runnable at `now`: attempt reset to 0, error history kept,
    /// result, finish time and expiry cleared. Oldest death first (`finished_at`, then id), at most `limit`. A
    /// unique key may be held by one live job only: a dead job whose key a live job holds stays dead,
    /// and of several selected dead jobs sharing a key only the one that died first comes back.
    /// Returns the jobs replayed, as they are after the replay, in no set order; on a dry run, exactly
    /// the jobs a replay would move now, as they are, in that order, changing nothing (one selection
    /// decides both).
    ///
    /// With `cascade` (and not a dry run), in the same transaction or script: each cancelled job whose
    /// edge to a replayed job broke and whose last error names it (cancelled by that failure, not by
    /// an operator) comes back `blocked`, when each of its other dependencies is live or ended the way
    /// its rule asks and no live job holds its unique key, its edges open again to its live
    /// dependencies and met to the others; then the same for the jobs that its cancellation
    /// cancelled, and so on down. Those jobs are returned after the replayed ones, as they are now.
    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<Job>, StoreError>;

    /// Deletes (or counts, on a dry run) up to `limit` terminal jobs matching every condition of
    /// `cleanup`; returns how many. A job that a job which has not ended waits or waited for is kept
    /// (its end is still to be handed over), and so are the newest `keep_last` of each queue and
    /// status.
    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError>;

    /// Ends `expired` up to `limit` jobs of `queues` that have not started (blocked or pending) and
    /// whose expiry has passed by the store's own clock (never a worker's): the finish time is the
    /// store's clock too, and the jobs that wait for them are resolved as for any end, in the same
    /// transaction or script (an expired job meets a `finish` edge and breaks the others). Jobs a
    /// concurrent claim holds are passed over, not waited for. Returns how many ended; a caller
    /// calls again while a full batch comes back. [`Store::claim`] never leases an expired job, swept
    /// or not: this keeps them out of the ready set, so that claims do not read past them.
    async fn expire(&self, expire: &Expire) -> Result<u64, StoreError>;

    /// Finishes waiting jobs from outside, each atomically: only a job that is `waiting` at that moment
    /// (after `attempt`, when the input names one) changes; two racing resolves of one job never both
    /// apply. Succeed → succeeded with its result; Fail → dead; Discard → discarded; those three set
    /// `finished_at = now` and give up the job's unique key. Retry → pending at its `run_at`,
    /// `finished_at` cleared, attempt unchanged (its next claim is the next attempt), the unique key
    /// kept. An error or reason is appended to the history under the job's attempt (capped like
    /// `finish`'s). Answers one per input, in input order, as if applied one after another (a second
    /// resolve of the same job in one call finds it no longer waiting): `Resolved` with the new status,
    /// `NotWaiting` with the status it has (nothing changed), or `NotFound`.
    async fn resolve(&self, resolves: &[Resolve], now: UnixMillis) -> Result<Vec<ResolveAnswer>, StoreError>;

    /// Deletes jobs by id, each atomically with the look at its status: running and waiting jobs are
    /// refused unless `force`. A forced delete of a running job is its worker's lost lease: its next
    /// heartbeat answers `Lost` (the handler is stopped and its outcome dropped) and its `finish` and
    /// `release` apply to nothing. A deleted job gives up its unique key. Answers one per input, in
    /// input order, as if applied one after another (an id given twice is `NotFound` the second time):
    /// `Deleted` with the status it had, `Refused` with its status, or `NotFound`.
    async fn delete(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, StoreError>;

    /// Deletes up to `limit` jobs matching the filter (any status the filter names, or every status
    /// when it names none; created in its time range), running and waiting ones only with `force`
    /// (forced deletes are lost leases, as for [`Store::delete`]). Without `force`, also counts the
    /// running and waiting jobs that match and were left. A caller deletes everything that matches by
    /// calling again while `deleted` reaches `limit`.
    async fn delete_matching(&self, delete: &DeleteMatching) -> Result<DeletedCount, StoreError>;

    /// Puts finished jobs (succeeded, dead, cancelled, discarded, expired) back to `pending`, each
    /// atomically, as `replay_dead` does with a dead job: runnable at `now`, attempt reset to 0, error
    /// history kept, result, start, finish, worker, heartbeat, progress and expiry cleared. A job whose unique key a live job
    /// of its queue holds stays as it is (`KeyTaken`, naming that job). Answers one per input, in input
    /// order, as if applied one after another (an id given twice is `NotTerminal` the second time):
    /// `Retried` with the job as it is now, `NotTerminal` with its status, `KeyTaken`, or `NotFound`.
    async fn retry(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, StoreError>;

    /// Writes jobs exactly as given (id, queue, status, attempt, error history, result, progress,
    /// times, worker, unique key, snoozes), each in its status's place: a pending job is claimable at
    /// its `run_at`, a running one holds its lease as given (so rescue takes it back once its
    /// heartbeat is stale), a waiting one awaits `resolve`, a finished one is listed and cleaned up by
    /// its `finished_at`; a live job holds its unique key. A job whose id the store holds (on Redis:
    /// in its queue, as for `enqueue`) is `Skipped`, left as it is, or with [`OnConflict::Replace`]
    /// replaced whole (`Replaced`; the replaced job gives up its lease and unique key). A live job
    /// whose unique key a different live job of its queue holds is not written (`KeyTaken`, naming
    /// that job). With `dry_run` nothing is written and the answers say what would be done. Answers
    /// one per input, in input order, as if applied one after another (a job given twice is
    /// `Skipped` or `Replaced` the second time). Atomic per call on the SQL stores, per queue on Redis.
    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError>;

    /// Writes the dependencies of imported jobs, once every job of the import is written (an
    /// export lists dependents before the jobs they wait for): for each job of `edges` that the
    /// store holds and that has no edge yet (a job imported, or skipped by a resumed import that
    /// wrote it but not its edges), its edges as given (rule and state) and its join. An open edge
    /// counts in its dependency's count of dependents while that job is live; one whose dependency
    /// has ended is resolved by how it ended, and one whose dependency the store does not hold is
    /// broken as a deletion breaks it (as cancelled), so that nothing waits for a job that will not
    /// come. Then a blocked job among them with no open edge left runs or is cancelled by its rules,
    /// as at a dependency's end, and a cancel cascades. On a Redis Cluster an edge to another slot
    /// is written as an enqueue writes it (its dependency's side first). Answers per input, in input
    /// order, whether it wrote the job's edges. Atomic per call on the SQL stores, per queue of
    /// the dependents on Redis.
    async fn import_edges(&self, edges: &[ImportEdges], now: UnixMillis) -> Result<Vec<bool>, StoreError>;

    // The worker registry.

    /// Records (or refreshes) a worker in the registry and the count of jobs it has done.
    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError>;

    /// Removes a worker from the registry (on clean exit).
    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError>;

    /// Workers seen since `seen_since`. Changes nothing.
    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError>;

    /// Forgets the workers not seen since `seen_before` (they died without leaving the registry);
    /// returns how many.
    async fn forget_workers(&self, seen_before: UnixMillis) -> Result<u64, StoreError>;

    // Schedules.

    /// The recorded state of each schedule of `keys`, in input order; `None` for one the store has no
    /// record of. The state carries the status of the schedule's last job (`None` when that job is
    /// gone). Changes nothing.
    async fn schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError>;

    /// Records each schedule of `keys` that has no record yet, not paused, with no tick handled and
    /// `not_before = now` (no tick before its first sighting is ever enqueued); leaves recorded ones as
    /// they are. Idempotent; racing calls record each schedule once.
    async fn register_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError>;

    /// Fires ticks, each atomically with the record of its schedule, in input order (several ticks of
    /// one schedule come oldest first): a tick of a schedule with no record is `Unknown`, of a paused
    /// one `Paused`, at or before the last tick handled or before `not_before` `AlreadyHandled`;
    /// otherwise it becomes the last tick handled, and unless its overlap rule holds it back
    /// (`Skipped`, judged by the status of the schedule's last job) its job is enqueued and becomes the
    /// schedule's last job (`Enqueued`; if a job with its id exists already, that job becomes the last
    /// job and the answer is `AlreadyHandled`). However many workers fire the same tick at once, its
    /// job is enqueued once, and a tick handled once is never enqueued again, even after its job is
    /// deleted.
    async fn fire_ticks(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError>;

    /// Pauses or resumes a schedule, recording it first (as `register_schedules` would) if needed.
    /// Resuming with `skip_missed` moves `not_before` to `now`, so the ticks missed while paused are
    /// never enqueued; without it they are caught up as after any other gap.
    async fn set_schedule_paused(&self, pause: &SetSchedulePaused<'_>) -> Result<(), StoreError>;

    /// Writes each schedule's record as given (last tick handled, not before, paused, last job; its
    /// last job's status is read, not written), replacing what the store holds for that schedule: a
    /// store's schedules moving with its jobs (`jobq copy`), so that the target neither enqueues a
    /// tick the source handled nor forgets a pause. `now` is the record's update time.
    async fn restore_schedules(
        &self,
        records: &[(ScheduleKey, ScheduleState)],
        now: UnixMillis,
    ) -> Result<(), StoreError>;

    // Events.

    /// Emits events, each atomically: an event whose id the store holds already is `Duplicate` and
    /// changes nothing; otherwise the event is recorded (as expanded) and every one of its jobs is
    /// enqueued, all or none (on a Redis Cluster, an event whose jobs go to queues of several hash
    /// slots is written slot by slot, each part once, so a repeated emit completes a broken one).
    /// Answers in input order.
    async fn emit(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, StoreError>;

    /// Expands up to `limit` events that applications stored themselves (SQL: rows inserted into
    /// `jobq_events` with `expanded_at` NULL; Redis: items pushed onto the `events` list), oldest
    /// first, each into the jobs `expander` makes of it, exactly once however many workers expand at
    /// once and whichever of them dies midway. Returns how many events were expanded (0: none waiting).
    async fn expand_events(&self, expand: &ExpandEvents<'_>) -> Result<usize, StoreError>;

    // Flow control: pauses, blocks and limits.

    /// The pauses in force (by queue, then type) and the blocks that have not run out by `now` (by
    /// type, then partition). Changes nothing.
    async fn flow_state(&self, now: UnixMillis) -> Result<FlowState, StoreError>;

    /// Pauses a queue (`job_type` `None`) or one type in it, or resumes it. Pausing what is paused
    /// keeps the first pause's time; resuming what is not paused changes nothing. Returns whether
    /// anything changed. A queue with no jobs may be paused.
    async fn set_paused(&self, pause: &SetPaused<'_>) -> Result<bool, StoreError>;

    /// Records back-pressure: nothing of `block.job_type` (or of its partition) starts before
    /// `block.until`. A later block already recorded is kept. Forgets blocks that ran out before `now`.
    async fn block(&self, block: &Block, now: UnixMillis) -> Result<(), StoreError>;

    /// Records the limits a worker's config sets, replacing what was recorded for their scopes (a
    /// scope not named is left as it is). Changes no job.
    async fn record_limits(&self, record: &RecordLimits<'_>) -> Result<(), StoreError>;

    /// The recorded limits, by scope. Changes nothing.
    async fn limits(&self) -> Result<Vec<RecordedLimit>, StoreError>;

    // Health: the doctor's and the autoscaler's reads.

    /// What the store can tell of its own health that puts jobs at risk, as findings (none when all is
    /// well): PostgreSQL autovacuum off (the server's setting or a jobq table's own) and jobq tables
    /// with more dead rows than `health` allows; Redis without persistence (neither AOF nor RDB
    /// snapshots) or with a `maxmemory-policy` that evicts keys; SQLite on a network file system or
    /// with a write-ahead log past `health`'s size. A fact the store cannot read (a managed server
    /// that refuses `CONFIG`) is left out rather than guessed. Changes nothing.
    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError>;

    /// Jobs that workers keep losing: pending, running, waiting or dead jobs whose error history holds
    /// at least `at_least` entries [`RESCUE_ERROR`] (each one a rescue from a worker that stopped
    /// heartbeating, see [`Store::rescue`]; the history is capped, so only recent rescues count). At
    /// most `limit`, by id. Reads every live and dead job's history: an operator's call, not a
    /// worker's. Changes nothing.
    async fn often_rescued(&self, params: &OftenRescued) -> Result<Vec<Job>, StoreError>;

    /// Blocked jobs that wait for no job which has not ended (each of their dependencies ended, or
    /// was deleted): a release that was missed, which must never happen (`jobq doctor` reports
    /// them). Smallest ids first, at most `limit`. A release is never seen half-way: the SQL stores
    /// read in one statement, Redis a page of blocked jobs at a time in one script. Reads every
    /// blocked job: an operator's call. Changes nothing.
    async fn stranded(&self, limit: u32) -> Result<Vec<JobId>, StoreError>;

    /// A queue's load over `[since, now]`: the jobs that came due in it (`run_at` in the window, any
    /// status now), the runs that finished in it (succeeded, dead or discarded with a start time and
    /// `finished_at` in the window) and their run times added up, and the ready and running jobs now.
    /// Reads the runs finished in the window one by one on Redis (the other counts come from
    /// indexes); one pass over the queue's live and recently finished rows on the SQL stores. Changes
    /// nothing.
    async fn queue_load(&self, load: &QueueLoad) -> Result<Load, StoreError>;

    /// The jobs that finished (succeeded, dead, discarded or cancelled, by `finished_at`) in each
    /// bucket of `throughput`'s window, per queue and status: only non-empty buckets, ordered by queue,
    /// bucket and status. A job that finished and was then replayed or retried is live again and is
    /// not counted. Reads only the rows (SQL: the `finished_at` index's range) or the per-status finish
    /// indexes (Redis, one count per bucket) of the window, so it costs the window, not the store.
    /// Changes nothing.
    async fn throughput(&self, throughput: &Throughput) -> Result<Vec<FinishedCount>, StoreError>;

    // The inbox (Redis).

    /// The items pushed to the store's inbox (a list any client can push envelopes to) that could not
    /// become jobs, with why: of `queues` (every queue when empty), oldest first, at most `limit` per
    /// queue. Only the Redis store has an inbox; the others answer [`StoreError::Unsupported`].
    async fn rejected_inbox_items(&self, read: &RejectedInbox<'_>) -> Result<Vec<RejectedItem>, StoreError> {
        let _ = read;
        Err(StoreError::Unsupported {
            store: self.kind(),
            operation: "an inbox",
        })
    }

    /// Deletes the rejected inbox items of `queues` (every queue when empty); returns how many. Only
    /// the Redis store has an inbox; the others answer [`StoreError::Unsupported`].
    async fn clear_rejected_inbox_items(&self, queues: &[String]) -> Result<u64, StoreError> {
        let _ = queues;
        Err(StoreError::Unsupported {
            store: self.kind(),
            operation: "an inbox",
        })
    }

    // Wake-ups.

    /// Starts pushing wake-up hints: `notify` gets `notify_one()` soon after what `on` names may have
    /// happened. For [`WakeOn::Ready`]: work became ready in one of its queues (any queue when empty):
    /// jobs enqueued by any process, including plain `INSERT`s by applications, and jobs released,
    /// rescued or replayed. For [`WakeOn::Changes`]: any write. Hints last until the returned
    /// [`Subscription`] drops. They are hints only: they may be spurious, and delayed jobs and
    /// back-offs become ready without one, so a waiter still looks to find out and still polls, just
    /// less often. While a store's notification channel is down the subscription signals at a steady
    /// pace instead (the caller polls) and reconnects in the background.
    ///
    /// `None`, the default, means the store pushes nothing for `on` and the caller polls as before.
    /// Call it from within a Tokio runtime: a store that pushes spawns its listener there (and answers
    /// `None` outside one).
    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        let _ = (on, notify);
        None
    }
}

/// How the caller will use a store's connections, which decides how many a PostgreSQL or MySQL store
/// may open and how much a SQLite connection may cache. Redis multiplexes one connection either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Usage {
    /// Calls from many tasks at once for a long time (a worker, an application): a pool of up to the
    /// URL's `max_connections`.
    #[default]
    Pooled,
    /// Calls from many tasks at once, as requests come and go, for a long time (`jobq serve`): a pool
    /// as for [`Usage::Pooled`], whose connections hold little memory between requests. A SQLite
    /// connection keeps a page cache of its own (32 MB for a worker's, which reads the same hot pages
    /// over and over); a server's requests read through the whole file now and then (stats), so the
    /// cache would fill, and with four connections stay at 168 MiB, for what the operating system's
    /// file cache serves nearly as fast.
    Serving,
    /// A few calls one after another, then the process ends (`jobq enqueue`, `show`, `stats` …): one
    /// connection, opened with the store and taken in turn by every call, whatever `max_connections`
    /// says. A connection costs the server a process or a thread and the caller a handshake, which is
    /// most of such a command's time; a second one would only wait for the first to be handed back.
    OneShot,
}

/// Opens the store a URL names, with its connection settings, for [`Usage::Pooled`]. Does not migrate.
pub async fn connect(url: &StoreUrl) -> Result<DynStore, StoreError> {
    connect_for(url, Usage::Pooled).await
}

/// Opens the store a URL names, with its connection settings, for the given use. Does not migrate.
pub async fn connect_for(url: &StoreUrl, usage: Usage) -> Result<DynStore, StoreError> {
    #[cfg(not(any(feature = "sqlite", feature = "postgres", feature = "mysql")))]
    let _ = usage;
    match url.kind() {
        #[cfg(feature = "sqlite")]
        StoreKind::Sqlite => Ok(Arc::new(sqlite::SqliteStore::connect_for(url, usage).await?)),
        #[cfg(feature = "postgres")]
        StoreKind::Postgres => Ok(Arc::new(postgres::PostgresStore::connect_for(url, usage).await?)),
        #[cfg(feature = "mysql")]
        StoreKind::Mysql => Ok(Arc::new(mysql::MysqlStore::connect_for(url, usage).await?)),
        #[cfg(feature = "redis")]
        StoreKind::Redis => Ok(Arc::new(redis::RedisStore::connect(url).await?)),
        // Reached by builds without some of the store features.
        #[allow(unreachable_patterns)]
        kind => Err(StoreError::Unsupported {
            store: kind,
            operation: "connecting (this build of jobq was compiled without this store's cargo feature)",
        }),
    }
}
