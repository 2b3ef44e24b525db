//! Rows back into jobq's types, for the three sqlx stores: a job (columns in the order of
//! [`super::Dialect::job_columns`], JSON as text), a rescued job, a queue's counts, a registered worker.
//! One decoder per shape, so the stores cannot drift in how they read a row (a count that does not fit
//! is clamped, never wrapped). Text columns are read without sqlx's type check: the column lists are
//! jobq's own, and MySQL flags text in a binary collation (the one jobq uses, for byte order) as binary,
//! which the check refuses. Integers are checked.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;
use sqlx::Row as _;

use crate::job::{Job, JobError, JobId, JobStatus, Join, Progress, UniqueMode};
use crate::store::{Rescued, StoreError, StoreKind, WorkerInfo};
use crate::time::UnixMillis;

/// Reads the cells of one job's row, naming the job in every error.
pub(crate) struct Decoder {
    pub kind: StoreKind,
    pub id: String,
}

impl Decoder {
    pub fn corrupt(&self, reason: String) -> StoreError {
        StoreError::Corrupt {
            kind: self.kind,
            id: self.id.clone(),
            reason,
        }
    }

    pub fn raw(&self, column: &str, text: String) -> Result<Box<RawValue>, StoreError> {
        RawValue::from_string(text).map_err(|e| self.corrupt(format!("{column}: {e}")))
    }

    /// Reads `meta`, a JSON object (PostgreSQL's and MySQL's tables check it), or on SQLite `[]` from
    /// an application's plain `INSERT` of PHP's empty array. jobq writes string values only; a number
    /// or boolean written by hand becomes its JSON text (as the envelope reader does), so one odd row
    /// can never stop a worker's claims.
    pub fn meta(&self, text: &str) -> Result<BTreeMap<String, String>, StoreError> {
        let map = match serde_json::from_str(text).map_err(|e| self.corrupt(format!("meta: {e}")))? {
            Value::Object(map) => map,
            Value::Array(items) if items.is_empty() => return Ok(BTreeMap::new()),
            other => return Err(self.corrupt(format!("meta: expected a JSON object, got {other}"))),
        };
        Ok(map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect())
    }

    pub fn errors(&self, text: &str) -> Result<Vec<JobError>, StoreError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(format!("errors: {e}")))
    }

    pub fn status(&self, text: &str) -> Result<JobStatus, StoreError> {
        text.parse().map_err(|e: String| self.corrupt(e))
    }

    pub fn progress(&self, percent: Option<i64>, message: Option<String>) -> Option<Progress> {
        percent.map(|p| Progress {
            percent: p.clamp(0, 100) as u8,
            message,
        })
    }
}

/// Decodes a row whose columns are [`super::Dialect::job_columns`] in that order. `INTEGER` columns are
/// read as i32, times and time-outs as i64.
pub(crate) fn job_from_row(row: &(impl JobCells + ?Sized), kind: StoreKind) -> Result<Job, StoreError> {
    decode_job(row, kind)
}

/// Typed reads of one row's cells by position, which is all [`decode_job`] needs: sqlx's rows
/// (each driver's row, and [`super::exec::SqlRow`]) and the rows of SQLite's direct reader (`sqlite/read.rs`) both give them, so a job is
/// decoded one way whichever driver read it. An error is the driver's reason.
pub(crate) trait JobCells {
    fn text(&self, i: usize) -> Result<String, String>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, String>;
    fn int(&self, i: usize) -> Result<i32, String>;
    fn opt_int(&self, i: usize) -> Result<Option<i32>, String>;
    fn big(&self, i: usize) -> Result<i64, String>;
    fn opt_big(&self, i: usize) -> Result<Option<i64>, String>;
}

/// The job in a row of [`super::Dialect::job_columns`], in that order: `INTEGER` columns read as i32,
/// times and time-outs as i64, JSON as text. Every error names the job and the column.
pub(crate) fn decode_job(row: &(impl JobCells + ?Sized), kind: StoreKind) -> Result<Job, StoreError> {
    let mut d = Decoder {
        kind,
        id: String::new(),
    };
    fn at(d: &Decoder, i: usize) -> impl Fn(String) -> StoreError + '_ {
        move |e| d.corrupt(format!("column {i}: {e}"))
    }
    let text = |d: &Decoder, i| row.text(i).map_err(at(d, i));
    let opt_text = |d: &Decoder, i| row.opt_text(i).map_err(at(d, i));
    let int = |d: &Decoder, i| row.int(i).map_err(at(d, i));
    let opt_int = |d: &Decoder, i| row.opt_int(i).map_err(at(d, i));
    let big = |d: &Decoder, i| row.big(i).map_err(at(d, i));
    let opt_big = |d: &Decoder, i| row.opt_big(i).map_err(at(d, i));
    d.id = text(&d, 0)?;
    Ok(Job {
        queue: text(&d, 1)?,
        job_type: text(&d, 2)?,
        payload: d.raw("payload", compact_json(text(&d, 3)?))?,
        meta: d.meta(&text(&d, 4)?)?,
        priority: int(&d, 5)?,
        status: d.status(&text(&d, 6)?)?,
        attempt: int(&d, 7)?.max(0) as u32,
        max_attempts: int(&d, 8)?.max(1) as u32,
        run_at: UnixMillis(big(&d, 9)?),
        unique_key: opt_text(&d, 10)?,
        timeout_ms: opt_big(&d, 11)?.map(|t| t.max(1) as u64),
        progress: d.progress(opt_int(&d, 12)?.map(i64::from), opt_text(&d, 13)?),
        result: opt_text(&d, 14)?
            .map(|r| d.raw("result", compact_json(r)))
            .transpose()?,
        errors: d.errors(&text(&d, 15)?)?,
        created_at: UnixMillis(big(&d, 16)?),
        started_at: opt_big(&d, 17)?.map(UnixMillis),
        finished_at: opt_big(&d, 18)?.map(UnixMillis),
        heartbeat_at: opt_big(&d, 19)?.map(UnixMillis),
        worker_id: opt_text(&d, 20)?,
        snoozes: int(&d, 21)?.max(0) as u32,
        has_dependencies: int(&d, 22)? != 0,
        join: if int(&d, 23)? != 0 { Join::Any } else { Join::All },
        expires_at: opt_big(&d, 24)?.map(UnixMillis),
        unique_mode: UniqueMode::from_stored(opt_text(&d, 25)?.as_deref()),
        deps: Vec::new(),
        id: JobId::from_stored(d.id.clone()),
    })
}

/// [`JobCells`] for a sqlx row: text read without sqlx's type check (see the module's text),
/// integers with it.
macro_rules! sqlx_row_cells {
    ($(#[$attr:meta])* $row:ty) => {
        $(#[$attr])*
        impl JobCells for $row {
            fn text(&self, i: usize) -> Result<String, String> {
                self.try_get_unchecked(i).map_err(|e| e.to_string())
            }
            fn opt_text(&self, i: usize) -> Result<Option<String>, String> {
                self.try_get_unchecked(i).map_err(|e| e.to_string())
            }
            fn int(&self, i: usize) -> Result<i32, String> {
                self.try_get(i).map_err(|e| e.to_string())
            }
            fn opt_int(&self, i: usize) -> Result<Option<i32>, String> {
                self.try_get(i).map_err(|e| e.to_string())
            }
            fn big(&self, i: usize) -> Result<i64, String> {
                self.try_get(i).map_err(|e| e.to_string())
            }
            fn opt_big(&self, i: usize) -> Result<Option<i64>, String> {
                self.try_get(i).map_err(|e| e.to_string())
            }
        }
    };
}

sqlx_row_cells!(
    #[cfg(feature = "sqlite")]
    sqlx::sqlite::SqliteRow
);
sqlx_row_cells!(
    #[cfg(feature = "postgres")]
    sqlx::postgres::PgRow
);
sqlx_row_cells!(
    #[cfg(feature = "mysql")]
    sqlx::mysql::MySqlRow
);
sqlx_row_cells!(super::exec::SqlRow);

/// What jobq decodes from a row of any of the three SQL databases, past a whole job.
pub(crate) trait ReadRow {
    /// A job [`crate::store::Store::rescue`] took back, from (id, job_type, attempt, max_attempts):
    /// dead when the lost attempt was its last, pending otherwise.
    fn rescued(&self) -> Result<Rescued, sqlx::Error>;
    /// A worker of the registry, from (id, name, host, pid, queues as a JSON array, started_at,
    /// last_seen_at, jobs_done, bridge).
    fn worker(&self) -> Result<WorkerInfo, sqlx::Error>;
    /// One (queue, status, count) row.
    fn status_count(&self) -> Result<(String, String, u64), sqlx::Error>;
    /// A queue's pending jobs split, from the columns at `first` and after: (scheduled, oldest ready
    /// run_at).
    fn pending_split_after(&self, first: usize) -> Result<(u64, Option<UnixMillis>), sqlx::Error>;
    /// A queue's pending jobs split: (queue, scheduled, oldest ready run_at).
    fn pending_split(&self) -> Result<(String, u64, Option<UnixMillis>), sqlx::Error>;
}

/// A cell's error as the driver's.
fn undecodable(e: String) -> sqlx::Error {
    sqlx::Error::Decode(e.into())
}

impl<T: JobCells + ?Sized> ReadRow for T {
    fn rescued(&self) -> Result<Rescued, sqlx::Error> {
        let attempt = self.int(2).map_err(undecodable)?.max(0) as u32;
        let max_attempts = self.int(3).map_err(undecodable)?.max(1) as u32;
        let status = if attempt >= max_attempts {
            JobStatus::Dead
        } else {
            JobStatus::Pending
        };
        Ok(Rescued {
            id: JobId::from_stored(text(self, 0)?),
            job_type: text(self, 1)?,
            attempt,
            status,
        })
    }

    fn worker(&self) -> Result<WorkerInfo, sqlx::Error> {
        Ok(WorkerInfo {
            id: text(self, 0)?,
            name: text(self, 1)?,
            host: text(self, 2)?,
            pid: self.big(3).map_err(undecodable)?.clamp(0, i64::from(u32::MAX)) as u32,
            queues: serde_json::from_str(&text(self, 4)?).unwrap_or_default(),
            started_at: UnixMillis(self.big(5).map_err(undecodable)?),
            last_seen_at: UnixMillis(self.big(6).map_err(undecodable)?),
            jobs_done: count(self.big(7).map_err(undecodable)?),
            bridge: self
                .opt_text(8)
                .map_err(undecodable)?
                .and_then(|b| serde_json::from_str(&b).ok()),
        })
    }

    fn status_count(&self) -> Result<(String, String, u64), sqlx::Error> {
        Ok((text(self, 0)?, text(self, 1)?, count(self.big(2).map_err(undecodable)?)))
    }

    fn pending_split(&self) -> Result<(String, u64, Option<UnixMillis>), sqlx::Error> {
        let (scheduled, oldest) = self.pending_split_after(1)?;
        Ok((text(self, 0)?, scheduled, oldest))
    }

    fn pending_split_after(&self, first: usize) -> Result<(u64, Option<UnixMillis>), sqlx::Error> {
        Ok((
            count(self.big(first).map_err(undecodable)?),
            self.opt_big(first + 1).map_err(undecodable)?.map(UnixMillis),
        ))
    }
}

/// Drops the whitespace between JSON tokens, keeping everything else as written: key order, duplicate
/// keys, number spelling, string escapes. jobq stores compact JSON, but an application's hand-written
/// `INSERT` may not, and a payload with a line break would break `list --output ndjson`.
pub fn compact_json(text: String) -> String {
    // One pass over the text, copying only from the first whitespace outside a string on: jobq's own
    // rows have none, so they come back without a copy.
    let mut out: Option<String> = None;
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        let keep = if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            true
        } else {
            in_string = c == '"';
            !matches!(c, ' ' | '\n' | '\r' | '\t')
        };
        match (&mut out, keep) {
            (Some(copy), true) => copy.push(c),
            (None, false) => out = Some(String::from(&text[..i])),
            _ => {}
        }
    }
    out.unwrap_or(text)
}

/// A count read back as a signed integer: never negative, never wrapped.
pub(crate) fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// Text, NULL read as empty (see the module's text).
fn text(row: &(impl JobCells + ?Sized), i: usize) -> Result<String, sqlx::Error> {
    row.opt_text(i).map(Option::unwrap_or_default).map_err(undecodable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_drops_only_whitespace_between_tokens() {
        assert_eq!(
            compact_json(r#"{"b":1,"a":[2,"x y"]}"#.into()),
            r#"{"b":1,"a":[2,"x y"]}"#
        );
        assert_eq!(
            compact_json("{\n  \"b\" : 1,\n  \"b\": \"a \\\" \\\\\" , \"n\": 1.50E+3 }".into()),
            r#"{"b":1,"b":"a \" \\","n":1.50E+3}"#
        );
        assert_eq!(compact_json(" 7 ".into()), "7");
    }

    #[test]
    fn meta_values_that_are_not_strings_become_their_json_text() {
        let d = Decoder {
            kind: StoreKind::Sqlite,
            id: "j".into(),
        };
        let meta = d.meta(r#"{"tenantId": 7, "vip": true, "name": "ana"}"#).unwrap();
        assert_eq!(meta.get("tenantId").map(String::as_str), Some("7"));
        assert_eq!(meta.get("vip").map(String::as_str), Some("true"));
        assert_eq!(meta.get("name").map(String::as_str), Some("ana"));
    }

    #[test]
    fn meta_written_as_an_empty_array_is_empty_and_other_shapes_are_corrupt() {
        let d = Decoder {
            kind: StoreKind::Sqlite,
            id: "j".into(),
        };
        assert!(d.meta("[]").unwrap().is_empty());
        assert!(d.meta(" [ ] ").unwrap().is_empty());
        for text in [r#"["a"]"#, "7", "null"] {
            let err = d.meta(text).unwrap_err().to_string();
            assert!(err.contains("unreadable"), "{text}: {err}");
        }
    }
}
