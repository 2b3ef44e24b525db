//! SQLite's part of the migration loop: its lock is an immediate transaction, taken before the applied
//! versions are read, so two processes migrating at once apply each migration exactly once; every
//! migration runs inside it, statement by statement.

use super::SqliteStore;
use crate::store::StoreError;
use crate::store::sql::On;
use sqlx::Sqlite;

impl SqliteStore {
    /// Applies the pending migrations under the write lock.
    pub(super) async fn apply_migrations_locked(&self) -> Result<(), StoreError> {
        let mut tx = self
            .sql
            .pool
            .begin_with(self.sql.dialect.begin_write)
            .await
            .map_err(self.sql.fail("starting the migration"))?;
        self.sql.migrate_locked(&mut On::<Sqlite>::new(&mut tx), false).await?;
        tx.commit().await.map_err(self.sql.fail("committing the migration"))
    }
}
