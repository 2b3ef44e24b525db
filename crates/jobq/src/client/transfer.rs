//! `Client`'s calls that move jobs whole: the pages of jobs that `jobq export` and `jobq copy` read,
//! and `import`, which writes jobs back exactly as another store (or an export) held them, then
//! `import_edges`, which gives them back the edges to the jobs they wait for.

use super::{Client, validate_filter};
use crate::error::Result;
use crate::job::{Job, JobId};
use crate::store::{
    Import, ImportAnswer, ImportEdges, JobFilter, List, ListCursor, OnConflict, ReadEdges, ScheduleKey, ScheduleState,
    SetPaused,
};

/// Jobs per [`Client::import_edges`] call to the store.
const EDGES_PER_CALL: usize = 500;

/// How [`Client::import`] writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// What to do with a job whose id the store holds already.
    pub on_conflict: OnConflict,
    /// Keep running jobs running (their workers still hold them, e.g. a copy between two stores
    /// that the same workers will serve); otherwise they arrive pending, as if released.
    pub keep_running: bool,
    /// Decide, write nothing.
    pub dry_run: bool,
}

/// What [`Client::import`] did, job by job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Each job's id and answer, in input order.
    pub answers: Vec<(JobId, ImportAnswer)>,
}

impl ImportReport {
    /// How many jobs got `answer` (holders aside: any `KeyTaken` counts as one).
    pub fn count(&self, answer: fn(&ImportAnswer) -> bool) -> u64 {
        self.answers.iter().filter(|(_, a)| answer(a)).count() as u64
    }
}

/// What [`Client::copy_state_to`] carried over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCopied {
    /// Pauses of queues and types.
    pub pauses: usize,
    /// Schedules' records.
    pub schedules: usize,
}

impl Client {
    /// Up to `limit` jobs matching `filter`, newest first, after `after` (the last job of the page
    /// before): a keyset page, as fast however deep, for reading every job of a store. A job with
    /// dependencies carries its side of their edges in [`Job::deps`] (each dependency's id, queue,
    /// rule and state; no results) and [`Job::join`], for [`Client::import_edges`].
    pub async fn export_page(&self, filter: &JobFilter, after: Option<ListCursor>, limit: u32) -> Result<Vec<Job>> {
        validate_filter(filter)?;
        let mut jobs = self
            .store
            .list(&List {
                filter: filter.clone(),
                limit,
                offset: 0,
                after,
            })
            .await?;
        let waiting: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].has_dependencies).collect();
        if !waiting.is_empty() {
            let read = ReadEdges {
                ids: waiting.iter().map(|&i| jobs[i].id.clone()).collect(),
                queue: None,
                dependents: false,
                results: false,
            };
            for (i, edges) in waiting.into_iter().zip(self.store.edges(&read).await?) {
                jobs[i].deps = edges.dependencies;
            }
        }
        Ok(jobs)
    }

    /// Writes jobs exactly as given (see [`crate::store::Store::import`]); running ones arrive
    /// pending unless `keep_running`. Their edges are not written here: an export lists a job
    /// before those it waits for, so they go in once every job is in, by [`Client::import_edges`]
    /// (with [`ImportEdges::of`] each imported job that has dependencies).
    pub async fn import(&self, jobs: Vec<Job>, options: ImportOptions) -> Result<ImportReport> {
        let jobs: Vec<Job> = if options.keep_running {
            jobs
        } else {
            jobs.into_iter().map(Job::released_for_import).collect()
        };
        let ids: Vec<JobId> = jobs.iter().map(|j| j.id.clone()).collect();
        let answers = self
            .store
            .import(&Import {
                jobs,
                on_conflict: options.on_conflict,
                dry_run: options.dry_run,
            })
            .await?;
        Ok(ImportReport {
            answers: ids.into_iter().zip(answers).collect(),
        })
    }

    /// Writes the dependencies of imported jobs (see [`crate::store::Store::import_edges`]), once
    /// every job of the import is written; returns how many jobs got theirs.
    pub async fn import_edges(&self, edges: &[ImportEdges]) -> Result<u64> {
        let mut written = 0;
        for chunk in edges.chunks(EDGES_PER_CALL) {
            let answers = self.store.import_edges(chunk, self.now()).await?;
            written += answers.iter().filter(|w| **w).count() as u64;
        }
        Ok(written)
    }

    /// The position among `jobs` of the first whose id the store holds, by a dry run (nothing is
    /// written): what `import --on-conflict fail` and a copy without `--resume` look for before they
    /// write.
    pub async fn first_held(&self, jobs: &[Job]) -> Result<Option<usize>> {
        let look = ImportOptions {
            dry_run: true,
            ..ImportOptions::default()
        };
        let report = self.import(jobs.to_vec(), look).await?;
        Ok(report.answers.iter().position(|(_, a)| *a == ImportAnswer::Skipped))
    }

    /// Carries over to `target` what the store holds besides jobs: the pauses of `queues` (of every
    /// queue when empty), each with its time, and the records of the `schedules` (their last tick,
    /// start, pause and last job), so that the target neither enqueues a tick this store handled nor
    /// forgets a pause. Blocks (back-pressure of minutes) stay behind.
    pub async fn copy_state_to(
        &self,
        target: &Client,
        queues: &[String],
        schedules: &[ScheduleKey],
    ) -> Result<StateCopied> {
        let in_scope = |queue: &str| queues.is_empty() || queues.iter().any(|q| q == queue);
        let flow = self.store.flow_state(self.now()).await?;
        let mut copied = StateCopied::default();
        for pause in flow.pauses.iter().filter(|p| in_scope(&p.queue)) {
            target
                .store
                .set_paused(&SetPaused {
                    queue: &pause.queue,
                    job_type: pause.job_type.as_deref(),
                    paused: true,
                    now: pause.since,
                })
                .await?;
            copied.pauses += 1;
        }
        let keys: Vec<ScheduleKey> = schedules.iter().filter(|k| in_scope(&k.queue)).cloned().collect();
        let states = self.store.schedules(&keys).await?;
        let records: Vec<(ScheduleKey, ScheduleState)> = keys
            .into_iter()
            .zip(states)
            .filter_map(|(key, state)| state.map(|s| (key, s)))
            .collect();
        if !records.is_empty() {
            target.store.restore_schedules(&records, self.now()).await?;
        }
        copied.schedules = records.len();
        Ok(copied)
    }
}
