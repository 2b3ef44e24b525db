//! What a fenced exit from `running` writes, worked out once from a [`Finish`] for every SQL store:
//! each store only binds these values its own way.

use super::decode::JobCells;
use crate::job::{Job, JobStatus};
use crate::store::batch::sort_in_claim_order;
use crate::store::{Finish, StoreError, StoreKind, Transition};

/// The columns one finished attempt sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FinishRow<'a> {
    /// The job's new status.
    pub status: &'static str,
    /// A retry's next run time.
    pub run_at: Option<i64>,
    /// A retry's own expiry (`expires_per_attempt`); `None` keeps the job's.
    pub expires_at: Option<i64>,
    /// A success's result, as JSON text.
    pub result: Option<&'a str>,
    /// The text appended to the error history.
    pub error: Option<&'a str>,
    /// Whether the job left its worker for good (terminal outcomes and waiting), so `finished_at` is
    /// set; a retry, which runs again, leaves it empty.
    pub finished: bool,
    /// Progress reported with the outcome, if any.
    pub progress: Option<i32>,
    /// Its message.
    pub message: Option<&'a str>,
    /// 1 for a snooze (the attempt is given back and `snoozes` counted up), else 0.
    pub snoozed: i32,
}

impl<'a> FinishRow<'a> {
    /// The row `finish` writes for one outcome.
    pub fn of(finish: &'a Finish) -> FinishRow<'a> {
        let status = finish.outcome.status();
        FinishRow {
            status: status.as_str(),
            run_at: match &finish.outcome {
                Transition::Retry { run_at, .. } | Transition::Snooze { run_at } => Some(run_at.0),
                _ => None,
            },
            expires_at: match &finish.outcome {
                Transition::Retry { expires_at, .. } => expires_at.map(|at| at.0),
                _ => None,
            },
            result: match &finish.outcome {
                Transition::Succeeded { result } => result.as_deref().map(|r| r.get()),
                _ => None,
            },
            error: finish.outcome.error(),
            finished: status.is_terminal() || status == JobStatus::Waiting,
            progress: finish.progress.as_ref().map(|p| i32::from(p.percent)),
            message: finish.progress.as_ref().and_then(|p| p.message.as_deref()),
            snoozed: i32::from(matches!(finish.outcome, Transition::Snooze { .. })),
        }
    }
}

/// The jobs of a claim's rows (in the order of [`super::Dialect::job_columns`]) in claim order:
/// smallest (priority, run_at, id) first, as the contract hands them out.
pub(crate) fn in_claim_order<R: JobCells>(rows: &[R], kind: StoreKind) -> Result<Vec<Job>, StoreError> {
    let mut jobs = rows
        .iter()
        .map(|r| super::decode_job(r, kind))
        .collect::<Result<Vec<_>, _>>()?;
    sort_in_claim_order(&mut jobs);
    Ok(jobs)
}
