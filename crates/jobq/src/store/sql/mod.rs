//! What the three SQL stores share, written once: statements that differ only in spelling (a
//! [`Dialect`] decides it), the row decoders, the enqueue bookkeeping, and the migration loop.
//!
//! [`Sql`] is the part of a SQL store that is the same for all three: its dialect, and the store
//! methods whose statement is one text for every server (get, list, cleanup, cancel, replay, stats
//! here; resolve, delete and retry in `manage.rs`; the worker registry in `workers.rs`; schedules and
//! events in `ticks_and_events.rs`; flow control in `flow.rs`; import in `transfer.rs`; the schema
//! version and the migration loop in `schema.rs`; the doctor's and the autoscaler's reads in
//! `health.rs`). They are plain code over the object-safe executor of `exec.rs`, where the one
//! generic step, sqlx's types meeting a [`Stmt`], is written once for the three databases. Each
//! store's own `impl` keeps only what differs in strategy, on its typed [`SqlPool`]: how a batch of
//! rows travels (PostgreSQL arrays, MySQL JSON, SQLite `VALUES`), whether an `UPDATE` can say what
//! it changed (`RETURNING`), how it locks. A new store method whose statement is the same everywhere
//! goes into [`Sql`] once, with a `Dialect` field for any spelling that differs.

// A build with only some of the SQL stores uses only some of these helpers.
#![cfg_attr(
    not(all(feature = "sqlite", feature = "postgres", feature = "mysql")),
    allow(dead_code)
)]

mod cancel;
mod cleanup;
mod decode;
mod dependencies;
mod dialect;
mod edges;
mod enqueue;
pub(crate) mod exec;
mod expiry;
mod filter;
mod flow;
mod health;
pub(crate) mod in_transaction;
mod kept;
mod lease;
mod manage;
mod reopen;
mod schema;
mod stmt;
mod store;
mod ticks_and_events;
mod transfer;
mod unique;
mod workers;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database, Pool};

pub(crate) use decode::{Decoder, JobCells, ReadRow, count, decode_job, job_from_row};
pub(crate) use dependencies::DYING_LEFT_TO_SHARED;
pub(crate) use dialect::{Dialect, FilterCancel, JsonText, LimitedDelete, Upsert, is_network_error};
pub(crate) use enqueue::{EnqueuePlan, INSERT_NEW_JOBS, NewJobRow, all_created, is_plain, push_new_jobs};
pub(crate) use exec::{Connections, Exec, InsertWhole, On, PoolOf, SqlRow};
pub(crate) use filter::{LIVE_STATUSES, TERMINAL_STATUSES, cleanup_filter, placeholders, replay_filter};
pub(crate) use kept::{KEPT, KeptConnections, ping_if_idle};
pub(crate) use lease::{FinishRow, in_claim_order};
pub(crate) use stmt::{Bind, Stmt};
pub(crate) use store::{Outcomes, SqlBackend};
use transfer::insert_whole;
pub(crate) use transfer::{
    ImportPlan, ROWS_PER_INSERT, WHOLE_JOB_COLUMNS, WholeJobRow, select_key_holders, select_stored_ids,
};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::error::DriverError;
use super::{Enqueued, List, QueueStats, ReplayDead, Rescued, Stats, StoreError, StoreKind, StoreUrl, Subscription};
use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::store::url::RedactedUrl;

/// How long the pool's first connection may take before a direct attempt asks the server why it has
/// not come (see [`first_connection`]). Far above a connection to a server on the same network (a few
/// milliseconds, TLS included); short enough that a server nobody listens for is reported within a
/// quarter of a second (the probe this replaced reported it at once, but cost every command a connection).
const ASK_WHY_AFTER: Duration = Duration::from_millis(250);

/// The pool's first connection, made within `timeout`, on which the store checks its server and which
/// its first call then takes from the pool: a one-shot command opens this connection and no other.
///
/// sqlx's pool retries a refused connection until its own deadline (the server may be starting) and
/// then says only that it timed out. So when the pool has no connection after [`ASK_WHY_AFTER`], one
/// attempt outside the pool tells why: refused, no such host, a bad password, no TLS. If that attempt
/// connects (a slow server, the one case with a second connection), it is closed and the pool's own
/// attempt goes on. Either way nothing answering within `timeout` is an error that says so.
pub(crate) async fn first_connection<DB: Database>(
    kind: StoreKind,
    url: &StoreUrl,
    timeout: Duration,
    pool: &Pool<DB>,
) -> Result<PoolConnection<DB>, StoreError> {
    let unavailable =
        |source: &(dyn std::error::Error + 'static)| StoreError::unavailable(kind, &url.redacted(), source);
    let connect = async {
        let acquire = pool.acquire();
        tokio::pin!(acquire);
        tokio::select! {
            biased;
            got = &mut acquire => return got.map_err(|e| unavailable(&e)),
            () = tokio::time::sleep(ASK_WHY_AFTER) => {}
        }
        let options = pool.connect_options();
        match DB::Connection::connect_with(&options).await {
            Ok(direct) => {
                let _ = direct.close().await;
            }
            Err(e) => return Err(unavailable(&e)),
        }
        acquire.await.map_err(|e| unavailable(&e))
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(got) => got,
        Err(_) => {
            let waited = crate::time::format_duration(timeout);
            let why = format!("no answer within {waited} (connect_timeout in the URL)");
            Err(unavailable(&std::io::Error::other(why)))
        }
    }
}

/// Waits for `wait`; false when `stop` was cancelled first. The pause of a subscription's task
/// between two looks or two tries, which ends at once when the subscription ends.
pub(crate) async fn pause_unless_stopped(wait: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = tokio::time::sleep(wait) => true,
        () = stop.cancelled() => false,
    }
}

/// How long [`Sql::close`] waits for calls under way before it leaves their connections to the
/// process's end.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Tries of one transaction that loses a race for a row lock (or meets another error its caller
/// accepts).
const TRANSACTION_TRIES: u32 = 5;

/// Ids per statement that names them: well under every server's limit on placeholders.
pub(crate) const IDS_PER_STATEMENT: usize = 500;

/// Ends a select of jobs (`j`) with the lock of its rows where the database locks rows, taken in id
/// order so that two transactions locking some of the same rows cannot deadlock.
fn lock_in_id_order(d: &Dialect, select: &mut Stmt) {
    if d.locks_rows() {
        select.push(" ORDER BY j.id").push(d.for_update);
    }
}

/// The select of one page of [`Sql::list`] (and of SQLite's direct reads of it): the jobs
/// matching the filter, newest first, in [`Dialect::job_columns`].
pub(crate) fn list_statement(d: &Dialect, params: &List) -> Stmt {
    let mut stmt = Stmt::new(d, format!("SELECT {} FROM jobq_jobs AS j WHERE 1 = 1", d.job_columns));
    stmt.filter("j", &params.filter);
    if let Some(after) = &params.after.as_ref().filter(|_| d.row_value_ranges) {
        // The keyset cursor as a row value: a range of the newest-first index on both its columns,
        // so a page deep among jobs of one creation time (a bulk enqueue gives a batch one) reads
        // only its own rows, not every job of that time before it.
        stmt.push(" AND (j.created_at, j.id) < (")
            .bind(after.created_at.0)
            .push(", ")
            .bind(after.id.as_str())
            .push(")");
    } else if let Some(after) = &params.after {
        // The keyset cursor spelled as a range on the newest-first index's first column plus a
        // tie-break, which MySQL reads as a range of that index (a row comparison it does not).
        stmt.push(" AND j.created_at <= ")
            .bind(after.created_at.0)
            .push(" AND (j.created_at < ")
            .bind(after.created_at.0)
            .push(" OR j.id < ")
            .bind(after.id.as_str())
            .push(")");
    }
    let statuses = &params.filter.statuses;
    if d.restates_partial_index && !statuses.is_empty() && !statuses.contains(&JobStatus::Pending) {
        stmt.push(" AND j.status <> 'pending'");
    }
    stmt.push(" ORDER BY j.created_at DESC, j.id DESC LIMIT ")
        .bind(i64::from(params.limit))
        .push(" OFFSET ")
        .bind(params.offset.min(i64::MAX as u64) as i64);
    stmt
}

/// A SQL store's pool: its typed sqlx pool and kept connections for the statements only it runs,
/// and [`Sql`], the same connections behind [`Connections`], for the statements the three share
/// (reached through `Deref`).
#[derive(Debug)]
pub(crate) struct SqlPool<DB: Database> {
    /// The store's connections.
    pub pool: Pool<DB>,
    /// Connections kept apart from the pool for calls about one job (`kept.rs`).
    pub kept: Arc<KeptConnections<DB>>,
    /// The shared statements, on the same connections.
    sql: Sql,
}

/// Written by hand: a derived `Clone` would ask the database type itself to be `Clone`.
impl<DB: Database> Clone for SqlPool<DB> {
    fn clone(&self) -> Self {
        SqlPool {
            pool: self.pool.clone(),
            kept: self.kept.clone(),
            sql: self.sql.clone(),
        }
    }
}

impl<DB: Database> std::ops::Deref for SqlPool<DB> {
    type Target = Sql;

    fn deref(&self) -> &Sql {
        &self.sql
    }
}

impl<DB> SqlPool<DB>
where
    DB: Database,
    PoolOf<DB>: Connections,
{
    /// Wraps a store's pool, with up to `kept` connections kept apart from it for calls about one job.
    pub fn new(pool: Pool<DB>, dialect: &'static Dialect, url: RedactedUrl, kept: usize) -> SqlPool<DB> {
        let kept = Arc::new(KeptConnections::new(kept, dialect));
        let connections = PoolOf {
            pool: pool.clone(),
            kept: kept.clone(),
        };
        SqlPool {
            pool,
            kept,
            sql: Sql {
                connections: Arc::new(connections),
                dialect,
                url,
                lock_wait: Duration::ZERO,
                limited_claim_fell_short: Arc::default(),
                limits_had_room: Arc::default(),
                rates_swept_at: Arc::default(),
                subscriptions: TaskTracker::new(),
                closing: CancellationToken::new(),
            },
        }
    }

    /// Says how long the pool's statements wait for another process's lock (see `lock_wait`).
    pub fn waiting_for_locks(mut self, wait: Duration) -> SqlPool<DB> {
        self.sql.lock_wait = wait;
        self
    }
}

/// The statements the three SQL stores share, written once over [`Connections`], with what they
/// need to know of their store: its dialect, where it is, and what its limited claims learnt.
#[derive(Debug, Clone)]
pub(crate) struct Sql {
    /// The store's connections.
    connections: Arc<dyn Connections>,
    /// How its server spells what differs.
    pub dialect: &'static Dialect,
    /// Where it is, for errors.
    url: RedactedUrl,
    /// How long a statement waits for another process's lock on the whole store before it fails
    /// (SQLite's `busy_timeout`), for the error that says so.
    lock_wait: Duration,
    /// Whether this pool's last limited claim took fewer jobs than it asked for: its next one looks
    /// before it locks (see `flow.rs`). Shared by the clones, as the pool is.
    limited_claim_fell_short: Arc<AtomicBool>,
    /// Whether this pool's last careful limited claim found room under the limits for two claims
    /// like it: its next one may lease before it locks (see `flow.rs`). Shared by the clones.
    limits_had_room: Arc<AtomicBool>,
    /// When this pool's limited claims last deleted spent rate buckets, in Unix milliseconds (see
    /// `flow.rs`). Shared by the clones.
    rates_swept_at: Arc<AtomicI64>,
    /// The tasks of the store's subscriptions, which [`Sql::close`] ends and waits for. Shared by
    /// the clones.
    subscriptions: TaskTracker,
    /// Cancelled by [`Sql::close`]: every subscription's task ends.
    closing: CancellationToken,
}

impl Sql {
    /// Closes the kept connections and the pool's, each with the server's goodbye (PostgreSQL's
    /// Terminate, MySQL's `COM_QUIT`), once the calls under way are done or [`CLOSE_WAIT`] has passed;
    /// later calls fail as a pool closed fails (`Unavailable`). A connection dropped without its
    /// goodbye is logged by the server as aborted, once per one-shot command.
    pub async fn close(&self) {
        let closing = async {
            self.closing.cancel();
            self.subscriptions.close();
            self.subscriptions.wait().await;
            self.connections.close().await;
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, closing).await;
    }

    /// Starts a subscription's task (`task`, given the token that asks it to end) on `runtime`: it
    /// ends by itself when the subscription drops or the store closes, closing its connection with
    /// the server's goodbye, and [`Sql::close`] waits for it.
    pub fn subscription<F, Fut>(&self, runtime: &tokio::runtime::Handle, task: F) -> Subscription
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let stop = self.closing.child_token();
        let handle = self.subscriptions.spawn_on(task(stop.clone()), runtime);
        Subscription::ending(handle, stop)
    }

    /// Maps a driver error met while doing `operation`: unreachable → `Unavailable` with the redacted
    /// URL, locked by another process past the wait → `Locked`, anything else → `Query`; each with
    /// the driver's deepest message only (sqlx repeats the inner message in the outer one).
    pub fn fail(&self, operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
        move |e| {
            if (self.dialect.is_unreachable)(&e) {
                StoreError::unavailable(self.dialect.kind, &self.url, &e)
            } else if (self.dialect.is_locked_out)(&e) {
                StoreError::locked(self.dialect.kind, operation, &self.url, self.lock_wait, &e)
            } else {
                StoreError::query(self.dialect.kind, operation, DriverError::deepest(&e))
            }
        }
    }

    async fn execute(&self, stmt: &Stmt, operation: &'static str) -> Result<u64, StoreError> {
        self.connections.execute(stmt).await.map_err(self.fail(operation))
    }

    async fn fetch_all(&self, stmt: &Stmt, operation: &'static str) -> Result<Vec<SqlRow>, StoreError> {
        self.connections.fetch_all(stmt).await.map_err(self.fail(operation))
    }

    fn stmt(&self, sql: impl Into<String>) -> Stmt {
        Stmt::new(self.dialect, sql)
    }

    /// One job by id.
    pub async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let mut stmt = self.stmt(format!(
            "SELECT {} FROM jobq_jobs AS j WHERE j.id = ",
            self.dialect.job_columns
        ));
        stmt.bind(id.as_str()).keep();
        let rows = self.connections.fetch_all_kept(&stmt).await.map_err(self.fail("get"))?;
        rows.first().map(|r| job_from_row(r, self.dialect.kind)).transpose()
    }

    /// Jobs matching the filter, newest first.
    pub async fn list(&self, params: &List) -> Result<Vec<Job>, StoreError> {
        let stmt = list_statement(self.dialect, params);
        let rows = self.fetch_all(&stmt, "list").await?;
        rows.iter().map(|r| job_from_row(r, self.dialect.kind)).collect()
    }

    /// Counts by queue and status, queues in byte order (the servers; SQLite counts in two index-only
    /// passes of its own): `COUNT(*)` grouped by queue and status over the whole table (MySQL reads it
    /// from the claim index alone, which leads with both), and the ready/scheduled split with the
    /// oldest ready job of each queue. Grouping costs the server a hash look-up per row where a pass
    /// that counted nine `CASE`s in a row cost nine: 0.22 s against 0.60 s on MariaDB at a million
    /// jobs, and even the two `CASE`s of the split cost MariaDB as much (0.59 s), so MySQL splits in
    /// a second pass over the pending jobs (the claim index). PostgreSQL splits in the same pass
    /// (`Dialect::stats_in_one_pass`): the two `CASE`s cost it under 0.01 s, where the second pass
    /// cost 0.10–0.15 s at a million jobs (BENCHMARKS.md, `jobq serve`).
    ///
    /// On PostgreSQL the pass is a parallel sequential scan of the whole table (no index leads with
    /// queue and status for every row), 0.18–0.20 s at a million jobs. Left so on purpose: an index
    /// every claim and finish writes costs the drain rate (a quarter of it for one such index), and
    /// the cheaper scan found, an index-only count of finished jobs over `jobq_jobs_finished` widened
    /// with `INCLUDE (queue, status)` (written once per job, at its finish), took 0.18 s against the
    /// scan's 0.25 s in the same window: a third off, for a schema change and a count that needs a
    /// vacuumed visibility map. `jobq serve` shares one count among the requests that ask at once
    /// (`serve/flight.rs`), which is what a hundred clients needed.
    pub async fn stats_grouped(&self, params: &Stats) -> Result<Vec<QueueStats>, StoreError> {
        let now = params.now.0;
        let one_pass = self.dialect.stats_in_one_pass;
        let mut stmt = self.stmt("SELECT j.queue, j.status, COUNT(*)");
        if one_pass {
            stmt.push(", COUNT(CASE WHEN j.status = 'pending' AND j.run_at > ")
                .bind(now)
                .push(" THEN 1 END), MIN(CASE WHEN j.status = 'pending' AND j.run_at <= ")
                .bind(now)
                .push(" THEN j.run_at END)");
        }
        stmt.push(" FROM jobq_jobs AS j WHERE 1 = 1")
            .any_of("j.queue", params.queues.iter().cloned())
            .push(" GROUP BY j.queue, j.status");
        let rows = self.fetch_all(&stmt, "stats").await?;
        let mut by_queue: std::collections::BTreeMap<String, QueueStats> = Default::default();
        for row in &rows {
            let (queue, status, n) = row.status_count().map_err(self.fail("stats"))?;
            let stats = by_queue.entry(queue.clone()).or_insert_with(|| QueueStats {
                queue,
                ..Default::default()
            });
            // Pending counts as ready until the split takes the scheduled ones out.
            stats.count_status(&status, n);
            if one_pass && status == "pending" {
                let (scheduled, oldest) = row.pending_split_after(3).map_err(self.fail("stats"))?;
                stats.split_pending(scheduled, oldest);
            }
        }
        if one_pass {
            return Ok(by_queue.into_values().collect());
        }
        let pending: Vec<String> = by_queue
            .values()
            .filter(|s| s.ready > 0)
            .map(|s| s.queue.clone())
            .collect();
        if pending.is_empty() {
            return Ok(by_queue.into_values().collect());
        }
        let mut stmt = self.stmt("SELECT j.queue, COUNT(CASE WHEN j.run_at > ");
        stmt.bind(now)
            .push(" THEN 1 END), MIN(CASE WHEN j.run_at <= ")
            .bind(now)
            .push(" THEN j.run_at END) FROM jobq_jobs AS j WHERE j.status = 'pending'")
            .any_of("j.queue", pending)
            .push(" GROUP BY j.queue");
        for row in &self.fetch_all(&stmt, "stats").await? {
            let (queue, scheduled, oldest) = row.pending_split().map_err(self.fail("stats"))?;
            if let Some(s) = by_queue.get_mut(&queue) {
                s.split_pending(scheduled, oldest);
            }
        }
        Ok(by_queue.into_values().collect())
    }

    /// Runs `attempt` (one whole transaction) until it succeeds, again after it lost a race for a row
    /// lock (and after whatever else `also` accepts), at most `tries` times.
    pub async fn retrying<T, Fut>(
        &self,
        operation: &'static str,
        also: fn(&sqlx::Error) -> bool,
        mut attempt: impl FnMut() -> Fut,
    ) -> Result<T, StoreError>
    where
        Fut: Future<Output = Result<T, sqlx::Error>>,
    {
        let mut tried = 0;
        loop {
            tried += 1;
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) if tried < TRANSACTION_TRIES && ((self.dialect.is_lock_conflict)(&e) || also(&e)) => {
                    tracing::debug!("{operation}: {e}; trying again");
                    // A little apart, so that the other side of a deadlock gets through first.
                    tokio::time::sleep(Duration::from_millis(u64::from(tried) * 3)).await;
                }
                Err(e) => return Err(self.fail(operation)(e)),
            }
        }
    }

    /// The one row of a query of the server's settings, for `info`: each column as text, NULL (or a
    /// cell that is not text) as empty.
    pub async fn settings(&self, sql: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.fetch_all(&self.stmt(sql), "reading the server settings").await?;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::query(self.dialect.kind, "reading the server settings", "no row"))?;
        Ok((0..row.columns())
            .map(|i| row.opt_text(i).ok().flatten().unwrap_or_default())
            .collect())
    }

    /// An enqueue's fast path, for the servers: a batch with no unique keys and no id twice (nearly
    /// every batch) goes in with plain `INSERT`s (`insert`), which skip the look-ups and conflict
    /// handling a unique key needs. An id that exists already makes them fail having changed nothing:
    /// `None` then (and for any other batch) means the caller answers the batch job by job.
    /// `plain` says whether the batch is one ([`is_plain`], or what the caller already knows).
    pub async fn enqueue_plain<Fut>(
        &self,
        jobs: &[NewJob],
        plain: bool,
        insert: impl FnOnce() -> Fut,
    ) -> Result<Option<Vec<Enqueued>>, StoreError>
    where
        Fut: Future<Output = Result<(), sqlx::Error>>,
    {
        if !plain {
            return Ok(None);
        }
        match insert().await {
            Ok(()) => Ok(Some(all_created(jobs))),
            Err(e) if (self.dialect.is_unique_violation)(&e) => Ok(None),
            Err(e) => Err(self.fail("enqueue")(e)),
        }
    }

    /// The jobs a rescue statement took back, from its rows of (id, job_type, attempt, max_attempts).
    pub fn rescued(&self, rows: &[impl JobCells]) -> Result<Vec<Rescued>, StoreError> {
        rows.iter()
            .map(|r| r.rescued())
            .collect::<Result<_, _>>()
            .map_err(self.fail("rescue"))
    }

    /// Row locks are taken in id order, so that two overlapping cancels cannot deadlock; a store that
    /// locks no rows (SQLite holds the whole database) needs no order.
    fn lock_in_id_order(&self, select: &mut Stmt) {
        lock_in_id_order(self.dialect, select);
    }

    /// Runs a statement whose rows are a job id and a status.
    async fn read_statuses(&self, stmt: &Stmt, conn: &mut dyn Exec) -> Result<Vec<(String, JobStatus)>, sqlx::Error> {
        let rows = conn.fetch_all(stmt).await?;
        let mut read = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get_unchecked(0)?;
            let status: String = row.try_get_unchecked(1)?;
            let decoder = Decoder {
                kind: self.dialect.kind,
                id,
            };
            let status = decoder.status(&status).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            read.push((decoder.id, status));
        }
        Ok(read)
    }

    /// Replays dead jobs, or tells which a replay would move (see
    /// [`crate::store::Store::replay_dead`]): one selection decides both. In one transaction it reads
    /// (and, for a replay, locks) the selected dead jobs whose unique key no live job holds and that
    /// died first among the selected ones sharing their key, oldest death first, and brings them back.
    /// A producer that takes such a key meanwhile makes the update fail on the unique index; it is then
    /// simply run again.
    pub async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<Job>, StoreError> {
        let also = self.dialect.is_unique_violation;
        self.retrying("replay_dead", also, || self.replay_once(replay)).await
    }

    async fn replay_once(&self, replay: &ReplayDead) -> Result<Vec<Job>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let selected = |s: &mut Stmt, t: &str| {
            s.push(&format!("{t}.status = 'dead'"))
                .filter(t, &replay_filter(replay))
                .any_of(&format!("{t}.id"), replay.ids.iter().map(|id| id.to_string()));
        };
        let mut select = self.stmt(format!(
            "SELECT {} FROM jobq_jobs AS j WHERE ",
            self.dialect.job_columns
        ));
        selected(&mut select, "j");
        select.push(&format!(
            " AND (j.unique_key IS NULL OR (NOT EXISTS (SELECT 1 FROM jobq_jobs o WHERE o.queue = j.queue \
             AND o.unique_key = j.unique_key AND o.status IN {LIVE_STATUSES}) \
             AND NOT EXISTS (SELECT 1 FROM jobq_jobs s WHERE "
        ));
        selected(&mut select, "s");
        select.push(
            " AND s.queue = j.queue AND s.unique_key = j.unique_key \
             AND (COALESCE(s.finished_at, 0), s.id) < (COALESCE(j.finished_at, 0), j.id)))) \
             ORDER BY COALESCE(j.finished_at, 0), j.id",
        );
        if let Some(limit) = replay.limit {
            select.push(" LIMIT ").bind(i64::from(limit));
        }
        if !replay.dry_run {
            select.push(self.dialect.for_update);
        }
        let rows = tx.fetch_all(&select).await?;
        let mut jobs = rows
            .iter()
            .map(|r| job_from_row(r, self.dialect.kind))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        if replay.dry_run || jobs.is_empty() {
            return Ok(jobs);
        }
        let ids: Vec<String> = jobs.iter().map(|j| j.id.to_string()).collect();
        self.settle_edges(&mut *tx, &ids).await?;
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt(
                "UPDATE jobq_jobs SET status = 'pending', attempt = 0, snoozes = 0, finished_at = NULL, result = NULL, \
                 worker_id = NULL, heartbeat_at = NULL, progress = NULL, progress_message = NULL, \
                 expires_at = NULL, run_at = ",
            );
            update
                .bind(replay.now.0)
                .push(" WHERE status = 'dead'")
                .any_of("id", chunk.iter().cloned());
            tx.execute(&update).await?;
        }
        self.notify_ready(&mut tx, jobs.iter().map(|j| j.queue.as_str()))
            .await?;
        let back = if replay.cascade {
            let back = self.reopen_dependents(&mut tx, &ids).await?;
            self.read_jobs(&mut tx, &back).await?
        } else {
            Vec::new()
        };
        tx.commit().await?;
        for job in &mut jobs {
            job.status = JobStatus::Pending;
            job.attempt = 0;
            job.snoozes = 0;
            job.run_at = replay.now;
            job.finished_at = None;
            job.result = None;
            job.worker_id = None;
            job.heartbeat_at = None;
            job.expires_at = None;
            job.progress = None;
        }
        jobs.extend(back);
        Ok(jobs)
    }

    /// Wakes the listeners of each of `queues` once, where the store has listeners.
    async fn notify_ready<'q>(
        &self,
        conn: &mut dyn Exec,
        queues: impl Iterator<Item = &'q str>,
    ) -> Result<(), sqlx::Error> {
        let Some(notify) = self.dialect.notify_ready else {
            return Ok(());
        };
        let distinct: std::collections::BTreeSet<&str> = queues.collect();
        for queue in distinct {
            let mut stmt = self.stmt(notify);
            stmt.binds.push(Bind::Text(queue.to_string()));
            conn.execute(&stmt).await?;
        }
        Ok(())
    }
}
