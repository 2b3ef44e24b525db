//! What MySQL's transactions share: batches of ids travel as one JSON array parameter read with
//! `JSON_TABLE` ([`ID_TABLE`]), so a statement carries any number of rows for a constant text (prepared
//! once per connection); text cells are read without sqlx's type check; and a whole transaction is run
//! again when it loses a race for a row lock.

use std::time::Duration;

use serde_json::Value;
use sqlx::mysql::MySqlRow;

use super::MysqlStore;
use super::settings::is_lock_conflict;
use crate::job::{ERROR_HISTORY_CAP, Job};
use crate::store::StoreError;
use crate::store::sql::{JobCells, job_from_row};

/// Tries of one operation that meets a deadlock or a lock-wait time-out.
pub(super) const TRANSIENT_TRIES: u32 = 5;

/// The job ids of a JSON array parameter, as a table `t(id)`. Statements join it `STRAIGHT_JOIN
/// jobq_jobs`: read first, it finds each row by primary key, so they touch (and lock) only the rows
/// they name. Left to itself the optimizer may scan a small table instead, locking (or waiting for)
/// every row of it.
pub(super) const ID_TABLE: &str = "JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$')) AS t";

/// Reads a text column. MySQL flags text in a binary collation as binary, which sqlx's checked
/// decoding refuses; the column types here are jobq's own.
pub(super) fn text(row: &impl JobCells, i: usize) -> String {
    row.opt_text(i).ok().flatten().unwrap_or_default()
}

pub(super) fn jobs_from_rows(rows: &[MySqlRow]) -> Result<Vec<Job>, StoreError> {
    rows.iter().map(|r| job_from_row(r, super::KIND)).collect()
}

/// A JSON array of strings, for [`ID_TABLE`].
pub(super) fn id_array<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    Value::Array(ids.map(|id| Value::String(id.to_string())).collect()).to_string()
}

/// SQL appending `{attempt, at, error}` to `j.errors`, first dropping the oldest entry once the
/// history holds [`ERROR_HISTORY_CAP`] entries. The arguments are SQL expressions.
pub(super) fn append_error(attempt: &str, at: &str, error: &str) -> String {
    format!(
        "JSON_ARRAY_APPEND(IF(JSON_LENGTH(j.errors) >= {ERROR_HISTORY_CAP}, JSON_REMOVE(j.errors, '$[0]'), j.errors), \
         '$', JSON_OBJECT('attempt', {attempt}, 'at', {at}, 'error', {error}))"
    )
}

impl MysqlStore {
    /// Runs `attempt` (one whole transaction) until it succeeds, again after a deadlock or lock-wait
    /// time-out (and after whatever else `also` accepts), at most `tries` times.
    pub(super) async fn retrying<T, Fut>(
        &self,
        operation: &'static str,
        tries: u32,
        also: fn(&sqlx::Error) -> bool,
        mut attempt: impl FnMut() -> Fut,
    ) -> Result<T, StoreError>
    where
        Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
    {
        let mut tried = 0;
        loop {
            tried += 1;
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) if tried < tries && (is_lock_conflict(&e) || also(&e)) => {
                    tracing::debug!("{operation}: {e}; trying again");
                    // A little apart, so that the other side of a deadlock gets through first.
                    tokio::time::sleep(Duration::from_millis(u64::from(tried) * 3)).await;
                }
                Err(e) => return Err(self.sql.fail(operation)(e)),
            }
        }
    }
}
