//! Import, written once for the three SQL stores (see the contract of [`crate::store::Store::import`]):
//! one transaction that locks the rows of the ids it is given (in id order, so that two imports
//! cannot deadlock) and the live holders of their unique keys, decides every job in Rust
//! ([`ImportPlan`]), then deletes the rows it replaces and inserts the jobs as they are, every column
//! written, in multi-row `INSERT`s.

use std::collections::{BTreeSet, HashMap, HashSet};

use sqlx::database::HasStatementCache;
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{IDS_PER_STATEMENT, LIVE_STATUSES, RowsAffected, SqlPool, Stmt, encoding};
use crate::job::{Job, JobId, JobStatus};
use crate::store::{Import, ImportAnswer, OnConflict, StoreError};

/// Rows per `INSERT`: 22 values each, well under every server's limit on placeholders.
const ROWS_PER_INSERT: usize = 400;

impl<DB> SqlPool<DB>
where
    DB: Database + HasStatementCache,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> i32: Encode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> i32: Decode<'r, DB>,
    DB::QueryResult: RowsAffected,
    usize: ColumnIndex<DB::Row>,
{
    /// Writes jobs exactly as given (see [`crate::store::Store::import`]).
    pub async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        if import.jobs.is_empty() {
            return Ok(Vec::new());
        }
        // A unique key taken by a producer between the look and the insert: the next round sees it.
        let also = self.dialect.is_unique_violation;
        self.retrying("import", also, || self.import_once(import)).await
    }

    async fn import_once(&self, import: &Import) -> Result<Vec<ImportAnswer>, sqlx::Error> {
        let mut tx = self.pool.begin_with(self.dialect.begin_write).await?;
        let stored = self.stored_ids(&import.jobs, &mut tx).await?;
        let holders = self.live_key_holders(&import.jobs, &mut tx).await?;
        let mut plan = ImportPlan::new(import.on_conflict, stored, holders);
        for job in &import.jobs {
            plan.decide(job);
        }
        if import.dry_run || plan.writes.is_empty() {
            tx.rollback().await?;
            return Ok(plan.answers);
        }
        for chunk in plan.replaced.chunks(IDS_PER_STATEMENT) {
            let mut delete = self.stmt("DELETE FROM jobq_jobs WHERE 1 = 1");
            delete.any_of("id", chunk.iter().cloned());
            self.query(&delete).map_err(encoding)?.execute(&mut *tx).await?;
        }
        let writes = &plan.writes;
        for chunk in writes.chunks(ROWS_PER_INSERT) {
            let mut insert = self.insert_whole(chunk);
            if chunk.len() == ROWS_PER_INSERT {
                // Every full chunk has the same text: parsed once per connection, not per chunk.
                insert.keep();
            }
            self.query(&insert).map_err(encoding)?.execute(&mut *tx).await?;
        }
        if !self.dialect.inserts_notify {
            let ready = writes.iter().filter(|j| j.status == JobStatus::Pending);
            self.notify_ready(&mut tx, ready.map(|j| j.queue.as_str())).await?;
        }
        tx.commit().await?;
        Ok(plan.answers)
    }

    /// The ids among `jobs` that the table holds, their rows locked.
    async fn stored_ids(&self, jobs: &[Job], conn: &mut DB::Connection) -> Result<HashSet<String>, sqlx::Error> {
        let ids: BTreeSet<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        let ids: Vec<String> = ids.into_iter().map(str::to_string).collect();
        let mut stored = HashSet::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT j.id FROM jobq_jobs AS j WHERE 1 = 1");
            select.any_of("j.id", chunk.iter().cloned());
            self.lock_in_id_order(&mut select);
            for row in self.query(&select).map_err(encoding)?.fetch_all(&mut *conn).await? {
                stored.insert(row.try_get_unchecked::<String, _>(0)?);
            }
        }
        Ok(stored)
    }

    /// The live jobs holding the unique keys of the live jobs among `jobs`, by (queue, key).
    async fn live_key_holders(
        &self,
        jobs: &[Job],
        conn: &mut DB::Connection,
    ) -> Result<HashMap<(String, String), String>, sqlx::Error> {
        let keys: BTreeSet<&str> = jobs
            .iter()
            .filter(|j| !j.status.is_terminal())
            .filter_map(|j| j.unique_key.as_deref())
            .collect();
        let keys: Vec<String> = keys.into_iter().map(str::to_string).collect();
        let mut holders = HashMap::new();
        for chunk in keys.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(format!(
                "SELECT j.id, j.queue, j.unique_key FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"
            ));
            select.any_of("j.unique_key", chunk.iter().cloned());
            self.lock_in_id_order(&mut select);
            for row in self.query(&select).map_err(encoding)?.fetch_all(&mut *conn).await? {
                let id: String = row.try_get_unchecked(0)?;
                holders.insert((row.try_get_unchecked(1)?, row.try_get_unchecked(2)?), id);
            }
        }
        Ok(holders)
    }

    /// One `INSERT` of whole jobs, every column given.
    fn insert_whole(&self, jobs: &[&Job]) -> Stmt {
        let (json_open, json_close) = self.dialect.json_in;
        let mut insert = self.stmt(
            "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, \
             run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, started_at, \
             finished_at, heartbeat_at, worker_id, snoozes) VALUES ",
        );
        let json = |s: &mut Stmt, text: Option<String>| {
            s.push(json_open).bind(text).push(json_close);
        };
        for (n, job) in jobs.iter().enumerate() {
            insert.push(if n == 0 { "(" } else { ", (" });
            insert
                .bind(job.id.as_str())
                .push(", ")
                .bind(job.queue.as_str())
                .push(", ")
                .bind(job.job_type.as_str())
                .push(", ");
            json(&mut insert, Some(job.payload.get().to_string()));
            insert.push(", ");
            json(
                &mut insert,
                Some(serde_json::to_string(&job.meta).unwrap_or_else(|_| "{}".into())),
            );
            insert
                .push(", ")
                .bind(job.priority)
                .push(", ")
                .bind(job.status.as_str())
                .push(", ")
                .bind(clamp_i32(job.attempt))
                .push(", ")
                .bind(clamp_i32(job.max_attempts))
                .push(", ")
                .bind(job.run_at.0)
                .push(", ")
                .bind(job.unique_key.clone())
                .push(", ")
                .bind(job.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64))
                .push(", ")
                .bind(job.progress.as_ref().map(|p| i64::from(p.percent)))
                .push(", ")
                .bind(job.progress.as_ref().and_then(|p| p.message.clone()))
                .push(", ");
            json(&mut insert, job.result.as_ref().map(|r| r.get().to_string()));
            insert.push(", ");
            json(
                &mut insert,
                Some(serde_json::to_string(&job.errors).unwrap_or_else(|_| "[]".into())),
            );
            insert
                .push(", ")
                .bind(job.created_at.0)
                .push(", ")
                .bind(job.started_at.map(|t| t.0))
                .push(", ")
                .bind(job.finished_at.map(|t| t.0))
                .push(", ")
                .bind(job.heartbeat_at.map(|t| t.0))
                .push(", ")
                .bind(job.worker_id.clone())
                .push(", ")
                .bind(clamp_i32(job.snoozes))
                .push(")");
        }
        insert
    }
}

/// Counts past `i32::MAX` are "never give up" either way.
fn clamp_i32(n: u32) -> i32 {
    n.min(i32::MAX as u32) as i32
}

/// The answers of one import, decided job by job in input order from what the store held when it
/// began (ids, live holders of unique keys) and what the jobs before wrote.
pub(crate) struct ImportPlan<'a> {
    on_conflict: OnConflict,
    /// Ids held: the store's, then the batch's own.
    held: HashSet<String>,
    /// The store's ids as they were (those a replace deletes).
    stored: HashSet<String>,
    /// Live holders of unique keys by (queue, key).
    holders: HashMap<(String, String), String>,
    /// One answer per job decided.
    pub answers: Vec<ImportAnswer>,
    /// The jobs to insert, one per id (a later job of the same id takes an earlier one's place).
    pub writes: Vec<&'a Job>,
    /// Where each id's job is in `writes`.
    written: HashMap<&'a str, usize>,
    /// Stored ids whose rows are to be deleted before the insert.
    pub replaced: Vec<String>,
}

impl<'a> ImportPlan<'a> {
    pub fn new(
        on_conflict: OnConflict,
        stored: HashSet<String>,
        holders: HashMap<(String, String), String>,
    ) -> ImportPlan<'a> {
        ImportPlan {
            on_conflict,
            held: stored.clone(),
            stored,
            holders,
            answers: Vec::new(),
            writes: Vec::new(),
            written: HashMap::new(),
            replaced: Vec::new(),
        }
    }

    /// Answers `job` and, unless it is skipped or its key is taken, plans its write.
    pub fn decide(&mut self, job: &'a Job) {
        let id = job.id.as_str();
        let exists = self.held.contains(id);
        if exists && self.on_conflict == OnConflict::Skip {
            self.answers.push(ImportAnswer::Skipped);
            return;
        }
        let key = job
            .unique_key
            .as_ref()
            .filter(|_| !job.status.is_terminal())
            .map(|k| (job.queue.clone(), k.clone()));
        if let Some(holder) = key.as_ref().and_then(|k| self.holders.get(k)).filter(|h| *h != id) {
            self.answers.push(ImportAnswer::KeyTaken {
                holder: JobId::from_stored(holder.clone()),
            });
            return;
        }
        if exists {
            // The job it replaces gives up whatever key it held.
            self.holders.retain(|_, holder| holder != id);
            if self.stored.remove(id) {
                self.replaced.push(id.to_string());
            }
        }
        if let Some(key) = key {
            self.holders.insert(key, id.to_string());
        }
        self.held.insert(id.to_string());
        match self.written.get(id) {
            Some(&at) => self.writes[at] = job,
            None => {
                self.written.insert(id, self.writes.len());
                self.writes.push(job);
            }
        }
        self.answers.push(if exists {
            ImportAnswer::Replaced
        } else {
            ImportAnswer::Imported
        });
    }
}
