//! The [`Store`] contract for the three SQL stores, written once: each store implements
//! [`SqlBackend`] (what it does its own way: connecting, migrating under its lock, enqueue, claim, the
//! fenced exits from `running`, rescue, stats and its wake-ups) and hands over its [`Sql`] (the
//! statements the three share, written once over the object-safe executor of `exec.rs`); this
//! blanket `impl Store` puts the two together, makes arrived jobs visible before the methods that
//! read jobs, and takes a single-writer store's turn before each shared write.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{MutexGuard, Notify};

use super::in_transaction::SqlTables;
use super::{Exec, Sql};
use crate::job::{Job, JobId, NewJob, UniqueMode};
use crate::store::batch::finish_spawning_apart;
use crate::store::{
    Block, Cancel, CancelAnswer, Claim, ClaimPlan, Cleanup, Delete, DeleteAnswer, DeleteMatching, DeletedCount, Emit,
    EmitOutcome, Enqueued, ExpandEvents, Expire, Finding, Finish, FinishedAndClaimed, FinishedCount, FlowState, Health,
    Heartbeat, Import, ImportAnswer, ImportEdges, JobEdges, Lease, LeaseState, List, Load, OftenRescued, QueueLoad,
    ReadEdges, RecordLimits, RecordedLimit, ReplayDead, Rescue, Rescued, Resolve, ResolveAnswer, Retry, RetryAnswer,
    ScheduleKey, ScheduleState, SetPaused, SetSchedulePaused, Stats, StatsReport, Store, StoreError, StoreInfo,
    StoreKind, Subscription, Throughput, Tick, TickOutcome, WakeOn, WorkerInfo,
};
use crate::time::UnixMillis;

/// What a SQL store does its own way. Each method keeps the contract of the [`Store`] method of the
/// same name.
#[async_trait]
pub(crate) trait SqlBackend: Send + Sync + fmt::Debug {
    /// The statements the SQL stores share, on this store's pool.
    fn shared(&self) -> &Sql;

    /// Waits for this process's turn to write, where the store has one writer at a time (SQLite); the
    /// others write whenever they like.
    async fn write_turn(&self) -> Option<MutexGuard<'_, ()>> {
        None
    }

    /// Makes every job enqueued so far visible to the statements that read or change jobs. SQLite's
    /// few-at-a-time enqueues land in a table of their own (`sqlite/arrivals.rs`) that this moves
    /// into `jobq_jobs`; the server stores write every job where it stays. Called before every
    /// method that reads jobs, changes them or answers about one by id, save those that only ever
    /// concern jobs that have run (heartbeat, finish, release, rescue, cleanup, throughput, often
    /// rescued): a job that has arrived is pending and was never claimed.
    async fn settle(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn info(&self) -> Result<StoreInfo, StoreError>;
    /// Applies the pending migrations under the store's own migration lock (see [`Store::migrate`]).
    async fn apply_migrations(&self) -> Result<(), StoreError>;
    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError>;
    /// Called with at least one queue and a limit above zero.
    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError>;
    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError>;
    /// [`SqlBackend::finish_in`] on a connection of the pool, in this process's turn to write, unless
    /// the store writes outcomes its own way (MySQL: a transaction per chunk, tried again when it
    /// loses a lock race).
    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if finishes.is_empty() {
            return Ok(Vec::new());
        }
        let _turn = self.write_turn().await;
        let sql = self.shared();
        let mut conn = sql.connections.acquire().await.map_err(sql.fail("finish"))?;
        self.finish_in(&mut *conn, finishes, now, Outcomes::OfFreeJobs)
            .await
            .map_err(sql.fail("finish"))
    }
    /// `finish`'s statements run in `tx`, which the caller commits: its own connection, a limited
    /// claim's transaction that takes the finished jobs' replacements ([`Store::finish_and_claim`]),
    /// or the transaction of [`Sql::finish_with_dependents`] (`Outcomes::OfAnyJob`).
    async fn finish_in(
        &self,
        tx: &mut dyn Exec,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error>;
    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError>;
    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError>;

    /// Counts grouped by queue and status, unless the store counts its own way.
    async fn stats(&self, stats: &Stats) -> Result<StatsReport, StoreError> {
        let queues = self.shared().stats_grouped(stats).await?;
        Ok(StatsReport { queues })
    }

    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription>;

    /// The shared select unless the store reads its own way.
    async fn list(&self, list: &List) -> Result<Vec<Job>, StoreError> {
        self.shared().list(list).await
    }

    /// Called in this process's turn to write (see [`SqlBackend::write_turn`]). Each store says how:
    /// the shared statements over sqlx (`Sql::import`, whole rows as its database's
    /// [`super::InsertWhole`] inserts them), or SQLite's direct connection.
    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError>;

    /// What only this store can tell of its health: its server's settings, or its file.
    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError>;

    /// See [`Store::close`]; nothing where there is no server to tell.
    async fn close(&self) {}

    /// See [`Store::sql_tables`].
    fn sql_tables(&self) -> SqlTables;
}

/// Which outcomes a store's finish statements apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcomes {
    /// Only those of jobs that no job waits for: the others read as not applied, for
    /// [`Sql::finish_with_dependents`] to apply with the release of what waits for them.
    OfFreeJobs,
    /// Those of any job, in the transaction of [`Sql::finish_with_dependents`], which locked the
    /// rows and releases the dependents of the jobs that end: an outcome that ends a job also sets
    /// its count of dependents to zero (one that does not end it keeps them waiting, and the count).
    OfAnyJob,
}

/// Outcomes the store's statements passed over (`applied` false) may be those of jobs that others
/// wait for, or stale: [`Sql::finish_with_dependents`] applies the first kind, with their
/// dependents' release, and leaves the second unapplied. Nothing to do when every outcome applied.
trait PassedOver {
    async fn finish_passed_over(
        &self,
        finishes: &[Finish],
        applied: &mut [bool],
        now: UnixMillis,
    ) -> Result<(), StoreError>;
}

/// Outcomes of which some spawn children or await them: those go to [`Sql::finish_with_dependents`],
/// which writes the children in the outcome's transaction; the rest as [`Store::finish`] writes them.
trait Spawning {
    async fn finish_spawning(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError>;
}

impl<T: SqlBackend> Spawning for T {
    async fn finish_spawning(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let plain = async |rest: Vec<Finish>| Store::finish(self, &rest, now).await;
        let spawning = async |own: Vec<Finish>| {
            // A child's id may have arrived a moment ago (SQLite), and must be found where the insert
            // looks for it.
            self.settle().await?;
            let sql = self.shared();
            let _turn = self.write_turn().await;
            sql.retrying("finish", |_| false, || sql.finish_with_dependents(self, &own, now))
                .await
        };
        let applied = finish_spawning_apart(finishes, plain, spawning).await?;
        if applied.contains(&true) {
            self.shared().slots_freed_here();
        }
        Ok(applied)
    }
}

impl<T: SqlBackend> PassedOver for T {
    async fn finish_passed_over(
        &self,
        finishes: &[Finish],
        applied: &mut [bool],
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        let passed: Vec<usize> = (0..finishes.len()).filter(|&i| !applied[i]).collect();
        if passed.is_empty() {
            return Ok(());
        }
        let again: Vec<Finish> = passed.iter().map(|&i| finishes[i].clone()).collect();
        let sql = self.shared();
        let _turn = self.write_turn().await;
        let answers = sql
            .retrying("finish", |_| false, || sql.finish_with_dependents(self, &again, now))
            .await?;
        for (&i, ok) in passed.iter().zip(answers) {
            applied[i] = ok;
        }
        Ok(())
    }
}

/// Enqueues jobs that coalesce (no unique mode, or `coalesce`): the store's own batch enqueue, or
/// the shared one of jobs that wait for others.
async fn enqueue_coalescing<T: SqlBackend>(store: &T, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
    if jobs.iter().all(|j| j.after.is_empty()) {
        return SqlBackend::enqueue(store, jobs).await;
    }
    // A dependency may have arrived a moment ago (SQLite), and must be found where edges lock it.
    store.settle().await?;
    let _turn = store.write_turn().await;
    store.shared().enqueue_after(&SqlBackend::sql_tables(store), jobs).await
}

#[async_trait]
impl<T: SqlBackend> Store for T {
    fn kind(&self) -> StoreKind {
        self.shared().dialect.kind
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        SqlBackend::info(self).await
    }

    async fn close(&self) {
        SqlBackend::close(self).await
    }

    fn sql_tables(&self) -> Option<SqlTables> {
        Some(SqlBackend::sql_tables(self))
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let applied = self.shared().applied_version().await?;
        if crate::store::migrate::needs_migrating(self.kind(), applied)? {
            let _turn = self.write_turn().await;
            self.apply_migrations().await?;
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.iter().all(|j| j.unique_mode == UniqueMode::Coalesce) {
            return enqueue_coalescing(self, jobs).await;
        }
        // Jobs with a unique mode go one at a time, each decided in its own transaction; the runs of
        // jobs between them as a batch, in order, so that a later job sees what an earlier one did.
        let mut answers = Vec::with_capacity(jobs.len());
        let tables = SqlBackend::sql_tables(self);
        for run in jobs.chunk_by(|a, b| a.unique_mode == UniqueMode::Coalesce && b.unique_mode == UniqueMode::Coalesce)
        {
            match run {
                [job] if job.unique_mode != UniqueMode::Coalesce => {
                    // A holder may have arrived a moment ago (SQLite), and must be found where it is locked.
                    self.settle().await?;
                    let _turn = self.write_turn().await;
                    answers.push(self.shared().enqueue_moded(&tables, job).await?);
                }
                run => answers.extend(enqueue_coalescing(self, run).await?),
            }
        }
        Ok(answers)
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.queues.is_empty() || claim.limit == 0 {
            return Ok(Vec::new());
        }
        self.settle().await?;
        if claim.flow.is_empty() {
            return SqlBackend::claim(self, claim).await;
        }
        match claim.plan() {
            ClaimPlan::Nothing => Ok(Vec::new()),
            ClaimPlan::Plain(plain) => SqlBackend::claim(self, &plain).await,
            ClaimPlan::Limited => {
                let _turn = self.write_turn().await;
                self.shared().claim_limited(claim).await
            }
        }
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        SqlBackend::heartbeat(self, beats, now).await
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if finishes.iter().any(Finish::spawns) {
            return self.finish_spawning(finishes, now).await;
        }
        let mut applied = SqlBackend::finish(self, finishes, now).await?;
        self.finish_passed_over(finishes, &mut applied, now).await?;
        if applied.contains(&true) {
            self.shared().slots_freed_here();
        }
        Ok(applied)
    }

    async fn finish_and_claim(&self, finishes: &[Finish], claim: &Claim) -> Result<FinishedAndClaimed, StoreError> {
        let limited = !claim.queues.is_empty() && claim.limit > 0 && matches!(claim.plan(), ClaimPlan::Limited);
        if finishes.is_empty() || !limited || finishes.iter().any(Finish::spawns) {
            let applied = Store::finish(self, finishes, claim.now).await?;
            let claimed = Store::claim(self, claim).await;
            return Ok(FinishedAndClaimed { applied, claimed });
        }
        self.settle().await?;
        let (mut applied, jobs) = {
            let _turn = self.write_turn().await;
            self.shared().finish_and_claim(self, finishes, claim).await?
        };
        self.finish_passed_over(finishes, &mut applied, claim.now).await?;
        Ok(FinishedAndClaimed {
            applied,
            claimed: Ok(jobs),
        })
    }

    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError> {
        let released = SqlBackend::release(self, leases).await?;
        if released.contains(&true) {
            self.shared().slots_freed_here();
        }
        Ok(released)
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        let mut rescued = SqlBackend::rescue(self, rescue).await?;
        // The store's statement leaves the jobs others wait for that die of it to the shared layer,
        // which resolves the waiting jobs in the same transaction.
        let sql = self.shared();
        let _turn = self.write_turn().await;
        rescued.extend(
            sql.retrying("rescue", |_| false, || sql.rescue_dying_dependencies(rescue))
                .await?,
        );
        Ok(rescued)
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        self.settle().await?;
        self.shared().get(id).await
    }

    async fn list(&self, list: &List) -> Result<Vec<Job>, StoreError> {
        self.settle().await?;
        SqlBackend::list(self, list).await
    }

    async fn stats(&self, stats: &Stats) -> Result<StatsReport, StoreError> {
        self.settle().await?;
        SqlBackend::stats(self, stats).await
    }

    async fn edges(&self, read: &ReadEdges) -> Result<Vec<JobEdges>, StoreError> {
        self.settle().await?;
        self.shared().edges(read).await
    }

    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError> {
        SqlBackend::health(self, health).await
    }

    async fn often_rescued(&self, params: &OftenRescued) -> Result<Vec<Job>, StoreError> {
        self.shared().often_rescued(params).await
    }

    async fn stranded(&self, limit: u32) -> Result<Vec<JobId>, StoreError> {
        self.settle().await?;
        self.shared().stranded(limit).await
    }

    async fn queue_load(&self, load: &QueueLoad) -> Result<Load, StoreError> {
        self.settle().await?;
        self.shared().queue_load(load).await
    }

    async fn throughput(&self, throughput: &Throughput) -> Result<Vec<FinishedCount>, StoreError> {
        self.shared().throughput(throughput).await
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<CancelAnswer>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().cancel(cancel).await
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<Job>, StoreError> {
        self.settle().await?;
        // A dry run only reads.
        let _turn = if replay.dry_run { None } else { self.write_turn().await };
        self.shared().replay_dead(replay).await
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let _turn = self.write_turn().await;
        self.shared().cleanup(cleanup).await
    }

    async fn expire(&self, expire: &Expire) -> Result<u64, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().expire(expire).await
    }

    async fn resolve(&self, resolves: &[Resolve], now: UnixMillis) -> Result<Vec<ResolveAnswer>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().resolve(resolves, now).await
    }

    async fn delete(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().delete(delete).await
    }

    async fn delete_matching(&self, delete: &DeleteMatching) -> Result<DeletedCount, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().delete_matching(delete).await
    }

    async fn retry(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().retry(retry).await
    }

    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        let _turn = self.write_turn().await;
        SqlBackend::import(self, import).await
    }

    async fn import_edges(&self, edges: &[ImportEdges], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if edges.is_empty() {
            return Ok(Vec::new());
        }
        // A dependency may have arrived a moment ago (SQLite), and must be found where it is looked for.
        self.settle().await?;
        let _turn = self.write_turn().await;
        let sql = self.shared();
        sql.retrying("import edges", |_| false, || sql.import_edges(edges, now))
            .await
    }

    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().register_worker(worker).await
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().unregister_worker(id).await
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        self.shared().workers(seen_since).await
    }

    async fn forget_workers(&self, seen_before: UnixMillis) -> Result<u64, StoreError> {
        let _turn = self.write_turn().await;
        self.shared().forget_workers(seen_before).await
    }

    async fn schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError> {
        self.shared().schedules(keys).await
    }

    async fn register_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().register_schedules(keys, now).await
    }

    async fn restore_schedules(
        &self,
        records: &[(ScheduleKey, ScheduleState)],
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().restore_schedules(records, now).await
    }

    async fn fire_ticks(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().fire_ticks(ticks).await
    }

    async fn set_schedule_paused(&self, pause: &SetSchedulePaused<'_>) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().set_schedule_paused(pause).await
    }

    async fn emit(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().emit(events).await
    }

    async fn expand_events(&self, expand: &ExpandEvents<'_>) -> Result<usize, StoreError> {
        self.settle().await?;
        let _turn = self.write_turn().await;
        self.shared().expand_events(expand).await
    }

    async fn flow_state(&self, now: UnixMillis) -> Result<FlowState, StoreError> {
        self.shared().flow_state(now).await
    }

    async fn set_paused(&self, pause: &SetPaused<'_>) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        self.shared().set_paused(pause).await
    }

    async fn block(&self, block: &Block, now: UnixMillis) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().block(block, now).await
    }

    async fn record_limits(&self, record: &RecordLimits<'_>) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        self.shared().record_limits(record).await
    }

    async fn limits(&self) -> Result<Vec<RecordedLimit>, StoreError> {
        self.shared().limits().await
    }

    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        SqlBackend::subscribe(self, on, notify)
    }
}
