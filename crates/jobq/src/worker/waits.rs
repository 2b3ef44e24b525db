//! The wait time-out sweep: a job a handler handed to a third party (status `waiting`) whose type's
//! handler has a `wait_timeout` and that has waited longer than that is given up on: retried with
//! `wait timed out after …` while attempts remain, else dead with the same error.
//!
//! It runs after each rescue sweep (`rescue.rs`), at its cadence, with the handlers of the moment, so
//! a reload's new `wait_timeout` applies to every waiting job from the next sweep on. It finds the
//! jobs with [`crate::store::Store::list`] (waiting, of the worker's queues and of the types that have
//! a time-out) and gives them up through [`crate::store::Store::resolve`], fenced by the attempt it
//! read: a job the third party resolved meanwhile, even one that ran again and waits anew, is left to
//! what happened to it, so any number of workers may sweep at once. It never touches a job of another
//! status and never writes anything else.

use std::time::Duration;

use super::Shared;
use super::live::Live;
use super::outcome;
use crate::job::{Job, JobStatus};
use crate::store::{JobFilter, List, Resolution, Resolve, ResolveAnswer};
use crate::time::UnixMillis;

/// Waiting jobs read per `list` call.
const PAGE: u32 = 500;

/// One sweep: every waiting job of a type with a wait time-out that has waited longer than it.
pub(super) async fn sweep(s: &Shared) {
    let live = s.live();
    let Some(filter) = waiting_filter(&live, &s.settings.queues) else {
        return;
    };
    let now = s.clock.now();
    let mut overdue = Vec::new();
    let mut offset = 0u64;
    loop {
        let page = List {
            filter: filter.clone(),
            limit: PAGE,
            offset,
            after: None,
        };
        let jobs = match s.store.list(&page).await {
            Ok(jobs) => jobs,
            Err(e) => {
                let what = "the wait time-out sweep's list of waiting jobs";
                s.outage.failed(what, &e, "sweeping again at the next round");
                return;
            }
        };
        overdue.extend(jobs.iter().filter_map(|job| give_up(&live, job, now)));
        if jobs.len() < PAGE as usize {
            break;
        }
        offset += u64::from(PAGE);
    }
    for chunk in overdue.chunks(PAGE as usize) {
        let resolves: Vec<Resolve> = chunk.iter().map(|(resolve, _)| resolve.clone()).collect();
        let answers = match s.store.resolve(&resolves, now).await {
            Ok(answers) => answers,
            Err(e) => {
                let what = format!("giving up {} overdue waiting jobs", resolves.len());
                s.outage.failed(&what, &e, "sweeping again at the next round");
                return;
            }
        };
        for ((resolve, job_type), answer) in chunk.iter().zip(answers) {
            // Any other answer: resolved or gone meanwhile, which is the third party's to decide.
            if let ResolveAnswer::Resolved { status } = answer {
                let to = if status == JobStatus::Dead {
                    "dead (no attempts left)"
                } else {
                    "pending"
                };
                tracing::warn!(
                    job_id = %resolve.id, job_type = %job_type,
                    "{}: now {to}",
                    resolve.action.error().unwrap_or_default()
                );
            }
        }
    }
    if overdue
        .iter()
        .any(|(r, _)| matches!(r.action, Resolution::Retry { .. }))
    {
        s.control.wake.notify_one();
    }
}

/// The waiting jobs the sweep reads: of the worker's queues and, unless the catch-all handler has a
/// time-out, of the types whose handler has one. `None` when no handler has one.
fn waiting_filter(live: &Live, queues: &[String]) -> Option<JobFilter> {
    let mut job_types: Vec<String> = live
        .handlers
        .iter()
        .filter(|(_, reg)| reg.wait_timeout.is_some())
        .map(|(job_type, _)| job_type.clone())
        .collect();
    let catch_all = live.fallback.as_ref().is_some_and(|reg| reg.wait_timeout.is_some());
    if job_types.is_empty() && !catch_all {
        return None;
    }
    if catch_all {
        // Every type may fall to it; `give_up` asks each job's own handler.
        job_types.clear();
    }
    job_types.sort();
    Some(JobFilter {
        queues: queues.to_vec(),
        job_types,
        statuses: vec![JobStatus::Waiting],
        ..Default::default()
    })
}

/// The resolve that gives up on `job` at `now`, with its type, if its handler's wait time-out has
/// passed: a retry runnable now while attempts remain (judged as a run's end is), else a failure.
fn give_up(live: &Live, job: &Job, now: UnixMillis) -> Option<(Resolve, String)> {
    let reg = live.handler_for(&job.job_type)?;
    let limit = reg.wait_timeout?;
    let since = job.finished_at?;
    if job.status != JobStatus::Waiting || now.since(since) <= limit {
        return None;
    }
    let error = timed_out(limit);
    let max_attempts = outcome::max_attempts(job, &reg.retry, &reg.default_retry);
    let action = if job.attempt < max_attempts {
        Resolution::Retry {
            run_at: now,
            error: Some(error),
        }
    } else {
        Resolution::Fail { error }
    };
    let resolve = Resolve {
        id: job.id.clone(),
        attempt: Some(job.attempt),
        action,
    };
    Some((resolve, job.job_type.clone()))
}

/// The error a job given up on records, with the configured time-out as it was written (`2h`,
/// `1.5s`), as a run's time-out is spelled.
fn timed_out(limit: Duration) -> String {
    format!("wait timed out after {}", crate::handler::exact_duration(limit))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::handler::Builtin;
    use crate::job::test_job;
    use crate::retry::RetryPolicy;
    use crate::worker::HandlerOptions;
    use crate::worker::live::{Given, HandlerSet};

    fn live(handlers: &[(&str, Option<Duration>)]) -> Live {
        let mut set = HandlerSet::default();
        for (job_type, wait_timeout) in handlers {
            let options = HandlerOptions {
                wait_timeout: *wait_timeout,
                ..Default::default()
            };
            set.insert(
                job_type.to_string(),
                Given::code(Builtin::from_name("noop").unwrap(), options),
            );
        }
        Live::new(set, RetryPolicy::default(), 8, Arc::new(Vec::new()), 5).unwrap()
    }

    fn waiting(job_type: &str, attempt: u32, since: i64) -> Job {
        let mut job = test_job(job_type, "{}");
        job.status = JobStatus::Waiting;
        job.attempt = attempt;
        job.finished_at = Some(UnixMillis(since));
        job.worker_id = None;
        job
    }

    #[test]
    fn only_types_with_a_wait_timeout_are_read() {
        let two_hours = Some(Duration::from_secs(7_200));
        assert!(waiting_filter(&live(&[("a", None)]), &["q".into()]).is_none());
        let l = live(&[("a", None), ("b", two_hours), ("c", two_hours)]);
        let f = waiting_filter(&l, &["q".into()]).unwrap();
        assert_eq!(
            (f.queues, f.job_types, f.statuses),
            (
                vec!["q".to_string()],
                vec!["b".into(), "c".into()],
                vec![JobStatus::Waiting]
            )
        );
        // A catch-all with a time-out reads every type.
        let f = waiting_filter(&live(&[("b", two_hours), ("*", two_hours)]), &[]).unwrap();
        assert!(f.job_types.is_empty());
    }

    #[test]
    fn an_overdue_job_is_retried_while_attempts_remain_then_failed() {
        let l = live(&[("t", Some(Duration::from_secs(7_200))), ("free", None)]);
        let two_hours = 7_200_000;
        assert!(
            give_up(&l, &waiting("t", 1, 0), UnixMillis(two_hours)).is_none(),
            "not past yet"
        );
        assert!(give_up(&l, &waiting("free", 1, 0), UnixMillis(two_hours * 9)).is_none());
        assert!(give_up(&l, &waiting("other", 1, 0), UnixMillis(two_hours * 9)).is_none());

        let (resolve, job_type) = give_up(&l, &waiting("t", 2, 0), UnixMillis(two_hours + 1)).unwrap();
        assert_eq!((job_type.as_str(), resolve.attempt), ("t", Some(2)));
        let Resolution::Retry { run_at, error } = &resolve.action else {
            panic!("{resolve:?}")
        };
        assert_eq!(
            (*run_at, error.as_deref()),
            (UnixMillis(two_hours + 1), Some("wait timed out after 2h"))
        );

        let (resolve, _) = give_up(&l, &waiting("t", 5, 0), UnixMillis(two_hours + 1)).unwrap();
        let Resolution::Fail { error } = &resolve.action else {
            panic!("{resolve:?}")
        };
        assert_eq!(error, "wait timed out after 2h");
    }
}
