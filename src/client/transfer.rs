//! `Client`'s calls that move jobs whole: the pages of jobs that `jobq export` and `jobq copy` read,
//! and `import`, which writes jobs back exactly as another store (or an export) held them.

use super::{Client, validate_filter};
use crate::error::Result;
use crate::job::{Job, JobId};
use crate::store::{Import, ImportAnswer, JobFilter, List, ListCursor, OnConflict};

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

/// A place in the pages of [`Client::export_page`]: the last job read.
pub type ExportCursor = ListCursor;

impl Client {
    /// Up to `limit` jobs matching `filter`, newest first, after `after` (the last job of the page
    /// before): a keyset page, as fast however deep, for reading every job of a store.
    pub async fn export_page(&self, filter: &JobFilter, after: Option<ExportCursor>, limit: u32) -> Result<Vec<Job>> {
        validate_filter(filter)?;
        Ok(self
            .store
            .list(&List {
                filter: filter.clone(),
                limit,
                offset: 0,
                after,
            })
            .await?)
    }

    /// Writes jobs exactly as given (see [`crate::store::Store::import`]); running ones arrive
    /// pending unless `keep_running`.
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
}
