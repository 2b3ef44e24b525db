//! Import on SQLite: the statements the SQL stores share (`store/sql/transfer.rs`), run on the direct
//! connection (`direct.rs`) in the calling thread. An import writes every column of every job, and
//! through sqlx each value was copied twice more and each statement crossed to sqlx's connection
//! thread and back; on the direct connection the same statements run in one thread, and the log's
//! checkpoints stay off the import's path.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, TransactionBehavior};

use super::direct::{execute, for_each_row};
use super::settings::DIALECT;
use crate::job::Job;
use crate::store::sql::{
    ImportPlan, ROWS_PER_INSERT, WHOLE_JOB_COLUMNS, WholeJobRow, placeholders, select_key_holders, select_stored_ids,
};
use crate::store::{Import, ImportAnswer};

/// Values per row of [`WHOLE_JOB_COLUMNS`].
const COLUMNS: usize = 22;

/// Writes jobs exactly as given (see [`crate::store::Store::import`]) in one immediate transaction:
/// it holds the write lock from the start, so what the look-ups find stays true until the writes.
pub(super) fn import(connection: &mut Connection, import: &Import) -> rusqlite::Result<Vec<ImportAnswer>> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut stored = HashSet::new();
    for select in select_stored_ids(&DIALECT, &import.jobs) {
        for_each_row(&tx, &select, |row| {
            stored.insert(row.get::<_, String>(0)?);
            Ok(())
        })?;
    }
    let mut holders = HashMap::new();
    for select in select_key_holders(&DIALECT, &import.jobs) {
        for_each_row(&tx, &select, |row| {
            holders.insert((row.get(1)?, row.get(2)?), row.get(0)?);
            Ok(())
        })?;
    }
    let plan = ImportPlan::decided(import, stored, holders);
    if import.dry_run || plan.writes.is_empty() {
        // Dropped, the transaction rolls back.
        return Ok(plan.answers);
    }
    for delete in plan.deletes(&DIALECT) {
        execute(&tx, &delete)?;
    }
    for chunk in plan.writes.chunks(ROWS_PER_INSERT) {
        insert_whole(&tx, chunk)?;
    }
    tx.commit()?;
    Ok(plan.answers)
}

/// One multi-row `INSERT` of whole jobs, its values bound straight from the jobs (the statement the
/// other SQL stores build as text and values, `sql/transfer.rs`, without copying every value into it
/// first: a copy of each payload per job was a tenth of an import's time).
fn insert_whole(connection: &Connection, jobs: &[&Job]) -> rusqlite::Result<()> {
    let row = format!("({})", placeholders(COLUMNS));
    let sql = format!(
        "INSERT INTO jobq_jobs ({WHOLE_JOB_COLUMNS}) VALUES {}",
        vec![row; jobs.len()].join(", ")
    );
    let mut statement = connection.prepare_cached(&sql)?;
    let mut at = 0;
    let mut bind = |value: &dyn rusqlite::ToSql| {
        at += 1;
        statement.raw_bind_parameter(at, value)
    };
    for job in jobs {
        let r = WholeJobRow::of(job);
        bind(&r.id)?;
        bind(&r.queue)?;
        bind(&r.job_type)?;
        bind(&r.payload)?;
        bind(&r.meta)?;
        bind(&r.priority)?;
        bind(&r.status)?;
        bind(&r.attempt)?;
        bind(&r.max_attempts)?;
        bind(&r.run_at)?;
        bind(&r.unique_key)?;
        bind(&r.timeout_ms)?;
        bind(&r.progress)?;
        bind(&r.progress_message)?;
        bind(&r.result)?;
        bind(&r.errors)?;
        bind(&r.created_at)?;
        bind(&r.started_at)?;
        bind(&r.finished_at)?;
        bind(&r.heartbeat_at)?;
        bind(&r.worker_id)?;
        bind(&r.snoozes)?;
    }
    statement.raw_execute()?;
    Ok(())
}
