//! Arrivals: where a few jobs enqueued at once land first (migration 0006).
//!
//! One job per commit is what a web request's enqueue comes down to, and on SQLite a commit costs
//! what it writes to the log: every page the transaction changed. A pending job's row in `jobq_jobs`
//! changes five b-trees (the table, its key, the ready, queue/status and created indexes), so a lone
//! producer's commit wrote five pages where a table of one b-tree writes one. A plain batch of up to
//! [`ARRIVAL_LIMIT`] jobs therefore commits into `jobq_arrivals` (one b-tree, keyed by id); a larger
//! batch, whose pages its rows share anyway, goes into `jobq_jobs` as before.
//!
//! Arrived jobs are jobs like any other: every store method that reads or changes jobs (claims, reads,
//! counts, operator actions; see `SqlBackend::settle`) first moves whatever has arrived into
//! `jobq_jobs`, all of it in one transaction, and every write that could meet an arrived id (a checked
//! enqueue, a large batch, an import) moves them inside its own transaction first. So the five b-trees
//! are paid once per move, by the reader (typically a worker's claim), for every job that arrived
//! since. Which process enqueued them does not matter: the check is one read of the arrivals table's
//! root page, and the move is a write like any other, under this process's gate and SQLite's lock.
//!
//! An id is unique across both tables: a trigger refuses an arrival whose id is stored in `jobq_jobs`,
//! the arrivals' own key one that has arrived already, and the moves above keep every direct insert
//! into `jobq_jobs` from meeting an arrived id. The one exception is a job whose id a schedule tick or
//! an event fan-out derives (`sched:…`, `evt:…`), given by hand to an enqueue in another process
//! between a move and that tick's insert: the move then keeps the stored job and says so in the log.

use std::sync::LazyLock;

use rusqlite::{Connection, TransactionBehavior};

use crate::store::sql::INSERT_NEW_JOBS;

/// Plain batches of at most this many jobs arrive; larger ones go into `jobq_jobs` directly. A
/// batch's b-tree pages are shared by its rows, so past a few dozen jobs a direct commit costs about
/// what its later move would.
pub(super) const ARRIVAL_LIMIT: usize = 64;

/// Whether anything has arrived: one read of the table's first page.
const ANY_ARRIVED: &str = "SELECT EXISTS (SELECT 1 FROM jobq_arrivals)";

/// The move's copy. `WHERE true` lets SQLite read the `ON CONFLICT` as the insert's; a taken id (the
/// module's one exception) keeps the stored job.
const MOVE_ARRIVED: &str = "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, \
     run_at, unique_key, timeout_ms, created_at, expires_at) \
     SELECT id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at, \
     expires_at \
     FROM jobq_arrivals WHERE true ON CONFLICT (id) DO NOTHING";

/// The move's clean-up, in the same transaction.
const CLEAR_ARRIVED: &str = "DELETE FROM jobq_arrivals";

/// [`INSERT_NEW_JOBS`] into the arrivals table: the same columns, bound the same way (made once).
pub(super) fn insert_arrivals_prefix() -> &'static str {
    static PREFIX: LazyLock<String> = LazyLock::new(|| INSERT_NEW_JOBS.replacen("jobq_jobs", "jobq_arrivals", 1));
    &PREFIX
}

/// Whether any job waits in the arrivals table (outside a transaction: a read of its own).
pub(super) fn any_arrived(connection: &Connection) -> rusqlite::Result<bool> {
    connection.prepare_cached(ANY_ARRIVED)?.query_row([], |row| row.get(0))
}

/// Moves every arrived job into `jobq_jobs`, inside the caller's write transaction.
pub(super) fn move_arrived(connection: &Connection) -> rusqlite::Result<()> {
    let moved = connection.prepare_cached(MOVE_ARRIVED)?.execute([])?;
    let arrived = connection.prepare_cached(CLEAR_ARRIVED)?.execute([])?;
    warn_if_taken(arrived, moved);
    Ok(())
}

/// Moves every arrived job into `jobq_jobs` in a transaction of its own. The caller holds the gate.
pub(super) fn move_arrived_now(connection: &mut Connection) -> rusqlite::Result<()> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    move_arrived(&tx)?;
    tx.commit()
}

/// As [`move_arrived`], on a transaction of the sqlx pool (the checked enqueue's). Each statement
/// there crosses to sqlx's connection thread and back, so when nothing moved (nearly always, for a
/// job with a unique key) the clean-up is left out: anything left is a job whose id was taken (the
/// module's exception), which changes no look-up, and the next [`move_arrived`] clears it.
pub(super) async fn move_arrived_in(tx: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    let moved = sqlx::query(MOVE_ARRIVED).execute(&mut *tx).await?.rows_affected();
    if moved > 0 {
        let arrived = sqlx::query(CLEAR_ARRIVED).execute(&mut *tx).await?.rows_affected();
        warn_if_taken(arrived as usize, moved as usize);
    }
    Ok(())
}

fn warn_if_taken(arrived: usize, moved: usize) {
    if arrived > moved {
        tracing::warn!(
            jobs = arrived - moved,
            "arrived jobs were not moved: a schedule's or an event's job took their ids first"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text between the first parentheses of `sql`.
    fn first_list(sql: &str) -> &str {
        let open = sql.find('(').unwrap() + 1;
        &sql[open..open + sql[open..].find(')').unwrap()]
    }

    #[test]
    fn the_move_copies_every_column_an_enqueue_writes() {
        let written = first_list(INSERT_NEW_JOBS);
        assert_eq!(first_list(MOVE_ARRIVED), written);
        let selected = MOVE_ARRIVED
            .split(" SELECT ")
            .nth(1)
            .unwrap()
            .split(" FROM")
            .next()
            .unwrap();
        assert_eq!(selected, written);
        assert_eq!(first_list(insert_arrivals_prefix()), written);
    }
}
