//! MySQL's part of the migration loop: DDL commits by itself in MySQL, so a migration cannot be one
//! transaction; the lock is a named `GET_LOCK` per database, held by one connection until it releases
//! it (or ends), and every migration runs statement by statement (each is `IF NOT EXISTS`, so a run
//! cut short is finished by the next).

use super::MysqlStore;
use crate::store::sql::On;
use crate::store::{StoreError, migrate};
use sqlx::MySql;

/// Longest wait for another process's migration to finish.
const MIGRATE_LOCK_SECS: u32 = 60;

impl MysqlStore {
    /// Applies the pending migrations under the database's migration lock: concurrent migrators of
    /// one database queue on it and then find the work done.
    pub(super) async fn apply_migrations_locked(&self) -> Result<(), StoreError> {
        let mut conn = self
            .sql
            .pool
            .acquire()
            .await
            .map_err(self.sql.fail("starting the migration"))?;
        let lock = format!("jobq migrate {}", self.database);
        let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, ?)")
            .bind(&lock)
            .bind(MIGRATE_LOCK_SECS)
            .fetch_one(&mut *conn)
            .await
            .map_err(self.sql.fail("taking the migration lock"))?;
        if got != Some(1) {
            return Err(StoreError::Migration {
                kind: super::KIND,
                version: migrate::latest(super::KIND),
                source: format!("another process held the migration lock for {MIGRATE_LOCK_SECS} s").into(),
            });
        }
        let result = self.sql.migrate_locked(&mut On::<MySql>::new(&mut conn), false).await;
        let _ = sqlx::query("SELECT RELEASE_LOCK(?)")
            .bind(&lock)
            .execute(&mut *conn)
            .await;
        result
    }
}
