//! PostgreSQL's part of the migration loop: its lock is a transaction-scoped advisory lock per schema,
//! and every migration file runs whole inside that transaction, so its functions may contain
//! semicolons and a failed migration leaves nothing behind.

use sqlx::Executor;

use super::PostgresStore;
use super::settings::quote_ident;
use crate::store::StoreError;
use crate::store::sql::On;
use sqlx::Postgres;

impl PostgresStore {
    /// Applies the pending migrations under the schema's migration lock.
    pub(super) async fn apply_migrations_locked(&self) -> Result<(), StoreError> {
        let mut tx = self
            .sql
            .pool
            .begin()
            .await
            .map_err(self.sql.fail("starting the migration"))?;
        // Concurrent migrators of one schema queue on an advisory lock that the transaction releases when
        // it ends, then find the work done. The key is the target schema's name (a schema that does not
        // exist yet has no current_schema()).
        let target = match &self.schema {
            Some(s) => s.clone(),
            None => sqlx::query_scalar::<_, Option<String>>("SELECT current_schema()::text")
                .fetch_one(&mut *tx)
                .await
                .map_err(self.sql.fail("reading the current schema"))?
                .unwrap_or_default(),
        };
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('jobq migrate ' || $1, 0))")
            .bind(&target)
            .execute(&mut *tx)
            .await
            .map_err(self.sql.fail("taking the migration lock"))?;
        if let Some(schema) = &self.schema {
            let create = format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(schema));
            tx.execute(create.as_str())
                .await
                .map_err(self.sql.fail("creating the schema"))?;
        }
        self.sql.migrate_locked(&mut On::<Postgres>::new(&mut tx), true).await?;
        tx.commit().await.map_err(self.sql.fail("committing the migration"))
    }
}
