//! PostgresStore: many workers on many machines against one PostgreSQL (13 or newer).
//!
//! Every transition two workers could race on is one SQL statement, atomic by itself: a claim locks its
//! candidates with `FOR UPDATE SKIP LOCKED` (concurrent claimers pass over each other's rows instead of
//! waiting) and flips them to `running` in the same statement; rescue picks stale jobs the same way, so
//! two sweepers never take one job back twice; every exit from `running` is fenced in its `WHERE` by
//! (id, attempt, worker, status). Batches travel as one array parameter per column (`unnest($1::text[],
//! …)`), so a statement carries any number of rows for a constant number of parameters and a worker pays
//! one round trip per batch (`enqueue.rs`, `lease.rs`). Errors are appended to the history in SQL,
//! capped there. What the SQL stores share runs in `SqlPool` (`store/sql/`); `settings.rs` reads the URL and
//! connects, `migrate.rs` locks the migration, `listen.rs` turns NOTIFY into wake-ups.
//!
//! Time always comes from the caller; the server's clock only fills the defaults of rows that
//! applications insert by hand. This module never prints a password: every message carries the
//! redacted URL.

mod enqueue;
mod health;
mod import;
mod lease;
mod listen;
mod migrate;
mod settings;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::PgConnectOptions;
use sqlx::{PgConnection, Postgres, Row};
use tokio::sync::Notify;

use self::enqueue::enqueue_chunks;
use self::lease::{
    LAX_COMMIT, LAX_COMMIT_APPLIED, STILL_RUNNING, STILL_RUNNING_FREE, append_error, lease_arrays, pg_text,
};
use self::listen::{Listener, notify_cte};
use self::settings::{DIALECT, Settings};
use super::SqlTables;
use super::batch::{distinct_queues, rounds_by_id};
use super::sql::{Exec, FinishRow, Outcomes, Sql, SqlBackend, SqlPool, all_created, in_claim_order};
use super::{
    Claim, Enqueued, Finding, Finish, Health, Heartbeat, Import, ImportAnswer, Lease, LeaseState, Rescue, Rescued,
    StoreError, StoreInfo, StoreKind, StoreUrl, Subscription, Transition, Usage, WakeOn,
};
use crate::job::{Job, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Postgres;

/// Rows per array statement. Arrays keep the parameter count constant, so this only bounds the memory
/// of one round trip; a `jobq enqueue --file` batch (10,000) is one statement.
const ROWS_PER_STATEMENT: usize = 10_000;

/// Payload bytes per enqueue statement: an array parameter must stay well under PostgreSQL's 1 GB
/// limit on one value, and 10,000 jobs of the largest payload would not.
const BYTES_PER_STATEMENT: usize = 64 * 1024 * 1024;

/// The PostgreSQL store.
#[derive(Clone)]
pub struct PostgresStore {
    sql: SqlPool<Postgres>,
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
            .field("pool", &self.sql.pool)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the server a `postgres://` (or `postgresql://`) URL names. Fails with
    /// [`StoreError::Unavailable`] within `connect_timeout` when the server cannot be reached, and
    /// when it is older than PostgreSQL 13. Does not migrate.
    pub async fn connect(url: &StoreUrl) -> Result<PostgresStore, StoreError> {
        PostgresStore::connect_for(url, Usage::Pooled).await
    }

    /// [`PostgresStore::connect`] for the given use: a one-shot use gets one connection.
    pub async fn connect_for(url: &StoreUrl, usage: Usage) -> Result<PostgresStore, StoreError> {
        let settings = Settings::parse(url)?;
        Ok(PostgresStore {
            sql: settings.open(url, usage).await?,
            listen_options: settings.listen_options(),
            url: url.clone(),
            schema: settings.schema,
            connect_timeout: settings.connect_timeout,
        })
    }

    /// The schema named in the URL, if any.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// `finish` for a batch of successes with no result and no progress, a busy worker's usual batch:
    /// the same change as the general statement makes for them, from three arrays instead of twelve
    /// (unnesting those was a third of a batch's time).
    async fn finish_plain_successes(
        &self,
        conn: &mut PgConnection,
        leases: &[&Lease],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let (count, still_running) = outcomes_of(which);
        let count = if count.is_empty() { "" } else { ", dependents = 0" };
        let sql = format!(
            "UPDATE jobq_jobs AS j SET status = 'succeeded', result = NULL, finished_at = $5, worker_id = NULL{count} \
             FROM unnest($1::int4[], $2::text[], $3::int4[], $4::text[]) AS f(ord, id, attempt, worker) \
             WHERE j.id = ANY($2) AND j.id = f.id AND j.attempt = f.attempt AND j.worker_id = f.worker \
             AND {still_running} RETURNING f.ord"
        );
        self.fenced(conn, &sql, leases, |query, chunk| {
            let (ids, attempts, workers) = lease_arrays(leases, chunk);
            query.bind(ids).bind(attempts).bind(workers).bind(now.0)
        })
        .await
    }

    /// `finish` on `conn`: a connection of the pool, or the transaction of a claim that follows.
    async fn finish_on(
        &self,
        conn: &mut PgConnection,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        if finishes.is_empty() {
            return Ok(Vec::new());
        }
        let leases: Vec<&Lease> = finishes.iter().map(|f| &f.lease).collect();
        if finishes.iter().all(is_plain_success) {
            return self.finish_plain_successes(conn, &leases, now, which).await;
        }
        let (count, still_running) = outcomes_of(which);
        let append = append_error("j.attempt", "$10::int8", "f.error");
        let sql = format!(
            "UPDATE jobq_jobs AS j SET status = f.status, run_at = COALESCE(f.run_at, j.run_at), \
             expires_at = COALESCE(f.expires_at, j.expires_at), result = f.result::json, finished_at = CASE WHEN f.finished THEN $10::int8 END, worker_id = NULL, \
             progress = COALESCE(f.progress, j.progress), \
             progress_message = CASE WHEN f.progress IS NULL THEN j.progress_message ELSE f.message END, \
             errors = CASE WHEN f.error IS NULL THEN j.errors ELSE {append} END, \
             attempt = j.attempt - f.snoozed, snoozes = j.snoozes + f.snoozed{count} \
             FROM unnest($1::int4[], $2::text[], $3::int4[], $4::text[], $5::text[], $6::int8[], $7::text[], \
             $8::text[], $9::bool[], $11::int4[], $12::text[], $13::int4[], $14::int8[]) \
             AS f(ord, id, attempt, worker, status, run_at, result, error, finished, progress, message, snoozed, \
             expires_at) \
             WHERE j.id = ANY($2) AND j.id = f.id AND j.attempt = f.attempt AND j.worker_id = f.worker \
             AND {still_running} \
             RETURNING f.ord"
        );
        let applied = self
            .fenced(conn, &sql, &leases, |query, chunk| {
                let (ids, attempts, workers) = lease_arrays(&leases, chunk);
                let mut statuses = Vec::with_capacity(chunk.len());
                let mut run_ats = Vec::with_capacity(chunk.len());
                let mut results = Vec::with_capacity(chunk.len());
                let mut errors = Vec::with_capacity(chunk.len());
                let mut finished = Vec::with_capacity(chunk.len());
                let mut progress = Vec::with_capacity(chunk.len());
                let mut messages = Vec::with_capacity(chunk.len());
                let mut snoozed = Vec::with_capacity(chunk.len());
                let mut expiries = Vec::with_capacity(chunk.len());
                for &i in chunk {
                    let f = FinishRow::of(&finishes[i]);
                    snoozed.push(f.snoozed);
                    expiries.push(f.expires_at);
                    statuses.push(f.status);
                    run_ats.push(f.run_at);
                    results.push(f.result.map(str::to_string));
                    errors.push(f.error.map(|e| pg_text(e).into_owned()));
                    finished.push(f.finished);
                    progress.push(f.progress);
                    messages.push(f.message.map(|m| pg_text(m).into_owned()));
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
                    .bind(snoozed)
                    .bind(expiries)
            })
            .await?;
        // A lease sent twice applies once: its first occurrence; the job has left `running` for the rest.
        Ok(applied)
    }
}

/// For a finish statement of `which` outcomes: what it adds to its SET (the count of dependents of
/// a job that ends, for `OfAnyJob`) and its check that a row is still running.
fn outcomes_of(which: Outcomes) -> (&'static str, &'static str) {
    match which {
        Outcomes::OfFreeJobs => ("", STILL_RUNNING_FREE),
        Outcomes::OfAnyJob => (
            ", dependents = CASE WHEN f.status IN ('succeeded', 'dead', 'discarded') THEN 0 ELSE j.dependents END",
            STILL_RUNNING,
        ),
    }
}

/// A success that carries no result and reports no progress: all it changes is the status, the
/// finish time and the worker.
fn is_plain_success(finish: &Finish) -> bool {
    matches!(finish.outcome, Transition::Succeeded { result: None }) && finish.progress.is_none()
}

#[async_trait]
impl SqlBackend for PostgresStore {
    fn shared(&self) -> &Sql {
        &self.sql
    }

    /// In the URL's schema when it names one (quoted as an identifier); otherwise unqualified, found
    /// on the application connection's search path as on jobq's.
    fn sql_tables(&self) -> SqlTables {
        let schema = self
            .schema
            .as_deref()
            .map(|s| format!("\"{}\".", s.replace('"', "\"\"")));
        SqlTables::new(&settings::DIALECT, &schema.unwrap_or_default(), false)
    }

    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        self.sql.import(import).await
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let mut settings = self
            .sql
            .settings(
                "SELECT current_setting('server_version'), current_database()::text, current_schema()::text, \
                 current_setting('synchronous_commit'), current_setting('default_transaction_isolation'), \
                 current_setting('fsync'), current_setting('autovacuum')",
            )
            .await?;
        let mut text = |i: usize| std::mem::take(&mut settings[i]);
        let version = text(0);
        let schema = Some(text(2)).filter(|s| !s.is_empty());
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: format!("PostgreSQL {version}"),
            settings: vec![
                ("database".into(), text(1)),
                (
                    "schema".into(),
                    schema.or_else(|| self.schema.clone()).unwrap_or_default(),
                ),
                ("synchronous_commit".into(), text(3)),
                ("isolation".into(), text(4)),
                ("fsync".into(), text(5)),
                ("autovacuum".into(), text(6)),
            ],
        })
    }

    async fn apply_migrations(&self) -> Result<(), StoreError> {
        self.apply_migrations_locked().await
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        // Rounds in which no id appears twice, so that `RETURNING id` names exactly one input per row:
        // an id repeated in the batch is answered after its first occurrence exists (or was coalesced
        // away).
        let rounds = rounds_by_id(jobs, |j| j.id.as_str());
        // One round and no unique key is a plain batch: the rounds have looked at every id already.
        let plain = rounds.len() == 1 && jobs.iter().all(|j| j.unique_key.is_none());
        if let Some(created) = self
            .sql
            .enqueue_plain(jobs, plain, || self.insert_all(jobs, &rounds[0]))
            .await?
        {
            return Ok(created);
        }
        if let [job] = jobs {
            if self
                .insert_one_unless_taken(job)
                .await
                .map_err(self.sql.fail("enqueue"))?
            {
                return Ok(all_created(jobs));
            }
            // Refused: say why with one read; only a clash that vanished meanwhile goes the long way.
            let mut conn = self.sql.pool.acquire().await.map_err(self.sql.fail("enqueue"))?;
            if let Some(answer) = self.conflicts(&mut conn, jobs, &[0]).await?.pop().flatten() {
                return Ok(vec![answer]);
            }
        }
        if rounds.len() == 1 && enqueue_chunks(jobs, &rounds[0]).len() == 1 {
            // The common case, one statement: atomic by itself, so no BEGIN and COMMIT round trips (a
            // single job reaches a waiting worker sooner). Only if a clash vanishes before it can be read
            // does a second statement insert the rows it refused.
            let mut conn = self.sql.pool.acquire().await.map_err(self.sql.fail("enqueue"))?;
            return self.enqueue_rounds(&mut conn, jobs, rounds).await;
        }
        let mut tx = self.sql.pool.begin().await.map_err(self.sql.fail("starting enqueue"))?;
        let answers = self.enqueue_rounds(&mut tx, jobs, rounds).await?;
        tx.commit().await.map_err(self.sql.fail("committing enqueue"))?;
        Ok(answers)
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        let queues = distinct_queues(&claim.queues);
        // The candidates: pending, ready, not excluded, in claim order, locked with SKIP LOCKED so that
        // concurrent claimers pass over each other's rows instead of queueing behind them. One queue is
        // one ordered scan of the ready index. Several queues are one ordering: each queue's best `limit`
        // (a LATERAL scan of its part of the index, locked) merged and cut to `limit`, so a claim never
        // sorts a whole backlog; the few extra rows stay locked only until the statement ends. Joined to
        // the CTE instead of `= ANY(ARRAY(…))`, the update tends to hash the whole table for a batch of
        // a few hundred.
        let unexpired = DIALECT.unexpired("j.");
        let candidates = if queues.len() == 1 {
            format!(
                "SELECT j.ctid FROM jobq_jobs j WHERE j.status = 'pending' AND j.queue = $1[1] AND j.run_at <= $2 \
                 AND j.job_type <> ALL($3){unexpired} ORDER BY j.priority, j.run_at, j.id LIMIT $4 \
                 FOR UPDATE SKIP LOCKED"
            )
        } else {
            format!(
                "SELECT l.ctid FROM unnest($1::text[]) AS qn(queue) CROSS JOIN LATERAL (\
                 SELECT j.ctid, j.priority, j.run_at, j.id FROM jobq_jobs j WHERE j.status = 'pending' \
                 AND j.queue = qn.queue AND j.run_at <= $2 AND j.job_type <> ALL($3){unexpired} \
                 ORDER BY j.priority, j.run_at, j.id LIMIT $4 FOR UPDATE SKIP LOCKED) AS l \
                 ORDER BY l.priority, l.run_at, l.id LIMIT $4"
            )
        };
        // The update finds the locked rows by their physical address (`ctid = ANY(ARRAY(…))`, a TID
        // scan): a row locked by this statement stays where it is until the statement ends, and it saves
        // the batch's primary-key look-ups, a fifth of a claim's time. Were a candidate's newest version
        // one this statement's snapshot cannot see (a concurrent replace of a pending job), it is left
        // pending, unclaimed, for the next claim. The claim commits without waiting for its WAL flush
        // (see `LAX_COMMIT`).
        let sql = format!(
            "WITH {LAX_COMMIT}, c AS ({candidates}) UPDATE jobq_jobs AS j SET status = 'running', \
             attempt = j.attempt + 1, worker_id = $5, started_at = $2, heartbeat_at = $2, progress = NULL, \
             progress_message = NULL WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM c)) AND {LAX_COMMIT_APPLIED} \
             RETURNING {}",
            DIALECT.job_columns
        );
        // Prepared once per connection, planned for each claim (`force_custom_plan`): a generic plan of
        // this one (limit and queue unknown) may sort the whole table instead of walking the ready index.
        let rows = sqlx::query(&sql)
            .bind(queues)
            .bind(claim.now.0)
            .bind(&claim.exclude_types)
            .bind(i64::from(claim.limit))
            .bind(&claim.worker)
            .fetch_all(&self.sql.pool)
            .await
            .map_err(self.sql.fail("claim"))?;
        // RETURNING has no order.
        in_claim_order(&rows, KIND)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        if beats.is_empty() {
            return Ok(Vec::new());
        }
        let leases: Vec<&Lease> = beats.iter().map(|b| &b.lease).collect();
        let mut states = vec![LeaseState::Lost; beats.len()];
        // One statement records the beats and, for the leases that no longer hold, reads the job's
        // status (from the snapshot before the update, which the update did not touch for them) to
        // tell a cancellation from a loss. Planned for each batch, like the other fenced statements
        // (see `fenced`); committed without waiting for the flush (`LAX_COMMIT`).
        let sql = format!(
            "WITH {LAX_COMMIT}, b AS (SELECT * FROM \
             unnest($1::int4[], $2::text[], $3::int4[], $4::text[], $5::int4[], $6::text[]) \
             AS b(ord, id, attempt, worker, progress, message)), \
             u AS (UPDATE jobq_jobs AS j SET heartbeat_at = $7, progress = COALESCE(b.progress, j.progress), \
             progress_message = CASE WHEN b.progress IS NULL THEN j.progress_message ELSE b.message END \
             FROM b WHERE j.id = ANY($2) AND j.id = b.id AND j.attempt = b.attempt AND j.worker_id = b.worker \
             AND {STILL_RUNNING} AND {LAX_COMMIT_APPLIED} \
             RETURNING b.ord, j.cancel_requested AND j.dependents > 0 AS stop) \
             SELECT b.ord, u.ord IS NOT NULL, j.status, COALESCE(u.stop, false) FROM b LEFT JOIN u ON u.ord = b.ord \
             LEFT JOIN jobq_jobs j ON u.ord IS NULL AND j.id = b.id",
        );
        for chunk in rounds_by_id(&leases, |l| l.id.as_str())
            .iter()
            .flat_map(|round| round.chunks(ROWS_PER_STATEMENT))
        {
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
            let rows = sqlx::query(&sql)
                .bind(ords)
                .bind(ids)
                .bind(attempts)
                .bind(workers)
                .bind(percents)
                .bind(messages)
                .bind(now.0)
                .fetch_all(&self.sql.pool)
                .await
                .map_err(self.sql.fail("heartbeat"))?;
            for row in &rows {
                let i = chunk[row.get::<i32, _>(0) as usize];
                let held: bool = row.get(1);
                let status: Option<&str> = row.get(2);
                let asked_to_stop: bool = row.get(3);
                states[i] = if held && asked_to_stop {
                    LeaseState::CancelRequested
                } else if held {
                    LeaseState::Held
                } else if status == Some(JobStatus::Cancelled.as_str()) {
                    LeaseState::Cancelled
                } else {
                    LeaseState::Lost
                };
            }
        }
        Ok(states)
    }

    async fn finish_in(
        &self,
        tx: &mut dyn Exec,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        self.finish_on(tx.raw().postgres(), finishes, now, which).await
    }

    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError> {
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
             AND {STILL_RUNNING} \
             RETURNING r.ord, j.queue, j.status), {} \
             SELECT u.ord FROM u CROSS JOIN n",
            notify_cte("u")
        );
        let mut conn = self.sql.pool.acquire().await.map_err(self.sql.fail("release"))?;
        self.fenced(&mut conn, &sql, &refs, |query, chunk| {
            let (ids, attempts, workers) = lease_arrays(&refs, chunk);
            query.bind(ids).bind(attempts).bind(workers)
        })
        .await
        .map_err(self.sql.fail("release"))
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        use crate::store::sql::DYING_LEFT_TO_SHARED;
        // SKIP LOCKED: a job another sweeper (or its own worker's heartbeat) holds right now is left to
        // it; the locked rows are re-checked before the update, so a job rescued meanwhile is not taken.
        let append = append_error("j.attempt", "$1::int8", "'worker lost'");
        let sql = format!(
            "WITH s AS (SELECT id FROM jobq_jobs WHERE status = 'running' AND heartbeat_at < $2 \
             AND {DYING_LEFT_TO_SHARED} ORDER BY heartbeat_at LIMIT $3 FOR UPDATE SKIP LOCKED), \
             u AS (UPDATE jobq_jobs AS j SET \
             status = CASE WHEN j.attempt >= j.max_attempts THEN 'dead' ELSE 'pending' END, \
             finished_at = CASE WHEN j.attempt >= j.max_attempts THEN $1::int8 END, \
             run_at = $1::int8, worker_id = NULL, heartbeat_at = NULL, errors = {append} \
             WHERE j.id = ANY(ARRAY(SELECT id FROM s)) \
             RETURNING j.id, j.job_type, j.attempt, j.max_attempts, j.status, j.queue), {} \
             SELECT u.id, u.job_type, u.attempt, u.max_attempts FROM u CROSS JOIN n ORDER BY u.id",
            notify_cte("u")
        );
        let rows = sqlx::query(&sql)
            .persistent(false)
            .bind(rescue.now.0)
            .bind(rescue.stale_before.0)
            .bind(i64::from(rescue.limit))
            .fetch_all(&self.sql.pool)
            .await
            .map_err(self.sql.fail("rescue"))?;
        self.sql.rescued(&rows)
    }

    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError> {
        self.health_findings(health).await
    }

    async fn close(&self) {
        self.sql.close().await
    }

    /// Work that becomes ready is announced by NOTIFY; other changes are not.
    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        let WakeOn::Ready(queues) = on else { return None };
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let listener = Listener {
            options: self.listen_options.clone(),
            pool: self.sql.pool.clone(),
            queues: queues.iter().cloned().collect(),
            notify,
            connect_timeout: self.connect_timeout,
            url: self.url.redacted().to_string(),
        };
        Some(self.sql.subscription(&runtime, |stop| listener.run(stop)))
    }
}
