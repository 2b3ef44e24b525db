//! SQLite test stores: a database file in a fresh temporary directory per test, removed with it.

use std::path::PathBuf;

use jobq::store::{self, StoreUrl, Usage};
use tempfile::TempDir;

use super::{Sandbox, TestStore};

/// A fresh SQLite store in its own temporary directory, migrated.
pub async fn sqlite_store() -> TestStore {
    sqlite_store_for(Usage::Pooled).await
}

/// A fresh SQLite store opened as a one-shot command opens it: its pages of jobs are read on the
/// store's direct reader rather than through the pool.
pub async fn sqlite_one_shot_store() -> TestStore {
    sqlite_store_for(Usage::OneShot).await
}

async fn sqlite_store_for(usage: Usage) -> TestStore {
    let dir = tempfile::Builder::new()
        .prefix("jobq-test-")
        .tempdir()
        .expect("creating a temporary directory for a SQLite test store");
    let file = dir.path().join("jobs.db");
    let store = store::connect_for(&StoreUrl::sqlite_file(&file), usage)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "opening the SQLite test store {}: {:#}",
                file.display(),
                anyhow::Error::from(e)
            )
        });
    super::migrate(&store, &format!("SQLite test store {}", file.display())).await;
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
