//! Shared test fixtures: a private, freshly migrated store for each test, and helpers to build jobs.
//!
//! Tests run in parallel inside one process, so every test gets its own corner of its backend and
//! nothing is shared between tests, not even within one run. A fixture is an `async fn() ->
//! TestStore`: it opens the store through [`jobq::store::connect`] (the same path the binary takes),
//! runs `migrate()`, and hands back the store together with a [`Sandbox`] that owns the corner and
//! removes it when the `TestStore` drops. Isolation per backend:
//!
//! - SQLite ([`sqlite_store`]): a database file in a fresh temporary directory.
//! - PostgreSQL (to add): a schema per test (`jobq_test_<random>`) created through an admin connection
//!   to `JOBQ_TEST_POSTGRES_URL`; the store URL selects it; the sandbox drops it with `CASCADE`.
//! - MySQL (to add): a database per test on `JOBQ_TEST_MYSQL_URL`, dropped by the sandbox.
//! - Redis (to add): a key prefix per test on `JOBQ_TEST_REDIS_URL`; the sandbox deletes the prefix's
//!   keys (SCAN + DEL).
//!
//! `Drop` cannot be async: a server-backed sandbox does its clean-up on a short-lived thread with its
//! own current-thread runtime, because the test's runtime may already be shutting down. A server that
//! cannot be reached fails the test with the command that starts it; a test never skips silently.
//! `JOBQ_TEST_KEEP=1` keeps every sandbox and prints where it is, for a post-mortem (the test harness
//! shows the line for failing tests, and for all with `--nocapture`).

pub mod jobs;

use std::ops::Deref;
use std::path::PathBuf;

use jobq::store::{self, DynStore, StoreUrl};
use tempfile::TempDir;

/// A store that belongs to one test, with the sandbox that isolates it.
pub struct TestStore {
    store: DynStore,
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
    /// Pairs a migrated store with the sandbox it lives in.
    pub fn new(store: DynStore, sandbox: impl Sandbox + 'static) -> TestStore {
        TestStore {
            store,
            sandbox: Some(Box::new(sandbox)),
        }
    }

    /// The store, as the rest of jobq sees it.
    pub fn store(&self) -> &DynStore {
        &self.store
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
    let store = store::connect(&StoreUrl::sqlite_file(&file))
        .await
        .unwrap_or_else(|e| {
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
    TestStore::new(store, SqliteSandbox { dir, file })
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
