//! SqliteStore: the embedded default, a single file in WAL mode.
//!
//! SQLite has one writer at a time, so every transition here is one statement (or one immediate
//! transaction) and is atomic by construction: two claimers never see the same pending row. Batches go
//! to SQLite as multi-row statements (`VALUES (…), (…)`) so a worker pays one statement per batch, not
//! per job. What the SQL stores share (get, list, cleanup, the worker registry, the migration loop)
//! runs in `SqlPool` (`store/sql/`); `settings.rs` opens the file, `migrate.rs` locks the migration, `watch.rs`
//! wakes workers on writes, `statements.rs` holds the look-ups the transitions below use, and
//! `direct.rs` runs the plain insert of new jobs in the calling thread, outside sqlx.
//!
//! One process's writes take turns on [`SqliteStore`]'s gate before they reach SQLite: waiting there is
//! a cheap async wait, where two connections colliding would wait in SQLite's busy handler, which
//! sleeps in whole milliseconds. Other processes are kept apart by SQLite's own lock (`busy_timeout`).

mod arrivals;
mod busy;
mod checkpoint;
mod direct;
mod group;
mod health;
mod import;
mod migrate;
mod read;
mod settings;
mod statements;
mod watch;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use tokio::sync::{Mutex, MutexGuard, Notify};

use self::direct::{DirectConnection, InsertError};
use self::group::Pending;
use self::settings::{DIALECT, Settings};
use self::statements::{append_error, split_progress};
pub use self::watch::SETTLE;
use super::SqlTables;
use super::batch::rounds_by_id;
use super::sql::{
    EnqueuePlan, Exec, FinishRow, INSERT_NEW_JOBS, Outcomes, Sql, SqlBackend, SqlPool, all_created, in_claim_order,
    is_plain, placeholders, push_new_jobs,
};
use super::{
    Claim, Enqueued, Finding, Finish, Health, Heartbeat, Import, ImportAnswer, Lease, LeaseState, List, QueueStats,
    Rescue, Rescued, Stats, StatsReport, StoreError, StoreInfo, StoreKind, StoreUrl, Subscription, Usage, WakeOn,
};
use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Sqlite;

/// Rows per multi-row statement: 14 parameters a row stays well under SQLite's 32,766 variables.
const ROWS_PER_STATEMENT: usize = 500;

/// The SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    sql: SqlPool<Sqlite>,
    url: StoreUrl,
    synchronous: &'static str,
    /// Taken by every write of this process (see the module's text).
    gate: Arc<Mutex<()>>,
    /// Jobs waiting for the next commit (group commit, see `group.rs`).
    pending: Arc<Pending>,
    /// The connection plain inserts and imports run on, in the calling thread (see `direct.rs`).
    direct: Arc<DirectConnection>,
    /// A one-shot command's reader of pages of jobs, in the calling thread (see `direct.rs`).
    reader: Option<Arc<DirectConnection>>,
}

impl SqliteStore {
    /// Opens (creating if missing) the database file a `sqlite://` URL names. URL options:
    /// `synchronous=normal|full|extra|off` (default normal), `busy_timeout=10s` (default 30s).
    pub async fn connect(url: &StoreUrl) -> Result<SqliteStore, StoreError> {
        SqliteStore::connect_for(url, Usage::Pooled).await
    }

    /// As [`SqliteStore::connect`], with the page cache and idle time-out the use wants (a
    /// [`Usage::Serving`] connection caches little; see `settings.rs`).
    pub async fn connect_for(url: &StoreUrl, usage: Usage) -> Result<SqliteStore, StoreError> {
        let settings = Settings::parse(url)?.for_usage(usage);
        Ok(SqliteStore {
            // SQLite's own connections do what kept ones would (`direct.rs`).
            sql: SqlPool::new(settings.open(url).await?, &DIALECT, url.redacted(), 0)
                .waiting_for_locks(settings.busy_timeout),
            url: url.clone(),
            synchronous: settings.synchronous_name,
            gate: Arc::new(Mutex::new(())),
            pending: Arc::default(),
            direct: Arc::new(DirectConnection::writer(url, &settings)),
            reader: (usage == Usage::OneShot).then(|| Arc::new(DirectConnection::reader(url, &settings))),
        })
    }

    /// Enqueues a plain batch in a commit of its own; the caller holds the gate. It goes in with one
    /// `INSERT` and no look-ups, on the dedicated connection; an id that exists already fails it
    /// having changed nothing, and the batch is then answered job by job.
    async fn enqueue_alone(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        match self.insert_all(jobs) {
            Ok(()) => Ok(all_created(jobs)),
            Err(InsertError::IdTaken) => self.enqueue_checked(jobs).await,
            Err(InsertError::Store(e)) => Err(e),
        }
    }

    /// Inserts a plain batch without looking first (see [`DirectConnection::insert_all`]); the caller
    /// holds the gate.
    fn insert_all(&self, jobs: &[NewJob]) -> Result<(), InsertError> {
        self.direct.insert_all(jobs, ROWS_PER_STATEMENT)
    }

    /// Answers every job of a batch before writing any: which ids exist, who holds the unique keys.
    /// The caller holds the gate.
    async fn enqueue_checked(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        // The immediate transaction holds the write lock from the start, so what the look-ups below
        // find stays true until the insert: every answer is decided before a row is written, and the
        // insert needs no RETURNING (streaming a row back per job would cost more than the insert).
        let mut tx = self
            .sql
            .pool
            .begin_with(DIALECT.begin_write)
            .await
            .map_err(self.sql.fail("starting enqueue"))?;
        // Arrived jobs move first, so that the look-ups below see their ids.
        arrivals::move_arrived_in(&mut tx)
            .await
            .map_err(self.sql.fail("moving arrived jobs"))?;
        let mut plan = EnqueuePlan::default();
        for chunk in jobs.chunks(ROWS_PER_STATEMENT) {
            let stored_ids = self.existing_ids(&mut tx, chunk).await?;
            let live_keys = self.live_unique_keys(&mut tx, chunk).await?;
            let fresh = plan.decide(chunk, &stored_ids, &live_keys);
            if fresh.is_empty() {
                continue;
            }
            let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(INSERT_NEW_JOBS);
            push_new_jobs(&mut qb, fresh);
            qb.build().execute(&mut *tx).await.map_err(self.sql.fail("enqueue"))?;
        }
        tx.commit().await.map_err(self.sql.fail("committing enqueue"))?;
        Ok(plan.answers())
    }

    /// `finish` on `conn`: a connection of the pool, or the transaction of a claim that follows.
    async fn finish_on(
        &self,
        conn: &mut SqliteConnection,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let (count, free) = match which {
            Outcomes::OfFreeJobs => ("", " AND jobq_jobs.dependents = 0"),
            Outcomes::OfAnyJob => (
                ", dependents = CASE WHEN f.status IN ('succeeded', 'dead', 'discarded') THEN 0 ELSE jobq_jobs.dependents END",
                "",
            ),
        };
        let mut applied = vec![false; finishes.len()];
        let append = append_error("jobq_jobs.attempt", "f.at", "f.error");
        for round in rounds_by_id(finishes, |f| f.lease.id.as_str()) {
            for chunk in round.chunks(ROWS_PER_STATEMENT) {
                let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(
                    "WITH f(id, attempt, worker, status, run_at, result, error, finished_at, at, progress, message, snoozed, \
                     expires_at) AS (",
                );
                qb.push_values(chunk.iter().map(|&i| &finishes[i]), |mut row, fin| {
                    let f = FinishRow::of(fin);
                    row.push_bind(fin.lease.id.as_str())
                        .push_bind(fin.lease.attempt as i64)
                        .push_bind(fin.lease.worker.as_str())
                        .push_bind(f.status)
                        .push_bind(f.run_at)
                        .push_bind(f.result)
                        .push_bind(f.error)
                        .push_bind(f.finished.then_some(now.0))
                        .push_bind(now.0)
                        .push_bind(f.progress)
                        .push_bind(f.message)
                        .push_bind(f.snoozed)
                        .push_bind(f.expires_at);
                });
                qb.push(format!(
                    ") UPDATE jobq_jobs SET status = f.status, run_at = COALESCE(f.run_at, jobq_jobs.run_at), \
                     expires_at = COALESCE(f.expires_at, jobq_jobs.expires_at), \
                     result = f.result, finished_at = f.finished_at, worker_id = NULL, \
                     progress = COALESCE(f.progress, jobq_jobs.progress), \
                     progress_message = CASE WHEN f.progress IS NULL THEN jobq_jobs.progress_message ELSE f.message END, \
                     errors = CASE WHEN f.error IS NULL THEN jobq_jobs.errors ELSE {append} END, \
                     attempt = jobq_jobs.attempt - f.snoozed, snoozes = jobq_jobs.snoozes + f.snoozed{count} \
                     FROM f WHERE jobq_jobs.id = f.id AND jobq_jobs.attempt = f.attempt \
                     AND jobq_jobs.worker_id = f.worker AND jobq_jobs.status = 'running'{free} \
                     RETURNING jobq_jobs.id"
                ));
                self.fenced(conn, qb, &mut applied, chunk, |i| finishes[i].lease.id.as_str())
                    .await?;
            }
        }
        Ok(applied)
    }
}

#[async_trait]
impl SqlBackend for SqliteStore {
    fn shared(&self) -> &Sql {
        &self.sql
    }

    /// In the application connection's main database: the store's file.
    fn sql_tables(&self) -> SqlTables {
        SqlTables::new(&settings::DIALECT, "", true)
    }

    /// The gate of the module's text: one write of this process at a time.
    async fn write_turn(&self) -> Option<MutexGuard<'_, ()>> {
        Some(self.gate.lock().await)
    }

    /// Moves the jobs that have arrived (see `arrivals.rs`) into `jobq_jobs`, in this process's turn
    /// to write; when none has, it only reads the arrivals table's first page (on a one-shot
    /// command's reader, which it has open already, else on the writer).
    async fn settle(&self) -> Result<(), StoreError> {
        let looker = self.reader.as_deref().unwrap_or(&self.direct);
        let looked = looker.run_short(|connection| arrivals::any_arrived(connection))?;
        if !looked.map_err(|e| looker.failed("looking for arrived jobs", &e))? {
            return Ok(());
        }
        let _turn = self.gate.lock().await;
        self.direct
            .run(arrivals::move_arrived_now)?
            .map_err(|e| self.direct.failed("moving arrived jobs", &e))
    }

    /// SQLite has no notifications, but every commit writes the database's files: a watch on them
    /// signals on any write by any process, whatever its queue, so it serves every [`WakeOn`]. `None`
    /// where the folder cannot be watched (the caller polls).
    fn subscribe(&self, _on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        let path = std::path::absolute(self.url.sqlite_path()).ok()?;
        watch::watch(&path, notify)
    }

    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError> {
        Ok(health::findings(&self.url.sqlite_path(), health))
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let version: String = sqlx::query_scalar("SELECT sqlite_version()")
            .fetch_one(&self.sql.pool)
            .await
            .map_err(self.sql.fail("reading the version"))?;
        let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&self.sql.pool)
            .await
            .map_err(self.sql.fail("reading journal_mode"))?;
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: format!("SQLite {version}"),
            settings: vec![
                ("journal_mode".into(), journal.to_uppercase()),
                ("synchronous".into(), self.synchronous.to_string()),
            ],
        })
    }

    /// In a one-shot command on the direct reader (see `direct.rs`), else on the pool.
    async fn list(&self, list: &List) -> Result<Vec<Job>, StoreError> {
        match &self.reader {
            Some(reader) => reader
                .run(|connection| read::list(connection, list))?
                .map_err(|e| e.into_store_error(reader, "list")),
            None => self.sql.list(list).await,
        }
    }

    /// On the direct connection (see `import.rs`), in this process's turn to write.
    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        if import.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let direct = self
            .direct
            .run(|connection| import::import(connection, import))?
            .map_err(|e| self.direct.failed("import", &e))?;
        match direct {
            Some(answers) => Ok(answers),
            None => self.sql.import(import).await,
        }
    }

    async fn apply_migrations(&self) -> Result<(), StoreError> {
        self.apply_migrations_locked().await
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        if is_plain(jobs) {
            return self.enqueue_grouped(jobs).await;
        }
        let _turn = self.gate.lock().await;
        self.enqueue_checked(jobs).await
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        let _turn = self.gate.lock().await;
        // One ordered, limited scan of the ready index per queue; with several queues the per-queue
        // tops are merged, so a claim never sorts a whole backlog.
        let exclude = if claim.exclude_types.is_empty() {
            String::new()
        } else {
            format!(" AND job_type NOT IN ({})", placeholders(claim.exclude_types.len()))
        };
        let per_queue = format!(
            "SELECT id, priority, run_at FROM jobq_jobs WHERE status = 'pending' AND queue = ? AND run_at <= ?{exclude}{} \
             ORDER BY priority, run_at, id LIMIT ?",
            DIALECT.unexpired("")
        );
        let candidates = if claim.queues.len() == 1 {
            per_queue
        } else {
            let parts: Vec<String> = claim
                .queues
                .iter()
                .map(|_| format!("SELECT * FROM ({per_queue})"))
                .collect();
            format!(
                "SELECT id FROM ({}) ORDER BY priority, run_at, id LIMIT ?",
                parts.join(" UNION ALL ")
            )
        };
        let candidates = if claim.queues.len() == 1 {
            format!("SELECT id FROM ({candidates})")
        } else {
            candidates
        };
        let sql = format!(
            "UPDATE jobq_jobs SET status = 'running', attempt = attempt + 1, worker_id = ?, started_at = ?, \
             heartbeat_at = ?, progress = NULL, progress_message = NULL \
             WHERE id IN ({candidates}) RETURNING {}",
            DIALECT.returned_job_columns()
        );
        let mut query = sqlx::query(&sql)
            .bind(&claim.worker)
            .bind(claim.now.0)
            .bind(claim.now.0);
        for queue in &claim.queues {
            query = query.bind(queue).bind(claim.now.0);
            for t in &claim.exclude_types {
                query = query.bind(t);
            }
            query = query.bind(claim.limit as i64);
        }
        if claim.queues.len() > 1 {
            query = query.bind(claim.limit as i64);
        }
        let rows = query.fetch_all(&self.sql.pool).await.map_err(self.sql.fail("claim"))?;
        // RETURNING gives no order.
        in_claim_order(&rows, KIND)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        let _turn = self.gate.lock().await;
        let mut conn = self.sql.pool.acquire().await.map_err(self.sql.fail("heartbeat"))?;
        let mut held = vec![false; beats.len()];
        // The held leases whose job a newer job of its key asked to stop (`cancel-running`), while
        // that job still waits for it.
        let mut asked_to_stop: HashSet<String> = HashSet::new();
        for round in rounds_by_id(beats, |b| b.lease.id.as_str()) {
            for chunk in round.chunks(ROWS_PER_STATEMENT) {
                let mut qb: QueryBuilder<Sqlite> =
                    QueryBuilder::new("WITH b(id, attempt, worker, progress, message) AS (");
                qb.push_values(chunk.iter().map(|&i| &beats[i]), |mut row, beat| {
                    let (percent, message) = split_progress(beat.progress.as_ref());
                    row.push_bind(beat.lease.id.as_str())
                        .push_bind(beat.lease.attempt as i64)
                        .push_bind(beat.lease.worker.as_str())
                        .push_bind(percent)
                        .push_bind(message);
                });
                qb.push(") UPDATE jobq_jobs SET heartbeat_at = ")
                    .push_bind(now.0)
                    .push(
                        ", progress = COALESCE(b.progress, jobq_jobs.progress), \
                         progress_message = CASE WHEN b.progress IS NULL THEN jobq_jobs.progress_message ELSE b.message END \
                         FROM b WHERE jobq_jobs.id = b.id AND jobq_jobs.attempt = b.attempt \
                         AND jobq_jobs.worker_id = b.worker AND jobq_jobs.status = 'running' \
                         RETURNING jobq_jobs.id, jobq_jobs.cancel_requested AND jobq_jobs.dependents > 0",
                    );
                let rows = qb
                    .build()
                    .fetch_all(&mut *conn)
                    .await
                    .map_err(self.sql.fail("heartbeat"))?;
                let mut returned: HashSet<&str> = HashSet::with_capacity(rows.len());
                for row in &rows {
                    let id: &str = row.get(0);
                    if row.get::<bool, _>(1) {
                        asked_to_stop.insert(id.to_string());
                    }
                    returned.insert(id);
                }
                for &i in chunk {
                    held[i] = returned.contains(beats[i].lease.id.as_str());
                }
            }
        }
        let missing: Vec<&JobId> = beats
            .iter()
            .zip(&held)
            .filter(|(_, held)| !**held)
            .map(|(b, _)| &b.lease.id)
            .collect();
        let statuses = if missing.is_empty() {
            HashMap::new()
        } else {
            self.statuses_of(&missing).await?
        };
        Ok(beats
            .iter()
            .zip(held)
            .map(|(b, held)| {
                if held && asked_to_stop.contains(b.lease.id.as_str()) {
                    LeaseState::CancelRequested
                } else if held {
                    LeaseState::Held
                } else if statuses.get(b.lease.id.as_str()) == Some(&JobStatus::Cancelled) {
                    LeaseState::Cancelled
                } else {
                    LeaseState::Lost
                }
            })
            .collect())
    }

    async fn finish_in(
        &self,
        tx: &mut dyn Exec,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        self.finish_on(tx.raw().sqlite(), finishes, now, which).await
    }

    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError> {
        let _turn = self.gate.lock().await;
        let mut conn = self.sql.pool.acquire().await.map_err(self.sql.fail("release"))?;
        let mut released = vec![false; leases.len()];
        for round in rounds_by_id(leases, |l| l.id.as_str()) {
            for chunk in round.chunks(ROWS_PER_STATEMENT) {
                let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new("WITH r(id, attempt, worker) AS (");
                qb.push_values(chunk.iter().map(|&i| &leases[i]), |mut row, lease| {
                    row.push_bind(lease.id.as_str())
                        .push_bind(lease.attempt as i64)
                        .push_bind(lease.worker.as_str());
                });
                // run_at is kept: a released job keeps its place at the front of the queue.
                qb.push(
                    ") UPDATE jobq_jobs SET status = 'pending', attempt = jobq_jobs.attempt - 1, worker_id = NULL, \
                     heartbeat_at = NULL, progress = NULL, progress_message = NULL \
                     FROM r WHERE jobq_jobs.id = r.id AND jobq_jobs.attempt = r.attempt \
                     AND jobq_jobs.worker_id = r.worker AND jobq_jobs.status = 'running' RETURNING jobq_jobs.id",
                );
                self.fenced(&mut conn, qb, &mut released, chunk, |i| leases[i].id.as_str())
                    .await
                    .map_err(self.sql.fail("release"))?;
            }
        }
        Ok(released)
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        let _turn = self.gate.lock().await;
        use crate::store::sql::DYING_LEFT_TO_SHARED;
        let append = append_error("jobq_jobs.attempt", "?1", "'worker lost'");
        let sql = format!(
            "UPDATE jobq_jobs SET \
             status = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'pending' END, \
             finished_at = CASE WHEN attempt >= max_attempts THEN ?1 ELSE NULL END, \
             run_at = ?1, worker_id = NULL, heartbeat_at = NULL, errors = {append} \
             WHERE id IN (SELECT id FROM jobq_jobs WHERE status = 'running' AND heartbeat_at < ?2 \
             AND {DYING_LEFT_TO_SHARED} ORDER BY heartbeat_at LIMIT ?3) \
             RETURNING id, job_type, attempt, max_attempts"
        );
        let rows = sqlx::query(&sql)
            .bind(rescue.now.0)
            .bind(rescue.stale_before.0)
            .bind(rescue.limit as i64)
            .fetch_all(&self.sql.pool)
            .await
            .map_err(self.sql.fail("rescue"))?;
        self.sql.rescued(&rows)
    }

    async fn stats(&self, params: &Stats) -> Result<StatsReport, StoreError> {
        // Two index-only passes: counts by (queue, status) over the small queue/status index, then the
        // ready/scheduled split of pending jobs over the ready index, which holds pending jobs only.
        // (One pass computing both over a wider index costs twice as much per entry.)
        let queue_filter = |first: usize| {
            if params.queues.is_empty() {
                String::new()
            } else {
                let marks: Vec<String> = (0..params.queues.len()).map(|i| format!("?{}", i + first)).collect();
                format!(" AND queue IN ({})", marks.join(", "))
            }
        };
        let sql = format!(
            "SELECT queue, status, count(*) FROM jobq_jobs WHERE 1 = 1{} GROUP BY queue, status",
            queue_filter(1)
        );
        let mut query = sqlx::query(&sql);
        for queue in &params.queues {
            query = query.bind(queue);
        }
        let rows = query.fetch_all(&self.sql.pool).await.map_err(self.sql.fail("stats"))?;
        let mut by_queue: std::collections::BTreeMap<String, QueueStats> = Default::default();
        for row in &rows {
            let queue: String = row.get(0);
            let status: &str = row.get(1);
            let n = row.get::<i64, _>(2) as u64;
            by_queue
                .entry(queue.clone())
                .or_insert_with(|| QueueStats {
                    queue,
                    ..Default::default()
                })
                .count_status(status, n);
        }
        let sql = format!(
            "SELECT queue, sum(CASE WHEN run_at > ?1 THEN 1 ELSE 0 END), min(CASE WHEN run_at <= ?1 THEN run_at END) \
             FROM jobq_jobs INDEXED BY jobq_jobs_ready WHERE status = 'pending'{} GROUP BY queue",
            queue_filter(2)
        );
        let mut query = sqlx::query(&sql).bind(params.now.0);
        for queue in &params.queues {
            query = query.bind(queue);
        }
        for row in query.fetch_all(&self.sql.pool).await.map_err(self.sql.fail("stats"))? {
            let queue: String = row.get(0);
            if let Some(s) = by_queue.get_mut(&queue) {
                let scheduled = row.get::<Option<i64>, _>(1).unwrap_or(0) as u64;
                s.split_pending(scheduled, row.get::<Option<i64>, _>(2).map(UnixMillis));
            }
        }
        Ok(StatsReport {
            queues: by_queue.into_values().collect(),
        })
    }
}
