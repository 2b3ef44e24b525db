//! What the SQL stores' selections share: the status lists, and which jobs a cleanup or a replay
//! selects (the conditions themselves are written by [`super::Stmt::filter`]).

use crate::job::JobStatus;
use crate::store::{Cleanup, JobFilter, ReplayDead};

/// The statuses a job can be cancelled from, and that hold a unique key.
pub const LIVE_STATUSES: &str = "('blocked', 'pending', 'running', 'waiting')";

/// The terminal statuses as an SQL list.
pub const TERMINAL_STATUSES: &str = "('succeeded', 'dead', 'cancelled', 'discarded', 'expired')";

/// What a cleanup call selects: its queues, types and terminal statuses (every terminal one when it
/// names none). `None` when it names live statuses only, which cleanup never touches.
pub(crate) fn cleanup_filter(cleanup: &Cleanup) -> Option<JobFilter> {
    let named = &cleanup.filter.statuses;
    let statuses: Vec<JobStatus> = named.iter().copied().filter(|s| s.is_terminal()).collect();
    if !named.is_empty() && statuses.is_empty() {
        return None;
    }
    Some(JobFilter {
        queues: cleanup.filter.queues.clone(),
        job_types: cleanup.filter.job_types.clone(),
        statuses,
        ..Default::default()
    })
}

/// The dead jobs a replay selects by queue and type (its ids, when it names some, come on top).
pub(crate) fn replay_filter(replay: &ReplayDead) -> JobFilter {
    JobFilter {
        queues: replay.filter.queues.clone(),
        job_types: replay.filter.job_types.clone(),
        ..Default::default()
    }
}

/// A comma-separated list of `n` placeholders `?` (SQLite, MySQL), for statements whose text is
/// cached by their number of rows.
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
