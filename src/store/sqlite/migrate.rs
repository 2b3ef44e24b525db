//! SQLite's part of the migration loop: its lock is an immediate transaction, taken before the applied
//! versions are read, so two processes migrating at once apply each migration exactly once; every
//! migration runs inside it, statement by statement.

use super::SqliteStore;
use crate::store::StoreError;

/// `jobq_migrations` as SQLite declares it.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS jobq_migrations (version INTEGER PRIMARY KEY, \
     name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)";

/// Returns a row when jobq's tables exist.
pub(super) const MIGRATIONS_EXIST: &str =
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobq_migrations'";

impl SqliteStore {
    /// Applies the pending migrations under the write lock.
    pub(super) async fn apply_migrations(&self) -> Result<(), StoreError> {
        let mut tx = self
            .sql
            .pool
            .begin_with(self.sql.dialect.begin_write)
            .await
            .map_err(self.sql.fail("starting the migration"))?;
        self.sql.migrate_locked(&mut tx, CREATE_TABLE, false).await?;
        tx.commit().await.map_err(self.sql.fail("committing the migration"))
    }
}
