//! Enqueue bookkeeping the SQL stores share: a job's meta as stored, the values a batch insert
//! writes, and the answers of a batch decided job by job before inserting (SQLite, MySQL).

use std::collections::{HashMap, HashSet};

use sqlx::{Database, Encode, QueryBuilder, Type};

use crate::job::{JobId, NewJob};
use crate::store::{EnqueueOutcome, Enqueued};

/// A job's meta map as the JSON text the tables store.
fn meta_json(job: &NewJob) -> String {
    if job.meta.is_empty() {
        "{}".to_string()
    } else {
        serde_json::to_string(&job.meta).unwrap_or_else(|_| "{}".into())
    }
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

/// Whether a batch can be inserted as it is: no unique keys and no id twice, so that a plain
/// multi-row `INSERT` answers every job `Created` or fails on an id that exists, changing nothing.
/// Nearly every batch is one.
pub(crate) fn is_plain(jobs: &[NewJob]) -> bool {
    let mut ids: HashSet<&str> = HashSet::with_capacity(jobs.len());
    jobs.iter().all(|j| j.unique_key.is_none() && ids.insert(j.id.as_str()))
}

/// Every job of a batch answered `Created`.
pub(crate) fn all_created(jobs: &[NewJob]) -> Vec<Enqueued> {
    jobs.iter()
        .map(|j| Enqueued {
            id: j.id.clone(),
            outcome: EnqueueOutcome::Created,
        })
        .collect()
}

/// The values of a new job's row, in [`INSERT_NEW_JOBS`]'s column order, as every SQL store's
/// enqueue binds them (sqlx's `VALUES` rows, PostgreSQL's arrays, SQLite's direct connection), so
/// that no path writes a job differently.
pub(crate) struct NewJobRow<'a> {
    pub id: &'a str,
    pub queue: &'a str,
    pub job_type: &'a str,
    pub payload: &'a str,
    pub meta: String,
    pub priority: i32,
    pub max_attempts: i32,
    pub run_at: i64,
    pub unique_key: Option<&'a str>,
    pub timeout_ms: Option<i64>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

impl<'a> NewJobRow<'a> {
    /// The row of `job`. More than two billion attempts is "never give up" either way, and a time-out
    /// past `i64::MAX` milliseconds is none in practice.
    pub fn of(job: &'a NewJob) -> NewJobRow<'a> {
        NewJobRow {
            id: job.id.as_str(),
            queue: &job.queue,
            job_type: &job.job_type,
            payload: job.payload.get(),
            meta: meta_json(job),
            priority: job.priority,
            max_attempts: job.max_attempts.min(i32::MAX as u32) as i32,
            run_at: job.run_at.0,
            unique_key: job.unique_key.as_deref(),
            timeout_ms: job.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64),
            created_at: job.created_at.0,
            expires_at: job.expires_at.map(|at| at.0),
        }
    }
}

/// The start of a multi-row insert of new jobs: the columns a producer sets; status, attempt, errors
/// and the rest take the table's defaults.
pub(crate) const INSERT_NEW_JOBS: &str = "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, \
     max_attempts, run_at, unique_key, timeout_ms, created_at, expires_at) ";

/// Appends `VALUES (…), (…)` for `jobs` to [`INSERT_NEW_JOBS`], one placeholder per value (SQLite and
/// MySQL; PostgreSQL sends arrays instead).
pub(crate) fn push_new_jobs<'a, DB>(qb: &mut QueryBuilder<'a, DB>, jobs: impl IntoIterator<Item = &'a NewJob>)
where
    DB: Database,
    &'a str: Encode<'a, DB> + Type<DB>,
    String: Encode<'a, DB> + Type<DB>,
    i32: Encode<'a, DB> + Type<DB>,
    i64: Encode<'a, DB> + Type<DB>,
    Option<&'a str>: Encode<'a, DB> + Type<DB>,
    Option<i64>: Encode<'a, DB> + Type<DB>,
{
    qb.push_values(jobs, |mut row, job| {
        let r = NewJobRow::of(job);
        row.push_bind(r.id)
            .push_bind(r.queue)
            .push_bind(r.job_type)
            .push_bind(r.payload)
            .push_bind(r.meta)
            .push_bind(r.priority)
            .push_bind(r.max_attempts)
            .push_bind(r.run_at)
            .push_bind(r.unique_key)
            .push_bind(r.timeout_ms)
            .push_bind(r.created_at)
            .push_bind(r.expires_at);
    });
}
