//! What a `mysql://` URL says and how the store connects: sqlx's URL (`ssl-mode`, `socket`, …; it must
//! name the database; `mariadb://` is the same) plus jobq's own options, taken out before sqlx sees it:
//! `connect_timeout=SECS` (default 5), `max_connections=N` (default 10), `lock_wait_timeout=SECS`
//! (default 5) and `wake_poll=DURATION` (default 5ms). Also MySQL's [`Dialect`] and which of its errors
//! mean "unreachable", "lost a lock race" and "duplicate key". Connections run at READ COMMITTED (a
//! locking read then takes no gap locks, so claims never block enqueues) with utf8mb4 and the binary
//! collation. Never prints a password.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Executor;
use sqlx::MySql;
use sqlx::mysql::{MySqlConnectOptions, MySqlDatabaseError, MySqlPoolOptions};

use super::statements::text;
use crate::store::sql::{self, Dialect, LimitedDelete, SqlPool, Upsert};
use crate::store::url::UrlOptions;
use crate::store::{StoreError, StoreKind, StoreUrl, Usage};

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pool size unless the URL says otherwise (`max_connections`).
const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// InnoDB's row-lock wait unless the URL says otherwise (`lock_wait_timeout`, whole seconds). The
/// server's default, 50 s, would hold a worker's acknowledgements that long behind one stuck lock.
const DEFAULT_LOCK_WAIT_SECS: u64 = 5;

/// How often a subscription looks for ready jobs unless the URL says otherwise (`wake_poll`).
const DEFAULT_WAKE_POLL: Duration = Duration::from_millis(5);

/// How MySQL spells what differs.
pub(super) const DIALECT: Dialect = Dialect {
    job_columns: "j.id, j.queue, j.job_type, j.payload, j.meta, j.priority, j.status, j.attempt, j.max_attempts, \
         j.run_at, COALESCE(j.unique_key, j.yielded_key), j.timeout_ms, j.progress, j.progress_message, j.result, j.errors, j.created_at, \
         j.started_at, j.finished_at, j.heartbeat_at, j.worker_id, j.snoozes, j.waits, j.wait_any, j.expires_at, j.unique_mode",
    // A bounded DELETE locks what it deletes, with a LIMIT of its own; there is no SKIP LOCKED for it.
    limited_delete: LimitedDelete::Inline,
    upsert: Upsert::OnDuplicateKey,
    now_millis: "CAST(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) AS SIGNED)",
    expiry_due: "j.unstarted_expiry <= ",
    migrations_exist: "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() \
         AND table_name = 'jobq_migrations'",
    migrations_table: "CREATE TABLE IF NOT EXISTS jobq_migrations (version INT NOT NULL PRIMARY KEY, \
     name VARCHAR(255) NOT NULL, checksum VARCHAR(64) NOT NULL, applied_at BIGINT NOT NULL) \
     ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin",
    is_unreachable,
    is_lock_conflict,
    is_unique_violation: is_duplicate,
    // Workers poll for ready jobs (`poll.rs`): there is no listener to notify.
    ..Dialect::of(StoreKind::Mysql)
};

/// What a `mysql://` URL says, jobq's own options taken out.
pub(super) struct Settings {
    pub options: MySqlConnectOptions,
    pub database: String,
    pub connect_timeout: Duration,
    pub max_connections: u32,
    pub lock_wait_secs: u64,
    pub wake_poll: Duration,
}

impl Settings {
    pub fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let ours = UrlOptions::split(
            url,
            &["connect_timeout", "max_connections", "lock_wait_timeout", "wake_poll"],
        )?;
        let connect_timeout = ours.duration("connect_timeout", DEFAULT_CONNECT_TIMEOUT)?;
        let max_connections = ours.count("max_connections", DEFAULT_MAX_CONNECTIONS)?;
        // InnoDB counts whole seconds; a shorter wait rounds up to one.
        let lock_wait = ours.duration("lock_wait_timeout", Duration::from_secs(DEFAULT_LOCK_WAIT_SECS))?;
        let lock_wait_secs = lock_wait.as_secs() + u64::from(lock_wait.subsec_nanos() > 0);
        let wake_poll = ours.duration("wake_poll", DEFAULT_WAKE_POLL)?;
        // sqlx knows the scheme `mysql` only; `mariadb://` names the same server protocol.
        let driver_url = match ours.driver_url().split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => format!("mysql://{rest}"),
            _ => ours.driver_url().to_string(),
        };
        let parsed = url::Url::parse(&driver_url).map_err(|e| ours.invalid(e.to_string()))?;
        let database = parsed.path().trim_start_matches('/').to_string();
        if database.is_empty() || database.contains('/') {
            return Err(ours.invalid("no database named (expected mysql://user@host:3306/DATABASE; create it first)"));
        }
        let options = MySqlConnectOptions::from_str(&driver_url)
            .map_err(|e| ours.invalid(e.to_string()))?
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

    /// Makes the pool and, on its first connection, checks that the server answers and is new enough;
    /// that connection stays in the pool for the first call. Returns the server's version too. A
    /// one-shot use gets a pool of one.
    pub async fn open(&self, url: &StoreUrl, usage: Usage) -> Result<(SqlPool<MySql>, String), StoreError> {
        let unavailable = |source: &(dyn std::error::Error + 'static)| {
            StoreError::unavailable(StoreKind::Mysql, &url.redacted(), source)
        };
        let setup = format!("SET SESSION innodb_lock_wait_timeout = {}", self.lock_wait_secs);
        let max_connections = match usage {
            Usage::OneShot => 1,
            _ => self.max_connections,
        };
        let pool = MySqlPoolOptions::new()
            .max_connections(max_connections)
            .min_connections(0)
            // A ping before each use (sqlx's default) would be a round trip per store call.
            .test_before_acquire(false)
            .before_acquire(sql::ping_if_idle::<MySql>)
            // Waiting for a free connection is bounded too: a saturated or vanished server turns into an
            // error the caller can retry, never a hang.
            .acquire_timeout(self.connect_timeout * 2)
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
            .connect_lazy_with(self.options.clone());
        let mut first = sql::first_connection(StoreKind::Mysql, url, self.connect_timeout, &pool).await?;
        let version: String = sqlx::query("SELECT VERSION()")
            .fetch_one(&mut *first)
            .await
            .map(|row| text(&row, 0))
            .map_err(|e| unavailable(&e))?;
        drop(first);
        if let Some(why) = too_old(&version) {
            return Err(unavailable(&std::io::Error::other(why)));
        }
        let kept = match usage {
            Usage::OneShot => 0,
            _ => sql::KEPT,
        };
        Ok((SqlPool::new(pool, &DIALECT, url.redacted(), kept), version))
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
    sql::is_network_error(e) || matches!(error_number(e), Some(1040 | 1053 | 1927))
}

/// True for a deadlock (1213) or a lock-wait time-out (1205): the statement lost a race for a row
/// lock and running the transaction again is the remedy.
pub(super) fn is_lock_conflict(e: &sqlx::Error) -> bool {
    matches!(error_number(e), Some(1205 | 1213))
}

/// True for a duplicate key (1062): a primary key or a live unique key taken meanwhile.
pub(super) fn is_duplicate(e: &sqlx::Error) -> bool {
    matches!(error_number(e), Some(1062))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::url::{assert_refused_without_password, read_url};

    /// What the store makes of a URL's options.
    fn read(url: &str) -> Result<Settings, StoreError> {
        read_url(url, Settings::parse)
    }

    #[test]
    fn timeouts_pool_size_and_wake_poll_are_taken_out_of_the_url() {
        let s = read(
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
        let s = read("mariadb://h/jobs?max_connections=3").unwrap();
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
            assert_refused_without_password(url, read(url), expected);
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
}
