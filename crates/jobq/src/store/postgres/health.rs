//! What `jobq doctor` checks of a PostgreSQL store beyond its jobs: vacuuming. Every job is an
//! insert and a few updates, and each update leaves a dead row version behind; without autovacuum
//! (off on the server, or off for one of jobq's tables) or with it falling behind, the tables and
//! their indexes bloat and claims slow down. Read from `pg_settings`, `pg_class` and
//! `pg_stat_user_tables` for the jobq tables of the store's schema; nothing is written.

use sqlx::Row;

use super::PostgresStore;
use crate::store::{Finding, Health, Severity, StoreError};

/// jobq's tables in the store's schema: name, dead and live row estimates, and whether the table's
/// own options turn autovacuum off.
const TABLES: &str = "SELECT c.relname::text, COALESCE(s.n_dead_tup, 0)::int8, COALESCE(s.n_live_tup, 0)::int8, \
     EXISTS (SELECT 1 FROM unnest(COALESCE(c.reloptions, '{}')) AS o \
             WHERE lower(o) IN ('autovacuum_enabled=false', 'autovacuum_enabled=off', \
                                'autovacuum_enabled=no', 'autovacuum_enabled=0')) \
     FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace \
     LEFT JOIN pg_stat_user_tables AS s ON s.relid = c.oid \
     WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE 'jobq\\_%' \
     ORDER BY c.relname";

impl PostgresStore {
    pub(super) async fn health_findings(&self, health: &Health) -> Result<Vec<Finding>, StoreError> {
        let fail = "reading vacuum statistics";
        let autovacuum: String = sqlx::query_scalar("SELECT current_setting('autovacuum')")
            .fetch_one(&self.sql.pool)
            .await
            .map_err(self.sql.fail(fail))?;
        let mut out = Vec::new();
        if autovacuum != "on" {
            out.push(Finding::new(
                "postgres-autovacuum-off",
                Severity::Error,
                "autovacuum is off on the PostgreSQL server, so the dead rows every job leaves behind are \
                 never cleared and jobq's tables bloat"
                    .into(),
                "turn it on: ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf();".into(),
            ));
        }
        let rows = sqlx::query(TABLES)
            .fetch_all(&self.sql.pool)
            .await
            .map_err(self.sql.fail(fail))?;
        for row in rows {
            let table: String = row.try_get(0).map_err(self.sql.fail(fail))?;
            let dead: i64 = row.try_get(1).map_err(self.sql.fail(fail))?;
            let live: i64 = row.try_get(2).map_err(self.sql.fail(fail))?;
            let off: bool = row.try_get(3).map_err(self.sql.fail(fail))?;
            if off {
                out.push(Finding::new(
                    "postgres-autovacuum-off",
                    Severity::Error,
                    format!("autovacuum is turned off for table {table}, so its dead rows are never cleared"),
                    format!("turn it back on: ALTER TABLE {table} RESET (autovacuum_enabled);"),
                ));
            }
            let (dead, live) = (dead.max(0) as u64, live.max(0) as u64);
            if too_many_dead(dead, live, health) {
                out.push(
                    Finding::new(
                        "postgres-dead-rows",
                        Severity::Warning,
                        format!("table {table} holds {dead} dead rows beside {live} live ones: vacuum falls behind"),
                        format!(
                            "run VACUUM (ANALYZE) {table}; if it comes back, look for long transactions in \
                             pg_stat_activity and make autovacuum eager for it: ALTER TABLE {table} SET \
                             (autovacuum_vacuum_scale_factor = 0.01);"
                        ),
                    )
                    .count(dead),
                );
            }
        }
        Ok(out)
    }
}

/// Whether a table's dead rows are past both limits: many in number, and many beside its live ones.
fn too_many_dead(dead: u64, live: u64, health: &Health) -> bool {
    dead > health.postgres_dead_rows && dead as f64 > health.postgres_dead_ratio * live as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_rows_count_when_past_both_limits() {
        let h = Health {
            postgres_dead_rows: 1000,
            postgres_dead_ratio: 0.2,
            ..Health::default()
        };
        assert!(too_many_dead(5000, 10_000, &h));
        assert!(!too_many_dead(900, 0, &h), "few in number");
        assert!(!too_many_dead(5000, 1_000_000, &h), "few beside the live rows");
    }
}
