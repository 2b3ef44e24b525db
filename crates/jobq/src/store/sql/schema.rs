//! The schema's version and the migration loop, written once for the three SQL stores: which
//! migration a store has applied, and applying the pending ones (`store/migrate.rs` holds the files and
//! their checksums) on a connection that holds the store's migration lock.

use std::collections::HashMap;

use super::{Exec, Sql};
use crate::store::StoreError;
use crate::store::error::DriverError;
use crate::store::migrate;

impl Sql {
    /// The newest migration recorded, `None` when jobq's tables do not exist yet.
    pub async fn applied_version(&self) -> Result<Option<u32>, StoreError> {
        let failed = || self.fail("reading the schema version");
        // Both reads on one connection: taken from the pool twice, a pool of one would wait between
        // them for the connection's return.
        let mut conn = self.connections.acquire().await.map_err(failed())?;
        let exists = self.stmt(self.dialect.migrations_exist);
        let found = conn.fetch_optional(&exists).await.map_err(failed())?;
        if found.is_none() {
            return Ok(None);
        }
        let stmt = self.stmt("SELECT MAX(version) FROM jobq_migrations");
        let rows = conn.fetch_all(&stmt).await.map_err(failed())?;
        let version: Option<i32> = match rows.first() {
            Some(row) => row.try_get(0).map_err(self.fail("reading the schema version"))?,
            None => None,
        };
        Ok(Some(version.unwrap_or(0).max(0) as u32))
    }

    /// The migration loop, on a connection that holds the store's migration lock: creates
    /// `jobq_migrations` if missing, reads what is applied, and applies and
    /// records each pending migration, as one script (`whole_files`: PostgreSQL, in its transaction) or
    /// statement by statement.
    pub async fn migrate_locked(&self, conn: &mut dyn Exec, whole_files: bool) -> Result<(), StoreError> {
        let kind = self.dialect.kind;
        conn.run_script(self.dialect.migrations_table)
            .await
            .map_err(self.fail("creating jobq_migrations"))?;
        let rows = conn
            .fetch_all(&self.stmt("SELECT version, checksum FROM jobq_migrations"))
            .await
            .map_err(self.fail("reading jobq_migrations"))?;
        let mut applied = HashMap::new();
        for row in &rows {
            let version: i32 = row.try_get(0).map_err(self.fail("reading jobq_migrations"))?;
            let checksum: String = row.try_get_unchecked(1).map_err(self.fail("reading jobq_migrations"))?;
            applied.insert(version.max(0) as u32, checksum);
        }
        for m in migrate::pending(kind, &applied)? {
            if whole_files {
                // Without parameters the text goes over the simple protocol, which takes several
                // statements (and functions whose bodies hold semicolons).
                conn.run_script(m.sql).await.map_err(self.migration_failed(m.version))?;
            } else {
                for statement in migrate::statements(m.sql) {
                    conn.run_script(statement.as_str())
                        .await
                        .map_err(self.migration_failed(m.version))?;
                }
            }
            let mut record = self.stmt("INSERT INTO jobq_migrations (version, name, checksum, applied_at) VALUES (");
            record
                .bind(m.version as i32)
                .push(", ")
                .bind(m.name)
                .push(", ")
                .bind(m.checksum())
                .push(&format!(", {})", self.dialect.now_millis));
            conn.execute(&record)
                .await
                .map_err(self.fail("recording a migration"))?;
        }
        Ok(())
    }

    /// A migration that failed at `version`.
    fn migration_failed(&self, version: u32) -> impl FnOnce(sqlx::Error) -> StoreError {
        let kind = self.dialect.kind;
        move |e| StoreError::Migration {
            kind,
            version,
            source: Box::new(DriverError::deepest(&e)),
        }
    }
}
