//! The audit log: one line for each request that changed something, always (whatever `-v`/`-q`
//! say, see `cli/serve.rs`), naming who (the token's name), what, and which jobs. Never a token.

use std::fmt::Display;

use super::tokens::Caller;
use jobq::job::JobId;

/// The log target of audit lines, which `jobq serve` always shows.
pub const TARGET: &str = "jobq::audit";

/// How many ids a line names before it says how many more there were.
const SHOWN_IDS: usize = 20;

/// Logs that `caller` did `action` (`jobs.cancel`) to `what` (jobs, a queue, a schedule).
pub fn record(caller: &Caller, action: &str, what: impl Display) {
    tracing::info!(target: TARGET, token = caller.shown(), action, "{} {action}: {what}", caller.shown());
}

/// `3 jobs: a, b, c`, naming at most [`SHOWN_IDS`].
pub fn ids<'a>(ids: impl IntoIterator<Item = &'a JobId>) -> String {
    let all: Vec<&str> = ids.into_iter().map(JobId::as_str).collect();
    let mut text = crate::report::jobs(all.len() as u64, "");
    if !all.is_empty() {
        text.push_str(": ");
        text.push_str(&all[..all.len().min(SHOWN_IDS)].join(", "));
        if all.len() > SHOWN_IDS {
            text.push_str(&format!(" and {} more", all.len() - SHOWN_IDS));
        }
    }
    text
}
