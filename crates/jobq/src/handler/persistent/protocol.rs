//! The line protocol between the worker and a persistent handler's program (version 1; the guide's
//! `docs/src/handlers.md`, "Persistent handlers", is its specification).
//!
//! To the program, one JSON object a line: a job's envelope, exactly as the per-job exec handler
//! writes it to stdin, or a drop (`{"drop":"ID","reason":"…"}`) asking it to stop a job. From the
//! program, one JSON object a line naming its `jobId`: an outcome, or progress. Anything else is a
//! broken program, restarted by its slot: reading a reply strictly is what lets a worker trust that
//! a job it never heard about was never answered.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::handler::Outcome;
use crate::job::Progress;

/// One line a program wrote, understood.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// How the job's run ended, and the children it spawned (each as the program wrote it).
    Outcome {
        job_id: String,
        outcome: Outcome,
        spawn: Vec<Value>,
    },
    /// How far the job has got.
    Progress { job_id: String, progress: Progress },
}

impl Reply {
    pub(crate) fn job_id(&self) -> &str {
        match self {
            Reply::Outcome { job_id, .. } | Reply::Progress { job_id, .. } => job_id,
        }
    }
}

/// The fields a reply may carry; unknown ones are ignored, so a later kit's extras do not break an
/// older worker.
#[derive(Deserialize)]
struct ReplyLine {
    #[serde(rename = "jobId")]
    job_id: Option<String>,
    outcome: Option<String>,
    result: Option<Value>,
    error: Option<String>,
    reason: Option<String>,
    delay: Option<Value>,
    progress: Option<f64>,
    message: Option<String>,
    spawn: Option<Vec<Value>>,
}

/// Reads one line of a program's stdout. The error says what is wrong with it, for the log line
/// and the error text of the jobs the broken program held.
pub(crate) fn parse_reply(line: &[u8]) -> Result<Reply, String> {
    let r: ReplyLine = serde_json::from_slice(line).map_err(|e| format!("not a JSON reply ({e})"))?;
    let job_id = match r.job_id {
        Some(id) if !id.is_empty() => id,
        _ => return Err("a reply without a jobId".into()),
    };
    let Some(word) = r.outcome else {
        let Some(percent) = r.progress.filter(|p| p.is_finite()) else {
            return Err(format!("a reply for {job_id} with neither an outcome nor progress"));
        };
        let progress = Progress {
            percent: percent.clamp(0.0, 100.0).round() as u8,
            message: r.message.filter(|m| !m.is_empty()),
        };
        return Ok(Reply::Progress { job_id, progress });
    };
    let delay = r
        .delay
        .as_ref()
        .map(delay_of)
        .transpose()
        .map_err(|e| format!("the {word} reply for {job_id}: {e}"))?;
    let said = |text: Option<String>, what: &str| text.filter(|t| !t.is_empty()).unwrap_or_else(|| what.to_string());
    let outcome = match word.as_str() {
        "success" => Outcome::Success {
            result: r.result.filter(|v| !v.is_null()),
        },
        "retry" => Outcome::Retry {
            error: said(r.error, "the handler answered retry"),
            retry_after: delay,
        },
        "fail" => Outcome::Fail {
            error: said(r.error, "the handler answered fail"),
        },
        "discard" => Outcome::Discard {
            reason: said(r.reason.or(r.error), "discarded by its handler"),
        },
        "wait" => Outcome::Wait,
        "snooze" => match delay {
            Some(delay) => Outcome::Snooze { delay },
            None => return Err(format!("the snooze reply for {job_id} needs a delay")),
        },
        "rate-limited" => Outcome::RateLimited { delay },
        "await-children" => Outcome::AwaitChildren,
        other => {
            return Err(format!(
                "the reply for {job_id} has an unknown outcome {other:?} (expected success, retry, fail, discard, wait, snooze, rate-limited or await-children)"
            ));
        }
    };
    Ok(Reply::Outcome {
        job_id,
        outcome,
        spawn: r.spawn.unwrap_or_default(),
    })
}

/// A delay as a program may write it: a duration string (`"30s"`, `"250ms"`) or a number of seconds.
fn delay_of(v: &Value) -> Result<Duration, String> {
    match v {
        Value::String(s) => crate::time::parse_duration(s),
        Value::Number(n) => n
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| format!("delay {n} is not a number of seconds")),
        other => Err(format!("delay {other} is neither a duration like \"30s\" nor seconds")),
    }
}

/// The line asking a program to stop working on `job_id`.
pub(crate) fn drop_line(job_id: &str, reason: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({ "drop": job_id, "reason": reason }))
        .expect("a map of two strings serializes");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(line: &str) -> Outcome {
        match parse_reply(line.as_bytes()) {
            Ok(Reply::Outcome { job_id, outcome, .. }) => {
                assert_eq!(job_id, "j1");
                outcome
            }
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_outcome_reads() {
        assert_eq!(outcome(r#"{"jobId":"j1","outcome":"success"}"#), Outcome::success());
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"success","result":{"n":[1,2]}}"#),
            Outcome::success_with(json!({"n": [1, 2]}))
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"success","result":null}"#),
            Outcome::success()
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"retry","error":"busy","delay":"30s"}"#),
            Outcome::retry_after("busy", Duration::from_secs(30))
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"retry","delay":1.5}"#),
            Outcome::retry_after("the handler answered retry", Duration::from_millis(1500))
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"fail","error":"bad input"}"#),
            Outcome::fail("bad input")
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"discard","reason":"stale"}"#),
            Outcome::discard("stale")
        );
        assert_eq!(outcome(r#"{"jobId":"j1","outcome":"wait"}"#), Outcome::Wait);
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"snooze","delay":"250ms"}"#),
            Outcome::snooze(Duration::from_millis(250))
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"rate-limited"}"#),
            Outcome::rate_limited(None)
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"rate-limited","delay":60,"extra":true}"#),
            Outcome::rate_limited(Some(Duration::from_secs(60)))
        );
        assert_eq!(
            outcome(r#"{"jobId":"j1","outcome":"await-children"}"#),
            Outcome::AwaitChildren
        );
    }

    #[test]
    fn spawned_children_come_with_the_outcome() {
        let line = br#"{"jobId":"j1","outcome":"await-children","spawn":[{"type":"t","key":"a"},{"type":"t"}]}"#;
        match parse_reply(line) {
            Ok(Reply::Outcome { spawn, .. }) => {
                assert_eq!(spawn, vec![json!({"type": "t", "key": "a"}), json!({"type": "t"})])
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_reply(br#"{"jobId":"j1","outcome":"success","spawn":{"type":"t"}}"#).is_err());
    }

    #[test]
    fn progress_reads_and_is_clamped() {
        assert_eq!(
            parse_reply(br#"{"jobId":"j1","progress":40,"message":"resizing"}"#),
            Ok(Reply::Progress {
                job_id: "j1".into(),
                progress: Progress {
                    percent: 40,
                    message: Some("resizing".into())
                }
            })
        );
        assert_eq!(
            parse_reply(br#"{"jobId":"j1","progress":250.4}"#),
            Ok(Reply::Progress {
                job_id: "j1".into(),
                progress: Progress {
                    percent: 100,
                    message: None
                }
            })
        );
    }

    #[test]
    fn broken_replies_say_what_is_wrong() {
        for (line, says) in [
            ("hello", "not a JSON reply"),
            ("[1,2]", "not a JSON reply"),
            (r#"{"outcome":"success"}"#, "without a jobId"),
            (r#"{"jobId":"","outcome":"success"}"#, "without a jobId"),
            (r#"{"jobId":"j1"}"#, "neither an outcome nor progress"),
            (r#"{"jobId":"j1","outcome":"done"}"#, "unknown outcome \"done\""),
            (r#"{"jobId":"j1","outcome":"snooze"}"#, "needs a delay"),
            (r#"{"jobId":"j1","outcome":"retry","delay":"soon"}"#, "invalid duration"),
            (
                r#"{"jobId":"j1","outcome":"retry","delay":-1}"#,
                "not a number of seconds",
            ),
            (r#"{"jobId":"j1","outcome":"retry","delay":[1]}"#, "neither a duration"),
        ] {
            let e = parse_reply(line.as_bytes()).expect_err(line);
            assert!(e.contains(says), "{line}: {e}");
        }
    }

    #[test]
    fn a_drop_is_one_json_line() {
        let line = drop_line("j\"1", "timed out after 30s");
        assert_eq!(line.last(), Some(&b'\n'));
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v, json!({"drop": "j\"1", "reason": "timed out after 30s"}));
    }
}
