//! The parameters and answers of [`super::Store::import`]: jobs written back exactly as another store
//! (or an export) held them, for `jobq import` and `jobq copy`.

use crate::job::{Job, JobId};

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
