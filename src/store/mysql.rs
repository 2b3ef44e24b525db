//! MysqlStore: many workers on many machines against one MySQL 8 (8.0.16 or newer) or MariaDB (10.6 or
//! newer) database.
//!
//! MySQL has no `UPDATE … RETURNING`, so every transition that two workers could race on is one short
//! transaction: lock the rows (a claim with `FOR UPDATE SKIP LOCKED`, so that concurrent claimers pass
//! over each other's rows instead of waiting; a finish by id, in id order), then change them with one
//! statement, then commit. Batches travel as one JSON array parameter read with `JSON_TABLE`, so a
//! statement carries any number of rows for a constant text (prepared once per connection) and a
//! worker pays a few round trips per batch, not per job. Every exit from `running` is fenced by (id,
//! attempt, worker, status) on the locked rows, and again in the update's `WHERE`.
//!
//! Connections run at READ COMMITTED: a locking read then takes no gap locks, so claims never block
//! enqueues, and InnoDB gives up on a row lock after `lock_wait_timeout`. Deadlocks and lock-wait
//! time-outs are retried here a few times (the transaction is rolled back and run again); what still
//! fails goes to the caller, whose worker retries with back-off, so neither can wedge a claim loop.
//!
//! Wake-ups: there are no notifications in MySQL. [`Store::subscribe`] asks the claim index every
//! `wake_poll` (default 5 ms) whether a ready job waits in the caller's queues, a single indexed
//! read without locks, and signals when one does; plain `INSERT`s by applications are seen the same way.
//!
//! The URL is sqlx's (`mysql://user:pass@host:3306/db?ssl-mode=required`; `mariadb://` is the same)
//! and must name the database, plus jobq's own options, stripped before sqlx sees the URL:
//! `connect_timeout=SECS` (default 5), `max_connections=N` (default 10), `lock_wait_timeout=SECS`
//! (default 5) and `wake_poll=DURATION` (default 5ms). Text is utf8mb4 with the binary collation on the
//! tables and on every connection. Time always comes from the caller; the server's clock only fills
//! the defaults of rows that applications insert by hand. Passwords never appear in a message.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::mysql::{
    MySql, MySqlConnectOptions, MySqlConnection, MySqlDatabaseError, MySqlPool, MySqlPoolOptions, MySqlRow,
};
use sqlx::{Connection, Executor, QueryBuilder, Row};
use tokio::sync::Notify;

use super::error::DriverError;
use super::migrate;
use super::sql::{
    Decoder, EnqueuePlan, JOB_COLUMNS, LIVE_STATUSES, TERMINAL_STATUSES, cleanup_filter, job_from_row, meta_json,
    push_filter, push_in, replay_filter,
};
use super::url::{max_connections_option, positive_duration_option};
use super::{
    Cancel, CancelTarget, Cancelled, Claim, Cleanup, EnqueueOutcome, Enqueued, Finish, Heartbeat, JobFilter, Lease,
    LeaseState, ListParams, Outcome, QueueStats, ReplayDead, Rescue, Rescued, Stats, StatsParams, Store, StoreError,
    StoreInfo, StoreKind, StoreUrl, Subscription, WorkerInfo,
};
use crate::job::{ERROR_HISTORY_CAP, Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Mysql;

/// Rows per multi-row INSERT: 11 placeholders a row stays well under MySQL's 65,535 per statement.
const ROWS_PER_INSERT: usize = 4_000;

/// Payload and meta bytes per INSERT, well under the default `max_allowed_packet` (16 MiB on MariaDB,
/// 64 MiB on MySQL 8); a single larger job still gets a statement of its own.
const BYTES_PER_INSERT: usize = 6 * 1024 * 1024;

/// Rows per JSON-array statement (leases, ids): bounds the memory of one round trip only.
const ROWS_PER_STATEMENT: usize = 5_000;

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pool size unless the URL says otherwise (`max_connections`).
const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// InnoDB's row-lock wait unless the URL says otherwise (`lock_wait_timeout`, whole seconds). The
/// server's default, 50 s, would hold a worker's acknowledgements that long behind one stuck lock.
const DEFAULT_LOCK_WAIT_SECS: u64 = 5;

/// How often a subscription looks for ready jobs unless the URL says otherwise (`wake_poll`).
const DEFAULT_WAKE_POLL: Duration = Duration::from_millis(5);

/// Tries of one operation that meets a deadlock or a lock-wait time-out.
const TRANSIENT_TRIES: u32 = 5;

/// Tries of a checked enqueue whose insert clashes with a job written meanwhile by another producer.
const ENQUEUE_ROUNDS: u32 = 5;

/// Longest wait for another process's migration to finish.
const MIGRATE_LOCK_SECS: u32 = 60;

/// The job ids of a JSON array parameter, as a table `t(id)`. Statements join it `STRAIGHT_JOIN
/// jobq_jobs`: read first, it finds each row by primary key, so they touch (and lock) only the rows
/// they name. Left to itself the optimizer may scan a small table instead, locking (or waiting for)
/// every row of it.
const ID_TABLE: &str = "JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$')) AS t";

/// The MySQL store.
#[derive(Clone)]
pub struct MysqlStore {
    pool: MySqlPool,
    url: StoreUrl,
    database: String,
    version: String,
    wake_poll: Duration,
}

/// Written by hand: the connect options hold the password, which sqlx's own Debug would print.
impl std::fmt::Debug for MysqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MysqlStore")
            .field("url", &self.url.redacted())
            .field("database", &self.database)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// What a `mysql://` URL says, jobq's own options taken out.
struct Settings {
    options: MySqlConnectOptions,
    database: String,
    connect_timeout: Duration,
    max_connections: u32,
    lock_wait_secs: u64,
    wake_poll: Duration,
}

impl Settings {
    fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: url.redacted().to_string(),
            reason,
        };
        // sqlx knows the scheme `mysql` only; `mariadb://` names the same server protocol.
        let text = url.expose();
        let text = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => format!("mysql://{rest}"),
            _ => text.to_string(),
        };
        let mut parsed = url::Url::parse(&text).map_err(|e| invalid(e.to_string()))?;
        let duration = |key: &str, value: &str| positive_duration_option(key, value).map_err(invalid);
        let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
        let mut max_connections = DEFAULT_MAX_CONNECTIONS;
        let mut lock_wait_secs = DEFAULT_LOCK_WAIT_SECS;
        let mut wake_poll = DEFAULT_WAKE_POLL;
        let mut passed_on: Vec<(String, String)> = Vec::new();
        for (key, value) in parsed.query_pairs() {
            match key.as_ref() {
                "connect_timeout" => connect_timeout = duration("connect_timeout", &value)?,
                // InnoDB counts whole seconds; a shorter wait rounds up to one.
                "lock_wait_timeout" => {
                    let d = duration("lock_wait_timeout", &value)?;
                    lock_wait_secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
                }
                "wake_poll" => wake_poll = duration("wake_poll", &value)?,
                "max_connections" => max_connections = max_connections_option(&value).map_err(invalid)?,
                _ => passed_on.push((key.into_owned(), value.into_owned())),
            }
        }
        let database = parsed.path().trim_start_matches('/').to_string();
        if database.is_empty() || database.contains('/') {
            return Err(invalid(
                "no database named (expected mysql://user@host:3306/DATABASE; create it first)".into(),
            ));
        }
        if passed_on.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&passed_on);
        }
        let options = MySqlConnectOptions::from_str(parsed.as_str())
            .map_err(|e| invalid(e.to_string()))?
            // Every text jobq sends or reads is utf8mb4; the binary collation makes literals and
            // JSON_TABLE columns compare byte by byte, like the tables' own columns.
            .charset("utf8mb4")
            .collation("utf8mb4_bin");
        Ok(Settings {
            options,
            database,
            connect_timeout,
            max_connections,
            lock_wait_secs,
            wake_poll,
        })
    }
}

/// The server's error number, for errors the server sent.
fn error_number(e: &sqlx::Error) -> Option<u16> {
    match e {
        sqlx::Error::Database(db) => db.try_downcast_ref::<MySqlDatabaseError>().map(|m| m.number()),
        _ => None,
    }
}

/// True for driver errors that mean the server cannot be reached (rather than refusing a request):
/// network and TLS failures, pool time-outs, too many connections (1040), a server shutting down
/// (1053) and a killed connection (1927).
fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => true,
        sqlx::Error::WorkerCrashed => true,
        _ => matches!(error_number(e), Some(1040 | 1053 | 1927)),
    }
}

/// True for a deadlock (1213) or a lock-wait time-out (1205): the statement lost a race for a row
/// lock and running the transaction again is the remedy.
fn is_lock_conflict(e: &sqlx::Error) -> bool {
    matches!(error_number(e), Some(1205 | 1213))
}

/// True for a duplicate key (1062): a primary key or a live unique key taken meanwhile.
fn is_duplicate(e: &sqlx::Error) -> bool {
    matches!(error_number(e), Some(1062))
}

/// Reads a text column. MySQL flags text in a binary collation as binary, which sqlx's checked
/// decoding refuses; the column types here are jobq's own.
fn text(row: &MySqlRow, i: usize) -> String {
    row.try_get_unchecked::<Option<String>, _>(i)
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn jobs_from_rows(rows: &[MySqlRow]) -> Result<Vec<Job>, StoreError> {
    rows.iter().map(|r| job_from_row(r, KIND)).collect()
}

/// A JSON array of strings, for [`ID_TABLE`].
fn id_array<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    Value::Array(ids.map(|id| Value::String(id.to_string())).collect()).to_string()
}

/// SQL appending `{attempt, at, error}` to `j.errors`, first dropping the oldest entry once the
/// history holds [`ERROR_HISTORY_CAP`] entries. The arguments are SQL expressions.
fn append_error(attempt: &str, at: &str, error: &str) -> String {
    format!(
        "JSON_ARRAY_APPEND(IF(JSON_LENGTH(j.errors) >= {ERROR_HISTORY_CAP}, JSON_REMOVE(j.errors, '$[0]'), j.errors), \
         '$', JSON_OBJECT('attempt', {attempt}, 'at', {at}, 'error', {error}))"
    )
}

/// Splits `jobs` into INSERT statements of at most [`ROWS_PER_INSERT`] rows and about
/// [`BYTES_PER_INSERT`] bytes of payload and meta.
fn insert_chunks<'a>(jobs: &[&'a NewJob]) -> Vec<Vec<&'a NewJob>> {
    let mut chunks: Vec<Vec<&NewJob>> = Vec::new();
    let mut current: Vec<&NewJob> = Vec::new();
    let mut bytes = 0;
    for &job in jobs {
        let size = job.payload.get().len() + job.meta.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>();
        if !current.is_empty() && (current.len() == ROWS_PER_INSERT || bytes + size > BYTES_PER_INSERT) {
            chunks.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += size;
        current.push(job);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// For each lease, whether it matches a locked row `(id → (attempt, worker))` of a running job: the
/// first of several equal leases in a batch gets the match, the job leaves `running` for the rest.
fn match_leases(leases: &[&Lease], held: &HashMap<String, (u32, String)>) -> Vec<bool> {
    let mut taken: HashSet<&str> = HashSet::new();
    leases
        .iter()
        .map(|lease| {
            let matches = held
                .get(lease.id.as_str())
                .is_some_and(|(attempt, worker)| *attempt == lease.attempt && *worker == lease.worker);
            matches && taken.insert(lease.id.as_str())
        })
        .collect()
}

impl MysqlStore {
    /// Connects to the database a `mysql://` (or `mariadb://`) URL names. Fails with
    /// [`StoreError::Unavailable`] within `connect_timeout` when the server cannot be reached, and when
    /// it is older than MySQL 8.0.16 or MariaDB 10.6. Does not migrate.
    pub async fn connect(url: &StoreUrl) -> Result<MysqlStore, StoreError> {
        let Settings {
            options,
            database,
            connect_timeout,
            max_connections,
            lock_wait_secs,
            wake_poll,
        } = Settings::parse(url)?;
        let unavailable =
            |source: &(dyn std::error::Error + 'static)| StoreError::unavailable(KIND, &url.redacted(), source);
        // One direct connection first: the pool retries a refused connection until its time-out and then
        // reports only that it timed out; this says why (refused, unknown database, bad password).
        let probe = tokio::time::timeout(connect_timeout, MySqlConnection::connect_with(&options)).await;
        let mut probe = match probe {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unavailable(&e)),
            Err(_) => {
                let waited = crate::time::format_duration(connect_timeout);
                let why = format!("no answer within {waited} (connect_timeout in the URL)");
                return Err(unavailable(&std::io::Error::other(why)));
            }
        };
        let version: String = sqlx::query("SELECT VERSION()")
            .fetch_one(&mut probe)
            .await
            .map(|row| text(&row, 0))
            .map_err(|e| unavailable(&e))?;
        let _ = probe.close().await;
        if let Some(why) = too_old(&version) {
            return Err(unavailable(&std::io::Error::other(why)));
        }
        let setup = format!("SET SESSION innodb_lock_wait_timeout = {lock_wait_secs}");
        let pool = MySqlPoolOptions::new()
            .max_connections(max_connections)
            .min_connections(0)
            // Waiting for a free connection is bounded too: a saturated or vanished server turns into an
            // error the caller can retry, never a hang.
            .acquire_timeout(connect_timeout * 2)
            .idle_timeout(Some(Duration::from_secs(300)))
            .after_connect(move |conn, _meta| {
                let setup = setup.clone();
                Box::pin(async move {
                    conn.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
                        .await?;
                    conn.execute(setup.as_str()).await?;
                    Ok(())
                })
            })
            .connect_lazy_with(options);
        Ok(MysqlStore {
            pool,
            url: url.clone(),
            database,
            version,
            wake_poll,
        })
    }

    /// The underlying pool, for tests and benchmarks that look at the tables directly.
    pub fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// The database the URL names.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Maps a driver error met while doing `operation`: unreachable → `Unavailable` with the redacted
    /// URL, anything else → `Query`; either way with the driver's deepest message only.
    fn fail(&self, operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
        move |e| {
            if is_unreachable(&e) {
                StoreError::unavailable(KIND, &self.url.redacted(), &e)
            } else {
                StoreError::query(KIND, operation, DriverError::deepest(&e))
            }
        }
    }

    /// Runs `attempt` (one whole transaction) until it succeeds, again after a deadlock or lock-wait
    /// time-out (and after whatever else `also` accepts), at most `tries` times.
    async fn retrying<T, Fut>(
        &self,
        operation: &'static str,
        tries: u32,
        also: fn(&sqlx::Error) -> bool,
        mut attempt: impl FnMut() -> Fut,
    ) -> Result<T, StoreError>
    where
        Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
    {
        let mut tried = 0;
        loop {
            tried += 1;
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) if tried < tries && (is_lock_conflict(&e) || also(&e)) => {
                    tracing::debug!("{operation}: {e}; trying again");
                    // A little apart, so that the other side of a deadlock gets through first.
                    tokio::time::sleep(Duration::from_millis(u64::from(tried) * 3)).await;
                }
                Err(e) => return Err(self.fail(operation)(e)),
            }
        }
    }

    async fn apply_migrations(&self) -> Result<(), StoreError> {
        // DDL commits by itself in MySQL, so the lock is a named lock held by this connection until it
        // releases it (or the connection ends): concurrent migrators of one database queue on it and
        // then find the work done.
        let mut conn = self.pool.acquire().await.map_err(self.fail("starting the migration"))?;
        let lock = format!("jobq migrate {}", self.database);
        let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, ?)")
            .bind(&lock)
            .bind(MIGRATE_LOCK_SECS)
            .fetch_one(&mut *conn)
            .await
            .map_err(self.fail("taking the migration lock"))?;
        if got != Some(1) {
            return Err(StoreError::Migration {
                kind: KIND,
                version: migrate::latest(KIND),
                source: format!("another process held the migration lock for {MIGRATE_LOCK_SECS} s").into(),
            });
        }
        let result = self.apply_locked(&mut conn).await;
        let _ = sqlx::query("SELECT RELEASE_LOCK(?)")
            .bind(&lock)
            .execute(&mut *conn)
            .await;
        result
    }

    /// Applies the pending migrations on `conn`, which holds the migration lock.
    async fn apply_locked(&self, conn: &mut MySqlConnection) -> Result<(), StoreError> {
        conn.execute(
            "CREATE TABLE IF NOT EXISTS jobq_migrations (version INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, \
             checksum VARCHAR(64) NOT NULL, applied_at BIGINT NOT NULL) \
             ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin",
        )
        .await
        .map_err(self.fail("creating jobq_migrations"))?;
        let rows = sqlx::query("SELECT version, checksum FROM jobq_migrations")
            .fetch_all(&mut *conn)
            .await
            .map_err(self.fail("reading jobq_migrations"))?;
        let applied: HashMap<u32, String> = rows
            .iter()
            .map(|r| (r.get::<i32, _>(0).max(0) as u32, text(r, 1)))
            .collect();
        for m in migrate::pending(KIND, &applied)? {
            for statement in migrate::statements(m.sql) {
                // Text protocol: DDL runs as written, without a prepared statement.
                conn.execute(statement.as_str())
                    .await
                    .map_err(|e| StoreError::Migration {
                        kind: KIND,
                        version: m.version,
                        source: Box::new(DriverError::deepest(&e)),
                    })?;
            }
            sqlx::query(
                "INSERT INTO jobq_migrations (version, name, checksum, applied_at) \
                 VALUES (?, ?, ?, FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000))",
            )
            .bind(m.version as i32)
            .bind(m.name)
            .bind(m.checksum())
            .execute(&mut *conn)
            .await
            .map_err(self.fail("recording a migration"))?;
        }
        Ok(())
    }

    async fn applied_version(&self) -> Result<Option<u32>, StoreError> {
        let exists: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() \
             AND table_name = 'jobq_migrations'",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(self.fail("reading the schema version"))?;
        if exists == 0 {
            return Ok(None);
        }
        let v: Option<i32> = sqlx::query_scalar("SELECT MAX(version) FROM jobq_migrations")
            .fetch_one(&self.pool)
            .await
            .map_err(self.fail("reading the schema version"))?;
        Ok(Some(v.unwrap_or(0).max(0) as u32))
    }

    /// Inserts `jobs` with multi-row INSERTs on `conn`. Fails with a duplicate key when an id exists
    /// or a live unique key is taken.
    async fn insert(conn: &mut MySqlConnection, jobs: &[&NewJob]) -> Result<(), sqlx::Error> {
        for chunk in insert_chunks(jobs) {
            let mut qb: QueryBuilder<MySql> = QueryBuilder::new(
                "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, \
                 unique_key, timeout_ms, created_at) ",
            );
            qb.push_values(chunk, |mut row, job| {
                row.push_bind(job.id.as_str())
                    .push_bind(job.queue.as_str())
                    .push_bind(job.job_type.as_str())
                    .push_bind(job.payload.get())
                    .push_bind(meta_json(job))
                    .push_bind(job.priority)
                    // The column is an INT; more than two billion attempts is "never give up" either way.
                    .push_bind(job.max_attempts.min(i32::MAX as u32) as i32)
                    .push_bind(job.run_at.0)
                    .push_bind(job.unique_key.as_deref())
                    .push_bind(job.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64))
                    .push_bind(job.created_at.0);
            });
            qb.build().execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// Inserts a batch in which no job has a unique key and no id repeats, without looking first: one
    /// statement, or one transaction of several. Fails with a duplicate key, having changed nothing,
    /// when an id exists already.
    async fn insert_all(&self, jobs: &[NewJob]) -> Result<(), sqlx::Error> {
        let refs: Vec<&NewJob> = jobs.iter().collect();
        if insert_chunks(&refs).len() == 1 {
            let mut conn = self.pool.acquire().await?;
            return MysqlStore::insert(&mut conn, &refs).await;
        }
        let mut tx = self.pool.begin().await?;
        MysqlStore::insert(&mut tx, &refs).await?;
        tx.commit().await
    }

    /// One checked enqueue: in a transaction, looks up which ids exist and who holds the unique keys,
    /// answers every job, and inserts the new ones. A producer that writes a clashing job between the
    /// look-up and the insert makes the insert fail with a duplicate key; the caller runs it again.
    async fn enqueue_checked(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let mut plan = EnqueuePlan::default();
        for chunk in jobs.chunks(ROWS_PER_STATEMENT) {
            let ids = id_array(chunk.iter().map(|j| j.id.as_str()));
            let stored: HashSet<String> = sqlx::query(&format!(
                "SELECT j.id FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id"
            ))
            .bind(ids)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| text(r, 0))
            .collect();
            let keys: Vec<Value> = chunk
                .iter()
                .filter_map(|j| j.unique_key.as_deref().map(|k| json!([j.queue, k])))
                .collect();
            let mut live: HashMap<(String, String), JobId> = HashMap::new();
            if !keys.is_empty() {
                let rows = sqlx::query(
                    "SELECT j.queue, j.live_key, j.id FROM JSON_TABLE(?, '$[*]' COLUMNS \
                     (queue VARCHAR(64) PATH '$[0]', k VARCHAR(255) PATH '$[1]')) AS t \
                     STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (jobq_jobs_unique) ON j.queue = t.queue AND j.live_key = t.k",
                )
                .bind(Value::Array(keys).to_string())
                .fetch_all(&mut *tx)
                .await?;
                for r in &rows {
                    live.insert((text(r, 0), text(r, 1)), JobId::from_stored(text(r, 2)));
                }
            }
            let fresh = plan.decide(chunk, &stored, &live);
            if !fresh.is_empty() {
                MysqlStore::insert(&mut tx, &fresh).await?;
            }
        }
        tx.commit().await?;
        Ok(plan.answers())
    }

    /// One claim transaction: locks up to `limit` ready jobs per queue in claim order (skipping rows
    /// other claimers hold), keeps the first `limit` overall, and flips them to running.
    async fn claim_once(&self, claim: &Claim, queues: &[&str]) -> Result<Vec<Job>, sqlx::Error> {
        let exclude = if claim.exclude_types.is_empty() {
            String::new()
        } else {
            format!(
                " AND job_type NOT IN ({})",
                super::sql::placeholders(claim.exclude_types.len())
            )
        };
        let select = format!(
            "SELECT {JOB_COLUMNS} FROM jobq_jobs FORCE INDEX (jobq_jobs_ready) \
             WHERE queue = ? AND status = 'pending' AND run_at <= ?{exclude} \
             ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED"
        );
        let mut tx = self.pool.begin().await?;
        let mut rows = Vec::new();
        for queue in queues {
            let mut query = sqlx::query(&select).bind(*queue).bind(claim.now.0);
            for t in &claim.exclude_types {
                query = query.bind(t);
            }
            rows.extend(query.bind(i64::from(claim.limit)).fetch_all(&mut *tx).await?);
        }
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let mut jobs = jobs_from_rows(&rows).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        // Several queues: each queue's best, merged; the extra rows stay locked until the commit only.
        jobs.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
        jobs.truncate(claim.limit as usize);
        let mut ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        ids.sort_unstable();
        sqlx::query(&format!(
            "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'running', \
             j.attempt = j.attempt + 1, j.worker_id = ?, j.started_at = ?, j.heartbeat_at = ?, j.progress = NULL, \
             j.progress_message = NULL"
        ))
        .bind(id_array(ids.into_iter()))
        .bind(&claim.worker)
        .bind(claim.now.0)
        .bind(claim.now.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        for job in &mut jobs {
            claim.lease(job);
        }
        Ok(jobs)
    }

    /// Locks the running rows of `leases`' jobs (in id order, so two batches cannot deadlock each other)
    /// and tells which leases hold.
    async fn lock_leases(&self, tx: &mut MySqlConnection, leases: &[&Lease]) -> Result<Vec<bool>, sqlx::Error> {
        let mut ids: Vec<&str> = leases.iter().map(|l| l.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let rows = sqlx::query(&format!(
            "SELECT j.id, j.attempt, j.worker_id FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id \
             WHERE j.status = 'running' FOR UPDATE"
        ))
        .bind(id_array(ids.into_iter()))
        .fetch_all(&mut *tx)
        .await?;
        let held: HashMap<String, (u32, String)> = rows
            .iter()
            .map(|r| (text(r, 0), (r.get::<i32, _>(1).max(0) as u32, text(r, 2))))
            .collect();
        Ok(match_leases(leases, &held))
    }

    /// One finish transaction for a chunk: lock, match, apply the outcomes of the leases that hold in
    /// one statement.
    async fn finish_once(&self, finishes: &[&Finish], now: UnixMillis) -> Result<Vec<bool>, sqlx::Error> {
        let leases: Vec<&Lease> = finishes.iter().map(|f| &f.lease).collect();
        let mut tx = self.pool.begin().await?;
        let applied = self.lock_leases(&mut tx, &leases).await?;
        let rows: Vec<Value> = finishes
            .iter()
            .zip(&applied)
            .filter(|(_, ok)| **ok)
            .map(|(f, _)| {
                let status = f.outcome.status();
                let mut row = json!({
                    "i": f.lease.id.as_str(),
                    "a": f.lease.attempt,
                    "w": f.lease.worker,
                    "s": status.as_str(),
                    // Terminal outcomes and waiting set finished_at (the job left its worker for good); a
                    // retry, which runs again, leaves it empty.
                    "f": u8::from(status.is_terminal() || status == JobStatus::Waiting),
                });
                match &f.outcome {
                    Outcome::Retry { run_at, .. } => row["t"] = json!(run_at.0),
                    Outcome::Succeeded { result: Some(result) } => row["r"] = json!(result.get()),
                    _ => {}
                }
                if let Some(error) = f.outcome.error() {
                    row["e"] = json!(error);
                }
                if let Some(p) = &f.progress {
                    row["p"] = json!(p.percent);
                    if let Some(m) = &p.message {
                        row["m"] = json!(m);
                    }
                }
                row
            })
            .collect();
        if !rows.is_empty() {
            let append = append_error("j.attempt", "?", "f.error");
            sqlx::query(&format!(
                "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$.i', attempt INT PATH '$.a', \
                 worker VARCHAR(255) PATH '$.w', status VARCHAR(16) PATH '$.s', finished INT PATH '$.f', \
                 run_at BIGINT PATH '$.t', result LONGTEXT PATH '$.r', error LONGTEXT PATH '$.e', \
                 progress INT PATH '$.p', message TEXT PATH '$.m')) AS f \
                 STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = f.id \
                 SET j.status = f.status, j.run_at = COALESCE(f.run_at, j.run_at), j.result = f.result, \
                 j.progress = COALESCE(f.progress, j.progress), \
                 j.progress_message = IF(f.progress IS NULL, j.progress_message, f.message), \
                 j.finished_at = IF(f.finished = 1, ?, NULL), j.worker_id = NULL, \
                 j.errors = IF(f.error IS NULL, j.errors, {append}) \
                 WHERE j.status = 'running' AND j.attempt = f.attempt AND j.worker_id = f.worker"
            ))
            .bind(Value::Array(rows).to_string())
            .bind(now.0)
            .bind(now.0)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(applied)
    }

    /// One release transaction for a chunk.
    async fn release_once(&self, leases: &[&Lease]) -> Result<Vec<bool>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let released = self.lock_leases(&mut tx, leases).await?;
        let ids: Vec<&str> = leases
            .iter()
            .zip(&released)
            .filter(|(_, ok)| **ok)
            .map(|(l, _)| l.id.as_str())
            .collect();
        if !ids.is_empty() {
            // run_at is kept: a released job keeps its place at the front of its queue.
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'pending', \
                 j.attempt = j.attempt - 1, j.worker_id = NULL, j.heartbeat_at = NULL, j.progress = NULL, \
                 j.progress_message = NULL WHERE j.status = 'running'"
            ))
            .bind(id_array(ids.into_iter()))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(released)
    }

    /// One heartbeat round for a chunk: records the beats of the leases that hold, then reads the
    /// status of every job of the chunk to answer each lease.
    async fn heartbeat_once(&self, beats: &[&Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, sqlx::Error> {
        let rows: Vec<Value> = beats
            .iter()
            .map(|b| {
                let mut row = json!({"i": b.lease.id.as_str(), "a": b.lease.attempt, "w": b.lease.worker});
                if let Some(p) = &b.progress {
                    row["p"] = json!(p.percent);
                    if let Some(m) = &p.message {
                        row["m"] = json!(m);
                    }
                }
                row
            })
            .collect();
        sqlx::query(
            "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$.i', attempt INT PATH '$.a', \
             worker VARCHAR(255) PATH '$.w', progress INT PATH '$.p', message TEXT PATH '$.m')) AS b \
             STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = b.id \
             SET j.heartbeat_at = ?, j.progress = COALESCE(b.progress, j.progress), \
             j.progress_message = IF(b.progress IS NULL, j.progress_message, b.message) \
             WHERE j.status = 'running' AND j.attempt = b.attempt AND j.worker_id = b.worker",
        )
        .bind(Value::Array(rows).to_string())
        .bind(now.0)
        .execute(&self.pool)
        .await?;
        let rows = sqlx::query(&format!(
            "SELECT j.id, j.attempt, j.worker_id, j.status FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id"
        ))
        .bind(id_array(beats.iter().map(|b| b.lease.id.as_str())))
        .fetch_all(&self.pool)
        .await?;
        let now_held: HashMap<String, (u32, String, String)> = rows
            .iter()
            .map(|r| (text(r, 0), (r.get::<i32, _>(1).max(0) as u32, text(r, 2), text(r, 3))))
            .collect();
        Ok(beats
            .iter()
            .map(|b| match now_held.get(b.lease.id.as_str()) {
                Some((attempt, worker, status))
                    if status == "running" && *attempt == b.lease.attempt && *worker == b.lease.worker =>
                {
                    LeaseState::Held
                }
                Some((_, _, status)) if status == JobStatus::Cancelled.as_str() => LeaseState::Cancelled,
                _ => LeaseState::Lost,
            })
            .collect())
    }

    /// One rescue transaction.
    async fn rescue_once(&self, rescue: &Rescue) -> Result<Vec<Rescued>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        // SKIP LOCKED: a job another sweeper (or its own worker's finish) holds right now is left to it.
        let rows = sqlx::query(
            "SELECT id, job_type, attempt, max_attempts FROM jobq_jobs FORCE INDEX (jobq_jobs_running) \
             WHERE status = 'running' AND heartbeat_at < ? ORDER BY heartbeat_at LIMIT ? FOR UPDATE SKIP LOCKED",
        )
        .bind(rescue.stale_before.0)
        .bind(i64::from(rescue.limit))
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let mut rescued: Vec<Rescued> = rows
            .iter()
            .map(|r| {
                let attempt = r.get::<i32, _>(2).max(0) as u32;
                let max_attempts = r.get::<i32, _>(3).max(1) as u32;
                Rescued {
                    id: JobId::from_stored(text(r, 0)),
                    job_type: text(r, 1),
                    attempt,
                    status: if attempt >= max_attempts {
                        JobStatus::Dead
                    } else {
                        JobStatus::Pending
                    },
                }
            })
            .collect();
        let append = append_error("j.attempt", "?", "'worker lost'");
        sqlx::query(&format!(
            "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET \
             j.errors = {append}, \
             j.finished_at = IF(j.attempt >= j.max_attempts, ?, NULL), \
             j.status = IF(j.attempt >= j.max_attempts, 'dead', 'pending'), \
             j.run_at = ?, j.worker_id = NULL, j.heartbeat_at = NULL \
             WHERE j.status = 'running'"
        ))
        .bind(id_array(rescued.iter().map(|r| r.id.as_str())))
        .bind(rescue.now.0)
        .bind(rescue.now.0)
        .bind(rescue.now.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        rescued.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rescued)
    }

    /// One cancel transaction: locks the targets in id order, then cancels them.
    async fn cancel_once(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new(format!(
            "SELECT id, status FROM jobq_jobs WHERE status IN {LIVE_STATUSES}"
        ));
        match &cancel.target {
            CancelTarget::Ids(ids) if ids.is_empty() => return Ok(Vec::new()),
            CancelTarget::Ids(ids) => push_in(&mut qb, "id", ids.iter().map(|id| id.to_string())),
            CancelTarget::Filter(filter) => push_filter(&mut qb, filter),
        }
        qb.push(" ORDER BY id FOR UPDATE");
        let rows = qb.build().persistent(false).fetch_all(&mut *tx).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id = text(row, 0);
            let previous = Decoder {
                kind: KIND,
                id: id.clone(),
            }
            .status(&text(row, 1))
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            out.push(Cancelled {
                id: JobId::from_stored(id),
                previous,
            });
        }
        for chunk in out.chunks(ROWS_PER_STATEMENT) {
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'cancelled', j.finished_at = ?"
            ))
            .bind(id_array(chunk.iter().map(|c| c.id.as_str())))
            .bind(cancel.now.0)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// One replay transaction: locks the selected dead jobs, keeps those whose unique key no live job
    /// holds (and, of several sharing a key, the one that died first), and brings them back.
    async fn replay_once(&self, replay: &ReplayDead) -> Result<Vec<JobId>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let mut qb: QueryBuilder<MySql> =
            QueryBuilder::new("SELECT id, queue, unique_key, finished_at FROM jobq_jobs WHERE status = 'dead'");
        push_filter(&mut qb, &replay_filter(replay));
        push_in(&mut qb, "id", replay.ids.iter().map(|id| id.to_string()));
        qb.push(" ORDER BY id FOR UPDATE");
        let rows = qb.build().persistent(false).fetch_all(&mut *tx).await?;
        struct Dead {
            id: String,
            queue: String,
            key: Option<String>,
            finished_at: i64,
        }
        let mut dead: Vec<Dead> = rows
            .iter()
            .map(|r| Dead {
                id: text(r, 0),
                queue: text(r, 1),
                key: r.try_get_unchecked::<Option<String>, _>(2).ok().flatten(),
                finished_at: r.get::<Option<i64>, _>(3).unwrap_or(0),
            })
            .collect();
        dead.sort_by(|a, b| (a.finished_at, &a.id).cmp(&(b.finished_at, &b.id)));
        let keys: Vec<Value> = dead
            .iter()
            .filter_map(|d| d.key.as_ref().map(|k| json!([d.queue, k])))
            .collect();
        let mut taken: HashSet<(String, String)> = HashSet::new();
        if !keys.is_empty() {
            let rows = sqlx::query(
                "SELECT j.queue, j.live_key FROM JSON_TABLE(?, '$[*]' COLUMNS \
                 (queue VARCHAR(64) PATH '$[0]', k VARCHAR(255) PATH '$[1]')) AS t \
                 STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (jobq_jobs_unique) ON j.queue = t.queue AND j.live_key = t.k",
            )
            .bind(Value::Array(keys).to_string())
            .fetch_all(&mut *tx)
            .await?;
            taken.extend(rows.iter().map(|r| (text(r, 0), text(r, 1))));
        }
        let limit = replay.limit.map_or(usize::MAX, |l| l as usize);
        let mut chosen: Vec<JobId> = Vec::new();
        for d in dead {
            if chosen.len() == limit {
                break;
            }
            if let Some(key) = d.key {
                // Whether or not it comes back, a later death with the same key stays dead.
                if !taken.insert((d.queue, key)) {
                    continue;
                }
            }
            chosen.push(JobId::from_stored(d.id));
        }
        for chunk in chosen.chunks(ROWS_PER_STATEMENT) {
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'pending', j.attempt = 0, \
                 j.finished_at = NULL, j.result = NULL, j.worker_id = NULL, j.heartbeat_at = NULL, j.progress = NULL, \
                 j.progress_message = NULL, j.run_at = ? WHERE j.status = 'dead'"
            ))
            .bind(id_array(chunk.iter().map(JobId::as_str)))
            .bind(replay.now.0)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        chosen.sort();
        Ok(chosen)
    }
}

/// Why a server is too old for jobq, if it is: MariaDB before 10.6 or MySQL before 8.0.16 lack SKIP
/// LOCKED, JSON_TABLE or enforced CHECK constraints.
fn too_old(version: &str) -> Option<String> {
    let numbers: Vec<u32> = version
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| numbers.get(i).copied().unwrap_or(0);
    let (major, minor, patch) = (at(0), at(1), at(2));
    if version.to_ascii_lowercase().contains("mariadb") {
        ((major, minor) < (10, 6)).then(|| format!("MariaDB {version} is too old: jobq needs MariaDB 10.6 or newer"))
    } else {
        ((major, minor, patch) < (8, 0, 16))
            .then(|| format!("MySQL {version} is too old: jobq needs MySQL 8.0.16 or newer"))
    }
}

#[async_trait]
impl Store for MysqlStore {
    fn kind(&self) -> StoreKind {
        KIND
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let row = sqlx::query(
            "SELECT DATABASE(), CAST(@@innodb_flush_log_at_trx_commit AS CHAR), CAST(@@sync_binlog AS CHAR), \
             CAST(@@SESSION.innodb_lock_wait_timeout AS CHAR), CAST(@@max_allowed_packet AS CHAR)",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(self.fail("reading the server settings"))?;
        let flavour = if self.version.to_ascii_lowercase().contains("mariadb") {
            "MariaDB"
        } else {
            "MySQL"
        };
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: format!("{flavour} {}", self.version),
            settings: vec![
                ("database".into(), text(&row, 0)),
                ("isolation".into(), "READ-COMMITTED".into()),
                ("innodb_flush_log_at_trx_commit".into(), text(&row, 1)),
                ("sync_binlog".into(), text(&row, 2)),
                ("innodb_lock_wait_timeout".into(), text(&row, 3)),
                ("max_allowed_packet".into(), text(&row, 4)),
                ("wake_poll".into(), crate::time::format_duration(self.wake_poll)),
            ],
        })
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        if migrate::needs_migrating(KIND, self.applied_version().await?)? {
            self.apply_migrations().await?;
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let mut ids: HashSet<&str> = HashSet::with_capacity(jobs.len());
        let plain = jobs.iter().all(|j| j.unique_key.is_none() && ids.insert(j.id.as_str()));
        if plain {
            // Nearly every batch: no unique keys, no repeated ids, no id that exists already. Plain
            // INSERTs create it all; an existing id makes them fail having changed nothing, and the
            // batch is then answered job by job below.
            match self.insert_all(jobs).await {
                Ok(()) => {
                    return Ok(jobs
                        .iter()
                        .map(|j| Enqueued {
                            id: j.id.clone(),
                            outcome: EnqueueOutcome::Created,
                        })
                        .collect());
                }
                Err(e) if is_duplicate(&e) => {}
                Err(e) => return Err(self.fail("enqueue")(e)),
            }
        }
        self.retrying("enqueue", ENQUEUE_ROUNDS, is_duplicate, || self.enqueue_checked(jobs))
            .await
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.queues.is_empty() || claim.limit == 0 {
            return Ok(Vec::new());
        }
        let mut queues: Vec<&str> = Vec::with_capacity(claim.queues.len());
        for q in &claim.queues {
            if !queues.contains(&q.as_str()) {
                queues.push(q);
            }
        }
        self.retrying("claim", TRANSIENT_TRIES, |_| false, || self.claim_once(claim, &queues))
            .await
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        let mut out = Vec::with_capacity(beats.len());
        let refs: Vec<&Heartbeat> = beats.iter().collect();
        for chunk in refs.chunks(ROWS_PER_STATEMENT) {
            let states = self
                .retrying(
                    "heartbeat",
                    TRANSIENT_TRIES,
                    |_| false,
                    || self.heartbeat_once(chunk, now),
                )
                .await?;
            out.extend(states);
        }
        Ok(out)
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let mut out = Vec::with_capacity(finishes.len());
        let refs: Vec<&Finish> = finishes.iter().collect();
        for chunk in refs.chunks(ROWS_PER_STATEMENT) {
            let applied = self
                .retrying("finish", TRANSIENT_TRIES, |_| false, || self.finish_once(chunk, now))
                .await?;
            out.extend(applied);
        }
        // A lease repeated across chunks applied in the first only; the job left `running` for the rest.
        Ok(out)
    }

    async fn release(&self, leases: &[Lease], _now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let mut out = Vec::with_capacity(leases.len());
        let refs: Vec<&Lease> = leases.iter().collect();
        for chunk in refs.chunks(ROWS_PER_STATEMENT) {
            let released = self
                .retrying("release", TRANSIENT_TRIES, |_| false, || self.release_once(chunk))
                .await?;
            out.extend(released);
        }
        Ok(out)
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        self.retrying("rescue", TRANSIENT_TRIES, |_| false, || self.rescue_once(rescue))
            .await
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let row = sqlx::query(&format!("SELECT {JOB_COLUMNS} FROM jobq_jobs WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(self.fail("get"))?;
        row.as_ref().map(|r| job_from_row(r, KIND)).transpose()
    }

    async fn list(&self, params: &ListParams) -> Result<Vec<Job>, StoreError> {
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new(format!("SELECT {JOB_COLUMNS} FROM jobq_jobs WHERE 1 = 1"));
        push_filter(&mut qb, &params.filter);
        qb.push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(i64::from(params.limit))
            .push(" OFFSET ")
            .push_bind(params.offset.min(i64::MAX as u64) as i64);
        let rows = qb
            .build()
            .persistent(false)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("list"))?;
        jobs_from_rows(&rows)
    }

    async fn stats(&self, params: &StatsParams) -> Result<Stats, StoreError> {
        // One pass over the claim index (queue, status, …, run_at); queues come back in byte order.
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new("SELECT queue, ");
        let now = params.now.0;
        qb.push("COUNT(CASE WHEN status = 'pending' AND run_at <= ")
            .push_bind(now)
            .push(" THEN 1 END), COUNT(CASE WHEN status = 'pending' AND run_at > ")
            .push_bind(now)
            .push(
                " THEN 1 END), COUNT(CASE WHEN status = 'running' THEN 1 END), \
                 COUNT(CASE WHEN status = 'waiting' THEN 1 END), COUNT(CASE WHEN status = 'succeeded' THEN 1 END), \
                 COUNT(CASE WHEN status = 'dead' THEN 1 END), COUNT(CASE WHEN status = 'cancelled' THEN 1 END), \
                 COUNT(CASE WHEN status = 'discarded' THEN 1 END), \
                 MIN(CASE WHEN status = 'pending' AND run_at <= ",
            )
            .push_bind(now)
            .push(" THEN run_at END) FROM jobq_jobs WHERE 1 = 1");
        push_filter(
            &mut qb,
            &JobFilter {
                queues: params.queues.clone(),
                ..Default::default()
            },
        );
        qb.push(" GROUP BY queue ORDER BY queue");
        let rows = qb
            .build()
            .persistent(false)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("stats"))?;
        let n = |row: &MySqlRow, i: usize| row.get::<i64, _>(i).max(0) as u64;
        let queues = rows
            .iter()
            .map(|row| QueueStats {
                queue: text(row, 0),
                ready: n(row, 1),
                scheduled: n(row, 2),
                running: n(row, 3),
                waiting: n(row, 4),
                succeeded: n(row, 5),
                dead: n(row, 6),
                cancelled: n(row, 7),
                discarded: n(row, 8),
                oldest_ready_at: row.get::<Option<i64>, _>(9).map(UnixMillis),
            })
            .collect();
        Ok(Stats { queues })
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, StoreError> {
        self.retrying("cancel", TRANSIENT_TRIES, |_| false, || self.cancel_once(cancel))
            .await
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<JobId>, StoreError> {
        // A producer that takes a key between the look-up and the update makes the update fail on the
        // unique index; the transaction is then simply run again.
        self.retrying("replay_dead", TRANSIENT_TRIES, is_duplicate, || {
            self.replay_once(replay)
        })
        .await
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let Some(filter) = cleanup_filter(cleanup) else {
            return Ok(0);
        };
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new(if cleanup.dry_run {
            "SELECT COUNT(*) FROM (SELECT id FROM jobq_jobs"
        } else {
            "DELETE FROM jobq_jobs"
        });
        // Terminal statuses only, whatever the filter says: cleanup never touches live jobs.
        qb.push(format!(" WHERE status IN {TERMINAL_STATUSES}"));
        push_filter(&mut qb, &filter);
        if let Some(before) = cleanup.finished_before {
            qb.push(" AND finished_at < ").push_bind(before.0);
        }
        qb.push(" LIMIT ").push_bind(i64::from(cleanup.limit));
        if cleanup.dry_run {
            qb.push(") AS t");
            let n: i64 = qb
                .build_query_scalar()
                .persistent(false)
                .fetch_one(&self.pool)
                .await
                .map_err(self.fail("cleanup"))?;
            Ok(n.max(0) as u64)
        } else {
            let done = qb
                .build()
                .persistent(false)
                .execute(&self.pool)
                .await
                .map_err(self.fail("cleanup"))?;
            Ok(done.rows_affected())
        }
    }

    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO jobq_workers (id, name, host, pid, queues, started_at, last_seen_at, jobs_done) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE \
             last_seen_at = VALUES(last_seen_at), jobs_done = VALUES(jobs_done)",
        )
        .bind(&worker.id)
        .bind(&worker.name)
        .bind(&worker.host)
        .bind(i64::from(worker.pid))
        .bind(serde_json::to_string(&worker.queues).unwrap_or_else(|_| "[]".into()))
        .bind(worker.started_at.0)
        .bind(worker.last_seen_at.0)
        .bind(worker.jobs_done.min(i64::MAX as u64) as i64)
        .execute(&self.pool)
        .await
        .map_err(self.fail("registering a worker"))?;
        Ok(())
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM jobq_workers WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(self.fail("unregistering a worker"))?;
        Ok(())
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        sqlx::query("DELETE FROM jobq_workers WHERE last_seen_at < ?")
            .bind(seen_since.0)
            .execute(&self.pool)
            .await
            .map_err(self.fail("forgetting old workers"))?;
        let rows = sqlx::query(
            "SELECT id, name, host, pid, queues, started_at, last_seen_at, jobs_done FROM jobq_workers \
             ORDER BY started_at, id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.fail("listing workers"))?;
        Ok(rows
            .iter()
            .map(|r| WorkerInfo {
                id: text(r, 0),
                name: text(r, 1),
                host: text(r, 2),
                pid: r.get::<i64, _>(3).clamp(0, i64::from(u32::MAX)) as u32,
                queues: serde_json::from_str(&text(r, 4)).unwrap_or_default(),
                started_at: UnixMillis(r.get(5)),
                last_seen_at: UnixMillis(r.get(6)),
                jobs_done: r.get::<i64, _>(7).max(0) as u64,
            })
            .collect())
    }

    fn subscribe(&self, queues: &[String], notify: Arc<Notify>) -> Option<Subscription> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let watcher = Watcher {
            pool: self.pool.clone(),
            queues: queues.to_vec(),
            notify,
            every: self.wake_poll,
            url: self.url.redacted().to_string(),
        };
        Some(Subscription::new(runtime.spawn(watcher.run())))
    }
}

/// The task behind [`MysqlStore::subscribe`]: looks for ready jobs every `every`.
struct Watcher {
    pool: MySqlPool,
    queues: Vec<String>,
    notify: Arc<Notify>,
    every: Duration,
    url: String,
}

impl Watcher {
    async fn run(self) {
        // One indexed read, no locks: the first ready job of any of the queues. Readiness is judged by
        // this machine's clock: a hint may be early or late, and the caller still polls now and then.
        let sql = if self.queues.is_empty() {
            "SELECT 1 FROM jobq_jobs FORCE INDEX (jobq_jobs_running) WHERE status = 'pending' AND run_at <= ? \
             LIMIT 1"
                .to_string()
        } else {
            let per_queue = "SELECT 1 FROM jobq_jobs FORCE INDEX (jobq_jobs_ready) WHERE queue = ? \
                 AND status = 'pending' AND run_at <= ?";
            let parts: Vec<String> = self.queues.iter().map(|_| format!("({per_queue} LIMIT 1)")).collect();
            format!("{} LIMIT 1", parts.join(" UNION ALL "))
        };
        let mut failures: u32 = 0;
        let mut interval = tokio::time::interval(self.every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let now = UnixMillis::now().0;
            let mut query = sqlx::query(&sql);
            if self.queues.is_empty() {
                query = query.bind(now);
            }
            for queue in &self.queues {
                query = query.bind(queue).bind(now);
            }
            match query.fetch_optional(&self.pool).await {
                Ok(found) => {
                    if failures > 0 {
                        tracing::info!("looking for new jobs at {} again", self.url);
                        // Jobs may have arrived while the server was away.
                        self.notify.notify_one();
                    }
                    failures = 0;
                    if found.is_some() {
                        self.notify.notify_one();
                    }
                }
                Err(e) => {
                    if failures == 0 {
                        tracing::warn!(
                            "cannot look for new jobs at {} ({e}); polling until it is back",
                            self.url
                        );
                    }
                    failures = failures.saturating_add(1);
                    // The waiter polls meanwhile; look again less often while the server is away.
                    self.notify.notify_one();
                    let pause = (self.every * 2u32.saturating_pow(failures.min(8))).min(Duration::from_secs(1));
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> Result<Settings, StoreError> {
        Settings::parse(&StoreUrl::parse(url).unwrap())
    }

    #[test]
    fn jobq_options_are_taken_out_of_the_url() {
        let s = settings(
            "mysql://u:secret@db.example:3307/app?connect_timeout=2&lock_wait_timeout=1500ms&wake_poll=20ms&ssl-mode=disabled",
        )
        .unwrap();
        assert_eq!(s.database, "app");
        assert_eq!(s.connect_timeout, Duration::from_secs(2));
        assert_eq!(s.lock_wait_secs, 2);
        assert_eq!(s.wake_poll, Duration::from_millis(20));
        assert_eq!(s.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(s.options.get_host(), "db.example");
        assert_eq!(s.options.get_port(), 3307);
        assert_eq!(s.options.get_database(), Some("app"));
        let s = settings("mariadb://h/jobs?max_connections=3").unwrap();
        assert_eq!((s.database.as_str(), s.max_connections), ("jobs", 3));
        assert_eq!(s.lock_wait_secs, DEFAULT_LOCK_WAIT_SECS);
        assert_eq!(s.wake_poll, DEFAULT_WAKE_POLL);
    }

    #[test]
    fn bad_options_are_named_without_the_password() {
        for (url, expected) in [
            ("mysql://u:secret@h/db?max_connections=0", "max_connections=\"0\""),
            ("mysql://u:secret@h/db?wake_poll=soon", "wake_poll"),
            ("mysql://u:secret@h/db?lock_wait_timeout=0", "lock_wait_timeout"),
            ("mysql://u:secret@h", "no database"),
            ("mysql://u:secret@h/", "no database"),
        ] {
            let Err(err) = settings(url) else {
                panic!("{url} was accepted")
            };
            let err = err.to_string();
            assert!(err.contains(expected), "{err}");
            assert!(!err.contains("secret") && err.contains("u:***@h"), "{err}");
        }
    }

    #[test]
    fn old_servers_are_named() {
        assert_eq!(too_old("10.11.19-MariaDB-0+deb12u1"), None);
        assert_eq!(too_old("11.4.2-MariaDB"), None);
        assert!(too_old("10.5.9-MariaDB").is_some_and(|w| w.contains("10.6")));
        assert_eq!(too_old("8.0.36"), None);
        assert_eq!(too_old("8.4.0"), None);
        assert!(too_old("8.0.15").is_some_and(|w| w.contains("8.0.16")));
        assert!(too_old("5.7.44-log").is_some());
    }

    #[test]
    fn equal_leases_in_a_batch_apply_once() {
        let lease = |id: &str, attempt| Lease {
            id: JobId::from_stored(id.into()),
            queue: "default".into(),
            attempt,
            worker: "w".into(),
        };
        let batch = [
            lease("a", 1),
            lease("a", 2),
            lease("b", 1),
            lease("a", 1),
            lease("c", 1),
        ];
        let refs: Vec<&Lease> = batch.iter().collect();
        let held: HashMap<String, (u32, String)> =
            [("a".into(), (1, "w".into())), ("b".into(), (1, "x".into()))].into();
        assert_eq!(match_leases(&refs, &held), [true, false, false, false, false]);
    }
}
