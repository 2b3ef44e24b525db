//! Shared test fixtures: a private, freshly migrated store for each test, and helpers to build jobs.
//!
//! Tests run in parallel inside one process, so every test gets its own corner of its backend and
//! nothing is shared between tests, not even within one run. A fixture is an `async fn() ->
//! TestStore`: it opens the store through [`jobq::store::connect`] (the same path the binary takes),
//! runs `migrate()`, and hands back the store together with a [`Sandbox`] that owns the corner and
//! removes it when the `TestStore` drops. Isolation per backend:
//!
//! - SQLite ([`sqlite_store`]): a database file in a fresh temporary directory.
//! - PostgreSQL ([`postgres_store`]): a schema per test (`jobq_test_<random>`) on the database of
//!   `JOBQ_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`); the store URL names
//!   it with `?schema=`, `migrate()` creates it, and the sandbox drops it with `CASCADE` through a
//!   connection of its own.
//! - MySQL ([`mysql_store`]): a database per test (`jobq_test_<random>`) on the server of
//!   `JOBQ_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/test`), created by the fixture through
//!   a connection of its own; the store URL names it, and the sandbox drops it.
//! - Redis ([`redis_store`]): a key prefix per test (`jobq_test_<random>:`) on `JOBQ_TEST_REDIS_URL`
//!   (default `redis://127.0.0.1:6379/0`), named in the store URL with `?prefix=`; the sandbox deletes
//!   the prefix's keys (SCAN + DEL).
//!
//! `Drop` cannot be async: a server-backed sandbox does its clean-up on a short-lived thread with its
//! own current-thread runtime, because the test's runtime may already be shutting down. A server that
//! cannot be reached fails the test with the command that starts it; a test never skips silently.
//! `JOBQ_TEST_KEEP=1` keeps every sandbox and prints where it is, for a post-mortem (the test harness
//! shows the line for failing tests, and for all with `--nocapture`).

pub mod jobs;
pub mod private;
pub mod redis_cluster;

pub use redis_cluster::redis_cluster_store;

use std::ops::Deref;
use std::path::PathBuf;

use jobq::store::{self, DynStore, StoreError, StoreUrl};
use tempfile::TempDir;

/// A store that belongs to one test, with the sandbox that isolates it.
pub struct TestStore {
    store: DynStore,
    /// The URL that opens this store (password included: pass it to `jobq`, never print it).
    url: String,
    sandbox: Option<Box<dyn Sandbox>>,
}

/// One test's private corner of a backend (a temp file, a schema, a database, a key prefix). Dropping it
/// removes the corner and everything in it.
pub trait Sandbox: Send + Sync {
    /// Where the data lives, for the `JOBQ_TEST_KEEP` message. Never includes a password.
    fn location(&self) -> String;

    /// Leaves the data in place instead of removing it.
    fn keep(self: Box<Self>);
}

impl TestStore {
    /// Pairs a migrated store, and the URL that opened it, with the sandbox it lives in.
    pub fn new(store: DynStore, url: impl Into<String>, sandbox: impl Sandbox + 'static) -> TestStore {
        TestStore {
            store,
            url: url.into(),
            sandbox: Some(Box::new(sandbox)),
        }
    }

    /// The store, as the rest of jobq sees it.
    pub fn store(&self) -> &DynStore {
        &self.store
    }

    /// The URL that opens this store, for `jobq --url` and config files.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Deref for TestStore {
    type Target = DynStore;

    fn deref(&self) -> &DynStore {
        &self.store
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        let Some(sandbox) = self.sandbox.take() else {
            return;
        };
        if keep_requested() {
            eprintln!("JOBQ_TEST_KEEP=1: kept {}", sandbox.location());
            sandbox.keep();
        }
        // Otherwise the sandbox drops here and takes its data with it.
    }
}

fn keep_requested() -> bool {
    std::env::var_os("JOBQ_TEST_KEEP").is_some_and(|v| v == "1")
}

/// A fresh SQLite store in its own temporary directory, migrated.
pub async fn sqlite_store() -> TestStore {
    let dir = tempfile::Builder::new()
        .prefix("jobq-test-")
        .tempdir()
        .expect("creating a temporary directory for a SQLite test store");
    let file = dir.path().join("jobs.db");
    let store = store::connect(&StoreUrl::sqlite_file(&file)).await.unwrap_or_else(|e| {
        panic!(
            "opening the SQLite test store {}: {:#}",
            file.display(),
            anyhow::Error::from(e)
        )
    });
    store.migrate().await.unwrap_or_else(|e| {
        panic!(
            "migrating the SQLite test store {}: {:#}",
            file.display(),
            anyhow::Error::from(e)
        )
    });
    let url = format!("sqlite://{}", file.display());
    TestStore::new(store, url, SqliteSandbox { dir, file })
}

/// A temporary directory holding one SQLite database (and its `-wal` and `-shm` files).
struct SqliteSandbox {
    dir: TempDir,
    file: PathBuf,
}

impl Sandbox for SqliteSandbox {
    fn location(&self) -> String {
        format!("SQLite database {}", self.file.display())
    }

    fn keep(self: Box<Self>) {
        let _ = self.dir.keep();
    }
}

/// The PostgreSQL server the tests use, unless `JOBQ_TEST_POSTGRES_URL` names another.
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// The base URL of the test PostgreSQL database (no `schema=` option).
pub fn postgres_url() -> String {
    std::env::var("JOBQ_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_string())
}

/// `base` with the jobq option `schema=NAME` added.
pub fn with_schema(base: &str, schema: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    let encoded: String = url::form_urlencoded::byte_serialize(schema.as_bytes()).collect();
    format!("{base}{sep}schema={encoded}")
}

/// A fresh schema name, `jobq_test_` and 16 random hex digits.
pub fn fresh_schema() -> String {
    format!("jobq_test_{:016x}", rand::random::<u64>())
}

/// Opens a PostgreSQL store on `url`, failing the test with how to start the server when it cannot be
/// reached (never skipping).
pub async fn connect_postgres(url: &str) -> DynStore {
    let parsed = StoreUrl::parse(url).unwrap_or_else(|e| panic!("JOBQ_TEST_POSTGRES_URL: {e}"));
    match store::connect(&parsed).await {
        Ok(store) => store,
        Err(e @ StoreError::Unavailable { .. }) => panic!(
            "{:#}\nthe PostgreSQL tests need a server: start the local one with \
             `pg_ctlcluster --skip-systemctl-redirect 15 main start`, or point JOBQ_TEST_POSTGRES_URL at another \
             (default {DEFAULT_POSTGRES_URL})",
            anyhow::Error::from(e)
        ),
        Err(e) => panic!(
            "opening the PostgreSQL test store {}: {:#}",
            parsed.redacted(),
            anyhow::Error::from(e)
        ),
    }
}

/// A fresh PostgreSQL store in a schema of its own, migrated.
pub async fn postgres_store() -> TestStore {
    postgres_store_in(&fresh_schema()).await
}

/// A PostgreSQL store in `schema` (created by the migration), migrated; the schema is dropped with
/// the store.
pub async fn postgres_store_in(schema: &str) -> TestStore {
    let base = postgres_url();
    let url = with_schema(&base, schema);
    let store = connect_postgres(&url).await;
    // The sandbox exists before the schema does, so a failed migration still cleans up after itself.
    let sandbox = PostgresSandbox::new(&base, schema);
    store.migrate().await.unwrap_or_else(|e| {
        panic!(
            "migrating the PostgreSQL test store (schema {schema}): {:#}",
            anyhow::Error::from(e)
        )
    });
    TestStore::new(store, url, sandbox)
}

/// One schema on the test database, dropped with everything in it when the sandbox drops.
pub struct PostgresSandbox {
    /// The database URL, password included: used to connect, never shown.
    url: String,
    schema: String,
    kept: bool,
}

impl PostgresSandbox {
    /// Takes charge of `schema` (which may not exist yet) on the database `url` names.
    pub fn new(url: &str, schema: &str) -> PostgresSandbox {
        PostgresSandbox {
            url: url.to_string(),
            schema: schema.to_string(),
            kept: false,
        }
    }
}

impl Sandbox for PostgresSandbox {
    fn location(&self) -> String {
        format!(
            "PostgreSQL schema {} on {}",
            self.schema,
            StoreUrl::parse(&self.url).map(|u| u.to_string()).unwrap_or_default()
        )
    }

    fn keep(self: Box<Self>) {
        let mut this = self;
        this.kept = true;
    }
}

impl Drop for PostgresSandbox {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // The test's runtime may be shutting down: drop the schema from a thread with a runtime of its
        // own, and wait for it so the next test starts on a clean server.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async move {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&url).await?;
                let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", schema.replace('"', "\"\""));
                sqlx::Executor::execute(&mut conn, sql.as_str()).await?;
                conn.close().await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        if let Ok(Err(e)) = dropped {
            eprintln!("could not drop the test schema {}: {e}", self.schema);
        }
    }
}

/// The MySQL or MariaDB server the tests use, unless `JOBQ_TEST_MYSQL_URL` names another.
pub const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/test";

/// The URL of the test MySQL server's base database.
pub fn mysql_url() -> String {
    std::env::var("JOBQ_TEST_MYSQL_URL").unwrap_or_else(|_| DEFAULT_MYSQL_URL.to_string())
}

/// `base` with its database replaced by `database` (query options kept).
pub fn with_database(base: &str, database: &str) -> String {
    let mut url = url::Url::parse(base).unwrap_or_else(|e| panic!("JOBQ_TEST_MYSQL_URL: {e}"));
    url.set_path(&format!("/{database}"));
    url.to_string()
}

/// How to get a MySQL server for the tests, for failure messages.
fn mysql_hint() -> String {
    format!(
        "the MySQL tests need a server: start the local MariaDB with \
         `start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd` (as .ci/run does), \
         or point JOBQ_TEST_MYSQL_URL at another (default {DEFAULT_MYSQL_URL})"
    )
}

/// A connection to the test server's base database, for creating and dropping test databases and for
/// tests that play an application or an operator.
pub async fn mysql_admin() -> sqlx::MySqlConnection {
    use sqlx::Connection;
    let url = mysql_url();
    sqlx::MySqlConnection::connect(&url).await.unwrap_or_else(|e| {
        panic!(
            "connecting to {}: {e}\n{}",
            StoreUrl::parse(&url).map(|u| u.to_string()).unwrap_or_default(),
            mysql_hint()
        )
    })
}

/// Opens a MySQL store on `url`, failing the test with how to start the server when it cannot be
/// reached (never skipping).
pub async fn connect_mysql(url: &str) -> DynStore {
    let parsed = StoreUrl::parse(url).unwrap_or_else(|e| panic!("JOBQ_TEST_MYSQL_URL: {e}"));
    match store::connect(&parsed).await {
        Ok(store) => store,
        Err(e @ StoreError::Unavailable { .. }) => panic!("{:#}\n{}", anyhow::Error::from(e), mysql_hint()),
        Err(e) => panic!(
            "opening the MySQL test store {}: {:#}",
            parsed.redacted(),
            anyhow::Error::from(e)
        ),
    }
}

/// A fresh MySQL store in a database of its own, migrated.
pub async fn mysql_store() -> TestStore {
    mysql_store_in(&fresh_schema()).await
}

/// A MySQL store in a new database `database`, migrated; the database is dropped with the store.
pub async fn mysql_store_in(database: &str) -> TestStore {
    let sandbox = MysqlSandbox::create(database).await;
    let url = with_database(&mysql_url(), database);
    let store = connect_mysql(&url).await;
    store.migrate().await.unwrap_or_else(|e| {
        panic!(
            "migrating the MySQL test store (database {database}): {:#}",
            anyhow::Error::from(e)
        )
    });
    TestStore::new(store, url, sandbox)
}

/// One database on the test server, dropped with everything in it when the sandbox drops.
pub struct MysqlSandbox {
    database: String,
    kept: bool,
}

impl MysqlSandbox {
    /// Creates `database` (utf8mb4) and takes charge of it.
    pub async fn create(database: &str) -> MysqlSandbox {
        let mut admin = mysql_admin().await;
        let sql = format!(
            "CREATE DATABASE `{}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            database.replace('`', "``")
        );
        sqlx::Executor::execute(&mut admin, sql.as_str())
            .await
            .unwrap_or_else(|e| panic!("creating the test database {database}: {e}"));
        MysqlSandbox {
            database: database.to_string(),
            kept: false,
        }
    }
}

impl Sandbox for MysqlSandbox {
    fn location(&self) -> String {
        format!(
            "MySQL database {} on {}",
            self.database,
            StoreUrl::parse(&mysql_url()).map(|u| u.to_string()).unwrap_or_default()
        )
    }

    fn keep(self: Box<Self>) {
        let mut this = self;
        this.kept = true;
    }
}

impl Drop for MysqlSandbox {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let (url, database) = (mysql_url(), self.database.clone());
        // The test's runtime may be shutting down: drop the database from a thread with a runtime of its
        // own, and wait for it so the next test starts on a clean server.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async move {
                use sqlx::Connection;
                let mut conn = sqlx::MySqlConnection::connect(&url).await?;
                let sql = format!("DROP DATABASE IF EXISTS `{}`", database.replace('`', "``"));
                sqlx::Executor::execute(&mut conn, sql.as_str()).await?;
                conn.close().await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        if let Ok(Err(e)) = dropped {
            eprintln!("could not drop the test database {}: {e}", self.database);
        }
    }
}

/// The Redis server the tests use, unless `JOBQ_TEST_REDIS_URL` names another.
pub const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379/0";

/// The base URL of the test Redis server (no `prefix=` option).
pub fn redis_url() -> String {
    std::env::var("JOBQ_TEST_REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.to_string())
}

/// `base` with the jobq option `prefix=PREFIX` added.
pub fn with_prefix(base: &str, prefix: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    let encoded: String = url::form_urlencoded::byte_serialize(prefix.as_bytes()).collect();
    format!("{base}{sep}prefix={encoded}")
}

/// A fresh key prefix, `jobq_test_`, 16 random hex digits and a colon.
pub fn fresh_prefix() -> String {
    format!("jobq_test_{:016x}:", rand::random::<u64>())
}

/// Opens a Redis store on `url`, failing the test with how to start the server when it cannot be
/// reached (never skipping).
pub async fn connect_redis(url: &str) -> DynStore {
    let parsed = StoreUrl::parse(url).unwrap_or_else(|e| panic!("JOBQ_TEST_REDIS_URL: {e}"));
    match store::connect(&parsed).await {
        Ok(store) => store,
        Err(e @ StoreError::Unavailable { .. }) => panic!(
            "{:#}\nthe Redis tests need a server: start the local one with `redis-server --daemonize yes`, \
             or point JOBQ_TEST_REDIS_URL at another (default {DEFAULT_REDIS_URL})",
            anyhow::Error::from(e)
        ),
        Err(e) => panic!(
            "opening the Redis test store {}: {:#}",
            parsed.redacted(),
            anyhow::Error::from(e)
        ),
    }
}

/// A fresh Redis store under a key prefix of its own, migrated.
pub async fn redis_store() -> TestStore {
    redis_store_in(&fresh_prefix()).await
}

/// A Redis store under `prefix`, migrated; the prefix's keys are deleted with the store.
pub async fn redis_store_in(prefix: &str) -> TestStore {
    let base = redis_url();
    let url = with_prefix(&base, prefix);
    let store = connect_redis(&url).await;
    let sandbox = RedisSandbox::new(&base, prefix);
    store.migrate().await.unwrap_or_else(|e| {
        panic!(
            "migrating the Redis test store (prefix {prefix}): {:#}",
            anyhow::Error::from(e)
        )
    });
    TestStore::new(store, url, sandbox)
}

/// Every key under one prefix on the test server, deleted when the sandbox drops.
pub struct RedisSandbox {
    /// The server URL, password included: used to connect, never shown.
    url: String,
    prefix: String,
    kept: bool,
}

impl RedisSandbox {
    /// Takes charge of the keys under `prefix` on the server `url` names.
    pub fn new(url: &str, prefix: &str) -> RedisSandbox {
        RedisSandbox {
            url: url.to_string(),
            prefix: prefix.to_string(),
            kept: false,
        }
    }
}

impl Sandbox for RedisSandbox {
    fn location(&self) -> String {
        format!(
            "Redis keys {}* on {}",
            self.prefix,
            StoreUrl::parse(&self.url).map(|u| u.to_string()).unwrap_or_default()
        )
    }

    fn keep(self: Box<Self>) {
        let mut this = self;
        this.kept = true;
    }
}

impl Drop for RedisSandbox {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let (url, prefix) = (self.url.clone(), self.prefix.clone());
        let deleted = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async move {
                let client = redis::Client::open(url.as_str())?;
                let mut conn = client.get_multiplexed_async_connection().await?;
                // Test prefixes are letters, digits, `_` and `:`: nothing for MATCH to expand. The
                // inbox's side keys start with the inbox key as a hash tag: `{<prefix>inbox:…}`.
                for pattern in [format!("{prefix}*"), format!("{{{prefix}*")] {
                    let mut cursor: u64 = 0;
                    loop {
                        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(&pattern)
                            .arg("COUNT")
                            .arg(1000)
                            .query_async(&mut conn)
                            .await?;
                        if !keys.is_empty() {
                            redis::cmd("UNLINK").arg(&keys).query_async::<()>(&mut conn).await?;
                        }
                        if next == 0 {
                            break;
                        }
                        cursor = next;
                    }
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        if let Ok(Err(e)) = deleted {
            eprintln!("could not delete the test keys {}*: {e}", self.prefix);
        }
    }
}
