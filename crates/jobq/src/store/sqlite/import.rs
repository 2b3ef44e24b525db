//! Import on SQLite: the statements the SQL stores share (`store/sql/transfer.rs`), run on the direct
//! connection (`direct.rs`) in the calling thread. An import writes every column of every job, and
//! through sqlx each value was copied twice more and each statement crossed to sqlx's connection
//! thread and back; on the direct connection the same statements run in one thread, and the log's
//! checkpoints stay off the import's path.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, ToSql, TransactionBehavior};

use super::direct::{execute, for_each_row, insert_rows};
use super::settings::DIALECT;
use crate::job::Job;
use crate::store::sql::{
    IDS_PER_STATEMENT, ImportPlan, ROWS_PER_INSERT, Stmt, WHOLE_JOB_COLUMNS, WholeJobRow, placeholders,
    select_key_holders, select_stored_ids,
};
use crate::store::{Import, ImportAnswer};

/// Values per row of [`WHOLE_JOB_COLUMNS`].
const COLUMNS: usize = 24;

/// Writes jobs exactly as given (see [`crate::store::Store::import`]) in one immediate transaction:
/// it holds the write lock from the start, so what the look-ups find stays true until the writes.
/// `None`, having written none of it, when the import would replace a job that others wait for: the
/// shared statements take that import, which hand the waiting jobs over (`sql/transfer.rs`).
pub(super) fn import(connection: &mut Connection, import: &Import) -> rusqlite::Result<Option<Vec<ImportAnswer>>> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Arrived jobs move first, so that the look-ups below see their ids (see `arrivals.rs`).
    super::arrivals::move_arrived(&tx)?;
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
        return Ok(Some(plan.answers));
    }
    for chunk in plan.replaced.chunks(IDS_PER_STATEMENT) {
        let mut waited_for = false;
        let mut select = Stmt::new(&DIALECT, "SELECT 1 FROM jobq_jobs WHERE dependents > 0");
        select.any_of("id", chunk.iter().cloned()).push(" LIMIT 1");
        for_each_row(&tx, &select, |_| {
            waited_for = true;
            Ok(())
        })?;
        if waited_for {
            // Keep the arrived jobs' move (all this transaction wrote), so that the shared
            // statements see their ids too.
            tx.commit()?;
            return Ok(None);
        }
    }
    for delete in plan.deletes(&DIALECT) {
        execute(&tx, &delete)?;
    }
    for chunk in plan.writes.chunks(ROWS_PER_INSERT) {
        insert_whole(&tx, chunk)?;
    }
    tx.commit()?;
    Ok(Some(plan.answers))
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
    insert_rows(connection, &sql, jobs, |job, bind| {
        let r = WholeJobRow::of(job);
        let values: [&dyn ToSql; COLUMNS] = [
            &r.id,
            &r.queue,
            &r.job_type,
            &r.payload,
            &r.meta,
            &r.priority,
            &r.status,
            &r.attempt,
            &r.max_attempts,
            &r.run_at,
            &r.unique_key,
            &r.timeout_ms,
            &r.progress,
            &r.progress_message,
            &r.result,
            &r.errors,
            &r.created_at,
            &r.started_at,
            &r.finished_at,
            &r.heartbeat_at,
            &r.worker_id,
            &r.snoozes,
            &r.expires_at,
            &r.unique_mode,
        ];
        values.into_iter().try_for_each(bind)
    })
}
