//! Pages of jobs read on the direct reader (`direct.rs`): the select the SQL stores share
//! (`sql::list_statement`), its rows decoded here rather than by sqlx.

use rusqlite::Connection;

use super::KIND;
use super::direct::{driver_error, for_each_row};
use super::settings::DIALECT;
use crate::job::{Job, JobId};
use crate::store::sql::{Decoder, compact_json, list_statement};
use crate::store::{List, StoreError};
use crate::time::UnixMillis;

/// Why a read failed: SQLite's error, or a row that does not decode.
pub(super) enum ReadError {
    Sqlite(rusqlite::Error),
    Corrupt(StoreError),
}

impl ReadError {
    pub fn into_store_error(self, operation: &'static str) -> StoreError {
        match self {
            ReadError::Sqlite(e) => StoreError::query(KIND, operation, driver_error(&e)),
            ReadError::Corrupt(e) => e,
        }
    }
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> ReadError {
        ReadError::Sqlite(e)
    }
}

/// One page of [`crate::store::Store::list`].
pub(super) fn list(connection: &mut Connection, params: &List) -> Result<Vec<Job>, ReadError> {
    let stmt = list_statement(&DIALECT, params);
    let mut jobs = Vec::with_capacity(params.limit as usize);
    for_each_row(connection, &stmt, |row| {
        jobs.push(job(row));
        Ok(())
    })?;
    jobs.into_iter().collect::<Result<_, _>>().map_err(ReadError::Corrupt)
}

/// The job in a row of [`crate::store::sql::Dialect::job_columns`], as `sql::job_from_row` reads it
/// through sqlx.
fn job(row: &rusqlite::Row<'_>) -> Result<Job, StoreError> {
    let mut d = Decoder {
        kind: KIND,
        id: String::new(),
    };
    d.id = cell(row, &d, 0)?;
    Ok(Job {
        queue: cell(row, &d, 1)?,
        job_type: cell(row, &d, 2)?,
        payload: d.raw("payload", compact_json(cell(row, &d, 3)?))?,
        meta: d.meta(&cell::<String>(row, &d, 4)?)?,
        priority: cell(row, &d, 5)?,
        status: d.status(&cell::<String>(row, &d, 6)?)?,
        attempt: cell::<i32>(row, &d, 7)?.max(0) as u32,
        max_attempts: cell::<i32>(row, &d, 8)?.max(1) as u32,
        run_at: UnixMillis(cell(row, &d, 9)?),
        unique_key: cell(row, &d, 10)?,
        timeout_ms: cell::<Option<i64>>(row, &d, 11)?.map(|t| t.max(1) as u64),
        progress: d.progress(cell(row, &d, 12)?, cell(row, &d, 13)?),
        result: cell::<Option<String>>(row, &d, 14)?
            .map(|r| d.raw("result", compact_json(r)))
            .transpose()?,
        errors: d.errors(&cell::<String>(row, &d, 15)?)?,
        created_at: UnixMillis(cell(row, &d, 16)?),
        started_at: cell::<Option<i64>>(row, &d, 17)?.map(UnixMillis),
        finished_at: cell::<Option<i64>>(row, &d, 18)?.map(UnixMillis),
        heartbeat_at: cell::<Option<i64>>(row, &d, 19)?.map(UnixMillis),
        worker_id: cell(row, &d, 20)?,
        snoozes: cell::<i32>(row, &d, 21)?.max(0) as u32,
        id: JobId::from_stored(d.id.clone()),
    })
}

fn cell<T: rusqlite::types::FromSql>(row: &rusqlite::Row<'_>, d: &Decoder, i: usize) -> Result<T, StoreError> {
    row.get(i).map_err(|e| d.corrupt(format!("column {i}: {e}")))
}
