//! The `WHERE` conditions the SQL stores share: a [`JobFilter`] on `jobq_jobs AS j`, written once with
//! bound values (sqlx's `QueryBuilder` spells each database's placeholders), and the status lists.

use sqlx::{Database, Encode, QueryBuilder, Type};

use crate::job::JobStatus;
use crate::store::{Cleanup, JobFilter, ReplayDead};

/// The statuses a job can be cancelled from, and that hold a unique key.
pub const LIVE_STATUSES: &str = "('pending', 'running', 'waiting')";

/// The terminal statuses as an SQL list.
pub const TERMINAL_STATUSES: &str = "('succeeded', 'dead', 'cancelled', 'discarded')";

/// Appends `AND …` conditions for a filter on the columns of `jobq_jobs` under the name `table` (its
/// alias `j` in most statements).
pub(crate) fn push_filter<'args, DB>(qb: &mut QueryBuilder<'args, DB>, table: &str, filter: &JobFilter)
where
    DB: Database,
    String: Encode<'args, DB> + Type<DB>,
    i64: Encode<'args, DB> + Type<DB>,
{
    push_in(qb, &format!("{table}.queue"), filter.queues.iter().cloned());
    push_in(qb, &format!("{table}.job_type"), filter.job_types.iter().cloned());
    let statuses = filter.statuses.iter().map(|s| s.as_str().to_string());
    push_in(qb, &format!("{table}.status"), statuses);
    if let Some(since) = filter.created_since {
        qb.push(format!(" AND {table}.created_at >= ")).push_bind(since.0);
    }
    if let Some(until) = filter.created_until {
        qb.push(format!(" AND {table}.created_at < ")).push_bind(until.0);
    }
}

/// Appends ` AND column IN (…)` for `values`; nothing when there are none (no condition, so a caller
/// for which an empty list must match nothing checks for that first).
pub(crate) fn push_in<'args, DB>(qb: &mut QueryBuilder<'args, DB>, column: &str, values: impl Iterator<Item = String>)
where
    DB: Database,
    String: Encode<'args, DB> + Type<DB>,
{
    let mut values = values.peekable();
    if values.peek().is_none() {
        return;
    }
    qb.push(format!(" AND {column} IN ("));
    let mut sep = qb.separated(", ");
    for v in values {
        sep.push_bind(v);
    }
    qb.push(")");
}

/// What a cleanup call selects: its queues and its terminal statuses (every terminal one when it
/// names none). `None` when it names live statuses only, which cleanup never touches.
pub(crate) fn cleanup_filter(cleanup: &Cleanup) -> Option<JobFilter> {
    let statuses: Vec<JobStatus> = cleanup.statuses.iter().copied().filter(|s| s.is_terminal()).collect();
    if !cleanup.statuses.is_empty() && statuses.is_empty() {
        return None;
    }
    Some(JobFilter {
        queues: cleanup.queues.clone(),
        statuses,
        ..Default::default()
    })
}

/// The dead jobs a replay selects by queue and type (its ids, when it names some, come on top).
pub(crate) fn replay_filter(replay: &ReplayDead) -> JobFilter {
    JobFilter {
        queues: replay.queues.clone(),
        job_types: replay.job_types.clone(),
        ..Default::default()
    }
}

/// A comma-separated list of `n` placeholders `?` (SQLite, MySQL), for statements whose text is
/// cached by their number of rows.
pub fn placeholders(n: usize) -> String {
    let mut s = String::with_capacity(n * 3);
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('?');
    }
    s
}
