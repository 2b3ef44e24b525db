//! jobq's own schema migrations, numbered in lockstep across the SQL stores: a change one store alone
//! needs, such as SQLite's arrivals table (6), takes its number in every store, as a migration that
//! changes nothing where it is not needed, so that one number means one change everywhere.
//!
//! jobq keeps its own `jobq_migrations` table (version, name, checksum, applied_at) rather than sharing
//! a framework's table with the application, and applies pending migrations under a store-wide lock
//! (SQLite: an immediate transaction; PostgreSQL: a transaction-scoped advisory lock per schema, with
//! each file run whole, so its functions may contain semicolons; MySQL: a named `GET_LOCK` per
//! database, statement by statement, since MySQL commits every DDL statement on its own). A recorded checksum that differs
//! from the shipped file means the database was migrated by a different build; that is refused rather
//! than guessed at.

use super::StoreKind;

/// One schema change.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// 1, 2, 3… the same number means the same change in every store that has it.
    pub version: u32,
    /// Short name, from the file name.
    pub name: &'static str,
    /// The statements, separated by semicolons.
    pub sql: &'static str,
}

impl Migration {
    /// FNV-1a of the SQL text, hex: enough to notice a changed migration.
    pub fn checksum(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in self.sql.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{hash:016x}")
    }
}

const SQLITE: &[Migration] = &[
    Migration {
        version: 1,
        name: "jobs",
        sql: include_str!("migrations/sqlite/0001_jobs.sql"),
    },
    Migration {
        version: 2,
        name: "schedules",
        sql: include_str!("migrations/sqlite/0002_schedules.sql"),
    },
    Migration {
        version: 3,
        name: "events",
        sql: include_str!("migrations/sqlite/0003_events.sql"),
    },
    Migration {
        version: 4,
        name: "flow_control",
        sql: include_str!("migrations/sqlite/0004_flow_control.sql"),
    },
    Migration {
        version: 5,
        name: "bridges",
        sql: include_str!("migrations/sqlite/0005_bridges.sql"),
    },
    Migration {
        version: 6,
        name: "arrivals",
        sql: include_str!("migrations/sqlite/0006_arrivals.sql"),
    },
    Migration {
        version: 7,
        name: "dependencies",
        sql: include_str!("migrations/sqlite/0007_dependencies.sql"),
    },
    Migration {
        version: 8,
        name: "open_edges",
        sql: include_str!("migrations/sqlite/0008_open_edges.sql"),
    },
    Migration {
        version: 9,
        name: "join_any",
        sql: include_str!("migrations/sqlite/0009_join_any.sql"),
    },
    Migration {
        version: 10,
        name: "waiting_for",
        sql: include_str!("migrations/sqlite/0010_waiting_for.sql"),
    },
    Migration {
        version: 11,
        name: "expiry",
        sql: include_str!("migrations/sqlite/0011_expiry.sql"),
    },
    Migration {
        version: 12,
        name: "unique_modes",
        sql: include_str!("migrations/sqlite/0012_unique_modes.sql"),
    },
];

const POSTGRES: &[Migration] = &[
    Migration {
        version: 1,
        name: "jobs",
        sql: include_str!("migrations/postgres/0001_jobs.sql"),
    },
    Migration {
        version: 2,
        name: "schedules",
        sql: include_str!("migrations/postgres/0002_schedules.sql"),
    },
    Migration {
        version: 3,
        name: "events",
        sql: include_str!("migrations/postgres/0003_events.sql"),
    },
    Migration {
        version: 4,
        name: "flow_control",
        sql: include_str!("migrations/postgres/0004_flow_control.sql"),
    },
    Migration {
        version: 5,
        name: "bridges",
        sql: include_str!("migrations/postgres/0005_bridges.sql"),
    },
    Migration {
        version: 6,
        name: "arrivals",
        sql: include_str!("migrations/postgres/0006_arrivals.sql"),
    },
    Migration {
        version: 7,
        name: "dependencies",
        sql: include_str!("migrations/postgres/0007_dependencies.sql"),
    },
    Migration {
        version: 8,
        name: "open_edges",
        sql: include_str!("migrations/postgres/0008_open_edges.sql"),
    },
    Migration {
        version: 9,
        name: "join_any",
        sql: include_str!("migrations/postgres/0009_join_any.sql"),
    },
    Migration {
        version: 10,
        name: "waiting_for",
        sql: include_str!("migrations/postgres/0010_waiting_for.sql"),
    },
    Migration {
        version: 11,
        name: "expiry",
        sql: include_str!("migrations/postgres/0011_expiry.sql"),
    },
    Migration {
        version: 12,
        name: "unique_modes",
        sql: include_str!("migrations/postgres/0012_unique_modes.sql"),
    },
];

const MYSQL: &[Migration] = &[
    Migration {
        version: 1,
        name: "jobs",
        sql: include_str!("migrations/mysql/0001_jobs.sql"),
    },
    Migration {
        version: 2,
        name: "schedules",
        sql: include_str!("migrations/mysql/0002_schedules.sql"),
    },
    Migration {
        version: 3,
        name: "events",
        sql: include_str!("migrations/mysql/0003_events.sql"),
    },
    Migration {
        version: 4,
        name: "flow_control",
        sql: include_str!("migrations/mysql/0004_flow_control.sql"),
    },
    Migration {
        version: 5,
        name: "bridges",
        sql: include_str!("migrations/mysql/0005_bridges.sql"),
    },
    Migration {
        version: 6,
        name: "arrivals",
        sql: include_str!("migrations/mysql/0006_arrivals.sql"),
    },
    Migration {
        version: 7,
        name: "dependencies",
        sql: include_str!("migrations/mysql/0007_dependencies.sql"),
    },
    Migration {
        version: 8,
        name: "open_edges",
        sql: include_str!("migrations/mysql/0008_open_edges.sql"),
    },
    Migration {
        version: 9,
        name: "join_any",
        sql: include_str!("migrations/mysql/0009_join_any.sql"),
    },
    Migration {
        version: 10,
        name: "waiting_for",
        sql: include_str!("migrations/mysql/0010_waiting_for.sql"),
    },
    Migration {
        version: 11,
        name: "expiry",
        sql: include_str!("migrations/mysql/0011_expiry.sql"),
    },
    Migration {
        version: 12,
        name: "unique_modes",
        sql: include_str!("migrations/mysql/0012_unique_modes.sql"),
    },
];

/// The migrations of a SQL store, oldest first (empty for Redis, which has no schema).
pub fn migrations(kind: StoreKind) -> &'static [Migration] {
    match kind {
        StoreKind::Sqlite => SQLITE,
        StoreKind::Postgres => POSTGRES,
        StoreKind::Mysql => MYSQL,
        StoreKind::Redis => &[],
    }
}

/// Every migration of `kind` as one script with headers, for `jobq migrate --print`.
pub fn script(kind: StoreKind) -> String {
    let mut out = String::new();
    for m in migrations(kind) {
        out.push_str(&format!(
            "-- jobq migration {:04}_{} ({kind}, checksum {})\n",
            m.version,
            m.name,
            m.checksum()
        ));
        out.push_str(m.sql.trim_end());
        out.push_str("\n\n");
    }
    out
}

/// The statements of a migration file: `--` comment lines dropped, split at semicolons that end a line.
pub fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in sql.lines() {
        if line.trim_start().starts_with("--") {
            continue;
        }
        current.push_str(line);
        current.push('\n');
        if line.trim_end().ends_with(';') {
            let statement = current.trim().trim_end_matches(';').trim().to_string();
            if !statement.is_empty() {
                out.push(statement);
            }
            current.clear();
        }
    }
    let rest = current.trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

/// The migrations of `kind` that still need applying, given the applied versions and their recorded
/// checksums. Refuses a schema newer than this build and a recorded checksum that differs from the
/// shipped file (the database was migrated by another build).
pub fn pending(
    kind: StoreKind,
    applied: &std::collections::HashMap<u32, String>,
) -> Result<Vec<&'static Migration>, super::StoreError> {
    let known = latest(kind);
    if let Some(&found) = applied.keys().max()
        && found > known
    {
        return Err(super::StoreError::SchemaTooNew { kind, found, known });
    }
    let mut out = Vec::new();
    for m in migrations(kind) {
        match applied.get(&m.version) {
            Some(checksum) if *checksum != m.checksum() => {
                return Err(super::StoreError::Migration {
                    kind,
                    version: m.version,
                    source: format!(
                        "checksum {checksum} recorded, this jobq ships {}: the database was migrated by another build",
                        m.checksum()
                    )
                    .into(),
                });
            }
            Some(_) => {}
            None => out.push(m),
        }
    }
    Ok(out)
}

/// Whether a schema at version `applied` (`None`: no jobq tables yet) needs `migrate` to run: false
/// when it is this build's latest; an error when it is newer than this build knows.
pub fn needs_migrating(kind: StoreKind, applied: Option<u32>) -> Result<bool, super::StoreError> {
    let known = latest(kind);
    match applied {
        Some(v) if v == known => Ok(false),
        Some(found) if found > known => Err(super::StoreError::SchemaTooNew { kind, found, known }),
        _ => Ok(true),
    }
}

/// The newest SQL schema version this build knows for `kind` (0 for a store without SQL; see
/// [`super::Store::schema_version`]).
pub fn latest(kind: StoreKind) -> u32 {
    migrations(kind).last().map(|m| m.version).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for kind in [StoreKind::Sqlite, StoreKind::Postgres, StoreKind::Mysql] {
            for (i, m) in migrations(kind).iter().enumerate() {
                assert_eq!(m.version as usize, i + 1, "{kind} {}", m.name);
            }
        }
    }
}
