//! Row ↔ Job helpers shared by the sqlx stores: the column list, decoding a row into a [`Job`], the
//! JSON text clean-up that rows written by hand need, and the enqueue bookkeeping of stores that
//! decide each job's answer before inserting (SQLite, MySQL).

// A build with only some of the SQL stores uses only some of these helpers.
#![cfg_attr(
    not(all(feature = "sqlite", feature = "postgres", feature = "mysql")),
    allow(dead_code)
)]

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;
use serde_json::value::RawValue;
use sqlx::{ColumnIndex, Database, Decode, Encode, QueryBuilder, Row, Type};

use super::{Cleanup, EnqueueOutcome, Enqueued, JobFilter, ReplayDead, StoreError, StoreKind};
use crate::job::{Job, JobError, JobId, JobStatus, NewJob, Progress};
use crate::time::UnixMillis;

/// Every column of `jobq_jobs`, in the order [`job_from_row`] reads them.
pub const JOB_COLUMNS: &str = "id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, \
     run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, started_at, \
     finished_at, heartbeat_at, worker_id";

/// The statuses a job can be cancelled from, and that hold a unique key.
pub const LIVE_STATUSES: &str = "('pending', 'running', 'waiting')";

/// The terminal statuses as an SQL list.
pub const TERMINAL_STATUSES: &str = "('succeeded', 'dead', 'cancelled', 'discarded')";

pub(crate) struct Decoder {
    pub kind: StoreKind,
    pub id: String,
}

impl Decoder {
    fn corrupt(&self, reason: String) -> StoreError {
        StoreError::Corrupt {
            kind: self.kind,
            id: self.id.clone(),
            reason,
        }
    }

    pub fn raw(&self, column: &str, text: String) -> Result<Box<RawValue>, StoreError> {
        RawValue::from_string(text).map_err(|e| self.corrupt(format!("{column}: {e}")))
    }

    /// Reads `meta`, which the tables guarantee to be a JSON object. jobq writes string values only; a
    /// number or boolean written by hand becomes its JSON text (as the envelope reader does), so one
    /// odd row can never stop a worker's claims.
    pub fn meta(&self, text: &str) -> Result<BTreeMap<String, String>, StoreError> {
        let map: serde_json::Map<String, Value> =
            serde_json::from_str(text).map_err(|e| self.corrupt(format!("meta: {e}")))?;
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

/// Decodes a row whose columns are [`JOB_COLUMNS`] in that order (JSON columns as text), for any sqlx
/// backend. Text columns are read without sqlx's type check: the column list is jobq's own, and MySQL
/// flags text in a binary collation (the one jobq uses, for byte order) as binary, which the check
/// refuses. Integers are checked: `INTEGER` columns as i32, times and time-outs as i64.
pub(crate) fn job_from_row<'r, R>(row: &'r R, kind: StoreKind) -> Result<Job, StoreError>
where
    R: Row,
    usize: ColumnIndex<R>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    i32: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
{
    fn cell<'r, R, T>(row: &'r R, d: &Decoder, i: usize, unchecked: bool) -> Result<T, StoreError>
    where
        R: Row,
        usize: ColumnIndex<R>,
        T: Decode<'r, R::Database> + Type<R::Database>,
    {
        let got = if unchecked {
            row.try_get_unchecked(i)
        } else {
            row.try_get(i)
        };
        got.map_err(|e| d.corrupt(format!("column {i}: {e}")))
    }
    let text = |d: &Decoder, i| cell::<R, String>(row, d, i, true);
    let opt_text = |d: &Decoder, i| cell::<R, Option<String>>(row, d, i, true);
    let int = |d: &Decoder, i| cell::<R, i32>(row, d, i, false);
    let opt_int = |d: &Decoder, i| cell::<R, Option<i32>>(row, d, i, false);
    let big = |d: &Decoder, i| cell::<R, i64>(row, d, i, false);
    let opt_big = |d: &Decoder, i| cell::<R, Option<i64>>(row, d, i, false);

    let mut d = Decoder {
        kind,
        id: String::new(),
    };
    d.id = text(&d, 0)?;
    let job = Job {
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
        id: JobId::from_stored(d.id.clone()),
    };
    Ok(job)
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

/// A job's meta map as the JSON text the tables store.
pub fn meta_json(job: &NewJob) -> String {
    if job.meta.is_empty() {
        "{}".to_string()
    } else {
        serde_json::to_string(&job.meta).unwrap_or_else(|_| "{}".into())
    }
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

/// Appends `AND …` conditions for a filter on unqualified `jobq_jobs` columns, lists as `IN (?, …)`
/// (for the stores whose placeholders are `?`).
pub(crate) fn push_filter<'args, DB>(qb: &mut QueryBuilder<'args, DB>, filter: &JobFilter)
where
    DB: Database,
    String: Encode<'args, DB> + Type<DB>,
    i64: Encode<'args, DB> + Type<DB>,
{
    push_in(qb, "queue", filter.queues.iter().cloned());
    push_in(qb, "job_type", filter.job_types.iter().cloned());
    push_in(qb, "status", filter.statuses.iter().map(|s| s.as_str().to_string()));
    if let Some(since) = filter.created_since {
        qb.push(" AND created_at >= ").push_bind(since.0);
    }
    if let Some(until) = filter.created_until {
        qb.push(" AND created_at < ").push_bind(until.0);
    }
}

/// Appends ` AND column IN (?, …)` for `values`; nothing when there are none (no condition, so a
/// caller for which an empty list must match nothing checks for that first).
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

/// The dead jobs a replay selects by queue and type (its ids, when it names some, come on top).
pub(crate) fn replay_filter(replay: &ReplayDead) -> JobFilter {
    JobFilter {
        queues: replay.queues.clone(),
        job_types: replay.job_types.clone(),
        ..Default::default()
    }
}

/// A comma-separated list of `n` placeholders `?`.
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

/// The answers of one enqueue batch, decided job by job before anything is inserted, for stores that
/// read what exists first and then insert only the new jobs. Feed it the batch chunk by chunk, in
/// order, with what the table holds for each chunk; it remembers what earlier jobs of the batch took
/// (ids, and live unique keys), so a later job duplicates or coalesces into an earlier one.
#[derive(Default)]
pub(crate) struct EnqueuePlan<'a> {
    answers: Vec<Enqueued>,
    batch_ids: HashSet<&'a str>,
    batch_keys: HashMap<(&'a str, &'a str), &'a JobId>,
}

impl<'a> EnqueuePlan<'a> {
    /// Answers the jobs of `chunk` given the ids among them the table holds and the live holders of
    /// their unique keys by (queue, key); returns the jobs to insert, in input order.
    pub fn decide(
        &mut self,
        chunk: &'a [NewJob],
        stored_ids: &HashSet<String>,
        live_keys: &HashMap<(String, String), JobId>,
    ) -> Vec<&'a NewJob> {
        let mut fresh = Vec::with_capacity(chunk.len());
        for job in chunk {
            let id = job.id.as_str();
            if stored_ids.contains(id) || self.batch_ids.contains(id) {
                self.answers.push(Enqueued {
                    id: job.id.clone(),
                    outcome: EnqueueOutcome::Duplicate,
                });
                continue;
            }
            if let Some(key) = job.unique_key.as_deref() {
                let holder = live_keys
                    .get(&(job.queue.clone(), key.to_string()))
                    .cloned()
                    .or_else(|| self.batch_keys.get(&(job.queue.as_str(), key)).map(|id| (*id).clone()));
                if let Some(holder) = holder {
                    self.answers.push(Enqueued {
                        id: holder,
                        outcome: EnqueueOutcome::Coalesced,
                    });
                    continue;
                }
                self.batch_keys.insert((job.queue.as_str(), key), &job.id);
            }
            self.batch_ids.insert(id);
            fresh.push(job);
            self.answers.push(Enqueued {
                id: job.id.clone(),
                outcome: EnqueueOutcome::Created,
            });
        }
        fresh
    }

    /// One answer per job fed in, in input order.
    pub fn answers(self) -> Vec<Enqueued> {
        self.answers
    }
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
}
