//! From a handler's answer to a store transition: back-off, attempts used up, stops. Pure: the time
//! and the random jitter come in as arguments, so every rule here is unit-tested exactly. Nothing here
//! reads the clock, touches the store or logs: the callers do, around these decisions.

use std::time::Duration;

use crate::handler::{Outcome, StopReason};
use crate::job::Job;
use crate::retry::RetryPolicy;
use crate::store;
use crate::time::UnixMillis;

/// How a run ended, as the runner saw it.
#[derive(Debug)]
pub(crate) enum RunEnd {
    /// The handler answered.
    Answered(Outcome),
    /// The handler panicked with this message.
    Panicked(String),
    /// The handler did not return within the grace period after being stopped; it was abandoned.
    Abandoned,
}

/// What the worker does with a job whose run ended.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Record this outcome (fenced by the lease).
    Finish(store::Transition),
    /// Put the job back to pending without using an attempt (shutdown).
    Release,
    /// Write nothing: the job was cancelled, or this worker lost it.
    Forget,
}

/// How far a job may go: its attempts, and its snoozes before a snooze counts as a retry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowance {
    pub(crate) attempts: u32,
    pub(crate) snoozes: u32,
}

/// Decides what becomes of a job. A stop reason overrides the handler's answer unless that answer
/// is a decision of its own (success, fail, discard, wait): a handler that finished its work just as
/// the time-out or shutdown struck keeps its result, while a retry at that moment is most likely the
/// stop itself (a program killed by SIGTERM).
pub(crate) fn verdict(
    end: RunEnd,
    stop: Option<StopReason>,
    job: &Job,
    policy: &RetryPolicy,
    allowance: Allowance,
    now: UnixMillis,
    unit: f64,
) -> Verdict {
    let max_attempts = allowance.attempts;
    let retry_like = match &end {
        RunEnd::Answered(Outcome::Retry { .. }) | RunEnd::Panicked(_) | RunEnd::Abandoned => true,
        RunEnd::Answered(_) => false,
    };
    match stop {
        Some(StopReason::Cancelled | StopReason::Lost) => return Verdict::Forget,
        Some(StopReason::Shutdown) if retry_like => return Verdict::Release,
        Some(reason @ StopReason::Superseded) if retry_like => {
            return Verdict::Finish(store::Transition::Cancelled {
                reason: reason.to_string(),
            });
        }
        Some(reason @ StopReason::TimedOut(_)) if retry_like => {
            let error = match end {
                RunEnd::Answered(Outcome::Retry { error, .. }) if !error.is_empty() => format!("{reason}: {error}"),
                _ => reason.to_string(),
            };
            return Verdict::Finish(retry_or_dead(error, None, job, policy, max_attempts, now, unit));
        }
        _ => {}
    }
    let outcome = match end {
        RunEnd::Answered(o) => o,
        RunEnd::Panicked(message) => Outcome::retry(format!("handler panicked: {message}")),
        RunEnd::Abandoned => Outcome::retry("handler did not return"),
    };
    Verdict::Finish(match outcome {
        Outcome::Success { result } => store::Transition::Succeeded {
            result: result.and_then(|r| serde_json::value::to_raw_value(&r).ok()),
        },
        Outcome::Retry { error, retry_after } => {
            retry_or_dead(error, retry_after, job, policy, max_attempts, now, unit)
        }
        Outcome::Fail { error } => store::Transition::Dead { error },
        Outcome::Discard { reason } => store::Transition::Discarded { reason },
        Outcome::Wait => store::Transition::Waiting,
        Outcome::AwaitChildren => store::Transition::AwaitChildren,
        Outcome::Snooze { delay } => snooze_or_retry(delay, job, policy, allowance, now, unit),
        Outcome::RateLimited { delay } => {
            let delay = delay.unwrap_or_else(|| back_pressure_delay(job, policy, unit));
            snooze_or_retry(delay, job, policy, allowance, now, unit)
        }
    })
}

/// How long a type's upstream is left alone after it said "too many requests" without saying for
/// how long: the back-off a retry of this attempt would wait.
pub(crate) fn back_pressure_delay(job: &Job, policy: &RetryPolicy, unit: f64) -> Duration {
    policy.delay_after(job.attempt, unit)
}

/// A snooze, or once the job has used up its snoozes, a retry (or dead) after the same delay.
fn snooze_or_retry(
    delay: Duration,
    job: &Job,
    policy: &RetryPolicy,
    allowance: Allowance,
    now: UnixMillis,
    unit: f64,
) -> store::Transition {
    if job.snoozes >= allowance.snoozes {
        let error = format!("snoozed {} times (max_snoozes), counted as a retry", job.snoozes);
        return retry_or_dead(error, Some(delay), job, policy, allowance.attempts, now, unit);
    }
    store::Transition::Snooze {
        run_at: now.plus(delay),
    }
}

/// A retry after the back-off (or the handler's delay), or dead when this was the last attempt.
fn retry_or_dead(
    error: String,
    retry_after: Option<Duration>,
    job: &Job,
    policy: &RetryPolicy,
    max_attempts: u32,
    now: UnixMillis,
    unit: f64,
) -> store::Transition {
    if job.attempt >= max_attempts {
        return store::Transition::Dead { error };
    }
    let delay = retry_after.unwrap_or_else(|| policy.delay_after(job.attempt, unit));
    store::Transition::Retry {
        error,
        run_at: now.plus(delay),
        expires_at: None,
    }
}

/// The attempts a job gets: its own `max_attempts`, unless that is just the global default and its
/// type's handler configures another number. A job records its limit when enqueued (with the global
/// default when the producer did not say), so a per-type `max_attempts` in the config must win over
/// the default but not over a number the producer chose.
pub(crate) fn max_attempts(job: &Job, type_policy: &RetryPolicy, default_policy: &RetryPolicy) -> u32 {
    if job.max_attempts == default_policy.max_attempts {
        type_policy.max_attempts
    } else {
        job.max_attempts
    }
}

/// The error a job of a type nobody serves dies with.
pub(crate) fn unregistered(job_type: &str) -> store::Transition {
    store::Transition::Dead {
        error: format!("unregistered job type: {job_type}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::test_job;
    use serde_json::json;

    const NOW: UnixMillis = UnixMillis(1_800_000_000_000);

    fn policy() -> RetryPolicy {
        RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        }
    }

    fn decide(end: RunEnd, stop: Option<StopReason>, attempt: u32) -> Verdict {
        let mut job = test_job("t", "{}");
        job.attempt = attempt;
        verdict(
            end,
            stop,
            &job,
            &policy(),
            Allowance {
                attempts: 5,
                snoozes: 2,
            },
            NOW,
            0.5,
        )
    }

    fn finished(v: Verdict) -> store::Transition {
        match v {
            Verdict::Finish(o) => o,
            other => panic!("expected a finish, got {other:?}"),
        }
    }

    #[test]
    fn answers_map_to_transitions() {
        let ok = finished(decide(
            RunEnd::Answered(Outcome::success_with(json!({"a": 1}))),
            None,
            1,
        ));
        let store::Transition::Succeeded { result: Some(r) } = ok else {
            panic!("{ok:?}")
        };
        assert_eq!(r.get(), r#"{"a":1}"#);
        assert!(
            matches!(finished(decide(RunEnd::Answered(Outcome::fail("x")), None, 1)), store::Transition::Dead { error } if error == "x")
        );
        assert!(matches!(
            finished(decide(RunEnd::Answered(Outcome::discard("old")), None, 1)),
            store::Transition::Discarded { reason } if reason == "old"
        ));
        assert!(matches!(
            finished(decide(RunEnd::Answered(Outcome::Wait), None, 1)),
            store::Transition::Waiting
        ));
    }

    #[test]
    fn snoozes_spend_no_attempt_until_they_run_out() {
        let snooze = || RunEnd::Answered(Outcome::snooze(Duration::from_secs(30)));
        assert!(matches!(
            finished(decide(snooze(), None, 1)),
            store::Transition::Snooze { run_at } if run_at == NOW.plus(Duration::from_secs(30))
        ));
        // Rate-limited without a delay: the back-off of this attempt (1 s after the first).
        assert!(matches!(
            finished(decide(RunEnd::Answered(Outcome::rate_limited(None)), None, 1)),
            store::Transition::Snooze { run_at } if run_at == NOW.plus(Duration::from_secs(1))
        ));
        let mut job = test_job("t", "{}");
        job.attempt = 1;
        job.snoozes = 2;
        let allowance = Allowance {
            attempts: 5,
            snoozes: 2,
        };
        let v = verdict(snooze(), None, &job, &policy(), allowance, NOW, 0.5);
        assert!(matches!(
            finished(v),
            store::Transition::Retry { error, run_at, .. }
                if error.starts_with("snoozed 2 times") && run_at == NOW.plus(Duration::from_secs(30))
        ));
        job.attempt = 5;
        let v = verdict(snooze(), None, &job, &policy(), allowance, NOW, 0.5);
        assert!(matches!(finished(v), store::Transition::Dead { .. }));
    }

    #[test]
    fn retries_back_off_geometrically_then_die() {
        for (attempt, secs) in [(1, 1), (2, 2), (3, 4), (4, 8)] {
            match finished(decide(RunEnd::Answered(Outcome::retry("busy")), None, attempt)) {
                store::Transition::Retry { error, run_at, .. } => {
                    assert_eq!(error, "busy");
                    assert_eq!(run_at, NOW.plus(Duration::from_secs(secs)), "attempt {attempt}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            finished(decide(RunEnd::Answered(Outcome::retry("busy")), None, 5)),
            store::Transition::Dead { error } if error == "busy"
        ));
    }

    #[test]
    fn a_handlers_delay_overrides_the_back_off() {
        let o = finished(decide(
            RunEnd::Answered(Outcome::retry_after("later", Duration::from_secs(30))),
            None,
            3,
        ));
        assert!(matches!(o, store::Transition::Retry { run_at, .. } if run_at == NOW.plus(Duration::from_secs(30))));
    }

    #[test]
    fn panics_and_abandoned_runs_are_retries() {
        let o = finished(decide(RunEnd::Panicked("index out of bounds".into()), None, 1));
        assert!(
            matches!(o, store::Transition::Retry { error, .. } if error == "handler panicked: index out of bounds")
        );
        assert!(matches!(
            finished(decide(RunEnd::Abandoned, None, 1)),
            store::Transition::Retry { .. }
        ));
    }

    #[test]
    fn time_outs_retry_with_the_time_in_the_error() {
        let t = Some(StopReason::TimedOut(Duration::from_secs(2)));
        let o = finished(decide(
            RunEnd::Answered(Outcome::retry("killed by signal 15 (SIGTERM)")),
            t,
            1,
        ));
        assert!(
            matches!(o, store::Transition::Retry { error, .. } if error == "timed out after 2s: killed by signal 15 (SIGTERM)")
        );
        let o = finished(decide(RunEnd::Abandoned, t, 5));
        assert!(matches!(o, store::Transition::Dead { error } if error == "timed out after 2s"));
        // Work that finished as the clock ran out keeps its result.
        assert!(matches!(
            finished(decide(RunEnd::Answered(Outcome::success()), t, 1)),
            store::Transition::Succeeded { .. }
        ));
    }

    #[test]
    fn stops_release_or_forget() {
        let shutdown = Some(StopReason::Shutdown);
        assert!(matches!(
            decide(RunEnd::Answered(Outcome::retry("killed")), shutdown, 1),
            Verdict::Release
        ));
        assert!(matches!(decide(RunEnd::Abandoned, shutdown, 1), Verdict::Release));
        assert!(matches!(
            decide(RunEnd::Answered(Outcome::success()), shutdown, 1),
            Verdict::Finish(_)
        ));
        for reason in [StopReason::Cancelled, StopReason::Lost] {
            assert!(matches!(
                decide(RunEnd::Answered(Outcome::success()), Some(reason), 1),
                Verdict::Forget
            ));
        }
    }

    #[test]
    fn a_types_max_attempts_beats_the_default_but_not_the_producers_choice() {
        let default = RetryPolicy::default();
        let typed = RetryPolicy {
            max_attempts: 10,
            ..default
        };
        let mut job = test_job("t", "{}");
        job.max_attempts = default.max_attempts;
        assert_eq!(max_attempts(&job, &typed, &default), 10);
        job.max_attempts = 2;
        assert_eq!(max_attempts(&job, &typed, &default), 2);
        assert_eq!(max_attempts(&job, &default, &default), 2);
    }

    #[test]
    fn unknown_types_die_with_a_clear_error() {
        assert!(
            matches!(unregistered("x.y"), store::Transition::Dead { error } if error == "unregistered job type: x.y")
        );
    }
}
