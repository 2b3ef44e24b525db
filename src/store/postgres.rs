//! PostgresStore: many workers on many machines against one PostgreSQL (13 or newer).
//!
//! Every transition two workers could race on is one SQL statement, atomic by itself: a claim locks its
//! candidates with `FOR UPDATE SKIP LOCKED` (concurrent claimers pass over each other's rows instead of
//! waiting) and flips them to `running` in the same statement; rescue picks stale jobs the same way, so
//! two sweepers never take one job back twice; every exit from `running` is fenced in its `WHERE` by
//! (id, attempt, worker, status). Batches travel as one array parameter per column (`unnest($1::text[],
//! …)`), so a statement carries any number of rows for a constant number of parameters and a worker pays
//! one round trip per batch. Errors are appended to the history in SQL, capped there.
//!
//! Wake-ups: an insert into `jobq_jobs` (jobq's own or an application's plain `INSERT`) fires a statement
//! trigger that NOTIFYs channel `jobq_jobs` when its transaction commits; releases, rescues and replays
//! notify from their own statements. [`Store::subscribe`] LISTENs on a dedicated connection, turns
//! notifications for the caller's queues into wake-ups, and, while that connection is down, signals at
//! a steady pace so the caller polls, reconnecting in the background.
//!
//! The URL is sqlx's (`postgres://user:pass@host:5432/db?sslmode=require`) plus jobq's own options,
//! which are stripped before sqlx sees the URL: `schema=NAME` (tables live there; created by `migrate`
//! if missing; every connection's `search_path` is set to it), `connect_timeout=SECS` (default 5; an
//! unreachable server fails within it) and `max_connections=N` (default 10). Time always comes from the
//! caller; the server's clock only fills the defaults of rows that applications insert by hand. This
//! module never prints a password: every message carries the redacted URL.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Executor, PgConnection, Postgres, QueryBuilder, Row};
use tokio::sync::Notify;

use super::error::DriverError;
use super::migrate;
use super::sql::{Decoder, LIVE_STATUSES, TERMINAL_STATUSES, cleanup_filter, job_from_row, replay_filter};
use super::url::{max_connections_option, positive_duration_option};
use super::{
    Cancel, CancelTarget, Cancelled, Claim, Cleanup, EnqueueOutcome, Enqueued, Finish, Heartbeat, JobFilter, Lease,
    LeaseState, ListParams, Outcome, QueueStats, ReplayDead, Rescue, Rescued, Stats, StatsParams, Store, StoreError,
    StoreInfo, StoreKind, StoreUrl, Subscription, WorkerInfo,
};
use crate::job::{ERROR_HISTORY_CAP, Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Postgres;

/// The NOTIFY channel of new work (the migration's trigger uses the same name).
const CHANNEL: &str = "jobq_jobs";

/// Rows per array statement. Arrays keep the parameter count constant, so this only bounds the memory
/// of one round trip; a `jobq enqueue --file` batch (10,000) is one statement.
const ROWS_PER_STATEMENT: usize = 10_000;

/// Payload bytes per enqueue statement: an array parameter must stay well under PostgreSQL's 1 GB
/// limit on one value, and 10,000 jobs of the largest payload would not.
const BYTES_PER_STATEMENT: usize = 64 * 1024 * 1024;

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pool size unless the URL says otherwise (`max_connections`). A worker batches its claims,
/// heartbeats and acknowledgements, so a handful of connections serve any concurrency.
const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// How long a pooled connection may sit unused before it is pinged ahead of its next use.
const PING_WHEN_IDLE_FOR: Duration = Duration::from_secs(1);

/// Oldest PostgreSQL jobq runs on: `gen_random_uuid()` is built in from 13 on.
const MIN_SERVER_VERSION: u32 = 130_000;

/// While the listening connection is down, a subscription signals this often so its waiter polls.
const FALLBACK_POLL: Duration = Duration::from_millis(250);

/// A listening connection that has heard nothing for this long proves it is alive by notifying
/// itself; a half-open TCP connection would otherwise go unnoticed until the kernel gives up on it.
const LISTEN_QUIET: Duration = Duration::from_secs(30);

/// How long the self-notification may take before the listening connection is taken for dead.
const LISTEN_PING_WAIT: Duration = Duration::from_secs(5);

/// Longest pause between reconnection attempts of a subscription.
const LISTEN_MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Attempts at one enqueue round whose conflicts vanish before they can be read (a coalescing holder
/// that finishes in between); each retry inserts only the rows still unanswered.
const ENQUEUE_ROUNDS: usize = 5;

/// Every column of `jobq_jobs` as [`job_from_row`] reads them, from the table aliased `j`. JSON columns
/// come back as text: `json` keeps the stored text as written.
const COLUMNS: &str = "j.id, j.queue, j.job_type, j.payload::text, j.meta::text, j.priority, j.status, j.attempt, \
     j.max_attempts, j.run_at, j.unique_key, j.timeout_ms, j.progress, j.progress_message, j.result::text, \
     j.errors::text, j.created_at, j.started_at, j.finished_at, j.heartbeat_at, j.worker_id";

/// The schema `jobq_jobs` resolves to on this connection: notifications name it, so that listeners of
/// other jobq schemas in the same database can ignore them.
const JOBS_SCHEMA: &str = "(SELECT n.nspname::text FROM pg_catalog.pg_class c \
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('jobq_jobs'))";

/// What an enqueue statement does with a job that clashes with an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clashes {
    /// Leave it out (ON CONFLICT DO NOTHING) and tell which were created.
    Skip,
    /// Fail the statement (cheaper when nothing clashes).
    Fail,
}

/// The PostgreSQL store.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// Connection options of the listening connection (the pool's, under another application name).
    listen_options: PgConnectOptions,
    url: StoreUrl,
    schema: Option<String>,
    connect_timeout: Duration,
}

/// Written by hand: the connect options hold the password, which sqlx's own Debug would print.
impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.url.redacted())
            .field("schema", &self.schema)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// What a `postgres://` URL says, jobq's own options taken out.
struct Settings {
    options: PgConnectOptions,
    schema: Option<String>,
    connect_timeout: Duration,
    max_connections: u32,
}

impl Settings {
    fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: url.redacted().to_string(),
            reason,
        };
        let mut parsed = url::Url::parse(url.expose()).map_err(|e| invalid(e.to_string()))?;
        let mut schema = None;
        let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
        let mut max_connections = DEFAULT_MAX_CONNECTIONS;
        let mut passed_on: Vec<(String, String)> = Vec::new();
        for (key, value) in parsed.query_pairs() {
            match key.as_ref() {
                "schema" => {
                    if value.is_empty() || value.len() > 63 || value.contains('\0') {
                        return Err(invalid(format!(
                            "schema={value:?} (expected a schema name of 1 to 63 bytes)"
                        )));
                    }
                    schema = Some(value.into_owned());
                }
                // libpq's name and meaning (whole seconds); a duration such as `1500ms` is accepted too.
                "connect_timeout" => {
                    connect_timeout = positive_duration_option("connect_timeout", &value).map_err(invalid)?;
                }
                "max_connections" => max_connections = max_connections_option(&value).map_err(invalid)?,
                _ => passed_on.push((key.into_owned(), value.into_owned())),
            }
        }
        if passed_on.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&passed_on);
        }
        let mut options = PgConnectOptions::from_str(parsed.as_str()).map_err(|e| invalid(e.to_string()))?;
        if options.get_application_name().is_none() {
            options = options.application_name("jobq");
        }
        Ok(Settings {
            options,
            schema,
            connect_timeout,
            max_connections,
        })
    }
}

/// `name` as a double-quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// True for driver errors that mean the server cannot be reached (rather than refusing a request):
/// network and TLS failures, pool time-outs, and SQLSTATE class 08 (connection exception), 57P01-03
/// (shutting down, starting up) and 53300 (too many connections).
fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => true,
        sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}

/// True for a unique-constraint violation (SQLSTATE 23505).
fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
}

/// PostgreSQL text cannot hold NUL; a handler's error output might. Replaced by U+FFFD so that the
/// outcome is still recorded.
fn pg_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// SQL appending `{attempt, at, error}` to `j.errors`, first dropping the oldest entry once the
/// history holds [`ERROR_HISTORY_CAP`] entries. The arguments are SQL expressions.
fn append_error(attempt: &str, at: &str, error: &str) -> String {
    format!(
        "(CASE WHEN jsonb_array_length(j.errors) >= {ERROR_HISTORY_CAP} THEN j.errors - 0 ELSE j.errors END) \
         || jsonb_build_array(jsonb_build_object('attempt', {attempt}, 'at', {at}, 'error', {error}))"
    )
}

/// A CTE named `n` that notifies listeners once per queue in which the rows of `source` (a CTE with
/// `queue` and `status` columns) made jobs pending. Reading `n` runs it; a volatile CTE is evaluated
/// once, and PostgreSQL delivers the notifications when the statement's transaction commits.
fn notify_cte(source: &str) -> String {
    format!(
        "n AS (SELECT count(pg_notify('{CHANNEL}', \
         json_build_object('schema', {JOBS_SCHEMA}, 'queue', d.queue)::text)) \
         AS sent FROM (SELECT DISTINCT queue FROM {source} WHERE status = 'pending') AS d)"
    )
}

/// The distinct leases of a batch: the index of each lease's first occurrence, and for every input the
/// index of the first occurrence of the same lease. Distinct leases on one job differ in attempt or
/// worker, so at most one of them can match the job's row, and a statement's `RETURNING` answers each
/// lease unambiguously (a worker whose first attempt was rescued and who claimed the job again holds a
/// stale and a current lease on it; each gets its own answer).
fn distinct_leases<'a>(leases: impl Iterator<Item = &'a Lease>) -> (Vec<usize>, Vec<usize>) {
    let mut first: HashMap<&Lease, usize> = HashMap::new();
    let mut firsts = Vec::new();
    let mut representative = Vec::new();
    for (i, lease) in leases.enumerate() {
        let at = *first.entry(lease).or_insert_with(|| {
            firsts.push(i);
            i
        });
        representative.push(at);
    }
    (firsts, representative)
}

/// Appends `AND …` conditions for a filter on `jobq_jobs AS j`.
fn push_filter(qb: &mut QueryBuilder<'_, Postgres>, filter: &JobFilter) {
    if !filter.queues.is_empty() {
        qb.push(" AND j.queue = ANY(")
            .push_bind(filter.queues.clone())
            .push(")");
    }
    if !filter.job_types.is_empty() {
        qb.push(" AND j.job_type = ANY(")
            .push_bind(filter.job_types.clone())
            .push(")");
    }
    if !filter.statuses.is_empty() {
        let statuses: Vec<&'static str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        qb.push(" AND j.status = ANY(").push_bind(statuses).push(")");
    }
    if let Some(since) = filter.created_since {
        qb.push(" AND j.created_at >= ").push_bind(since.0);
    }
    if let Some(until) = filter.created_until {
        qb.push(" AND j.created_at < ").push_bind(until.0);
    }
}

impl PostgresStore {
    /// Connects to the server a `postgres://` (or `postgresql://`) URL names. Fails with
    /// [`StoreError::Unavailable`] within `connect_timeout` when the server cannot be reached, and
    /// when it is older than PostgreSQL 13. Does not migrate.
    pub async fn connect(url: &StoreUrl) -> Result<PostgresStore, StoreError> {
        let Settings {
            options,
            schema,
            connect_timeout,
            max_connections,
        } = Settings::parse(url)?;
        let unavailable =
            |source: &(dyn std::error::Error + 'static)| StoreError::unavailable(KIND, &url.redacted(), source);
        // One direct connection first: the pool retries a refused connection until its time-out and then
        // reports only that it timed out; this says why (refused, no such host, bad password, no TLS).
        let probe = tokio::time::timeout(connect_timeout, PgConnection::connect_with(&options)).await;
        let probe = match probe {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unavailable(&e)),
            Err(_) => {
                let waited = crate::time::format_duration(connect_timeout);
                let why = format!("no answer within {waited} (connect_timeout in the URL)");
                return Err(unavailable(&std::io::Error::other(why)));
            }
        };
        let version = probe.server_version_num().unwrap_or(0);
        let _ = probe.close().await;
        if version != 0 && version < MIN_SERVER_VERSION {
            let shown = format!("{}.{}", version / 10_000, version % 10_000);
            let why = format!("PostgreSQL {shown} is too old: jobq needs PostgreSQL 13 or newer");
            return Err(unavailable(&std::io::Error::other(why)));
        }
        // Every connection plans each execution of a prepared statement for its own parameters: the
        // batch statements join against arrays whose size only the parameters tell (see `fenced`).
        let session = match schema.as_deref() {
            Some(s) => format!(
                "SET search_path TO {}; SET plan_cache_mode = force_custom_plan",
                quote_ident(s)
            ),
            None => "SET plan_cache_mode = force_custom_plan".to_string(),
        };
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .min_connections(0)
            // A ping before each use is a round trip per store call: only a connection idle for a while
            // gets one (an application enqueuing now and then survives a failover unnoticed), while a
            // busy worker's connections, used moments ago, go straight to work. One that died since is
            // found by the call that fails on it, which the worker retries with back-off.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for < PING_WHEN_IDLE_FOR {
                        return Ok(true);
                    }
                    Ok(sqlx::Connection::ping(conn).await.is_ok())
                })
            })
            // Waiting for a free connection is bounded too: a saturated or vanished server turns into an
            // error the caller can retry, never a hang.
            .acquire_timeout(connect_timeout * 2)
            .idle_timeout(Some(Duration::from_secs(300)))
            .after_connect(move |conn, _meta| {
                let session = session.clone();
                Box::pin(async move {
                    conn.execute(session.as_str()).await?;
                    Ok(())
                })
            })
            .connect_lazy_with(options.clone());
        let app = options.get_application_name().unwrap_or("jobq").to_string();
        let listen_name = match &schema {
            Some(s) => format!("{app} listener {s}"),
            None => format!("{app} listener"),
        };
        let listen_options = options.application_name(&listen_name);
        Ok(PostgresStore {
            pool,
            listen_options,
            url: url.clone(),
            schema,
            connect_timeout,
        })
    }

    /// The underlying pool, for tests and benchmarks that look at the tables directly.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The schema named in the URL, if any.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// Maps a driver error met while doing `operation`: unreachable → `Unavailable` with the redacted
    /// URL, anything else → `Query`; either way with the driver's deepest message only (sqlx repeats
    /// the inner message in the outer one).
    fn fail(&self, operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError + '_ {
        move |e| {
            if is_unreachable(&e) {
                StoreError::unavailable(KIND, &self.url.redacted(), &e)
            } else {
                StoreError::query(KIND, operation, DriverError::deepest(&e))
            }
        }
    }

    async fn applied_version(&self) -> Result<Option<u32>, StoreError> {
        let exists: bool = sqlx::query_scalar("SELECT to_regclass('jobq_migrations') IS NOT NULL")
            .fetch_one(&self.pool)
            .await
            .map_err(self.fail("reading the schema version"))?;
        if !exists {
            return Ok(None);
        }
        let v: Option<i32> = sqlx::query_scalar("SELECT max(version) FROM jobq_migrations")
            .fetch_one(&self.pool)
            .await
            .map_err(self.fail("reading the schema version"))?;
        Ok(Some(v.unwrap_or(0) as u32))
    }

    async fn apply(&self) -> Result<(), StoreError> {
        let failed = |version: u32| {
            move |e: sqlx::Error| StoreError::Migration {
                kind: KIND,
                version,
                source: Box::new(DriverError::deepest(&e)),
            }
        };
        let mut tx = self.pool.begin().await.map_err(self.fail("starting the migration"))?;
        // Concurrent migrators of one schema queue on an advisory lock that the transaction releases when
        // it ends, then find the work done. The key is the target schema's name (a schema that does not
        // exist yet has no current_schema()).
        let target = match &self.schema {
            Some(s) => s.clone(),
            None => sqlx::query_scalar::<_, Option<String>>("SELECT current_schema()::text")
                .fetch_one(&mut *tx)
                .await
                .map_err(self.fail("reading the current schema"))?
                .unwrap_or_default(),
        };
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('jobq migrate ' || $1, 0))")
            .bind(&target)
            .execute(&mut *tx)
            .await
            .map_err(self.fail("taking the migration lock"))?;
        if let Some(schema) = &self.schema {
            let create = format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(schema));
            tx.execute(create.as_str()).await.map_err(failed(1))?;
        }
        tx.execute(
            "CREATE TABLE IF NOT EXISTS jobq_migrations (version integer NOT NULL PRIMARY KEY, name text NOT NULL, \
             checksum text NOT NULL, applied_at bigint NOT NULL)",
        )
        .await
        .map_err(self.fail("creating jobq_migrations"))?;
        let rows = sqlx::query("SELECT version, checksum FROM jobq_migrations")
            .fetch_all(&mut *tx)
            .await
            .map_err(self.fail("reading jobq_migrations"))?;
        let applied: HashMap<u32, String> = rows
            .iter()
            .map(|r| (r.get::<i32, _>(0) as u32, r.get::<String, _>(1)))
            .collect();
        for m in migrate::pending(KIND, &applied)? {
            // The file runs whole inside this transaction: a query without parameters goes over the simple
            // protocol, which takes several statements (and functions whose bodies hold semicolons).
            tx.execute(m.sql).await.map_err(failed(m.version))?;
            sqlx::query(
                "INSERT INTO jobq_migrations (version, name, checksum, applied_at) \
                 VALUES ($1, $2, $3, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
            )
            .bind(m.version as i32)
            .bind(m.name)
            .bind(m.checksum())
            .execute(&mut *tx)
            .await
            .map_err(self.fail("recording a migration"))?;
        }
        tx.commit().await.map_err(self.fail("committing the migration"))
    }

    /// Inserts the jobs at `indexes` (distinct ids) in one statement; returns the ids created. With
    /// [`Clashes::Skip`] a job whose id exists, or whose unique key a live job holds, is left out (and
    /// its id is not returned); with [`Clashes::Fail`] the statement fails on it instead.
    async fn insert(
        &self,
        conn: &mut PgConnection,
        jobs: &[NewJob],
        indexes: &[usize],
        clashes: Clashes,
    ) -> Result<HashSet<String>, sqlx::Error> {
        let rows = || indexes.iter().map(|&i| &jobs[i]);
        let ids: Vec<&str> = rows().map(|j| j.id.as_str()).collect();
        let queues: Vec<&str> = rows().map(|j| j.queue.as_str()).collect();
        let types: Vec<&str> = rows().map(|j| j.job_type.as_str()).collect();
        let payloads: Vec<&str> = rows().map(|j| j.payload.get()).collect();
        let metas: Vec<String> = rows()
            .map(|j| {
                if j.meta.is_empty() {
                    "{}".into()
                } else {
                    serde_json::to_string(&j.meta).unwrap_or_else(|_| "{}".into())
                }
            })
            .collect();
        let priorities: Vec<i32> = rows().map(|j| j.priority).collect();
        // The column is an integer; more than two billion attempts is "never give up" either way.
        let max_attempts: Vec<i32> = rows().map(|j| j.max_attempts.min(i32::MAX as u32) as i32).collect();
        let run_ats: Vec<i64> = rows().map(|j| j.run_at.0).collect();
        let keys: Vec<Option<&str>> = rows().map(|j| j.unique_key.as_deref()).collect();
        let timeouts: Vec<Option<i64>> = rows()
            .map(|j| j.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64))
            .collect();
        let created: Vec<i64> = rows().map(|j| j.created_at.0).collect();
        // status, attempt and errors take the column defaults. With Skip, rows go in input order (ORDER
        // BY ord), so a later job of the batch coalesces into an earlier one, and ON CONFLICT DO NOTHING
        // with no target covers both the primary key (duplicate id) and the partial unique index of
        // live unique keys (coalescing); which one it was is read afterwards.
        let tail = match clashes {
            Clashes::Skip => "ORDER BY t.ord ON CONFLICT DO NOTHING RETURNING id",
            Clashes::Fail => "",
        };
        let sql = format!(
            "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
             timeout_ms, created_at) \
             SELECT t.id, t.queue, t.job_type, t.payload::json, t.meta::json, t.priority, t.max_attempts, t.run_at, \
             t.unique_key, t.timeout_ms, t.created_at \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int4[], $7::int4[], \
             $8::int8[], $9::text[], $10::int8[], $11::int8[]) WITH ORDINALITY \
             AS t(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, \
             created_at, ord) {tail}"
        );
        let query = sqlx::query(&sql)
            .bind(&ids)
            .bind(queues)
            .bind(types)
            .bind(payloads)
            .bind(metas)
            .bind(priorities)
            .bind(max_attempts)
            .bind(run_ats)
            .bind(keys)
            .bind(timeouts)
            .bind(created);
        match clashes {
            Clashes::Skip => Ok(query
                .fetch_all(&mut *conn)
                .await?
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect()),
            Clashes::Fail => {
                query.execute(&mut *conn).await?;
                Ok(ids.iter().map(|id| id.to_string()).collect())
            }
        }
    }

    /// Enqueues a batch in which no job has a unique key and no id repeats with plain INSERTs, which
    /// skip the arbiter-index probes of ON CONFLICT; one statement, or one transaction of several.
    /// Fails with a unique violation when an id exists already, having changed nothing.
    async fn insert_all(&self, jobs: &[NewJob], indexes: &[usize]) -> Result<(), sqlx::Error> {
        let chunks = enqueue_chunks(jobs, indexes);
        if let [chunk] = chunks.as_slice() {
            let mut conn = self.pool.acquire().await?;
            self.insert(&mut conn, jobs, chunk, Clashes::Fail).await?;
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        for chunk in chunks {
            self.insert(&mut tx, jobs, chunk, Clashes::Fail).await?;
        }
        tx.commit().await
    }

    /// Why the jobs at `indexes` were not inserted: per index, `Duplicate` when a job with its id
    /// exists, else `Coalesced` into the live holder of its queue and unique key, else `None` (the
    /// conflict vanished before it could be read).
    async fn conflicts(
        &self,
        tx: &mut PgConnection,
        jobs: &[NewJob],
        indexes: &[usize],
    ) -> Result<Vec<Option<Enqueued>>, StoreError> {
        let ords: Vec<i32> = (0..indexes.len() as i32).collect();
        let ids: Vec<&str> = indexes.iter().map(|&i| jobs[i].id.as_str()).collect();
        let queues: Vec<&str> = indexes.iter().map(|&i| jobs[i].queue.as_str()).collect();
        let keys: Vec<Option<&str>> = indexes.iter().map(|&i| jobs[i].unique_key.as_deref()).collect();
        let rows = sqlx::query(&format!(
            "SELECT t.ord, EXISTS (SELECT 1 FROM jobq_jobs e WHERE e.id = t.id), \
             (SELECT h.id FROM jobq_jobs h WHERE t.key IS NOT NULL AND h.queue = t.queue AND h.unique_key = t.key \
             AND h.status IN {LIVE_STATUSES} LIMIT 1) \
             FROM unnest($1::int4[], $2::text[], $3::text[], $4::text[]) AS t(ord, id, queue, key)"
        ))
        .bind(ords)
        .bind(&ids)
        .bind(queues)
        .bind(keys)
        .fetch_all(&mut *tx)
        .await
        .map_err(self.fail("enqueue (reading conflicts)"))?;
        let mut out = vec![None; indexes.len()];
        for row in &rows {
            let ord = row.get::<i32, _>(0) as usize;
            let exists: bool = row.get(1);
            let holder: Option<String> = row.get(2);
            out[ord] = if exists {
                Some(Enqueued {
                    id: JobId::from_stored(ids[ord].to_string()),
                    outcome: EnqueueOutcome::Duplicate,
                })
            } else {
                holder.map(|h| Enqueued {
                    id: JobId::from_stored(h),
                    outcome: EnqueueOutcome::Coalesced,
                })
            };
        }
        Ok(out)
    }

    /// Inserts the rounds of an enqueue one after the other on `conn` and answers every job.
    async fn enqueue_rounds(
        &self,
        conn: &mut PgConnection,
        jobs: &[NewJob],
        rounds: Vec<Vec<usize>>,
    ) -> Result<Vec<Enqueued>, StoreError> {
        let mut answers: Vec<Option<Enqueued>> = vec![None; jobs.len()];
        for round in rounds {
            for chunk in enqueue_chunks(jobs, &round) {
                let mut open: Vec<usize> = chunk.to_vec();
                for _ in 0..ENQUEUE_ROUNDS {
                    let created = self
                        .insert(conn, jobs, &open, Clashes::Skip)
                        .await
                        .map_err(self.fail("enqueue"))?;
                    let refused: Vec<usize> = open
                        .iter()
                        .copied()
                        .filter(|&i| !created.contains(jobs[i].id.as_str()))
                        .collect();
                    for &i in &open {
                        if created.contains(jobs[i].id.as_str()) {
                            answers[i] = Some(Enqueued {
                                id: jobs[i].id.clone(),
                                outcome: EnqueueOutcome::Created,
                            });
                        }
                    }
                    open.clear();
                    if refused.is_empty() {
                        break;
                    }
                    for (&i, answer) in refused.iter().zip(self.conflicts(conn, jobs, &refused).await?) {
                        match answer {
                            Some(answer) => answers[i] = Some(answer),
                            // The row it clashed with changed in between (a holder finished): try again.
                            None => open.push(i),
                        }
                    }
                    if open.is_empty() {
                        break;
                    }
                }
                if !open.is_empty() {
                    return Err(StoreError::query(
                        KIND,
                        "enqueue",
                        format!(
                            "{} jobs kept clashing with jobs that changed meanwhile; try again",
                            open.len()
                        ),
                    ));
                }
            }
        }
        Ok(answers
            .into_iter()
            .map(|a| a.expect("every job of the batch was answered"))
            .collect())
    }

    /// Runs a fenced lease statement over the distinct leases of a batch and returns, per input, whether
    /// its lease matched. `bind_rows` adds the statement's arrays for the given inputs (`$1` is always
    /// the `ord` array, added here, and `$2` the job ids); the statement returns the `ord` of each row
    /// it changed. The statements also say `j.id = ANY($2)`: it lets the planner fetch the batch's rows
    /// by primary key rather than hash every running job to join them with the arrays. They are kept
    /// prepared (parsed once per connection) but planned for each batch's own size: a generic plan of
    /// a join against `unnest()` rescans the arrays once per row (a batch of 1,000 took 0.8 s instead
    /// of 30 ms), so every connection runs with `plan_cache_mode = force_custom_plan`.
    async fn fenced<'q>(
        &self,
        operation: &'static str,
        sql: &'q str,
        leases: Vec<&Lease>,
        mut bind_rows: impl FnMut(
            sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
            &[usize],
        ) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    ) -> Result<(Vec<usize>, Vec<bool>), StoreError> {
        let (firsts, representative) = distinct_leases(leases.into_iter());
        let mut matched = vec![false; representative.len()];
        for chunk in firsts.chunks(ROWS_PER_STATEMENT) {
            let ords: Vec<i32> = (0..chunk.len() as i32).collect();
            let query = bind_rows(sqlx::query(sql).bind(ords), chunk);
            let rows = query.fetch_all(&self.pool).await.map_err(self.fail(operation))?;
            for row in &rows {
                matched[chunk[row.get::<i32, _>(0) as usize]] = true;
            }
        }
        Ok((representative, matched))
    }
}

/// Splits the jobs at `indexes` into statements of at most [`ROWS_PER_STATEMENT`] rows and about
/// [`BYTES_PER_STATEMENT`] bytes of payload and meta (a single larger job still gets a statement).
fn enqueue_chunks<'a>(jobs: &[NewJob], indexes: &'a [usize]) -> Vec<&'a [usize]> {
    chunks_within(jobs, indexes, ROWS_PER_STATEMENT, BYTES_PER_STATEMENT)
}

fn chunks_within<'a>(jobs: &[NewJob], indexes: &'a [usize], max_rows: usize, max_bytes: usize) -> Vec<&'a [usize]> {
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (n, &i) in indexes.iter().enumerate() {
        let size = jobs[i].payload.get().len() + jobs[i].meta.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>();
        if n > start && (n - start == max_rows || bytes + size > max_bytes) {
            chunks.push(&indexes[start..n]);
            (start, bytes) = (n, 0);
        }
        bytes += size;
    }
    if start < indexes.len() {
        chunks.push(&indexes[start..]);
    }
    chunks
}

/// The arrays shared by the fenced statements: ids, attempts and workers of the leases at `chunk`.
fn lease_arrays<'a>(leases: &[&'a Lease], chunk: &[usize]) -> (Vec<&'a str>, Vec<i32>, Vec<&'a str>) {
    let ids = chunk.iter().map(|&i| leases[i].id.as_str()).collect();
    let attempts = chunk
        .iter()
        .map(|&i| leases[i].attempt.min(i32::MAX as u32) as i32)
        .collect();
    let workers = chunk.iter().map(|&i| leases[i].worker.as_str()).collect();
    (ids, attempts, workers)
}

#[async_trait]
impl Store for PostgresStore {
    fn kind(&self) -> StoreKind {
        KIND
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let row = sqlx::query(
            "SELECT current_setting('server_version'), current_database()::text, current_schema()::text, \
             current_setting('synchronous_commit'), current_setting('default_transaction_isolation'), \
             current_setting('fsync'), current_setting('autovacuum')",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(self.fail("reading the server settings"))?;
        let version: String = row.get(0);
        let schema: Option<String> = row.get(2);
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: format!("PostgreSQL {version}"),
            settings: vec![
                ("database".into(), row.get(1)),
                (
                    "schema".into(),
                    schema.or_else(|| self.schema.clone()).unwrap_or_default(),
                ),
                ("synchronous_commit".into(), row.get(3)),
                ("isolation".into(), row.get(4)),
                ("fsync".into(), row.get(5)),
                ("autovacuum".into(), row.get(6)),
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
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        // Rounds in which no id appears twice: the n-th occurrence of an id goes in round n, so an id
        // repeated in the batch is answered after its first occurrence exists (or was coalesced away).
        // RETURNING id then names exactly one input per row.
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(jobs.len());
        let mut rounds: Vec<Vec<usize>> = Vec::new();
        for (i, job) in jobs.iter().enumerate() {
            let n = seen.entry(job.id.as_str()).or_insert(0);
            if rounds.len() == *n {
                rounds.push(Vec::new());
            }
            rounds[*n].push(i);
            *n += 1;
        }
        if rounds.len() == 1 && jobs.iter().all(|j| j.unique_key.is_none()) {
            // Nearly every batch: no unique keys, no repeated ids, no id that exists already. Plain
            // INSERTs create it all; an existing id makes them fail having changed nothing, and the
            // batch is then answered job by job below.
            match self.insert_all(jobs, &rounds[0]).await {
                Ok(()) => {
                    return Ok(jobs
                        .iter()
                        .map(|j| Enqueued {
                            id: j.id.clone(),
                            outcome: EnqueueOutcome::Created,
                        })
                        .collect());
                }
                Err(e) if is_unique_violation(&e) => {}
                Err(e) => return Err(self.fail("enqueue")(e)),
            }
        }
        if rounds.len() == 1 && enqueue_chunks(jobs, &rounds[0]).len() == 1 {
            // The common case, one statement: atomic by itself, so no BEGIN and COMMIT round trips (a
            // single job reaches a waiting worker sooner). Only if a clash vanishes before it can be read
            // does a second statement insert the rows it refused.
            let mut conn = self.pool.acquire().await.map_err(self.fail("enqueue"))?;
            return self.enqueue_rounds(&mut conn, jobs, rounds).await;
        }
        let mut tx = self.pool.begin().await.map_err(self.fail("starting enqueue"))?;
        let answers = self.enqueue_rounds(&mut tx, jobs, rounds).await?;
        tx.commit().await.map_err(self.fail("committing enqueue"))?;
        Ok(answers)
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
        // The candidates: pending, ready, not excluded, in claim order, locked with SKIP LOCKED so that
        // concurrent claimers pass over each other's rows instead of queueing behind them. One queue is
        // one ordered scan of the ready index. Several queues are one ordering: each queue's best `limit`
        // (a LATERAL scan of its part of the index, locked) merged and cut to `limit`, so a claim never
        // sorts a whole backlog; the few extra rows stay locked only until the statement ends. The update
        // finds the locked rows by primary key (`= ANY(ARRAY(…))`): joined to the CTE instead, the planner
        // tends to hash the whole table for a batch of a few hundred.
        let candidates = if queues.len() == 1 {
            "SELECT j.id FROM jobq_jobs j WHERE j.status = 'pending' AND j.queue = $1[1] AND j.run_at <= $2 \
             AND j.job_type <> ALL($3) ORDER BY j.priority, j.run_at, j.id LIMIT $4 FOR UPDATE SKIP LOCKED"
        } else {
            "SELECT l.id FROM unnest($1::text[]) AS qn(queue) CROSS JOIN LATERAL (\
             SELECT j.id, j.priority, j.run_at FROM jobq_jobs j WHERE j.status = 'pending' AND j.queue = qn.queue \
             AND j.run_at <= $2 AND j.job_type <> ALL($3) ORDER BY j.priority, j.run_at, j.id LIMIT $4 \
             FOR UPDATE SKIP LOCKED) AS l ORDER BY l.priority, l.run_at, l.id LIMIT $4"
        };
        let sql = format!(
            "WITH c AS ({candidates}) UPDATE jobq_jobs AS j SET status = 'running', attempt = j.attempt + 1, \
             worker_id = $5, started_at = $2, heartbeat_at = $2, progress = NULL, progress_message = NULL \
             WHERE j.id = ANY(ARRAY(SELECT id FROM c)) RETURNING {COLUMNS}"
        );
        // Prepared once per connection, planned for each claim (`force_custom_plan`): a generic plan of
        // this one (limit and queue unknown) may sort the whole table instead of walking the ready index.
        let rows = sqlx::query(&sql)
            .bind(queues)
            .bind(claim.now.0)
            .bind(&claim.exclude_types)
            .bind(i64::from(claim.limit))
            .bind(&claim.worker)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("claim"))?;
        let mut jobs = rows
            .iter()
            .map(|r| job_from_row(r, KIND))
            .collect::<Result<Vec<_>, _>>()?;
        // RETURNING has no order; hand jobs out in claim order.
        jobs.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
        Ok(jobs)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        if beats.is_empty() {
            return Ok(Vec::new());
        }
        let leases: Vec<&Lease> = beats.iter().map(|b| &b.lease).collect();
        let (firsts, representative) = distinct_leases(leases.iter().copied());
        let mut states = vec![LeaseState::Lost; beats.len()];
        for chunk in firsts.chunks(ROWS_PER_STATEMENT) {
            let ords: Vec<i32> = (0..chunk.len() as i32).collect();
            let (ids, attempts, workers) = lease_arrays(&leases, chunk);
            let percents: Vec<Option<i32>> = chunk
                .iter()
                .map(|&i| beats[i].progress.as_ref().map(|p| i32::from(p.percent)))
                .collect();
            let messages: Vec<Option<String>> = chunk
                .iter()
                .map(|&i| {
                    beats[i]
                        .progress
                        .as_ref()
                        .and_then(|p| p.message.as_deref())
                        .map(|m| pg_text(m).into_owned())
                })
                .collect();
            // One statement records the beats and, for the leases that no longer hold, reads the job's
            // status (from the snapshot before the update, which the update did not touch for them) to
            // tell a cancellation from a loss. Planned for each batch, like the other fenced statements
            // (see `fenced`).
            let rows = sqlx::query(
                "WITH b AS (SELECT * FROM \
                 unnest($1::int4[], $2::text[], $3::int4[], $4::text[], $5::int4[], $6::text[]) \
                 AS b(ord, id, attempt, worker, progress, message)), \
                 u AS (UPDATE jobq_jobs AS j SET heartbeat_at = $7, progress = COALESCE(b.progress, j.progress), \
                 progress_message = CASE WHEN b.progress IS NULL THEN j.progress_message ELSE b.message END \
                 FROM b WHERE j.id = ANY($2) AND j.id = b.id AND j.attempt = b.attempt AND j.worker_id = b.worker \
                 AND j.status = 'running' RETURNING b.ord) \
                 SELECT b.ord, u.ord IS NOT NULL, j.status FROM b LEFT JOIN u ON u.ord = b.ord \
                 LEFT JOIN jobq_jobs j ON u.ord IS NULL AND j.id = b.id",
            )
            .bind(ords)
            .bind(ids)
            .bind(attempts)
            .bind(workers)
            .bind(percents)
            .bind(messages)
            .bind(now.0)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("heartbeat"))?;
            for row in &rows {
                let i = chunk[row.get::<i32, _>(0) as usize];
                let held: bool = row.get(1);
                let status: Option<&str> = row.get(2);
                states[i] = if held {
                    LeaseState::Held
                } else if status == Some(JobStatus::Cancelled.as_str()) {
                    LeaseState::Cancelled
                } else {
                    LeaseState::Lost
                };
            }
        }
        // A lease sent twice gets the answer of its first occurrence.
        Ok(representative.iter().map(|&r| states[r]).collect())
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if finishes.is_empty() {
            return Ok(Vec::new());
        }
        let leases: Vec<&Lease> = finishes.iter().map(|f| &f.lease).collect();
        let append = append_error("j.attempt", "$10::int8", "f.error");
        let sql = format!(
            "UPDATE jobq_jobs AS j SET status = f.status, run_at = COALESCE(f.run_at, j.run_at), \
             result = f.result::json, finished_at = CASE WHEN f.finished THEN $10::int8 END, worker_id = NULL, \
             progress = COALESCE(f.progress, j.progress), \
             progress_message = CASE WHEN f.progress IS NULL THEN j.progress_message ELSE f.message END, \
             errors = CASE WHEN f.error IS NULL THEN j.errors ELSE {append} END \
             FROM unnest($1::int4[], $2::text[], $3::int4[], $4::text[], $5::text[], $6::int8[], $7::text[], \
             $8::text[], $9::bool[], $11::int4[], $12::text[]) \
             AS f(ord, id, attempt, worker, status, run_at, result, error, finished, progress, message) \
             WHERE j.id = ANY($2) AND j.id = f.id AND j.attempt = f.attempt AND j.worker_id = f.worker \
             AND j.status = 'running' \
             RETURNING f.ord"
        );
        let (representative, applied) = self
            .fenced("finish", &sql, leases.clone(), |query, chunk| {
                let (ids, attempts, workers) = lease_arrays(&leases, chunk);
                let mut statuses = Vec::with_capacity(chunk.len());
                let mut run_ats = Vec::with_capacity(chunk.len());
                let mut results = Vec::with_capacity(chunk.len());
                let mut errors = Vec::with_capacity(chunk.len());
                let mut finished = Vec::with_capacity(chunk.len());
                let mut progress = Vec::with_capacity(chunk.len());
                let mut messages = Vec::with_capacity(chunk.len());
                for &i in chunk {
                    let reported = finishes[i].progress.as_ref();
                    progress.push(reported.map(|p| i32::from(p.percent)));
                    messages.push(
                        reported
                            .and_then(|p| p.message.as_deref())
                            .map(|m| pg_text(m).into_owned()),
                    );
                    let outcome = &finishes[i].outcome;
                    let status = outcome.status();
                    statuses.push(status.as_str());
                    run_ats.push(match outcome {
                        Outcome::Retry { run_at, .. } => Some(run_at.0),
                        _ => None,
                    });
                    results.push(match outcome {
                        Outcome::Succeeded { result } => result.as_ref().map(|r| r.get().to_string()),
                        _ => None,
                    });
                    errors.push(outcome.error().map(|e| pg_text(e).into_owned()));
                    // Terminal outcomes and waiting set finished_at (the job left its worker for good); a
                    // retry, which runs again, leaves it empty.
                    finished.push(status.is_terminal() || status == JobStatus::Waiting);
                }
                query
                    .bind(ids)
                    .bind(attempts)
                    .bind(workers)
                    .bind(statuses)
                    .bind(run_ats)
                    .bind(results)
                    .bind(errors)
                    .bind(finished)
                    .bind(now.0)
                    .bind(progress)
                    .bind(messages)
            })
            .await?;
        // A lease sent twice applies once: its first occurrence; the job has left `running` for the rest.
        Ok(representative
            .iter()
            .enumerate()
            .map(|(i, &r)| r == i && applied[i])
            .collect())
    }

    async fn release(&self, leases: &[Lease], _now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if leases.is_empty() {
            return Ok(Vec::new());
        }
        let refs: Vec<&Lease> = leases.iter().collect();
        // run_at is kept: a released job keeps its place at the front of its queue. Idle workers are
        // woken, since the releasing one is usually shutting down.
        let sql = format!(
            "WITH u AS (UPDATE jobq_jobs AS j SET status = 'pending', attempt = j.attempt - 1, worker_id = NULL, \
             heartbeat_at = NULL, progress = NULL, progress_message = NULL \
             FROM unnest($1::int4[], $2::text[], $3::int4[], $4::text[]) AS r(ord, id, attempt, worker) \
             WHERE j.id = ANY($2) AND j.id = r.id AND j.attempt = r.attempt AND j.worker_id = r.worker \
             AND j.status = 'running' \
             RETURNING r.ord, j.queue, j.status), {} \
             SELECT u.ord FROM u CROSS JOIN n",
            notify_cte("u")
        );
        let (representative, released) = self
            .fenced("release", &sql, refs.clone(), |query, chunk| {
                let (ids, attempts, workers) = lease_arrays(&refs, chunk);
                query.bind(ids).bind(attempts).bind(workers)
            })
            .await?;
        Ok(representative
            .iter()
            .enumerate()
            .map(|(i, &r)| r == i && released[i])
            .collect())
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        // SKIP LOCKED: a job another sweeper (or its own worker's heartbeat) holds right now is left to
        // it; the locked rows are re-checked before the update, so a job rescued meanwhile is not taken.
        let append = append_error("j.attempt", "$1::int8", "'worker lost'");
        let sql = format!(
            "WITH s AS (SELECT id FROM jobq_jobs WHERE status = 'running' AND heartbeat_at < $2 \
             ORDER BY heartbeat_at LIMIT $3 FOR UPDATE SKIP LOCKED), \
             u AS (UPDATE jobq_jobs AS j SET \
             status = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'pending' END, \
             finished_at = CASE WHEN j.attempt >= j.max_attempts THEN $1::int8 END, \
             run_at = $1::int8, worker_id = NULL, heartbeat_at = NULL, errors = {append} \
             WHERE j.id = ANY(ARRAY(SELECT id FROM s)) RETURNING j.id, j.job_type, j.attempt, j.status, j.queue), {} \
             SELECT u.id, u.job_type, u.attempt, u.status FROM u CROSS JOIN n ORDER BY u.id",
            notify_cte("u")
        );
        let rows = sqlx::query(&sql)
            .persistent(false)
            .bind(rescue.now.0)
            .bind(rescue.stale_before.0)
            .bind(i64::from(rescue.limit))
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("rescue"))?;
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
                    attempt: r.get::<i32, _>(2).max(0) as u32,
                    status,
                })
            })
            .collect()
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM jobq_jobs AS j WHERE j.id = $1"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(self.fail("get"))?;
        row.as_ref().map(|r| job_from_row(r, KIND)).transpose()
    }

    async fn list(&self, params: &ListParams) -> Result<Vec<Job>, StoreError> {
        let mut qb: QueryBuilder<Postgres> =
            QueryBuilder::new(format!("SELECT {COLUMNS} FROM jobq_jobs AS j WHERE true"));
        push_filter(&mut qb, &params.filter);
        qb.push(" ORDER BY j.created_at DESC, j.id DESC LIMIT ")
            .push_bind(i64::from(params.limit))
            .push(" OFFSET ")
            .push_bind(params.offset.min(i64::MAX as u64) as i64);
        let rows = qb
            .build()
            .persistent(false)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("list"))?;
        rows.iter()
            .map(|r| job_from_row(r, KIND))
            .collect::<Result<Vec<_>, _>>()
    }

    async fn stats(&self, params: &StatsParams) -> Result<Stats, StoreError> {
        // One pass over the queue's rows; queues come back in byte order (COLLATE "C").
        let rows = sqlx::query(
            "SELECT queue, \
             count(*) FILTER (WHERE status = 'pending' AND run_at <= $1), \
             count(*) FILTER (WHERE status = 'pending' AND run_at > $1), \
             count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'waiting'), \
             count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'dead'), \
             count(*) FILTER (WHERE status = 'cancelled'), count(*) FILTER (WHERE status = 'discarded'), \
             min(run_at) FILTER (WHERE status = 'pending' AND run_at <= $1) \
             FROM jobq_jobs WHERE cardinality($2::text[]) = 0 OR queue = ANY($2) GROUP BY queue ORDER BY queue",
        )
        .bind(params.now.0)
        .bind(&params.queues)
        .fetch_all(&self.pool)
        .await
        .map_err(self.fail("stats"))?;
        let n = |row: &PgRow, i: usize| row.get::<i64, _>(i).max(0) as u64;
        let queues = rows
            .iter()
            .map(|row| QueueStats {
                queue: row.get(0),
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
        // Lock the targets (in id order, so two overlapping cancels cannot deadlock), then update them in
        // the same statement; the locked rows are re-checked, so a job that finished meanwhile is left
        // alone and `previous` is the status the update replaced.
        let mut qb: QueryBuilder<Postgres> = QueryBuilder::new(format!(
            "WITH c AS (SELECT j.id, j.status FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"
        ));
        match &cancel.target {
            CancelTarget::Ids(ids) => {
                let ids: Vec<&str> = ids.iter().map(JobId::as_str).collect();
                qb.push(" AND j.id = ANY(").push_bind(ids).push(")");
            }
            CancelTarget::Filter(filter) => push_filter(&mut qb, filter),
        }
        qb.push(" ORDER BY j.id FOR UPDATE) UPDATE jobq_jobs AS j SET status = 'cancelled', finished_at = ")
            .push_bind(cancel.now.0)
            .push(" FROM c WHERE j.id = c.id RETURNING j.id, c.status");
        let rows = qb
            .build()
            .persistent(false)
            .fetch_all(&self.pool)
            .await
            .map_err(self.fail("cancel"))?;
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
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<JobId>, StoreError> {
        // c: the dead jobs this request selects. A unique key may be held by one live job only: a dead
        // job whose key is live again stays dead, and of several selected dead jobs sharing a key only
        // the first in replay order (oldest death) comes back. A producer that takes the key at the same
        // moment makes the update fail on the unique index; the statement is then simply run again.
        let build = || {
            let mut qb: QueryBuilder<Postgres> = QueryBuilder::new(
                "WITH c AS (SELECT j.id, j.queue, j.unique_key, j.finished_at FROM jobq_jobs AS j \
                 WHERE j.status = 'dead'",
            );
            push_filter(&mut qb, &replay_filter(replay));
            if !replay.ids.is_empty() {
                let ids: Vec<&str> = replay.ids.iter().map(JobId::as_str).collect();
                qb.push(" AND j.id = ANY(").push_bind(ids).push(")");
            }
            qb.push(format!(
                "), p AS (SELECT c.id FROM c WHERE c.unique_key IS NULL OR (\
                 NOT EXISTS (SELECT 1 FROM jobq_jobs o WHERE o.queue = c.queue AND o.unique_key = c.unique_key \
                 AND o.status IN {LIVE_STATUSES}) \
                 AND NOT EXISTS (SELECT 1 FROM c s WHERE s.queue = c.queue AND s.unique_key = c.unique_key \
                 AND (COALESCE(s.finished_at, 0), s.id) < (COALESCE(c.finished_at, 0), c.id))) \
                 ORDER BY c.finished_at, c.id"
            ));
            if let Some(limit) = replay.limit {
                qb.push(" LIMIT ").push_bind(i64::from(limit));
            }
            qb.push(
                "), u AS (UPDATE jobq_jobs AS j SET status = 'pending', attempt = 0, finished_at = NULL, \
                 result = NULL, \
                 worker_id = NULL, heartbeat_at = NULL, progress = NULL, progress_message = NULL, run_at = ",
            );
            qb.push_bind(replay.now.0);
            qb.push(format!(
                " FROM p WHERE j.id = p.id AND j.status = 'dead' RETURNING j.id, j.queue, j.status), {} \
                 SELECT u.id FROM u CROSS JOIN n",
                notify_cte("u")
            ));
            qb
        };
        let mut tries = 0;
        let rows = loop {
            tries += 1;
            match build().build().persistent(false).fetch_all(&self.pool).await {
                Ok(rows) => break rows,
                Err(e) if is_unique_violation(&e) && tries < 3 => continue,
                Err(e) => return Err(self.fail("replay_dead")(e)),
            }
        };
        let mut ids: Vec<JobId> = rows.iter().map(|r| JobId::from_stored(r.get(0))).collect();
        ids.sort();
        Ok(ids)
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let Some(filter) = cleanup_filter(cleanup) else {
            return Ok(0);
        };
        if cleanup.dry_run {
            let mut qb: QueryBuilder<Postgres> = QueryBuilder::new("SELECT count(*) FROM (");
            push_cleanup_selection(&mut qb, cleanup, &filter);
            qb.push(") AS t");
            let n: i64 = qb
                .build_query_scalar()
                .fetch_one(&self.pool)
                .await
                .map_err(self.fail("cleanup"))?;
            Ok(n.max(0) as u64)
        } else {
            // Rows another statement holds are skipped, not waited for; the next call gets them.
            let mut qb: QueryBuilder<Postgres> = QueryBuilder::new("DELETE FROM jobq_jobs WHERE id IN (");
            push_cleanup_selection(&mut qb, cleanup, &filter);
            qb.push(" FOR UPDATE SKIP LOCKED)");
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
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO UPDATE SET \
             last_seen_at = excluded.last_seen_at, jobs_done = excluded.jobs_done",
        )
        .bind(&worker.id)
        .bind(&worker.name)
        .bind(&worker.host)
        .bind(i64::from(worker.pid))
        .bind(&worker.queues)
        .bind(worker.started_at.0)
        .bind(worker.last_seen_at.0)
        .bind(worker.jobs_done.min(i64::MAX as u64) as i64)
        .execute(&self.pool)
        .await
        .map_err(self.fail("registering a worker"))?;
        Ok(())
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM jobq_workers WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(self.fail("unregistering a worker"))?;
        Ok(())
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        let rows = sqlx::query(
            "WITH gone AS (DELETE FROM jobq_workers WHERE last_seen_at < $1) \
             SELECT id, name, host, pid, queues, started_at, last_seen_at, jobs_done FROM jobq_workers \
             WHERE last_seen_at >= $1 ORDER BY started_at, id",
        )
        .bind(seen_since.0)
        .fetch_all(&self.pool)
        .await
        .map_err(self.fail("listing workers"))?;
        Ok(rows
            .iter()
            .map(|r| WorkerInfo {
                id: r.get(0),
                name: r.get(1),
                host: r.get(2),
                pid: r.get::<i64, _>(3).clamp(0, i64::from(u32::MAX)) as u32,
                queues: r.get(4),
                started_at: UnixMillis(r.get(5)),
                last_seen_at: UnixMillis(r.get(6)),
                jobs_done: r.get::<i64, _>(7).max(0) as u64,
            })
            .collect())
    }

    fn subscribe(&self, queues: &[String], notify: Arc<Notify>) -> Option<Subscription> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let listener = Listener {
            options: self.listen_options.clone(),
            pool: self.pool.clone(),
            queues: queues.iter().cloned().collect(),
            notify,
            connect_timeout: self.connect_timeout,
            url: self.url.redacted().to_string(),
        };
        Some(Subscription::new(runtime.spawn(listener.run())))
    }
}

/// The jobs a cleanup call selects, as a subquery of ids: terminal statuses only, whatever the filter
/// says, so cleanup never touches live jobs.
fn push_cleanup_selection(qb: &mut QueryBuilder<'_, Postgres>, cleanup: &Cleanup, filter: &JobFilter) {
    qb.push(format!(
        "SELECT j.id FROM jobq_jobs AS j WHERE j.status IN {TERMINAL_STATUSES}"
    ));
    push_filter(qb, filter);
    if let Some(before) = cleanup.finished_before {
        qb.push(" AND j.finished_at < ").push_bind(before.0);
    }
    qb.push(" LIMIT ").push_bind(i64::from(cleanup.limit));
}

/// A notification's payload, as the trigger and [`notify_cte`] write it.
#[derive(Deserialize)]
struct WakePayload {
    schema: Option<String>,
    queue: Option<String>,
}

/// The task behind [`PostgresStore::subscribe`].
struct Listener {
    options: PgConnectOptions,
    /// The store's pool: finds the schema of `jobq_jobs` and sends the liveness pings.
    pool: PgPool,
    queues: HashSet<String>,
    notify: Arc<Notify>,
    connect_timeout: Duration,
    url: String,
}

impl Listener {
    /// Listens until the subscription is dropped (the task is aborted then), reconnecting with back-off
    /// and signalling every [`FALLBACK_POLL`] while the connection is down.
    async fn run(self) {
        let mut failures: u32 = 0;
        loop {
            let outcome = self.session(&mut failures).await;
            // Notifications sent while the connection was going down are lost: look once.
            self.notify.notify_one();
            match outcome {
                Ok(()) => tracing::debug!("lost the listening connection to {}; reconnecting", self.url),
                Err(e) if failures == 0 => {
                    tracing::warn!(
                        "cannot listen for new jobs at {} ({e}); polling until it is back",
                        self.url
                    )
                }
                Err(e) => tracing::debug!("still cannot listen for new jobs at {}: {e}", self.url),
            }
            failures = failures.saturating_add(1);
            let pause = (FALLBACK_POLL * 2u32.saturating_pow(failures.min(6))).min(LISTEN_MAX_BACKOFF);
            let until = tokio::time::Instant::now() + pause;
            while tokio::time::Instant::now() < until {
                tokio::time::sleep(FALLBACK_POLL.min(until - tokio::time::Instant::now())).await;
                self.notify.notify_one();
            }
        }
    }

    /// One listening connection, from connect to loss. `Ok` when the connection was lost after working,
    /// `Err` when it could not be set up or failed.
    async fn session(&self, failures: &mut u32) -> Result<(), sqlx::Error> {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .acquire_timeout(self.connect_timeout)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with(self.options.clone());
        let result = self.listen(&pool, failures).await;
        // Closing says goodbye to the server; a half-open connection must not hold the reconnect up.
        let _ = tokio::time::timeout(self.connect_timeout, pool.close()).await;
        result
    }

    async fn listen(&self, pool: &PgPool, failures: &mut u32) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.ignore_pool_close_event(true);
        // A lost connection ends the session; `run` reconnects after signalling the waiter.
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        // Which schema's notifications are ours, read after LISTEN so that nothing falls in between.
        // Unknown before the first migration: then every notification counts.
        let schema: Option<String> = sqlx::query_scalar(&format!("SELECT {JOBS_SCHEMA}"))
            .fetch_one(&self.pool)
            .await
            .unwrap_or(None);
        if *failures > 0 {
            tracing::info!("listening for new jobs at {} again", self.url);
        }
        *failures = 0;
        // Jobs may have arrived while nobody listened.
        self.notify.notify_one();
        let ping = format!("{{\"ping\":\"{}\"}}", uuid::Uuid::now_v7());
        loop {
            let next = match tokio::time::timeout(LISTEN_QUIET, listener.try_recv()).await {
                Ok(next) => next?,
                Err(_quiet) => {
                    // Prove the connection still delivers: notify ourselves and expect to hear something.
                    sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(CHANNEL)
                        .bind(&ping)
                        .execute(&self.pool)
                        .await?;
                    match tokio::time::timeout(LISTEN_PING_WAIT, listener.try_recv()).await {
                        Ok(next) => next?,
                        Err(_) => {
                            return Err(sqlx::Error::Io(std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                "the listening connection stopped delivering notifications",
                            )));
                        }
                    }
                }
            };
            let Some(notification) = next else { return Ok(()) };
            if wanted(notification.payload(), schema.as_deref(), &self.queues) {
                self.notify.notify_one();
            }
        }
    }
}

/// True when a notification's payload names one of `queues` (any, when empty) in `schema` (any, when
/// not known yet). Liveness pings and foreign payloads name no queue.
fn wanted(payload: &str, schema: Option<&str>, queues: &HashSet<String>) -> bool {
    let Ok(wake) = serde_json::from_str::<WakePayload>(payload) else {
        return false;
    };
    let Some(queue) = wake.queue else { return false };
    let same_schema = match (schema, wake.schema.as_deref()) {
        (Some(ours), Some(theirs)) => ours == theirs,
        _ => true,
    };
    same_schema && (queues.is_empty() || queues.contains(&queue))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn settings(url: &str) -> Result<Settings, StoreError> {
        Settings::parse(&StoreUrl::parse(url).unwrap())
    }

    #[test]
    fn jobq_options_are_taken_out_of_the_url() {
        let s =
            settings("postgres://u:secret@db.example:6432/app?schema=jobq&sslmode=disable&connect_timeout=2").unwrap();
        assert_eq!(s.schema.as_deref(), Some("jobq"));
        assert_eq!(s.connect_timeout, Duration::from_secs(2));
        assert_eq!(s.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(s.options.get_host(), "db.example");
        assert_eq!(s.options.get_port(), 6432);
        assert_eq!(s.options.get_database(), Some("app"));
        assert_eq!(s.options.get_application_name(), Some("jobq"));
        let s = settings("postgresql://h/db?connect_timeout=1500ms&max_connections=3&application_name=shop").unwrap();
        assert_eq!(s.schema, None);
        assert_eq!(s.connect_timeout, Duration::from_millis(1500));
        assert_eq!(s.max_connections, 3);
        assert_eq!(s.options.get_application_name(), Some("shop"));
    }

    #[test]
    fn bad_jobq_options_are_named_without_the_password() {
        for (url, expected) in [
            ("postgres://u:secret@h/db?schema=", "schema=\"\""),
            ("postgres://u:secret@h/db?max_connections=0", "max_connections=\"0\""),
            ("postgres://u:secret@h/db?connect_timeout=soon", "connect_timeout"),
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
    fn enqueue_statements_are_bounded_by_rows_and_bytes() {
        let job = |payload_bytes: usize| {
            let spec = crate::job::JobSpec::new("t", Value::String("x".repeat(payload_bytes - 2)));
            NewJob::validate(spec, UnixMillis(0), &crate::job::Limits::default()).unwrap()
        };
        let jobs: Vec<NewJob> = [10, 10, 10, 10, 10, 40, 10].into_iter().map(job).collect();
        let all: Vec<usize> = (0..jobs.len()).collect();
        let sizes = |max_rows, max_bytes| -> Vec<usize> {
            chunks_within(&jobs, &all, max_rows, max_bytes)
                .iter()
                .map(|c| c.len())
                .collect()
        };
        assert_eq!(sizes(3, 1_000), [3, 3, 1]);
        assert_eq!(sizes(100, 30), [3, 2, 1, 1]);
        assert!(chunks_within(&jobs, &[], 3, 30).is_empty());
        assert_eq!(enqueue_chunks(&jobs, &all).len(), 1);
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("jobq"), "\"jobq\"");
        assert_eq!(quote_ident("a\"b c"), "\"a\"\"b c\"");
    }

    #[test]
    fn a_lease_sent_twice_is_one_distinct_lease() {
        let lease = |id: &str, attempt| Lease {
            id: JobId::from_stored(id.into()),
            queue: "default".into(),
            attempt,
            worker: "w".into(),
        };
        let batch = [lease("a", 1), lease("a", 2), lease("b", 1), lease("a", 1)];
        let (firsts, representative) = distinct_leases(batch.iter());
        assert_eq!(firsts, [0, 1, 2]);
        assert_eq!(representative, [0, 1, 2, 0]);
    }

    #[test]
    fn notifications_count_for_our_queues_in_our_schema() {
        let queues: HashSet<String> = ["mail".to_string()].into();
        let payload = r#"{"schema" : "jobq", "queue" : "mail"}"#;
        assert!(wanted(payload, Some("jobq"), &queues));
        assert!(wanted(payload, None, &queues));
        assert!(wanted(payload, Some("jobq"), &HashSet::new()));
        assert!(!wanted(payload, Some("other"), &queues));
        assert!(!wanted(r#"{"schema":"jobq","queue":"default"}"#, Some("jobq"), &queues));
        assert!(!wanted(r#"{"ping":"0190"}"#, Some("jobq"), &HashSet::new()));
        assert!(!wanted("not json", None, &HashSet::new()));
    }
}
