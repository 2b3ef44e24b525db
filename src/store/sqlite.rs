//! SqliteStore: the embedded default, a single file in WAL mode.
//!
//! SQLite has one writer at a time, so every transition here is one statement (or one immediate
//! transaction) and is atomic by construction: two claimers never see the same pending row. Batches go
//! to SQLite as multi-row statements (`VALUES (…), (…)`) so a worker pays one statement per batch, not
//! per job. Time always comes from the caller. The durability level is SQLite's `synchronous` pragma:
//! NORMAL by default (a power cut may lose the last transactions, never corrupt the file), FULL with
//! `?synchronous=full` in the URL.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite};
use tokio::sync::Notify;

use super::migrate;
use super::sql::{
    Decoder, EnqueuePlan, JOB_COLUMNS, LIVE_STATUSES, TERMINAL_STATUSES, cleanup_filter, job_from_row, meta_json,
    placeholders, push_filter, push_in, replay_filter,
};
use super::sqlite_watch::StoreWatch;
use super::{
    Cancel, CancelTarget, Cancelled, Claim, Cleanup, Enqueued, Finish, Heartbeat, Lease, LeaseState, ListParams,
    QueueStats, ReplayDead, Rescue, Rescued, Stats, StatsParams, Store, StoreError, StoreInfo, StoreKind, StoreUrl,
    Subscription, WorkerInfo,
};
use crate::job::{ERROR_HISTORY_CAP, Job, JobId, JobStatus, NewJob, Progress};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Sqlite;

/// Rows per multi-row statement: 14 parameters a row stays well under SQLite's 32,766 variables.
const ROWS_PER_STATEMENT: usize = 500;

/// The SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    url: StoreUrl,
    synchronous: &'static str,
}

fn q(operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::query(KIND, operation, e)
}

/// SQL that appends `{attempt, at, error}` to the `errors` JSON array, dropping the oldest entry once
/// the history holds [`ERROR_HISTORY_CAP`] entries. `attempt`, `at` and `error` are SQL expressions.
fn append_error(attempt: &str, at: &str, error: &str) -> String {
    let entry = format!("json_object('attempt', {attempt}, 'at', {at}, 'error', {error})");
    format!(
        "CASE WHEN json_array_length(jobq_jobs.errors) >= {ERROR_HISTORY_CAP} \
         THEN json_insert(json_remove(jobq_jobs.errors, '$[0]'), '$[#]', {entry}) \
         ELSE json_insert(jobq_jobs.errors, '$[#]', {entry}) END"
    )
}

impl SqliteStore {
    /// Opens (creating if missing) the database file a `sqlite://` URL names. URL options:
    /// `synchronous=normal|full|off` (default normal), `busy_timeout=10s`.
    pub async fn connect(url: &StoreUrl) -> Result<SqliteStore, StoreError> {
        let path = url.sqlite_path();
        let mut synchronous = SqliteSynchronous::Normal;
        let mut synchronous_name = "NORMAL";
        let mut busy_timeout = Duration::from_secs(30);
        for (key, value) in url.query_pairs() {
            match key.as_str() {
                "synchronous" => {
                    (synchronous, synchronous_name) = match value.to_ascii_lowercase().as_str() {
                        "normal" => (SqliteSynchronous::Normal, "NORMAL"),
                        "full" => (SqliteSynchronous::Full, "FULL"),
                        "extra" => (SqliteSynchronous::Extra, "EXTRA"),
                        "off" => (SqliteSynchronous::Off, "OFF"),
                        other => {
                            return Err(StoreError::InvalidUrl {
                                url: url.redacted().to_string(),
                                reason: format!("synchronous={other:?} (expected normal, full, extra or off)"),
                            });
                        }
                    }
                }
                "busy_timeout" => {
                    busy_timeout = crate::time::parse_duration(&value).map_err(|reason| StoreError::InvalidUrl {
                        url: url.redacted().to_string(),
                        reason: format!("busy_timeout: {reason}"),
                    })?
                }
                other => {
                    return Err(StoreError::InvalidUrl {
                        url: url.redacted().to_string(),
                        reason: format!("unknown option {other:?} (expected synchronous or busy_timeout)"),
                    });
                }
            }
        }
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(synchronous)
            .busy_timeout(busy_timeout)
            .pragma("cache_size", "-32000")
            .pragma("temp_store", "memory");
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(0)
            // A file does not hang up: no ping (a round trip to the connection's thread) before each use.
            .test_before_acquire(false)
            .acquire_timeout(busy_timeout + Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(|e| StoreError::unavailable(KIND, &url.redacted(), &e))?;
        Ok(SqliteStore {
            pool,
            url: url.clone(),
            synchronous: synchronous_name,
        })
    }

    /// The underlying pool, for tests and benchmarks that inspect the file directly.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    async fn applied_version(&self) -> Result<Option<u32>, StoreError> {
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobq_migrations'")
                .fetch_optional(&self.pool)
                .await
                .map_err(q("reading the schema version"))?;
        if exists.is_none() {
            return Ok(None);
        }
        let v: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM jobq_migrations")
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading the schema version"))?;
        Ok(Some(v.unwrap_or(0) as u32))
    }

    async fn apply(&self) -> Result<(), StoreError> {
        // BEGIN IMMEDIATE takes the write lock before reading the applied versions, so two processes
        // migrating at once apply each migration exactly once.
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(q("starting the migration"))?;
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS jobq_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, \
             checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)",
        )
        .execute(&mut *tx)
        .await
        .map_err(q("creating jobq_migrations"))?;
        let rows = sqlx::query("SELECT version, checksum FROM jobq_migrations")
            .fetch_all(&mut *tx)
            .await
            .map_err(q("reading jobq_migrations"))?;
        let applied: HashMap<u32, String> = rows
            .iter()
            .map(|r| (r.get::<i64, _>(0) as u32, r.get::<String, _>(1)))
            .collect();
        for m in migrate::pending(KIND, &applied)? {
            for statement in migrate::statements(m.sql) {
                sqlx::query(&statement)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| StoreError::Migration {
                        kind: KIND,
                        version: m.version,
                        source: e.into(),
                    })?;
            }
            sqlx::query("INSERT INTO jobq_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)")
                .bind(m.version as i64)
                .bind(m.name)
                .bind(m.checksum())
                .bind(UnixMillis::now().0)
                .execute(&mut *tx)
                .await
                .map_err(q("recording a migration"))?;
        }
        tx.commit().await.map_err(q("committing the migration"))
    }

    /// The ids of `jobs` that the table holds already.
    async fn existing_ids(
        &self,
        tx: &mut sqlx::SqliteConnection,
        jobs: &[NewJob],
    ) -> Result<HashSet<String>, StoreError> {
        let sql = format!("SELECT id FROM jobq_jobs WHERE id IN ({})", placeholders(jobs.len()));
        let mut query = sqlx::query_scalar::<_, String>(&sql);
        for job in jobs {
            query = query.bind(job.id.as_str());
        }
        Ok(query
            .fetch_all(&mut *tx)
            .await
            .map_err(q("enqueue (id look-up)"))?
            .into_iter()
            .collect())
    }

    /// The live jobs holding the unique keys of `jobs`, by (queue, key).
    async fn live_unique_keys(
        &self,
        tx: &mut sqlx::SqliteConnection,
        jobs: &[NewJob],
    ) -> Result<HashMap<(String, String), JobId>, StoreError> {
        let keyed: Vec<&NewJob> = jobs.iter().filter(|j| j.unique_key.is_some()).collect();
        if keyed.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!(
            "SELECT queue, unique_key, id FROM jobq_jobs WHERE status IN {LIVE_STATUSES} AND unique_key IN ({})",
            placeholders(keyed.len())
        );
        let mut query = sqlx::query(&sql);
        for job in &keyed {
            query = query.bind(job.unique_key.as_deref());
        }
        let rows = query
            .fetch_all(&mut *tx)
            .await
            .map_err(q("enqueue (unique key look-up)"))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    (r.get::<String, _>(0), r.get::<String, _>(1)),
                    JobId::from_stored(r.get(2)),
                )
            })
            .collect())
    }

    async fn statuses_of(&self, ids: &[&JobId]) -> Result<HashMap<String, JobStatus>, StoreError> {
        let mut out = HashMap::new();
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, status FROM jobq_jobs WHERE id IN ({})",
                placeholders(chunk.len())
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(id.as_str());
            }
            for row in query.fetch_all(&self.pool).await.map_err(q("reading job statuses"))? {
                let id: String = row.get(0);
                let status: String = row.get(1);
                let status = Decoder {
                    kind: KIND,
                    id: id.clone(),
                }
                .status(&status)?;
                out.insert(id, status);
            }
        }
        Ok(out)
    }
}

/// Splits a batch of lease operations into rounds in which no job id appears twice, as indexes into
/// the batch in input order. A fenced statement reports what it applied by job id (`RETURNING id`), so
/// two leases on one job in one statement could not be told apart: a worker whose first attempt was
/// rescued and who claimed the job again holds a stale and a current lease on it, and the stale one
/// would be reported as applied. Nearly every batch is a single round.
fn rounds_by_id<'a, T>(items: &'a [T], id: impl Fn(&'a T) -> &'a str) -> Vec<Vec<usize>> {
    let mut occurrences: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let n = occurrences.entry(id(item)).or_insert(0);
        if rounds.len() == *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(i);
        *n += 1;
    }
    rounds
}

/// Sets `answers[i]` for each index of a statement's `chunk` whose job id the statement returned.
fn mark_returned<'a>(answers: &mut [bool], chunk: &[usize], rows: &[SqliteRow], id: impl Fn(usize) -> &'a str) {
    let returned: HashSet<&str> = rows.iter().map(|r| r.get::<&str, _>(0)).collect();
    for &i in chunk {
        answers[i] = returned.contains(id(i));
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> StoreKind {
        KIND
    }

    /// SQLite has no notifications, but every commit writes the database's files: a watch on them
    /// (Linux inotify) signals on any write by any process, whatever its queue. `None` where the
    /// folder cannot be watched (the caller polls).
    fn subscribe(&self, _queues: &[String], notify: Arc<Notify>) -> Option<Subscription> {
        tokio::runtime::Handle::try_current().ok()?;
        let path = std::path::absolute(self.url.sqlite_path()).ok()?;
        StoreWatch::file(&path, notify).map(StoreWatch::into_subscription)
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let version: String = sqlx::query_scalar("SELECT sqlite_version()")
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading the version"))?;
        let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading journal_mode"))?;
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

    async fn migrate(&self) -> Result<(), StoreError> {
        if migrate::needs_migrating(KIND, self.applied_version().await?)? {
            self.apply().await?;
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        // The immediate transaction holds the write lock from the start, so what the look-ups below
        // find stays true until the insert: every answer is decided before a row is written, and the
        // insert needs no RETURNING (streaming a row back per job would cost more than the insert).
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(q("starting enqueue"))?;
        let mut plan = EnqueuePlan::default();
        for chunk in jobs.chunks(ROWS_PER_STATEMENT) {
            let stored_ids = self.existing_ids(&mut tx, chunk).await?;
            let live_keys = self.live_unique_keys(&mut tx, chunk).await?;
            let fresh = plan.decide(chunk, &stored_ids, &live_keys);
            if fresh.is_empty() {
                continue;
            }
            let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(
                "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, status, attempt, \
                 max_attempts, run_at, unique_key, timeout_ms, errors, created_at) ",
            );
            qb.push_values(fresh, |mut row, job| {
                row.push_bind(job.id.as_str())
                    .push_bind(job.queue.as_str())
                    .push_bind(job.job_type.as_str())
                    .push_bind(job.payload.get())
                    .push_bind(meta_json(job))
                    .push_bind(job.priority)
                    .push("'pending'")
                    .push("0")
                    .push_bind(job.max_attempts as i64)
                    .push_bind(job.run_at.0)
                    .push_bind(job.unique_key.as_deref())
                    .push_bind(job.timeout_ms.map(|t| t as i64))
                    .push("'[]'")
                    .push_bind(job.created_at.0);
            });
            qb.build().execute(&mut *tx).await.map_err(q("enqueue"))?;
        }
        tx.commit().await.map_err(q("committing enqueue"))?;
        Ok(plan.answers())
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.queues.is_empty() || claim.limit == 0 {
            return Ok(Vec::new());
        }
        // One ordered, limited scan of the ready index per queue; with several queues the per-queue
        // tops are merged, so a claim never sorts a whole backlog.
        let exclude = if claim.exclude_types.is_empty() {
            String::new()
        } else {
            format!(" AND job_type NOT IN ({})", placeholders(claim.exclude_types.len()))
        };
        let per_queue = format!(
            "SELECT id, priority, run_at FROM jobq_jobs WHERE status = 'pending' AND queue = ? AND run_at <= ?{exclude} \
             ORDER BY priority, run_at, id LIMIT ?"
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
             WHERE id IN ({candidates}) RETURNING {JOB_COLUMNS}"
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
        let rows = query.fetch_all(&self.pool).await.map_err(q("claim"))?;
        let mut jobs = rows
            .iter()
            .map(|r| job_from_row(r, KIND))
            .collect::<Result<Vec<_>, _>>()?;
        // RETURNING gives no order; hand jobs out in claim order.
        jobs.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
        Ok(jobs)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        let mut held = vec![false; beats.len()];
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
                         AND jobq_jobs.worker_id = b.worker AND jobq_jobs.status = 'running' RETURNING jobq_jobs.id",
                    );
                let rows = qb.build().fetch_all(&self.pool).await.map_err(q("heartbeat"))?;
                mark_returned(&mut held, chunk, &rows, |i| beats[i].lease.id.as_str());
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
                if held {
                    LeaseState::Held
                } else if statuses.get(b.lease.id.as_str()) == Some(&JobStatus::Cancelled) {
                    LeaseState::Cancelled
                } else {
                    LeaseState::Lost
                }
            })
            .collect())
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let mut applied = vec![false; finishes.len()];
        let append = append_error("jobq_jobs.attempt", "f.at", "f.error");
        for round in rounds_by_id(finishes, |f| f.lease.id.as_str()) {
            for chunk in round.chunks(ROWS_PER_STATEMENT) {
                let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(
                    "WITH f(id, attempt, worker, status, run_at, result, error, finished_at, at, progress, message) AS (",
                );
                qb.push_values(chunk.iter().map(|&i| &finishes[i]), |mut row, fin| {
                    let status = fin.outcome.status();
                    let run_at = match &fin.outcome {
                        super::Outcome::Retry { run_at, .. } => Some(run_at.0),
                        _ => None,
                    };
                    let result = match &fin.outcome {
                        super::Outcome::Succeeded { result } => result.as_ref().map(|r| r.get().to_string()),
                        _ => None,
                    };
                    // The contract: terminal outcomes *and* waiting set finished_at (the job left its
                    // worker for good); only a retry, which runs again, leaves it empty.
                    let finished = status.is_terminal() || status == JobStatus::Waiting;
                    row.push_bind(fin.lease.id.as_str())
                        .push_bind(fin.lease.attempt as i64)
                        .push_bind(fin.lease.worker.as_str())
                        .push_bind(status.as_str())
                        .push_bind(run_at)
                        .push_bind(result)
                        .push_bind(fin.outcome.error().map(str::to_string))
                        .push_bind(finished.then_some(now.0))
                        .push_bind(now.0)
                        .push_bind(fin.progress.as_ref().map(|p| i64::from(p.percent)))
                        .push_bind(fin.progress.as_ref().and_then(|p| p.message.clone()));
                });
                qb.push(format!(
                    ") UPDATE jobq_jobs SET status = f.status, run_at = COALESCE(f.run_at, jobq_jobs.run_at), \
                     result = f.result, finished_at = f.finished_at, worker_id = NULL, \
                     progress = COALESCE(f.progress, jobq_jobs.progress), \
                     progress_message = CASE WHEN f.progress IS NULL THEN jobq_jobs.progress_message ELSE f.message END, \
                     errors = CASE WHEN f.error IS NULL THEN jobq_jobs.errors ELSE {append} END \
                     FROM f WHERE jobq_jobs.id = f.id AND jobq_jobs.attempt = f.attempt \
                     AND jobq_jobs.worker_id = f.worker AND jobq_jobs.status = 'running' RETURNING jobq_jobs.id"
                ));
                let rows = qb.build().fetch_all(&self.pool).await.map_err(q("finish"))?;
                mark_returned(&mut applied, chunk, &rows, |i| finishes[i].lease.id.as_str());
            }
        }
        Ok(applied)
    }

    async fn release(&self, leases: &[Lease], _now: UnixMillis) -> Result<Vec<bool>, StoreError> {
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
                let rows = qb.build().fetch_all(&self.pool).await.map_err(q("release"))?;
                mark_returned(&mut released, chunk, &rows, |i| leases[i].id.as_str());
            }
        }
        Ok(released)
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        let append = append_error("jobq_jobs.attempt", "?1", "'worker lost'");
        let sql = format!(
            "UPDATE jobq_jobs SET \
             status = CASE WHEN attempt >= max_attempts THEN 'dead' ELSE 'pending' END, \
             finished_at = CASE WHEN attempt >= max_attempts THEN ?1 ELSE NULL END, \
             run_at = ?1, worker_id = NULL, heartbeat_at = NULL, errors = {append} \
             WHERE id IN (SELECT id FROM jobq_jobs WHERE status = 'running' AND heartbeat_at < ?2 \
             ORDER BY heartbeat_at LIMIT ?3) \
             RETURNING id, job_type, attempt, status"
        );
        let rows = sqlx::query(&sql)
            .bind(rescue.now.0)
            .bind(rescue.stale_before.0)
            .bind(rescue.limit as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(q("rescue"))?;
        rows.iter()
            .map(|r| {
                let id: String = r.get(0);
                let status = Decoder {
                    kind: KIND,
                    id: id.clone(),
                }
                .status(r.get::<&str, _>(3))?;
                Ok(Rescued {
                    id: JobId::from_stored(id),
                    job_type: r.get(1),
                    attempt: r.get::<i64, _>(2) as u32,
                    status,
                })
            })
            .collect()
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let row = sqlx::query(&format!("SELECT {JOB_COLUMNS} FROM jobq_jobs WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(q("get"))?;
        row.as_ref().map(|r| job_from_row(r, KIND)).transpose()
    }

    async fn list(&self, params: &ListParams) -> Result<Vec<Job>, StoreError> {
        let mut qb: QueryBuilder<Sqlite> =
            QueryBuilder::new(format!("SELECT {JOB_COLUMNS} FROM jobq_jobs WHERE 1 = 1"));
        push_filter(&mut qb, &params.filter);
        if !params.filter.statuses.is_empty() && !params.filter.statuses.contains(&JobStatus::Pending) {
            // Repeats the by-status index's own condition, which is how SQLite knows it may use it.
            qb.push(" AND status <> 'pending'");
        }
        qb.push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(params.limit as i64)
            .push(" OFFSET ")
            .push_bind(params.offset.min(i64::MAX as u64) as i64);
        let rows = qb.build().fetch_all(&self.pool).await.map_err(q("list"))?;
        rows.iter()
            .map(|r| job_from_row(r, KIND))
            .collect::<Result<Vec<_>, _>>()
    }

    async fn stats(&self, params: &StatsParams) -> Result<Stats, StoreError> {
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
        let rows = query.fetch_all(&self.pool).await.map_err(q("stats"))?;
        let mut by_queue: std::collections::BTreeMap<String, QueueStats> = Default::default();
        for row in &rows {
            let queue: String = row.get(0);
            let status: &str = row.get(1);
            let n = row.get::<i64, _>(2) as u64;
            let s = by_queue.entry(queue.clone()).or_insert_with(|| QueueStats {
                queue,
                ..Default::default()
            });
            match JobStatus::from_str(status) {
                Ok(JobStatus::Pending) => s.ready = n,
                Ok(JobStatus::Running) => s.running = n,
                Ok(JobStatus::Waiting) => s.waiting = n,
                Ok(JobStatus::Succeeded) => s.succeeded = n,
                Ok(JobStatus::Dead) => s.dead = n,
                Ok(JobStatus::Cancelled) => s.cancelled = n,
                Ok(JobStatus::Discarded) => s.discarded = n,
                Err(_) => {}
            }
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
        for row in query.fetch_all(&self.pool).await.map_err(q("stats"))? {
            let queue: String = row.get(0);
            if let Some(s) = by_queue.get_mut(&queue) {
                s.scheduled = row.get::<Option<i64>, _>(1).unwrap_or(0) as u64;
                s.ready = s.ready.saturating_sub(s.scheduled);
                s.oldest_ready_at = row.get::<Option<i64>, _>(2).map(UnixMillis);
            }
        }
        Ok(Stats {
            queues: by_queue.into_values().collect(),
        })
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, StoreError> {
        if matches!(&cancel.target, CancelTarget::Ids(ids) if ids.is_empty()) {
            return Ok(Vec::new());
        }
        // Read the previous statuses and update inside one immediate transaction, so nothing changes
        // in between.
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(q("starting cancel"))?;
        let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(format!(
            "SELECT id, status FROM jobq_jobs WHERE status IN {LIVE_STATUSES}"
        ));
        match &cancel.target {
            CancelTarget::Ids(ids) => push_in(&mut qb, "id", ids.iter().map(|id| id.to_string())),
            CancelTarget::Filter(filter) => push_filter(&mut qb, filter),
        }
        let rows = qb.build().fetch_all(&mut *tx).await.map_err(q("cancel"))?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: String = row.get(0);
            let previous = Decoder {
                kind: KIND,
                id: id.clone(),
            }
            .status(row.get::<&str, _>(1))?;
            out.push(Cancelled {
                id: JobId::from_stored(id),
                previous,
            });
        }
        for chunk in out.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "UPDATE jobq_jobs SET status = 'cancelled', finished_at = ? WHERE id IN ({})",
                placeholders(chunk.len())
            );
            let mut query = sqlx::query(&sql).bind(cancel.now.0);
            for c in chunk {
                query = query.bind(c.id.as_str());
            }
            query.execute(&mut *tx).await.map_err(q("cancel"))?;
        }
        tx.commit().await.map_err(q("committing cancel"))?;
        Ok(out)
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<JobId>, StoreError> {
        // c: the dead jobs this request selects.
        let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(
            "WITH c AS (SELECT id, queue, unique_key, finished_at FROM jobq_jobs WHERE status = 'dead'",
        );
        push_filter(&mut qb, &replay_filter(replay));
        push_in(&mut qb, "id", replay.ids.iter().map(|id| id.to_string()));
        qb.push(") UPDATE jobq_jobs SET status = 'pending', attempt = 0, run_at = ");
        qb.push_bind(replay.now.0);
        qb.push(
            ", finished_at = NULL, result = NULL, worker_id = NULL, heartbeat_at = NULL, progress = NULL, \
             progress_message = NULL WHERE id IN (SELECT id FROM c WHERE unique_key IS NULL OR (",
        );
        // A unique key may be held by only one live job: a dead job whose key is live again stays dead,
        // and of several selected dead jobs sharing a key only the first in replay order (oldest death)
        // comes back. Only selected jobs compete, so replaying one holder by id works whichever it is.
        qb.push(format!(
            "NOT EXISTS (SELECT 1 FROM jobq_jobs o WHERE o.queue = c.queue AND o.unique_key = c.unique_key \
             AND o.status IN {LIVE_STATUSES}) \
             AND NOT EXISTS (SELECT 1 FROM c s WHERE s.queue = c.queue AND s.unique_key = c.unique_key \
             AND (COALESCE(s.finished_at, 0), s.id) < (COALESCE(c.finished_at, 0), c.id)))"
        ));
        qb.push(" ORDER BY finished_at, id");
        if let Some(limit) = replay.limit {
            qb.push(" LIMIT ").push_bind(limit as i64);
        }
        qb.push(") RETURNING id");
        let rows = qb.build().fetch_all(&self.pool).await.map_err(q("replay_dead"))?;
        let mut ids: Vec<JobId> = rows.iter().map(|r| JobId::from_stored(r.get(0))).collect();
        ids.sort();
        Ok(ids)
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let Some(filter) = cleanup_filter(cleanup) else {
            return Ok(0);
        };
        let mut qb: QueryBuilder<Sqlite> = QueryBuilder::new(if cleanup.dry_run {
            "SELECT count(*) FROM ("
        } else {
            "DELETE FROM jobq_jobs WHERE id IN ("
        });
        // Terminal statuses only, whatever the filter says: cleanup never touches live jobs.
        qb.push(format!("SELECT id FROM jobq_jobs WHERE status IN {TERMINAL_STATUSES}"));
        push_filter(&mut qb, &filter);
        if let Some(before) = cleanup.finished_before {
            qb.push(" AND finished_at < ").push_bind(before.0);
        }
        qb.push(" LIMIT ").push_bind(cleanup.limit as i64).push(")");
        if cleanup.dry_run {
            let n: i64 = qb
                .build_query_scalar()
                .fetch_one(&self.pool)
                .await
                .map_err(q("cleanup"))?;
            Ok(n as u64)
        } else {
            let done = qb.build().execute(&self.pool).await.map_err(q("cleanup"))?;
            Ok(done.rows_affected())
        }
    }

    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO jobq_workers (id, name, host, pid, queues, started_at, last_seen_at, jobs_done) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at, \
             jobs_done = excluded.jobs_done",
        )
        .bind(&worker.id)
        .bind(&worker.name)
        .bind(&worker.host)
        .bind(worker.pid as i64)
        .bind(serde_json::to_string(&worker.queues).unwrap_or_else(|_| "[]".into()))
        .bind(worker.started_at.0)
        .bind(worker.last_seen_at.0)
        .bind(worker.jobs_done as i64)
        .execute(&self.pool)
        .await
        .map_err(q("registering a worker"))?;
        Ok(())
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM jobq_workers WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(q("unregistering a worker"))?;
        Ok(())
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        sqlx::query("DELETE FROM jobq_workers WHERE last_seen_at < ?")
            .bind(seen_since.0)
            .execute(&self.pool)
            .await
            .map_err(q("forgetting old workers"))?;
        let rows = sqlx::query(
            "SELECT id, name, host, pid, queues, started_at, last_seen_at, jobs_done FROM jobq_workers ORDER BY started_at, id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(q("listing workers"))?;
        Ok(rows
            .iter()
            .map(|r| WorkerInfo {
                id: r.get(0),
                name: r.get(1),
                host: r.get(2),
                pid: r.get::<i64, _>(3) as u32,
                queues: serde_json::from_str(r.get::<&str, _>(4)).unwrap_or_default(),
                started_at: UnixMillis(r.get(5)),
                last_seen_at: UnixMillis(r.get(6)),
                jobs_done: r.get::<i64, _>(7) as u64,
            })
            .collect())
    }
}

fn split_progress(progress: Option<&Progress>) -> (Option<i64>, Option<String>) {
    match progress {
        Some(p) => (Some(i64::from(p.percent)), p.message.clone()),
        None => (None, None),
    }
}
