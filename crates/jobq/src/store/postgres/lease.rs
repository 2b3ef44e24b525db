//! PostgreSQL's fenced exits from `running` (heartbeat, finish, release): a batch travels as arrays, and
//! each statement returns the position (`ord`) of every lease it applied, so each lease of a round gets
//! its own answer.

use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, Postgres, Row};

use super::{PostgresStore, ROWS_PER_STATEMENT};
use crate::job::ERROR_HISTORY_CAP;
use crate::store::Lease;
use crate::store::batch::rounds_by_id;

/// The fence's status condition in the fenced statements, spelled so that the planner cannot answer
/// it from the partial index of running jobs (`WHERE status = 'running'`). Written as a plain
/// `j.status = 'running'`, it made the planner intersect that whole index with the batch's primary-key
/// look-ups; a job's entry stays in that index, dead, from its end until a vacuum, so every heartbeat
/// and every batch of outcomes read the entries of every job run since the last vacuum (measured: a
/// batch of 1,000 outcomes read 61,000 entries, 0.9 ms, after 60,000 jobs). The rows are found by
/// key (`j.id = ANY($2)`) and this only checks them.
pub(super) const STILL_RUNNING: &str = "(j.status || '') = 'running'";

/// [`STILL_RUNNING`] for outcomes, which also pass over a job that others wait for: it ends in the
/// shared layer's transaction that resolves them (`Sql::finish_with_dependents`), so here it reads
/// as not applied and the caller takes it there. One expression, estimated as `STILL_RUNNING` is: a
/// second condition lowered the planner's guess for the batch's rows below two, and it then joined
/// them to the outcomes' arrays by rescanning the arrays once per row (500 outcomes: 135 ms instead
/// of 12).
pub(super) const STILL_RUNNING_FREE: &str =
    "(j.status || CASE WHEN j.dependents = 0 THEN '' ELSE ' with dependents' END) = 'running'";

/// A CTE that makes its statement's commit asynchronous: `synchronous_commit = off` for the statement's
/// own transaction only (`set_config(…, true)`; a statement outside BEGIN is a transaction of its own),
/// so the commit returns without waiting for its WAL to reach the disk: one flush less per claim, and
/// no flush per heartbeat. Used only where the loss of the write in a server crash is already covered
/// by at-least-once delivery: a claim (the job is simply pending again, and claimed again) and a
/// heartbeat (the job looks staler than it is, and is rescued sooner). Never for an enqueue or an
/// outcome, which are acknowledged to someone; and since a commit flushes all the WAL before its own,
/// an acknowledged outcome never rests on a claim that a crash could take back. The guide's
/// PostgreSQL page ("Which writes wait for the disk") says the same to users; the crash test in
/// `tests/it/postgres.rs` holds it.
pub(super) const LAX_COMMIT: &str = "lax AS (SELECT set_config('synchronous_commit', 'off', true) AS lax)";

/// The condition that runs [`LAX_COMMIT`] (a CTE nothing reads is never run): an InitPlan, evaluated
/// once, before the statement's first row.
pub(super) const LAX_COMMIT_APPLIED: &str = "(SELECT lax FROM lax) IS NOT NULL";

/// PostgreSQL text cannot hold NUL; a handler's error output might. Replaced by U+FFFD so that the
/// outcome is still recorded.
pub(super) fn pg_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// SQL appending `{attempt, at, error}` to `j.errors`, first dropping the oldest entry once the
/// history holds [`ERROR_HISTORY_CAP`] entries. The arguments are SQL expressions.
pub(super) fn append_error(attempt: &str, at: &str, error: &str) -> String {
    format!(
        "(CASE WHEN jsonb_array_length(j.errors) >= {ERROR_HISTORY_CAP} THEN j.errors - 0 ELSE j.errors END) \
         || jsonb_build_array(jsonb_build_object('attempt', {attempt}, 'at', {at}, 'error', {error}))"
    )
}

impl PostgresStore {
    /// Runs a fenced lease statement over a batch, round by round (no job twice in one statement), and
    /// returns, per input, whether its lease matched, on `conn` (a connection of the pool, or a
    /// transaction's). `bind_rows` adds the statement's arrays for the given inputs (`$1` is always
    /// the `ord` array, added here, and `$2` the job ids); the statement returns the `ord` of each row
    /// it changed. The statements also say `j.id = ANY($2)`: it lets the planner fetch the batch's rows
    /// by primary key rather than hash every running job to join them with the arrays. They are kept
    /// prepared (parsed once per connection) but planned for each batch's own size: a generic plan of
    /// a join against `unnest()` rescans the arrays once per row (a batch of 1,000 took 0.8 s instead
    /// of 30 ms), so every connection runs with `plan_cache_mode = force_custom_plan`.
    pub(super) async fn fenced<'q>(
        &self,
        conn: &mut PgConnection,
        sql: &'q str,
        leases: &[&Lease],
        mut bind_rows: impl FnMut(Query<'q, Postgres, PgArguments>, &[usize]) -> Query<'q, Postgres, PgArguments>,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let mut matched = vec![false; leases.len()];
        for round in rounds_by_id(leases, |l| l.id.as_str()) {
            for chunk in round.chunks(ROWS_PER_STATEMENT) {
                let ords: Vec<i32> = (0..chunk.len() as i32).collect();
                let query = bind_rows(sqlx::query(sql).bind(ords), chunk);
                let rows = query.fetch_all(&mut *conn).await?;
                for row in &rows {
                    matched[chunk[row.get::<i32, _>(0) as usize]] = true;
                }
            }
        }
        Ok(matched)
    }
}

/// The arrays shared by the fenced statements: ids, attempts and workers of the leases at `chunk`.
pub(super) fn lease_arrays<'a>(leases: &[&'a Lease], chunk: &[usize]) -> (Vec<&'a str>, Vec<i32>, Vec<&'a str>) {
    let ids = chunk.iter().map(|&i| leases[i].id.as_str()).collect();
    let attempts = chunk
        .iter()
        .map(|&i| leases[i].attempt.min(i32::MAX as u32) as i32)
        .collect();
    let workers = chunk.iter().map(|&i| leases[i].worker.as_str()).collect();
    (ids, attempts, workers)
}
