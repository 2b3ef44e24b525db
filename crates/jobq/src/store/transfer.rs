//! The parameters and answers of [`super::Store::import`]: jobs written back exactly as another store
//! (or an export) held them, for `jobq import` and `jobq copy`.

use crate::job::{DependOn, EdgeState, Job, JobId, Join};

/// Parameters of [`super::Store::import`].
#[derive(Debug, Clone)]
pub struct Import {
    /// The jobs, each exactly as it is to be stored (id, status, attempts, history, times, worker).
    pub jobs: Vec<Job>,
    /// What to do with a job whose id the store holds already.
    pub on_conflict: OnConflict,
    /// Decide every answer, write nothing.
    pub dry_run: bool,
}

/// What an import does with a job whose id the store holds already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnConflict {
    /// Leave the stored job as it is.
    #[default]
    Skip,
    /// Replace the stored job whole.
    Replace,
}

/// What [`super::Store::import`] did with one job.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportAnswer {
    /// Written; the store did not hold its id.
    Imported,
    /// Its id was held: left as it was.
    Skipped,
    /// Its id was held: the stored job was replaced.
    Replaced,
    /// A live job whose unique key another live job of its queue holds: not written.
    KeyTaken {
        /// The live job holding the key.
        holder: JobId,
    },
}

/// One job's side of its edges, as an export read them, for [`super::Store::import_edges`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportEdges {
    /// The job that waits (or waited).
    pub job: JobId,
    /// Its queue.
    pub queue: String,
    /// How its dependencies combine.
    pub join: Join,
    /// Its dependencies, oldest first.
    pub after: Vec<ImportEdge>,
}

/// One dependency of an [`ImportEdges`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportEdge {
    /// The job waited for.
    pub id: JobId,
    /// Its queue; `None` when it had been deleted (its edge then broke, as a cancel breaks one).
    pub queue: Option<String>,
    /// The rule.
    pub on: DependOn,
    /// Where the edge stood.
    pub state: EdgeState,
}

impl ImportEdges {
    /// The edges an imported job carries (`Job::deps`, `Job::join`, from an export line or a page
    /// of [`crate::Client::export_page`]), or `None` for a job without dependencies.
    pub fn of(job: &Job) -> Option<ImportEdges> {
        job.has_dependencies.then(|| ImportEdges {
            job: job.id.clone(),
            queue: job.queue.clone(),
            join: job.join,
            after: job
                .deps
                .iter()
                .map(|e| ImportEdge {
                    id: e.job_id.clone(),
                    queue: e.queue.clone(),
                    on: e.on,
                    state: e.state,
                })
                .collect(),
        })
    }
}
