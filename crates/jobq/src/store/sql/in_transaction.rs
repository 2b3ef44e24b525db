//! Enqueue and emit inside an application's own transaction: the rows jobq's own enqueue writes,
//! written on the application's connection, so the job (or the event) exists if and only if the
//! application commits. The answers are those of [`crate::store::Store::enqueue`]: an id that exists
//! is a duplicate, a unique key a live job holds coalesces into that job.
//!
//! The statements name the tables as the application's connection sees them ([`SqlTables`]), one
//! text each for a process (so kept prepared on the application's connection), and
//! never fail the transaction on a clash: PostgreSQL, whose transaction a failed statement would
//! end, and SQLite skip a clashing row (`ON CONFLICT DO NOTHING`); MySQL, where a failed statement
//! leaves the transaction as it was, inserts plainly and reads the duplicate-key error. SQLite's
//! few-at-a-time enqueues wait in `jobq_arrivals` before they reach `jobq_jobs`
//! (`sqlite/arrivals.rs`), so there an id counts as taken in either table.

use super::exec::Exec;
use super::{Dialect, LIVE_STATUSES, NewJobRow, Stmt, Upsert};
use crate::job::{JobId, NewJob, UniqueMode};
use crate::store::error::DriverError;
use crate::store::{EnqueueOutcome, Enqueued, StoreError};

/// Attempts at an insert whose clash vanishes before it can be read (a coalescing holder that
/// finishes in between).
const ROUNDS: usize = 5;

/// The operation named in errors.
const OPERATION: &str = "enqueue in the application's transaction";

/// Where an application's own connection to the store's database finds jobq's tables, and how that
/// database spells its statements. Made by each SQL store ([`crate::store::Store::sql_tables`]).
#[derive(Debug, Clone)]
pub struct SqlTables {
    pub(crate) dialect: &'static Dialect,
    /// `jobq_jobs`, qualified with the schema or database the store's URL names.
    pub(crate) jobs: String,
    /// `jobq_events`, qualified the same way.
    pub(crate) events: String,
    /// SQLite's `jobq_arrivals`.
    pub(crate) arrivals: Option<String>,
    /// `jobq_unique_holds` (throttled keys), qualified the same way.
    holds: String,
    /// `jobq_deps` (a `keep-last` job's edge to the running job it waits behind), qualified the
    /// same way.
    deps: String,
}

impl SqlTables {
    /// The tables named `jobq_…` in `qualifier` (a quoted schema or database, with its dot), or
    /// unqualified.
    pub(crate) fn new(dialect: &'static Dialect, qualifier: &str, arrivals: bool) -> SqlTables {
        SqlTables {
            dialect,
            jobs: format!("{qualifier}jobq_jobs"),
            events: format!("{qualifier}jobq_events"),
            holds: format!("{qualifier}jobq_unique_holds"),
            deps: format!("{qualifier}jobq_deps"),
            arrivals: arrivals.then(|| format!("{qualifier}jobq_arrivals")),
        }
    }

    /// `jobq_unique_holds` as the statements name it.
    pub(crate) fn holds(&self) -> &str {
        &self.holds
    }

    /// `jobq_deps` as the statements name it.
    pub(crate) fn deps(&self) -> &str {
        &self.deps
    }

    /// The jobs table as the statements name it, for messages.
    pub fn jobs(&self) -> &str {
        &self.jobs
    }
}

/// Enqueues `job` on the application's connection, with the answer [`Store::enqueue`] would give.
///
/// [`Store::enqueue`]: crate::store::Store::enqueue
pub(crate) async fn enqueue(exec: &mut dyn Exec, tables: &SqlTables, job: &NewJob) -> Result<Enqueued, StoreError> {
    let kind = tables.dialect.kind;
    let failed = |e: sqlx::Error| StoreError::query(kind, OPERATION, DriverError::deepest(&e));
    if job.unique_mode != UniqueMode::Coalesce {
        let decided = super::unique::enqueue(exec, tables, job, super::unique::Behind::InThisTransaction);
        return Ok(decided
            .await
            .map_err(failed)?
            .expect("a transaction may queue a job behind a running holder"));
    }
    let row = NewJobRow::of(job);
    for _ in 0..ROUNDS {
        if insert_job(exec, tables, &row).await.map_err(failed)? {
            return Ok(answer(job.id.clone(), EnqueueOutcome::Created));
        }
        if id_taken(exec, tables, row.id).await.map_err(failed)? {
            return Ok(answer(job.id.clone(), EnqueueOutcome::Duplicate));
        }
        if let Some(key) = row.unique_key
            && let Some(holder) = live_holder(exec, tables, row.queue, key).await.map_err(failed)?
        {
            return Ok(answer(JobId::from_stored(holder), EnqueueOutcome::Coalesced));
        }
    }
    Err(StoreError::query(
        kind,
        OPERATION,
        format!(
            "job {}: its unique key's holder kept changing; nothing was inserted",
            row.id
        ),
    ))
}

/// Which of `ids` are taken (SQLite: stored or arrived), a bounded number a statement.
pub(crate) async fn taken_ids<'a>(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    ids: impl Iterator<Item = &'a str>,
) -> Result<std::collections::HashSet<String>, sqlx::Error> {
    let ids: Vec<String> = ids.map(str::to_string).collect();
    let mut taken = std::collections::HashSet::new();
    for chunk in ids.chunks(super::IDS_PER_STATEMENT) {
        let mut stmt = Stmt::new(tables.dialect, format!("SELECT id FROM {} WHERE 1 = 1", tables.jobs));
        stmt.any_of("id", chunk.iter().cloned());
        if let Some(arrivals) = &tables.arrivals {
            stmt.push(&format!(" UNION ALL SELECT id FROM {arrivals} WHERE 1 = 1"))
                .any_of("id", chunk.iter().cloned());
        }
        for row in exec.fetch_all(&stmt).await? {
            taken.insert(row.try_get_unchecked::<String>(0)?);
        }
    }
    Ok(taken)
}

/// One new job's values, in the order of the columns every insert of new jobs names
/// ([`super::INSERT_NEW_JOBS`]'s, and [`insert_job`]'s).
pub(super) fn row_values<'s>(stmt: &'s mut Stmt, d: &Dialect, row: &NewJobRow<'_>) -> &'s mut Stmt {
    stmt.bind(row.id)
        .push(", ")
        .bind(row.queue)
        .push(", ")
        .bind(row.job_type)
        .push(", ");
    json(stmt, d, row.payload).push(", ");
    json(stmt, d, &row.meta).push(", ");
    stmt.bind(row.priority)
        .push(", ")
        .bind(row.max_attempts)
        .push(", ")
        .bind(row.run_at)
        .push(", ")
        .bind(row.unique_key.map(str::to_string))
        .push(", ")
        .bind(row.timeout_ms)
        .push(", ")
        .bind(row.created_at)
        .push(", ")
        .bind(row.expires_at)
}

/// Records an event for the workers to expand, on the application's connection: true when it is new,
/// false when an event with its id exists.
pub(crate) async fn emit(exec: &mut dyn Exec, tables: &SqlTables, event: &EventRow<'_>) -> Result<bool, sqlx::Error> {
    let d = tables.dialect;
    let mut stmt = Stmt::new(
        d,
        format!(
            "INSERT INTO {} (id, name, payload, meta, created_at) VALUES (",
            tables.events
        ),
    );
    stmt.bind(event.id).push(", ").bind(event.name).push(", ");
    json(&mut stmt, d, event.payload).push(", ");
    json(&mut stmt, d, event.meta)
        .push(", ")
        .bind(event.created_at)
        .push(")")
        .keep();
    skip_clashes(exec, d, &mut stmt).await
}

/// An event's row, as [`emit`] writes it.
pub(crate) struct EventRow<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub payload: &'a str,
    pub meta: &'a str,
    pub created_at: i64,
}

fn answer(id: JobId, outcome: EnqueueOutcome) -> Enqueued {
    Enqueued { id, outcome }
}

/// Inserts the row unless its id or its live unique key is taken: true when it went in.
async fn insert_job(exec: &mut dyn Exec, tables: &SqlTables, row: &NewJobRow<'_>) -> Result<bool, sqlx::Error> {
    let d = tables.dialect;
    let mut stmt = Stmt::new(
        d,
        format!(
            "INSERT INTO {} (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
             timeout_ms, created_at, expires_at) {}",
            tables.jobs,
            if tables.arrivals.is_some() {
                "SELECT "
            } else {
                "VALUES ("
            }
        ),
    );
    row_values(&mut stmt, d, row);
    match &tables.arrivals {
        // The WHERE also lets SQLite read the `ON CONFLICT` that follows as the insert's.
        Some(arrivals) => stmt
            .push(&format!(" WHERE NOT EXISTS (SELECT 1 FROM {arrivals} WHERE id = "))
            .bind(row.id)
            .push(")"),
        None => stmt.push(")"),
    };
    stmt.keep();
    skip_clashes(exec, d, &mut stmt).await
}

/// Runs an insert that skips a row clashing with a key: `ON CONFLICT DO NOTHING` where the database
/// has it, else the plain insert with its duplicate-key error read as "skipped". True when it went in.
pub(super) async fn skip_clashes(exec: &mut dyn Exec, d: &Dialect, stmt: &mut Stmt) -> Result<bool, sqlx::Error> {
    match d.upsert {
        Upsert::OnConflict => {
            stmt.push(" ON CONFLICT DO NOTHING");
            Ok(exec.execute(stmt).await? == 1)
        }
        Upsert::OnDuplicateKey => match exec.execute(stmt).await {
            Ok(n) => Ok(n == 1),
            Err(e) if (d.is_unique_violation)(&e) => Ok(false),
            Err(e) => Err(e),
        },
    }
}

/// A JSON text bound as the database's JSON columns take it.
fn json<'s>(stmt: &'s mut Stmt, d: &Dialect, text: &str) -> &'s mut Stmt {
    let (open, close) = d.json_in;
    stmt.push(open).bind(text).push(close)
}

/// Whether a job with `id` exists (SQLite: stored or arrived).
pub(super) async fn id_taken(exec: &mut dyn Exec, tables: &SqlTables, id: &str) -> Result<bool, sqlx::Error> {
    let mut stmt = Stmt::new(tables.dialect, format!("SELECT id FROM {} WHERE id = ", tables.jobs));
    stmt.bind(id);
    if let Some(arrivals) = &tables.arrivals {
        stmt.push(&format!(" UNION ALL SELECT id FROM {arrivals} WHERE id = "))
            .bind(id);
    }
    stmt.keep();
    Ok(exec.fetch_optional(&stmt).await?.is_some())
}

/// The live job of `queue` that holds `key`, if any.
pub(super) async fn live_holder(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    queue: &str,
    key: &str,
) -> Result<Option<String>, sqlx::Error> {
    let mut stmt = Stmt::new(tables.dialect, format!("SELECT id FROM {} WHERE queue = ", tables.jobs));
    stmt.bind(queue)
        .push(" AND unique_key = ")
        .bind(key)
        .push(&format!(" AND status IN {LIVE_STATUSES}"))
        .keep();
    exec.fetch_optional(&stmt)
        .await?
        .map(|row| row.try_get_unchecked(0))
        .transpose()
}
