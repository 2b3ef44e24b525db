//! Resolve, delete and retry, written once for the three SQL stores (see the contracts of
//! [`crate::store::Store::resolve`], [`crate::store::Store::delete`],
//! [`crate::store::Store::delete_matching`] and [`crate::store::Store::retry`]).
//!
//! Each call is one transaction that first locks the rows it names, in id order (so two overlapping
//! calls cannot deadlock; SQLite's immediate transaction holds the whole file instead), and reads them.
//! What to do with each job is then decided in Rust from the row as it is under the lock, and written
//! back by id: a resolve's new state is worked out by [`crate::store::Resolution::apply`] (the same
//! code for the three, error history and its cap included) rather than in each server's JSON
//! functions. A second caller racing on the same job waits for the lock and then reads what the first
//! one wrote, so of two resolves of one waiting job only one finds it waiting.

use std::collections::{BTreeSet, HashMap};

use super::{Exec, IDS_PER_STATEMENT, LIVE_STATUSES, Sql, job_from_row};
use crate::job::{Job, JobError, JobId, JobStatus};
use crate::store::{
    Delete, DeleteAnswer, DeleteMatching, DeletedCount, Resolve, ResolveAnswer, Retry, RetryAnswer, StoreError,
    retry_job,
};
use crate::time::UnixMillis;

/// The statuses a delete refuses without `force`: a worker or a third party holds the job.
const HELD_STATUSES: &str = "('running', 'waiting')";

impl Sql {
    /// Resolves waiting jobs (see [`crate::store::Store::resolve`]).
    pub async fn resolve(&self, resolves: &[Resolve], now: UnixMillis) -> Result<Vec<ResolveAnswer>, StoreError> {
        if resolves.is_empty() {
            return Ok(Vec::new());
        }
        self.retrying("resolve", |_| false, || self.resolve_once(resolves, now))
            .await
    }

    async fn resolve_once(&self, resolves: &[Resolve], now: UnixMillis) -> Result<Vec<ResolveAnswer>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut jobs = self.locked_jobs(resolves.iter().map(|r| &r.id), &mut tx).await?;
        let mut answers = Vec::with_capacity(resolves.len());
        let mut ready = BTreeSet::new();
        let mut ended = Vec::new();
        for r in resolves {
            let Some(job) = jobs.get_mut(r.id.as_str()) else {
                answers.push(ResolveAnswer::NotFound);
                continue;
            };
            if job.status != JobStatus::Waiting || r.attempt.is_some_and(|a| a != job.attempt) {
                answers.push(ResolveAnswer::NotWaiting { status: job.status });
                continue;
            }
            r.action.apply(job, now);
            self.write_resolved(job, &mut tx).await?;
            if job.status == JobStatus::Pending {
                ready.insert(job.queue.clone());
            }
            if job.status.is_terminal() {
                ended.push(super::dependencies::Ended {
                    id: job.id.to_string(),
                    status: job.status,
                });
            }
            answers.push(ResolveAnswer::Resolved { status: job.status });
        }
        self.notify_ready(&mut tx, ready.iter().map(String::as_str)).await?;
        self.release_dependents(&mut tx, ended, now).await?;
        tx.commit().await?;
        Ok(answers)
    }

    /// Writes what a resolution made of a waiting job (locked by the caller).
    async fn write_resolved(&self, job: &mut Job, conn: &mut dyn Exec) -> Result<(), sqlx::Error> {
        let errors = errors_text(&mut job.errors)?;
        let (json_open, json_close) = self.dialect.json_in;
        let mut update = self.stmt("UPDATE jobq_jobs SET status = ");
        update
            .bind(job.status.as_str())
            .push(", run_at = ")
            .bind(job.run_at.0)
            .push(", finished_at = ")
            .bind(job.finished_at.map(|t| t.0))
            .push(", worker_id = NULL, result = ")
            .push(json_open)
            .bind(job.result.as_ref().map(|r| r.get().to_string()))
            .push(json_close)
            .push(", errors = ")
            .push(json_open)
            .bind(errors)
            .push(json_close)
            .push(" WHERE id = ")
            .bind(job.id.as_str())
            .push(" AND status = 'waiting'");
        conn.execute(&update).await?;
        Ok(())
    }

    /// Deletes jobs by id (see [`crate::store::Store::delete`]).
    pub async fn delete(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, StoreError> {
        if delete.ids.is_empty() {
            return Ok(Vec::new());
        }
        self.retrying("delete", |_| false, || self.delete_once(delete)).await
    }

    async fn delete_once(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut statuses: HashMap<String, JobStatus> = HashMap::with_capacity(delete.ids.len());
        for chunk in sorted_ids(delete.ids.iter()).chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT j.id, j.status FROM jobq_jobs AS j WHERE 1 = 1");
            select.any_of("j.id", chunk.iter().cloned());
            self.lock_in_id_order(&mut select);
            statuses.extend(self.read_statuses(&select, &mut tx).await?);
        }
        let mut answers = Vec::with_capacity(delete.ids.len());
        let mut doomed = Vec::new();
        for id in &delete.ids {
            let answer = match statuses.get(id.as_str()) {
                None => DeleteAnswer::NotFound,
                Some(&status) if !delete.force && is_held(status) => DeleteAnswer::Refused { status },
                Some(&previous) => {
                    statuses.remove(id.as_str());
                    doomed.push((id.to_string(), previous));
                    DeleteAnswer::Deleted { previous }
                }
            };
            answers.push(answer);
        }
        self.delete_by_id(&doomed, &mut tx).await?;
        tx.commit().await?;
        Ok(answers)
    }

    /// Deletes a bounded batch of the jobs a filter selects (see
    /// [`crate::store::Store::delete_matching`]): locks and reads the first `limit` ids that may go,
    /// deletes them, and counts the held jobs the filter also selects.
    pub async fn delete_matching(&self, delete: &DeleteMatching) -> Result<DeletedCount, StoreError> {
        self.retrying("delete", |_| false, || self.delete_matching_once(delete))
            .await
    }

    async fn delete_matching_once(&self, delete: &DeleteMatching) -> Result<DeletedCount, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut select = self.stmt("SELECT j.id, j.status FROM jobq_jobs AS j WHERE 1 = 1");
        select.filter("j", &delete.filter);
        if !delete.force {
            select.push(&format!(" AND j.status NOT IN {HELD_STATUSES}"));
        }
        select
            .push(" ORDER BY j.id LIMIT ")
            .bind(i64::from(delete.limit))
            .push(self.dialect.for_update);
        let doomed = self.read_statuses(&select, &mut tx).await?;
        self.delete_by_id(&doomed, &mut tx).await?;
        let mut refused = 0;
        if !delete.force {
            let mut count = self.stmt(format!(
                "SELECT COUNT(*) FROM jobq_jobs AS j WHERE j.status IN {HELD_STATUSES}"
            ));
            count.filter("j", &delete.filter);
            let rows = tx.fetch_all(&count).await?;
            if let Some(row) = rows.first() {
                refused = super::count(row.try_get::<i64>(0)?);
            }
        }
        tx.commit().await?;
        Ok(DeletedCount {
            deleted: doomed.len() as u64,
            refused,
        })
    }

    /// Deletes the jobs of `doomed` (locked by the caller, each with its status), a bounded number a
    /// statement. A job deleted before it ended is, to the jobs that wait for it, cancelled (now: a
    /// delete names no time); one that had ended resolved them when it did.
    async fn delete_by_id(&self, doomed: &[(String, JobStatus)], conn: &mut dyn Exec) -> Result<(), sqlx::Error> {
        for chunk in doomed.chunks(IDS_PER_STATEMENT) {
            let mut delete = self.stmt("DELETE FROM jobq_jobs WHERE 1 = 1");
            delete.any_of("id", chunk.iter().map(|(id, _)| id.clone()));
            conn.execute(&delete).await?;
        }
        let gone = doomed
            .iter()
            .filter(|(_, status)| !status.is_terminal())
            .map(|(id, _)| super::dependencies::Ended {
                id: id.clone(),
                status: JobStatus::Cancelled,
            });
        self.release_dependents(conn, gone.collect(), UnixMillis::now()).await
    }

    /// Puts finished jobs back to pending (see [`crate::store::Store::retry`]). A producer that takes
    /// the unique key of one of them meanwhile makes its update fail on the unique index; the whole
    /// transaction then runs again and finds the key taken.
    pub async fn retry(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, StoreError> {
        if retry.ids.is_empty() {
            return Ok(Vec::new());
        }
        let also = self.dialect.is_unique_violation;
        self.retrying("retry", also, || self.retry_once(retry)).await
    }

    async fn retry_once(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut jobs = self.locked_jobs(retry.ids.iter(), &mut tx).await?;
        let mut answers = Vec::with_capacity(retry.ids.len());
        let mut ready = BTreeSet::new();
        // Before any of them is live again; one statement for the call (a job left as it is, its
        // key taken, keeps its edges reading as they did either way).
        let ended: Vec<String> = jobs
            .values()
            .filter(|job| job.status.is_terminal())
            .map(|job| job.id.to_string())
            .collect();
        self.settle_edges(&mut tx, &ended).await?;
        for id in &retry.ids {
            let Some(job) = jobs.get_mut(id.as_str()) else {
                answers.push(RetryAnswer::NotFound);
                continue;
            };
            if !job.status.is_terminal() {
                answers.push(RetryAnswer::NotTerminal { status: job.status });
                continue;
            }
            if let Some(key) = &job.unique_key
                && let Some(holder) = self.key_holder(&job.queue, key, &mut tx).await?
            {
                answers.push(RetryAnswer::KeyTaken { holder });
                continue;
            }
            retry_job(job, retry.now);
            let mut update = self.stmt(
                "UPDATE jobq_jobs SET status = 'pending', attempt = 0, snoozes = 0, result = NULL, started_at = NULL, \
                 finished_at = NULL, worker_id = NULL, heartbeat_at = NULL, progress = NULL, \
                 progress_message = NULL, expires_at = NULL, run_at = ",
            );
            update.bind(retry.now.0).push(" WHERE id = ").bind(id.as_str());
            tx.execute(&update).await?;
            ready.insert(job.queue.clone());
            answers.push(RetryAnswer::Retried(Box::new(job.clone())));
        }
        self.notify_ready(&mut tx, ready.iter().map(String::as_str)).await?;
        tx.commit().await?;
        Ok(answers)
    }

    /// The live job of `queue` holding `key`, if any (the transaction's own writes included, so a job
    /// retried earlier in the same call counts).
    async fn key_holder(&self, queue: &str, key: &str, conn: &mut dyn Exec) -> Result<Option<JobId>, sqlx::Error> {
        let mut select = self.stmt("SELECT o.id FROM jobq_jobs AS o WHERE o.queue = ");
        select
            .bind(queue)
            .push(" AND o.unique_key = ")
            .bind(key)
            .push(&format!(" AND o.status IN {LIVE_STATUSES} LIMIT 1"));
        let rows = conn.fetch_all(&select).await?;
        rows.first()
            .map(|r| r.try_get_unchecked::<String>(0).map(JobId::from_stored))
            .transpose()
    }

    /// The jobs of `ids` that exist, by id, read and locked in id order.
    async fn locked_jobs<'a>(
        &self,
        ids: impl Iterator<Item = &'a JobId>,
        conn: &mut dyn Exec,
    ) -> Result<HashMap<String, Job>, sqlx::Error> {
        let mut jobs = HashMap::new();
        for chunk in sorted_ids(ids).chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(format!(
                "SELECT {} FROM jobq_jobs AS j WHERE 1 = 1",
                self.dialect.job_columns
            ));
            select.any_of("j.id", chunk.iter().cloned());
            self.lock_in_id_order(&mut select);
            let rows = conn.fetch_all(&select).await?;
            for row in &rows {
                let job = job_from_row(row, self.dialect.kind).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
                jobs.insert(job.id.to_string(), job);
            }
        }
        Ok(jobs)
    }
}

/// An error history as the SQL stores write it. PostgreSQL's jsonb refuses the NUL character, which
/// an error text given from outside may hold; every SQL store replaces it, so that the three read
/// alike.
pub(super) fn errors_text(errors: &mut [JobError]) -> Result<String, sqlx::Error> {
    for e in errors.iter_mut() {
        if e.error.contains('\0') {
            e.error = e.error.replace('\0', "\u{FFFD}");
        }
    }
    serde_json::to_string(errors).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// Whether a delete without `force` refuses a job in this status.
fn is_held(status: JobStatus) -> bool {
    matches!(status, JobStatus::Running | JobStatus::Waiting)
}

/// The distinct ids, sorted: the order rows are locked in.
fn sorted_ids<'a>(ids: impl Iterator<Item = &'a JobId>) -> Vec<String> {
    let distinct: BTreeSet<&str> = ids.map(JobId::as_str).collect();
    distinct.into_iter().map(str::to_string).collect()
}
