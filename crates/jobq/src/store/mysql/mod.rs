//! MysqlStore: many workers on many machines against one MySQL 8 (8.0.16 or newer) or MariaDB (10.6 or
//! newer) database.
//!
//! MySQL has no `UPDATE … RETURNING`, so every transition that two workers could race on is one short
//! transaction that locks its rows, changes them with one statement and commits (`lease.rs`, `bulk.rs`).
//! Batches travel as one JSON array parameter read with `JSON_TABLE` (`statements.rs`). Deadlocks and
//! lock-wait time-outs are retried here a few times (the transaction is rolled back and run again); what
//! still fails goes to the caller, whose worker retries with back-off, so neither can wedge a claim
//! loop. What the SQL stores share runs in `SqlPool` (`store/sql/`); `settings.rs` reads the URL and connects,
//! `migrate.rs` locks the migration, `poll.rs` looks for ready work in place of notifications.
//!
//! Text is utf8mb4 with the binary collation on the tables and on every connection. Time always comes
//! from the caller; the server's clock only fills the defaults of rows that applications insert by
//! hand. Passwords never appear in a message.

mod enqueue;
mod lease;
mod migrate;
mod poll;
mod settings;
mod statements;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::MySql;
use tokio::sync::Notify;

use self::poll::Watcher;
use self::settings::{Settings, is_duplicate};
use self::statements::TRANSIENT_TRIES;
use super::SqlTables;
use super::batch::{distinct_queues, rounds_by_id};
use super::sql::{Exec, Outcomes, Sql, SqlBackend, SqlPool, is_plain};
use super::{
    Claim, Enqueued, Finding, Finish, Health, Heartbeat, Import, ImportAnswer, Lease, LeaseState, Rescue, Rescued,
    StoreError, StoreInfo, StoreKind, StoreUrl, Subscription, Usage, WakeOn,
};
use crate::job::{Job, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Mysql;

/// Rows per JSON-array statement (leases, ids): bounds the memory of one round trip only.
const ROWS_PER_STATEMENT: usize = 5_000;

/// Tries of a checked enqueue whose insert clashes with a job written meanwhile by another producer.
const ENQUEUE_ROUNDS: u32 = 5;

/// The MySQL store. Its Debug shows no password: the pool keeps its connect options to itself, and the
/// URL shows itself redacted.
#[derive(Debug, Clone)]
pub struct MysqlStore {
    sql: SqlPool<MySql>,
    url: StoreUrl,
    database: String,
    version: String,
    wake_poll: Duration,
}

impl MysqlStore {
    /// Connects to the database a `mysql://` (or `mariadb://`) URL names. Fails with
    /// [`StoreError::Unavailable`] within `connect_timeout` when the server cannot be reached, and when
    /// it is older than MySQL 8.0.16 or MariaDB 10.6. Does not migrate.
    pub async fn connect(url: &StoreUrl) -> Result<MysqlStore, StoreError> {
        MysqlStore::connect_for(url, Usage::Pooled).await
    }

    /// [`MysqlStore::connect`] for the given use: a one-shot use gets one connection.
    pub async fn connect_for(url: &StoreUrl, usage: Usage) -> Result<MysqlStore, StoreError> {
        let settings = Settings::parse(url)?;
        let (sql, version) = settings.open(url, usage).await?;
        Ok(MysqlStore {
            sql,
            url: url.clone(),
            database: settings.database,
            version,
            wake_poll: settings.wake_poll,
        })
    }

    /// The database the URL names.
    pub fn database(&self) -> &str {
        &self.database
    }
}

#[async_trait]
impl SqlBackend for MysqlStore {
    fn shared(&self) -> &Sql {
        &self.sql
    }

    /// In the URL's database, which the application's connection may not have chosen.
    fn sql_tables(&self) -> SqlTables {
        let database = format!("`{}`.", self.database.replace('`', "``"));
        SqlTables::new(&settings::DIALECT, &database, false)
    }

    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        self.sql.import(import).await
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        // The version was read when connecting; MariaDB says so in it.
        let flavour = if self.version.to_ascii_lowercase().contains("mariadb") {
            "MariaDB"
        } else {
            "MySQL"
        };
        let settings = self
            .sql
            .settings(
                "SELECT DATABASE(), CAST(@@innodb_flush_log_at_trx_commit AS CHAR), CAST(@@sync_binlog AS CHAR), \
                 CAST(@@SESSION.innodb_lock_wait_timeout AS CHAR), CAST(@@max_allowed_packet AS CHAR)",
            )
            .await?;
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: format!("{flavour} {}", self.version),
            settings: vec![
                ("database".into(), settings[0].clone()),
                ("isolation".into(), "READ-COMMITTED".into()),
                ("innodb_flush_log_at_trx_commit".into(), settings[1].clone()),
                ("sync_binlog".into(), settings[2].clone()),
                ("innodb_lock_wait_timeout".into(), settings[3].clone()),
                ("max_allowed_packet".into(), settings[4].clone()),
                ("wake_poll".into(), crate::time::format_duration(self.wake_poll)),
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
        // One job goes in with the plain insert even with a unique key: the index of live keys refuses
        // it when a live job holds the key (as it refuses an id that exists), and the checked path
        // below then says why. Most keyed jobs a web request enqueues find no holder.
        if let Some(created) = self
            .sql
            .enqueue_plain(jobs, is_plain(jobs) || jobs.len() == 1, || self.insert_all(jobs))
            .await?
        {
            return Ok(created);
        }
        if let [job] = jobs
            && job.unique_key.is_some()
            && let Some(answer) = self.why_refused(job).await.map_err(self.sql.fail("enqueue"))?
        {
            return Ok(vec![answer]);
        }
        self.retrying("enqueue", ENQUEUE_ROUNDS, is_duplicate, || self.enqueue_checked(jobs))
            .await
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        let queues = distinct_queues(&claim.queues);
        self.retrying("claim", TRANSIENT_TRIES, |_| false, || self.claim_once(claim, &queues))
            .await
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        let mut out = vec![LeaseState::Lost; beats.len()];
        for chunk in rounds_by_id(beats, |b| b.lease.id.as_str())
            .iter()
            .flat_map(|round| round.chunks(ROWS_PER_STATEMENT))
        {
            let refs: Vec<&Heartbeat> = chunk.iter().map(|&i| &beats[i]).collect();
            let states = self
                .retrying(
                    "heartbeat",
                    TRANSIENT_TRIES,
                    |_| false,
                    || self.heartbeat_once(&refs, now),
                )
                .await?;
            for (&i, state) in chunk.iter().zip(states) {
                out[i] = state;
            }
        }
        Ok(out)
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let mut out = vec![false; finishes.len()];
        for chunk in rounds_by_id(finishes, |f| f.lease.id.as_str())
            .iter()
            .flat_map(|round| round.chunks(ROWS_PER_STATEMENT))
        {
            let refs: Vec<&Finish> = chunk.iter().map(|&i| &finishes[i]).collect();
            let applied = self
                .retrying("finish", TRANSIENT_TRIES, |_| false, || self.finish_once(&refs, now))
                .await?;
            for (&i, applied) in chunk.iter().zip(applied) {
                out[i] = applied;
            }
        }
        // A lease repeated in a batch applied in its first round only; the job left `running` for the rest.
        Ok(out)
    }

    async fn finish_in(
        &self,
        tx: &mut dyn Exec,
        finishes: &[Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let conn = tx.raw().mysql();
        let mut out = vec![false; finishes.len()];
        for chunk in rounds_by_id(finishes, |f| f.lease.id.as_str())
            .iter()
            .flat_map(|round| round.chunks(ROWS_PER_STATEMENT))
        {
            let refs: Vec<&Finish> = chunk.iter().map(|&i| &finishes[i]).collect();
            let applied = self.finish_on(conn, &refs, now, which).await?;
            for (&i, applied) in chunk.iter().zip(applied) {
                out[i] = applied;
            }
        }
        Ok(out)
    }

    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError> {
        let mut out = vec![false; leases.len()];
        for chunk in rounds_by_id(leases, |l| l.id.as_str())
            .iter()
            .flat_map(|round| round.chunks(ROWS_PER_STATEMENT))
        {
            let refs: Vec<&Lease> = chunk.iter().map(|&i| &leases[i]).collect();
            let released = self
                .retrying("release", TRANSIENT_TRIES, |_| false, || self.release_once(&refs))
                .await?;
            for (&i, released) in chunk.iter().zip(released) {
                out[i] = released;
            }
        }
        Ok(out)
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        self.retrying("rescue", TRANSIENT_TRIES, |_| false, || self.rescue_once(rescue))
            .await
    }

    async fn health(&self, health: &Health) -> Result<Vec<Finding>, StoreError> {
        // Nothing MySQL-specific puts jobs at risk the way a missing vacuum or persistence does.
        let _ = health;
        Ok(Vec::new())
    }

    async fn close(&self) {
        self.sql.close().await
    }

    /// Polls for ready work; other changes are not announced.
    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        let WakeOn::Ready(queues) = on else { return None };
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let watcher = Watcher {
            pool: self.sql.pool.clone(),
            queues: queues.to_vec(),
            notify,
            every: self.wake_poll,
            url: self.url.redacted().to_string(),
        };
        Some(self.sql.subscription(&runtime, |stop| watcher.run(stop)))
    }
}
