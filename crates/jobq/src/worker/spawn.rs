//! The children a run spawned ([`crate::handler::JobContext::spawn`]): taken from its context once
//! it has ended, checked into jobs, and kept only when the run succeeded or awaits them; the store
//! writes them with the outcome. What cannot be written — a child refused, a child of another queue
//! where the store keeps a job's children in its queue, an await with nothing new to wait for — is
//! the attempt's failure, at once and for good: the same run would do the same again.

use std::collections::HashSet;

use crate::handler::{JobContext, Outcome};
use crate::job::{Job, JobId, Limits, NewJob, Spawn, children};
use crate::store::Store;
use crate::time::UnixMillis;

use super::outcome::RunEnd;

/// The run's end and the children to write with its outcome.
pub(super) fn children_of(
    store: &dyn Store,
    job: &Job,
    cx: &JobContext,
    end: RunEnd,
    now: UnixMillis,
) -> (RunEnd, Vec<NewJob>) {
    let spawned = cx.take_spawned();
    let awaits = matches!(end, RunEnd::Answered(Outcome::AwaitChildren));
    let succeeded = matches!(end, RunEnd::Answered(Outcome::Success { .. }));
    match &spawned {
        // Nearly every run: nothing spawned, nothing awaited.
        Ok(none) if none.is_empty() && !awaits => return (end, Vec::new()),
        Ok(dropped) if !awaits && !succeeded => {
            tracing::debug!(job_id = %job.id, children = dropped.len(), "the attempt did not succeed: its children are not written");
            return (end, Vec::new());
        }
        Err(_) if !awaits && !succeeded => return (end, Vec::new()),
        _ => {}
    }
    match checked(store, job, spawned, awaits, now) {
        Ok(jobs) => (end, jobs),
        Err(error) => (RunEnd::Answered(Outcome::fail(error)), Vec::new()),
    }
}

fn checked(
    store: &dyn Store,
    job: &Job,
    spawned: Result<Vec<Spawn>, String>,
    awaits: bool,
    now: UnixMillis,
) -> Result<Vec<NewJob>, String> {
    let jobs =
        children(&job.id, &job.queue, spawned?, now, &Limits::default()).map_err(|e| format!("cannot spawn: {e}"))?;
    if !store.spawns_across_queues()
        && let Some(other) = jobs.iter().find(|child| child.queue != job.queue)
    {
        return Err(format!(
            "cannot spawn {} into queue {:?}: on a Redis Cluster a job's children go to its own queue ({:?})",
            other.id, other.queue, job.queue
        ));
    }
    // A job that ran again after its children ended sees them in `deps`; awaiting only those again
    // would run it again at once, for ever.
    if awaits {
        let awaited_before: HashSet<&JobId> = job.deps.iter().map(|d| &d.job_id).collect();
        if jobs.iter().all(|child| awaited_before.contains(&child.id)) {
            return Err(if jobs.is_empty() {
                "awaits its children but spawned none".to_string()
            } else {
                "awaits its children but spawned none it had not awaited before (their outcomes are in its deps)"
                    .to_string()
            });
        }
    }
    Ok(jobs)
}
