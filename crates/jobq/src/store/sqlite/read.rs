//! Pages of jobs read on the direct reader (`direct.rs`): the select the SQL stores share
//! (`sql::list_statement`), its rows decoded here rather than by sqlx.

use rusqlite::Connection;

use super::KIND;
use super::direct::{DirectConnection, for_each_row};
use super::settings::DIALECT;
use crate::job::Job;
use crate::store::sql::{JobCells, decode_job, list_statement};
use crate::store::{List, StoreError};

/// Why a read failed: SQLite's error, or a row that does not decode.
pub(super) enum ReadError {
    Sqlite(rusqlite::Error),
    Corrupt(StoreError),
}

impl ReadError {
    /// The error as `connection`, which met it, words it (see [`DirectConnection::failed`]).
    pub fn into_store_error(self, connection: &DirectConnection, operation: &'static str) -> StoreError {
        match self {
            ReadError::Sqlite(e) => connection.failed(operation, &e),
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
        jobs.push(decode_job(row, KIND));
        Ok(())
    })?;
    jobs.into_iter().collect::<Result<_, _>>().map_err(ReadError::Corrupt)
}

/// A row of the direct reader, read as the sqlx rows are: `decode_job` makes the job.
impl JobCells for rusqlite::Row<'_> {
    fn text(&self, i: usize) -> Result<String, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn int(&self, i: usize) -> Result<i32, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn opt_int(&self, i: usize) -> Result<Option<i32>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn big(&self, i: usize) -> Result<i64, String> {
        self.get(i).map_err(|e| e.to_string())
    }
    fn opt_big(&self, i: usize) -> Result<Option<i64>, String> {
        self.get(i).map_err(|e| e.to_string())
    }
}
