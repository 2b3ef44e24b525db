//! Import, written once for the three SQL stores (see the contract of [`crate::store::Store::import`]):
//! one transaction that locks the rows of the ids it is given (in id order, so that two imports
//! cannot deadlock) and the live holders of their unique keys, decides every job in Rust
//! ([`ImportPlan`]), then deletes the rows it replaces and inserts the jobs as they are, every column
//! written, in multi-row `INSERT`s.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{Dialect, Exec, IDS_PER_STATEMENT, LIVE_STATUSES, Sql, Stmt, lock_in_id_order};
use crate::job::{Job, JobId, JobStatus};
use crate::store::{Import, ImportAnswer, OnConflict, StoreError};

/// Rows per `INSERT`: 22 values each, well under every server's limit on placeholders.
pub(crate) const ROWS_PER_INSERT: usize = 400;

impl Sql {
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
        let d = self.dialect;
        let mut tx = self.connections.begin(d.begin_write).await?;
        let mut stored = HashSet::new();
        for select in select_stored_ids(d, &import.jobs) {
            for row in tx.fetch_all(&select).await? {
                stored.insert(row.try_get_unchecked::<String>(0)?);
            }
        }
        let mut holders = HashMap::new();
        for select in select_key_holders(d, &import.jobs) {
            for row in tx.fetch_all(&select).await? {
                let id: String = row.try_get_unchecked(0)?;
                holders.insert((row.try_get_unchecked(1)?, row.try_get_unchecked(2)?), id);
            }
        }
        let plan = ImportPlan::decided(import, stored, holders);
        if import.dry_run || plan.writes.is_empty() {
            tx.rollback().await?;
            return Ok(plan.answers);
        }
        let waited_for = self.dependents_of(&mut tx, &plan.replaced).await?;
        // What waited for a replaced job that had ended stays met, whatever replaces it.
        self.settle_edges(&mut tx, &plan.replaced).await?;
        for delete in plan.deletes(d) {
            tx.execute(&delete).await?;
        }
        for chunk in plan.writes.chunks(ROWS_PER_INSERT) {
            tx.insert_whole(d, chunk).await?;
        }
        self.hand_over_dependents(&mut tx, &plan.writes, waited_for).await?;
        if !d.inserts_notify {
            let ready = plan.writes.iter().filter(|j| j.status == JobStatus::Pending);
            self.notify_ready(&mut tx, ready.map(|j| j.queue.as_str())).await?;
        }
        tx.commit().await?;
        Ok(plan.answers)
    }
}

impl Sql {
    /// Of the jobs an import replaces, those that others wait for, with how many.
    async fn dependents_of(&self, tx: &mut dyn Exec, ids: &[String]) -> Result<HashMap<String, i32>, sqlx::Error> {
        let mut counts = HashMap::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = Stmt::new(
                self.dialect,
                "SELECT j.id, j.dependents FROM jobq_jobs AS j WHERE j.dependents > 0",
            );
            select.any_of("j.id", chunk.iter().cloned());
            for row in tx.fetch_all(&select).await? {
                counts.insert(row.try_get_unchecked::<String>(0)?, row.try_get_unchecked::<i32>(1)?);
            }
        }
        Ok(counts)
    }

    /// What waited for a replaced job waits for its replacement: still, when the replacement is
    /// live (its count of dependents carried over), or resolved by how it ended.
    async fn hand_over_dependents(
        &self,
        tx: &mut dyn Exec,
        writes: &[&Job],
        mut waited_for: HashMap<String, i32>,
    ) -> Result<(), sqlx::Error> {
        if waited_for.is_empty() {
            return Ok(());
        }
        let mut ended = Vec::new();
        let mut at = crate::time::UnixMillis(0);
        for job in writes {
            let Some(n) = waited_for.remove(job.id.as_str()) else {
                continue;
            };
            if job.status.is_terminal() {
                at = at.max(job.finished_at.unwrap_or(job.created_at));
                ended.push(super::dependencies::Ended {
                    id: job.id.to_string(),
                    status: job.status,
                });
            } else {
                let mut update = Stmt::new(self.dialect, "UPDATE jobq_jobs SET dependents = ");
                update.bind(n).push(" WHERE id = ").bind(job.id.as_str());
                tx.execute(&update).await?;
            }
        }
        self.release_dependents(tx, ended, at).await
    }
}

/// The selects of the ids among `jobs` that the table holds (one column: the id), their rows locked
/// where the database locks rows, in id order so that two imports cannot deadlock.
pub(crate) fn select_stored_ids(d: &Dialect, jobs: &[Job]) -> Vec<Stmt> {
    let ids: BTreeSet<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    let ids: Vec<String> = ids.into_iter().map(str::to_string).collect();
    ids.chunks(IDS_PER_STATEMENT)
        .map(|chunk| {
            let mut select = Stmt::new(d, "SELECT j.id FROM jobq_jobs AS j WHERE 1 = 1");
            select.any_of("j.id", chunk.iter().cloned());
            lock_in_id_order(d, &mut select);
            select
        })
        .collect()
}

/// The selects of the live jobs holding the unique keys of the live jobs among `jobs`, as (id, queue,
/// key), locked as [`select_stored_ids`] locks.
pub(crate) fn select_key_holders(d: &Dialect, jobs: &[Job]) -> Vec<Stmt> {
    let keys: BTreeSet<&str> = jobs
        .iter()
        .filter(|j| !j.status.is_terminal())
        .filter_map(|j| j.unique_key.as_deref())
        .collect();
    let keys: Vec<String> = keys.into_iter().map(str::to_string).collect();
    keys.chunks(IDS_PER_STATEMENT)
        .map(|chunk| {
            let mut select = Stmt::new(
                d,
                format!("SELECT j.id, j.queue, j.unique_key FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"),
            );
            select.any_of("j.unique_key", chunk.iter().cloned());
            lock_in_id_order(d, &mut select);
            select
        })
        .collect()
}

/// The columns of [`insert_whole`], every one of `jobq_jobs`.
pub(crate) const WHOLE_JOB_COLUMNS: &str = "id, queue, job_type, payload, meta, priority, status, attempt, \
     max_attempts, run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, \
     started_at, finished_at, heartbeat_at, worker_id, snoozes, expires_at, unique_mode";

/// The values of a whole job's row, in [`WHOLE_JOB_COLUMNS`]'s order, as every import binds them
/// (`VALUES` rows, PostgreSQL's arrays), so that no path writes a job differently.
pub(crate) struct WholeJobRow<'a> {
    pub id: &'a str,
    pub queue: &'a str,
    pub job_type: &'a str,
    pub payload: &'a str,
    pub meta: String,
    pub priority: i32,
    pub status: &'static str,
    pub attempt: i32,
    pub max_attempts: i32,
    pub run_at: i64,
    pub unique_key: Option<&'a str>,
    pub timeout_ms: Option<i64>,
    pub progress: Option<i64>,
    pub progress_message: Option<&'a str>,
    pub result: Option<&'a str>,
    pub errors: String,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub heartbeat_at: Option<i64>,
    pub worker_id: Option<&'a str>,
    pub snoozes: i32,
    pub expires_at: Option<i64>,
    pub unique_mode: Option<String>,
}

impl<'a> WholeJobRow<'a> {
    pub fn of(job: &'a Job) -> WholeJobRow<'a> {
        WholeJobRow {
            id: job.id.as_str(),
            queue: &job.queue,
            job_type: &job.job_type,
            payload: job.payload.get(),
            meta: serde_json::to_string(&job.meta).unwrap_or_else(|_| "{}".into()),
            priority: job.priority,
            status: job.status.as_str(),
            attempt: clamp_i32(job.attempt),
            max_attempts: clamp_i32(job.max_attempts),
            run_at: job.run_at.0,
            unique_key: job.unique_key.as_deref(),
            timeout_ms: job.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64),
            progress: job.progress.as_ref().map(|p| i64::from(p.percent)),
            progress_message: job.progress.as_ref().and_then(|p| p.message.as_deref()),
            result: job.result.as_ref().map(|r| r.get()),
            errors: serde_json::to_string(&job.errors).unwrap_or_else(|_| "[]".into()),
            created_at: job.created_at.0,
            started_at: job.started_at.map(|t| t.0),
            finished_at: job.finished_at.map(|t| t.0),
            heartbeat_at: job.heartbeat_at.map(|t| t.0),
            worker_id: job.worker_id.as_deref(),
            snoozes: clamp_i32(job.snoozes),
            expires_at: job.expires_at.map(|t| t.0),
            unique_mode: job.unique_mode.stored(),
        }
    }
}

/// One `INSERT` of whole jobs, every column given.
pub(crate) fn insert_whole(d: &Dialect, jobs: &[&Job]) -> Stmt {
    let (json_open, json_close) = d.json_in;
    let mut insert = Stmt::new(d, format!("INSERT INTO jobq_jobs ({WHOLE_JOB_COLUMNS}) VALUES "));
    let json = |s: &mut Stmt, text: Option<String>| {
        s.push(json_open).bind(text).push(json_close);
    };
    for (n, job) in jobs.iter().enumerate() {
        let r = WholeJobRow::of(job);
        insert.push(if n == 0 { "(" } else { ", (" });
        insert
            .bind(r.id)
            .push(", ")
            .bind(r.queue)
            .push(", ")
            .bind(r.job_type)
            .push(", ");
        json(&mut insert, Some(r.payload.to_string()));
        insert.push(", ");
        json(&mut insert, Some(r.meta));
        insert
            .push(", ")
            .bind(r.priority)
            .push(", ")
            .bind(r.status)
            .push(", ")
            .bind(r.attempt)
            .push(", ")
            .bind(r.max_attempts)
            .push(", ")
            .bind(r.run_at)
            .push(", ")
            .bind(r.unique_key.map(str::to_string))
            .push(", ")
            .bind(r.timeout_ms)
            .push(", ")
            .bind(r.progress)
            .push(", ")
            .bind(r.progress_message.map(str::to_string))
            .push(", ");
        json(&mut insert, r.result.map(str::to_string));
        insert.push(", ");
        json(&mut insert, Some(r.errors));
        insert
            .push(", ")
            .bind(r.created_at)
            .push(", ")
            .bind(r.started_at)
            .push(", ")
            .bind(r.finished_at)
            .push(", ")
            .bind(r.heartbeat_at)
            .push(", ")
            .bind(r.worker_id.map(str::to_string))
            .push(", ")
            .bind(r.snoozes)
            .push(", ")
            .bind(r.expires_at)
            .push(", ")
            .bind(r.unique_mode)
            .push(")");
    }
    if jobs.len() == ROWS_PER_INSERT {
        // Every full chunk has the same text: parsed once per connection, not per chunk.
        insert.keep();
    }
    insert
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
    /// Every job of `import` decided, in input order, from the ids the store holds and the live
    /// holders of unique keys (by queue and key) that its selects found.
    pub fn decided(
        import: &'a Import,
        stored: HashSet<String>,
        holders: HashMap<(String, String), String>,
    ) -> ImportPlan<'a> {
        let mut plan = ImportPlan::new(import.on_conflict, stored, holders);
        for job in &import.jobs {
            plan.decide(job);
        }
        plan
    }

    /// The deletes of the stored jobs replaced, to run before the inserts.
    pub fn deletes(&self, d: &Dialect) -> Vec<Stmt> {
        self.replaced
            .chunks(IDS_PER_STATEMENT)
            .map(|chunk| {
                let mut delete = Stmt::new(d, "DELETE FROM jobq_jobs WHERE 1 = 1");
                delete.any_of("id", chunk.iter().cloned());
                delete
            })
            .collect()
    }

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
