//! Built-in handlers for smoke tests and benchmarks: `noop`, `sleep`, `echo` and `fail`.
//!
//! They do no real work on purpose: `noop` measures the queue itself, `sleep` stands in for slow work
//! (and shows that stopping reaches a handler), `echo` shows what a job carried, `fail` exercises the
//! dead-letter path.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::{Handler, JobContext, Outcome};
use crate::job::Job;

/// One of the built-in handlers (more may come).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Builtin {
    /// Succeeds at once.
    Noop,
    /// Sleeps for the payload's `{"ms": N}` milliseconds (0 when absent), reporting progress; stops
    /// when asked to.
    Sleep,
    /// Logs the payload and returns it as the result.
    Echo,
    /// Fails the job for good, with the payload's `{"error": "…"}` text if it has one.
    Fail,
}

impl Builtin {
    /// The builtin called `name` in a config (`builtin = "noop"`).
    pub fn from_name(name: &str) -> Option<Builtin> {
        match name {
            "noop" => Some(Builtin::Noop),
            "sleep" => Some(Builtin::Sleep),
            "echo" => Some(Builtin::Echo),
            "fail" => Some(Builtin::Fail),
            _ => None,
        }
    }

    /// Its config name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Noop => "noop",
            Builtin::Sleep => "sleep",
            Builtin::Echo => "echo",
            Builtin::Fail => "fail",
        }
    }
}

#[async_trait]
impl Handler for Builtin {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        match self {
            Builtin::Noop => Outcome::success(),
            Builtin::Sleep => {
                let ms = job
                    .payload_as::<Value>()
                    .ok()
                    .and_then(|p| p.get("ms").and_then(Value::as_u64))
                    .unwrap_or(0);
                sleep(Duration::from_millis(ms), cx).await
            }
            Builtin::Echo => {
                let payload: Value = job.payload_as().unwrap_or(Value::Null);
                tracing::info!(job_id = %job.id, job_type = %job.job_type, payload = %job.payload.get(), "echo");
                Outcome::success_with(payload)
            }
            Builtin::Fail => {
                let error = job
                    .payload_as::<Value>()
                    .ok()
                    .and_then(|p| p.get("error").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| "failed by the fail builtin".to_string());
                Outcome::fail(error)
            }
        }
    }
}

/// Sleeps in steps of at most a tenth of the total, reporting progress after each, so a long sleep
/// shows a moving progress bar; the stop signal ends it at once.
async fn sleep(total: Duration, cx: &JobContext) -> Outcome {
    let step = (total / 10).max(Duration::from_millis(100));
    let started = tokio::time::Instant::now();
    loop {
        let elapsed = started.elapsed();
        if elapsed >= total {
            return Outcome::success();
        }
        tokio::select! {
            biased;
            _ = cx.cancelled() => return Outcome::retry("sleep interrupted"),
            _ = tokio::time::sleep(step.min(total - elapsed)) => {}
        }
        let done = started.elapsed().min(total);
        if done < total {
            cx.progress((done.as_millis() * 100 / total.as_millis().max(1)) as u8, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::StopReason;
    use crate::job::test_job;
    use serde_json::json;

    #[tokio::test]
    async fn builtins_answer_as_documented() {
        let cx = JobContext::detached();
        assert_eq!(Builtin::Noop.run(&test_job("t", "null"), &cx).await, Outcome::success());
        assert_eq!(
            Builtin::Echo.run(&test_job("t", r#"{"a":1}"#), &cx).await,
            Outcome::success_with(json!({"a": 1}))
        );
        assert_eq!(
            Builtin::Fail.run(&test_job("t", r#"{"error":"nope"}"#), &cx).await,
            Outcome::fail("nope")
        );
        assert_eq!(
            Builtin::Fail.run(&test_job("t", "1"), &cx).await,
            Outcome::fail("failed by the fail builtin")
        );
        assert_eq!(
            Builtin::Sleep.run(&test_job("t", r#"{"ms":5}"#), &cx).await,
            Outcome::success()
        );
        assert_eq!(Builtin::from_name("nope"), None);
        for name in crate::handler::BUILTINS {
            assert_eq!(Builtin::from_name(name).map(Builtin::name), Some(name));
        }
    }

    #[tokio::test]
    async fn sleep_reports_progress_and_stops_when_asked() {
        let cx = JobContext::detached();
        let job = test_job("t", r#"{"ms":60000}"#);
        let run = Builtin::Sleep.run(&job, &cx);
        let stopper = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cx.stop(StopReason::Cancelled);
        };
        let (outcome, ()) = tokio::join!(run, stopper);
        assert!(matches!(outcome, Outcome::Retry { .. }), "{outcome:?}");
        let cx = JobContext::detached();
        assert_eq!(
            Builtin::Sleep.run(&test_job("t", r#"{"ms":250}"#), &cx).await,
            Outcome::success()
        );
        assert!(cx.take_progress().is_some());
    }
}
