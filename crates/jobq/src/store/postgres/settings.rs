//! What a `postgres://` URL says and how the store connects: sqlx's URL (`sslmode`, `application_name`,
//! …) plus jobq's own options, taken out before sqlx sees it: `schema=NAME` (tables live there; created
//! by `migrate` if missing; every connection's `search_path` is set to it), `connect_timeout=SECS`
//! (default 5; an unreachable server fails within it) and `max_connections=N` (default 10). Also
//! PostgreSQL's [`Dialect`] and which of its errors mean "unreachable". Never prints a password.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Executor;
use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::store::sql::{self, Dialect, FilterCancel, SqlPool};
use crate::store::url::UrlOptions;
use crate::store::{StoreError, StoreKind, StoreUrl, Usage};

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Pool size unless the URL says otherwise (`max_connections`). A worker batches its claims,
/// heartbeats and acknowledgements, so a handful of connections serve any concurrency.
const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// Oldest PostgreSQL jobq runs on: `gen_random_uuid()` is built in from 13 on.
const MIN_SERVER_VERSION: u32 = 130_000;

/// How PostgreSQL spells what differs.
pub(super) const DIALECT: Dialect = Dialect {
    cancel_by_filter: FilterCancel::InOneStatement,
    numbered_placeholders: true,
    // JSON columns come back as text: `json` keeps the stored text as written.
    job_columns: "j.id, j.queue, j.job_type, j.payload::text, j.meta::text, j.priority, j.status, j.attempt, \
         j.max_attempts, j.run_at, COALESCE(j.unique_key, j.yielded_key), j.timeout_ms, j.progress, j.progress_message, j.result::text, \
         j.errors::text, j.created_at, j.started_at, j.finished_at, j.heartbeat_at, j.worker_id, j.snoozes, \
         j.waits::int, j.wait_any::int, j.expires_at, j.unique_mode",
    skip_locked: " FOR UPDATE SKIP LOCKED",
    queues_in: ("ARRAY(SELECT json_array_elements_text(", "::json))"),
    queues_out: "array_to_json(queues)::text",
    json_in: ("CAST(", " AS json)"),
    inserts_notify: true,
    writable_cte: true,
    now_millis: "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
    expiry_due: "j.status IN ('blocked', 'pending') AND j.expires_at <= ",
    migrations_exist: "SELECT 1 WHERE to_regclass('jobq_migrations') IS NOT NULL",
    migrations_table: "CREATE TABLE IF NOT EXISTS jobq_migrations (version integer NOT NULL PRIMARY KEY, \
     name text NOT NULL, checksum text NOT NULL, applied_at bigint NOT NULL)",
    is_unreachable,
    is_lock_conflict,
    is_unique_violation,
    notify_ready: Some(super::listen::NOTIFY_READY),
    kept_session: Some("SET plan_cache_mode = auto"),
    ..Dialect::of(StoreKind::Postgres)
};

/// What a `postgres://` URL says, jobq's own options taken out.
pub(super) struct Settings {
    pub options: PgConnectOptions,
    pub schema: Option<String>,
    pub connect_timeout: Duration,
    pub max_connections: u32,
}

impl Settings {
    pub fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let ours = UrlOptions::split(url, &["schema", "connect_timeout", "max_connections"])?;
        let schema = ours.parsed("schema", |value| {
            if value.is_empty() || value.len() > 63 || value.contains('\0') {
                return Err(format!("schema={value:?} (expected a schema name of 1 to 63 bytes)"));
            }
            Ok(value.to_string())
        })?;
        // libpq's name and meaning (whole seconds); a duration such as `1500ms` is accepted too.
        let connect_timeout = ours.duration("connect_timeout", DEFAULT_CONNECT_TIMEOUT)?;
        let max_connections = ours.count("max_connections", DEFAULT_MAX_CONNECTIONS)?;
        let mut options = PgConnectOptions::from_str(ours.driver_url()).map_err(|e| ours.invalid(e.to_string()))?;
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

    /// Makes the pool and, on its first connection, checks that the server answers and is new enough;
    /// that connection stays in the pool for the first call. Connections set their `search_path` and
    /// plan every execution of a prepared statement for its own parameters (the batch statements join
    /// against arrays whose size only the parameters tell; see `lease.rs`). A one-shot use gets a pool
    /// of one.
    pub async fn open(&self, url: &StoreUrl, usage: Usage) -> Result<SqlPool<Postgres>, StoreError> {
        let session = match self.schema.as_deref() {
            Some(s) => format!(
                "SET search_path TO {}; SET plan_cache_mode = force_custom_plan",
                quote_ident(s)
            ),
            None => "SET plan_cache_mode = force_custom_plan".to_string(),
        };
        let max_connections = match usage {
            Usage::OneShot => 1,
            _ => self.max_connections,
        };
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .min_connections(0)
            // A ping before each use would be a round trip per store call.
            .test_before_acquire(false)
            .before_acquire(sql::ping_if_idle::<Postgres>)
            // Waiting for a free connection is bounded too: a saturated or vanished server turns into an
            // error the caller can retry, never a hang.
            .acquire_timeout(self.connect_timeout * 2)
            .idle_timeout(Some(Duration::from_secs(300)))
            .after_connect(move |conn, _meta| {
                let session = session.clone();
                Box::pin(async move {
                    conn.execute(session.as_str()).await?;
                    Ok(())
                })
            })
            .connect_lazy_with(self.options.clone());
        let first = sql::first_connection(StoreKind::Postgres, url, self.connect_timeout, &pool).await?;
        // The server sent its version when the session started: no round trip.
        let version = first.server_version_num().unwrap_or(0);
        drop(first);
        if version != 0 && version < MIN_SERVER_VERSION {
            let shown = format!("{}.{}", version / 10_000, version % 10_000);
            let why = format!("PostgreSQL {shown} is too old: jobq needs PostgreSQL 13 or newer");
            return Err(StoreError::unavailable(
                StoreKind::Postgres,
                &url.redacted(),
                &std::io::Error::other(why),
            ));
        }
        let kept = match usage {
            Usage::OneShot => 0,
            _ => sql::KEPT,
        };
        Ok(SqlPool::new(pool, &DIALECT, url.redacted(), kept))
    }

    /// The options of the listening connection: the pool's, under an application name of its own.
    pub fn listen_options(&self) -> PgConnectOptions {
        let app = self.options.get_application_name().unwrap_or("jobq").to_string();
        let listen_name = match &self.schema {
            Some(s) => format!("{app} listener {s}"),
            None => format!("{app} listener"),
        };
        self.options.clone().application_name(&listen_name)
    }
}

/// `name` as a double-quoted SQL identifier.
pub(super) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// True for driver errors that mean the server cannot be reached (rather than refusing a request):
/// network and TLS failures, pool time-outs, and SQLSTATE class 08 (connection exception), 57P01-03
/// (shutting down, starting up) and 53300 (too many connections).
fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        other => sql::is_network_error(other),
    }
}

/// True for a deadlock (SQLSTATE 40P01) or a serialization failure (40001): running the transaction
/// again is the remedy.
fn is_lock_conflict(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40P01" | "40001")))
}

/// True for a unique-constraint violation (SQLSTATE 23505).
pub(super) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
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
    fn schema_timeout_and_pool_size_are_taken_out_of_the_url() {
        let s = read("postgres://u:secret@db.example:6432/app?schema=jobq&sslmode=disable&connect_timeout=2").unwrap();
        assert_eq!(s.schema.as_deref(), Some("jobq"));
        assert_eq!(s.connect_timeout, Duration::from_secs(2));
        assert_eq!(s.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(s.options.get_host(), "db.example");
        assert_eq!(s.options.get_port(), 6432);
        assert_eq!(s.options.get_database(), Some("app"));
        assert_eq!(s.options.get_application_name(), Some("jobq"));
        let s = read("postgresql://h/db?connect_timeout=1500ms&max_connections=3&application_name=shop").unwrap();
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
            assert_refused_without_password(url, read(url), expected);
        }
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("jobq"), "\"jobq\"");
        assert_eq!(quote_ident("a\"b c"), "\"a\"\"b c\"");
    }
}
