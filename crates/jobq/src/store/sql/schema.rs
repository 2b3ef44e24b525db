//! The schema's version and the migration loop, written once for the three SQL stores: which
//! migration a store has applied, and applying the pending ones (`store/migrate.rs` holds the files and
//! their checksums) on a connection that holds the store's migration lock.

use std::collections::HashMap;

use sqlx::database::HasStatementCache;
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{RowsAffected, SqlPool};
use crate::store::StoreError;
use crate::store::error::DriverError;
use crate::store::migrate;

impl<DB> SqlPool<DB>
where
    DB: Database + HasStatementCache,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> i32: Encode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> i32: Decode<'r, DB>,
    DB::QueryResult: RowsAffected,
    usize: ColumnIndex<DB::Row>,
{
    /// The newest migration recorded, `None` when jobq's tables do not exist yet.
    pub async fn applied_version(&self) -> Result<Option<u32>, StoreError> {
        let failed = || self.fail("reading the schema version");
        // Both reads on one connection: taken from the pool twice, a pool of one would wait between
        // them for the connection's return.
        let mut conn = self.pool.acquire().await.map_err(failed())?;
        let exists = self.stmt(self.dialect.migrations_exist);
        let found = self
            .query(&exists)?
            .fetch_optional(&mut *conn)
            .await
            .map_err(failed())?;
        if found.is_none() {
            return Ok(None);
        }
        let stmt = self.stmt("SELECT MAX(version) FROM jobq_migrations");
        let rows = self.query(&stmt)?.fetch_all(&mut *conn).await.map_err(failed())?;
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
    pub async fn migrate_locked(&self, conn: &mut DB::Connection, whole_files: bool) -> Result<(), StoreError> {
        let kind = self.dialect.kind;
        conn.execute(self.dialect.migrations_table)
            .await
            .map_err(self.fail("creating jobq_migrations"))?;
        let rows = conn
            .fetch_all("SELECT version, checksum FROM jobq_migrations")
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
                conn.execute(m.sql).await.map_err(self.migration_failed(m.version))?;
            } else {
                for statement in migrate::statements(m.sql) {
                    conn.execute(statement.as_str())
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
            self.query(&record)?
                .execute(&mut *conn)
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
