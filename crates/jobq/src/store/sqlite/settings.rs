//! What a `sqlite://` URL says and how the store opens its file: the durability level (`synchronous`,
//! NORMAL by default: a power cut may lose the last transactions, never corrupt the file) and how long a
//! writer waits for another process's lock (`busy_timeout`), and SQLite's [`Dialect`].

use std::time::{Duration, Instant};

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

use crate::store::sql::{Dialect, FilterCancel};
use crate::store::url::UrlOptions;
use crate::store::{StoreError, StoreKind, StoreUrl, Usage};

/// How SQLite spells what differs.
pub(super) const DIALECT: Dialect = Dialect {
    job_columns: "j.id, j.queue, j.job_type, j.payload, j.meta, j.priority, j.status, j.attempt, j.max_attempts, \
         j.run_at, COALESCE(j.unique_key, j.yielded_key), j.timeout_ms, j.progress, j.progress_message, j.result, j.errors, j.created_at, \
         j.started_at, j.finished_at, j.heartbeat_at, j.worker_id, j.snoozes, j.waits, j.wait_any, j.expires_at, j.unique_mode",
    // The write lock up front: what the transaction reads stays true until it writes. One writer then
    // holds the whole database: there is no row to lock or skip, no lock race to lose, no key taken
    // meanwhile; a file does not go away the way a server does; and workers watch the file, so every
    // commit wakes them.
    begin_write: "BEGIN IMMEDIATE",
    for_update: "",
    lock_skipping: "",
    cancel_by_filter: FilterCancel::SameFilterTwice,
    now_millis: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
    expiry_due: "j.status IN ('blocked', 'pending') AND j.expires_at <= ",
    migrations_exist: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobq_migrations'",
    migrations_table: "CREATE TABLE IF NOT EXISTS jobq_migrations (version INTEGER PRIMARY KEY, \
     name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    restates_partial_index: true,
    is_locked_out: is_busy,
    // An id that exists already, which sends an enqueue's plain insert to the checked path.
    is_unique_violation,
    ..Dialect::of(StoreKind::Sqlite)
};

/// The URL's options.
pub(super) struct Settings {
    pub synchronous: SqliteSynchronous,
    /// Its name, as `info` reports it.
    pub synchronous_name: &'static str,
    pub busy_timeout: Duration,
    /// Each connection's page cache, in KiB (`PRAGMA cache_size` of minus this).
    pub cache_kib: u32,
    /// How long an unused pooled connection is kept open.
    pub idle_timeout: Duration,
}

/// A worker's (and an application's) page cache per connection: its claims, finishes and heartbeats
/// read the same index pages over and over.
const WORKING_CACHE_KIB: u32 = 32_000;

/// `jobq serve`'s (see [`Usage::Serving`]): SQLite's own default. Its large reads (the stats count,
/// a pass over the queue/status index of every job) go through the whole index whatever the cache
/// holds, and come from the operating system's file cache at about the same speed; the lists and
/// shows read a few pages of the upper index levels, which a small cache keeps. With 32 MB, four
/// connections kept 168 MiB after a load at a million jobs (BENCHMARKS.md, `jobq serve`).
const SERVING_CACHE_KIB: u32 = 2_000;

impl Settings {
    /// The page cache and idle time-out for a use of the store.
    pub fn for_usage(mut self, usage: Usage) -> Settings {
        if usage == Usage::Serving {
            self.cache_kib = SERVING_CACHE_KIB;
            // What a connection holds (its cache, statements, the allocator's share) goes back a
            // minute after the last request that needed it; a busy server keeps its connections.
            self.idle_timeout = Duration::from_secs(60);
        }
        self
    }
}

impl Settings {
    pub fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let options = UrlOptions::split(url, &["synchronous", "busy_timeout"])?;
        let (synchronous, synchronous_name) = options
            .parsed("synchronous", |value| match value.to_ascii_lowercase().as_str() {
                "normal" => Ok((SqliteSynchronous::Normal, "NORMAL")),
                "full" => Ok((SqliteSynchronous::Full, "FULL")),
                "extra" => Ok((SqliteSynchronous::Extra, "EXTRA")),
                "off" => Ok((SqliteSynchronous::Off, "OFF")),
                other => Err(format!("synchronous={other:?} (expected normal, full, extra or off)")),
            })?
            .unwrap_or((SqliteSynchronous::Normal, "NORMAL"));
        let busy_timeout = options
            .parsed("busy_timeout", |value| {
                crate::time::parse_duration(value).map_err(|reason| format!("busy_timeout: {reason}"))
            })?
            .unwrap_or(Duration::from_secs(30));
        Ok(Settings {
            synchronous,
            synchronous_name,
            busy_timeout,
            cache_kib: WORKING_CACHE_KIB,
            idle_timeout: Duration::from_secs(600),
        })
    }

    /// Opens (creating if missing) the database file and puts it in WAL mode (see [`enter_wal`]).
    pub async fn open(&self, url: &StoreUrl) -> Result<SqlitePool, StoreError> {
        // No journal_mode here: sqlx would set it without waiting for another process (see
        // `enter_wal`, which each connection runs instead, on itself: a statement, where the pool
        // would open a second connection for it while it still takes the first one back).
        let options = SqliteConnectOptions::new()
            .filename(url.sqlite_path())
            .create_if_missing(true)
            .synchronous(self.synchronous)
            .busy_timeout(self.busy_timeout)
            .pragma("cache_size", format!("-{}", self.cache_kib))
            .pragma("temp_store", "memory");
        let busy_timeout = self.busy_timeout;
        let started = Instant::now();
        let pool = SqlitePoolOptions::new()
            // SQLite's own wait for the write lock sleeps in whole milliseconds; see `busy.rs`.
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    {
                        let mut handle = connection.lock_handle().await?;
                        // SAFETY: the handle is locked for this call, so no statement runs on it meanwhile.
                        unsafe { super::busy::install(handle.as_raw_handle().as_ptr(), busy_timeout) };
                    }
                    enter_wal(connection, busy_timeout).await
                })
            })
            .max_connections(4)
            .min_connections(0)
            .idle_timeout(Some(self.idle_timeout))
            // A file does not hang up: no ping (a round trip to the connection's thread) before each use.
            .test_before_acquire(false)
            .acquire_timeout(self.busy_timeout + Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(|e| open_failed("opening the file", url, started, e))?;
        Ok(pool)
    }
}

/// What opening the file met while doing `operation` (begun at `started`): another process's lock
/// held past `busy_timeout` (the file's first read waits for one), or a file that cannot be opened.
fn open_failed(operation: &'static str, url: &StoreUrl, started: Instant, e: sqlx::Error) -> StoreError {
    if is_busy(&e) {
        StoreError::locked(StoreKind::Sqlite, operation, &url.redacted(), started.elapsed(), &e)
    } else {
        StoreError::unavailable(StoreKind::Sqlite, &url.redacted(), &e)
    }
}

/// Puts the file in WAL mode on a new connection, waiting up to `busy_timeout` for other processes as
/// any write does.
///
/// The switch of a file that is not in WAL mode yet (a new one) reads its first page, then takes the
/// file's exclusive lock to write the mode into it. SQLite does not call the busy handler for a lock
/// taken by a connection that already reads (two such connections could wait for each other for
/// ever), so where another process holds the file at that moment (creating it, switching it, migrating
/// it) the switch fails at once with `SQLITE_BUSY`; sqlx's own `journal_mode` option gives up there
/// (launchbadge/sqlx#1930). Here the switch is tried again, with the busy handler's pauses. A file in
/// WAL mode answers at once, with no lock beyond a read.
async fn enter_wal(connection: &mut SqliteConnection, busy_timeout: Duration) -> Result<(), sqlx::Error> {
    let started = Instant::now();
    let mut tries = 0;
    loop {
        match sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *connection).await {
            Err(e) if is_busy(&e) => match super::busy::pause(tries, started.elapsed(), busy_timeout) {
                Some(pause) => {
                    tokio::time::sleep(pause).await;
                    tries = tries.saturating_add(1);
                }
                None => return Err(e),
            },
            done => return done.map(drop),
        }
    }
}

/// Whether a driver error is `SQLITE_BUSY` (any of its extended codes): another connection held the
/// lock for all of `busy_timeout`, or where SQLite does not wait, at that moment.
fn is_busy(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db)
        if db.code().and_then(|code| code.parse::<i32>().ok()).is_some_and(|code| code & 0xff == 5))
}

/// Whether a driver error is a unique index refusing a row.
fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}
