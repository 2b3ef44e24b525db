//! The checks on facts built by hand: each finding appears exactly when its condition holds.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::doctor::Thresholds;
use crate::job::{JobError, JobId, JobStatus};
use crate::store::{Pause, QueueStats, WorkerInfo};
use crate::time::UnixMillis;

const NOW: UnixMillis = UnixMillis(1_700_000_000_000);

fn ago(secs: u64) -> UnixMillis {
    NOW.minus(Duration::from_secs(secs))
}

fn doctor() -> Doctor {
    Doctor {
        stale_after: Duration::from_secs(60),
        worker_seen_within: Duration::from_secs(60),
        wait_timeouts: BTreeMap::from([("mail.send".to_string(), Duration::from_secs(600))]),
        fallback_wait_timeout: None,
        thresholds: Thresholds::default(),
    }
}

fn job(id: &str, queue: &str, status: JobStatus) -> Job {
    let mut job = crate::job::test_job("mail.send", "{}");
    job.id = JobId::from_stored(id.into());
    job.queue = queue.into();
    job.status = status;
    job
}

fn worker(queues: &[&str]) -> WorkerInfo {
    WorkerInfo {
        id: "w-1".into(),
        name: "w".into(),
        host: "h".into(),
        pid: 1,
        queues: queues.iter().map(|q| q.to_string()).collect(),
        started_at: ago(3600),
        last_seen_at: NOW,
        jobs_done: 0,
        bridge: None,
    }
}

fn facts() -> Facts {
    Facts {
        now: NOW,
        ..Facts::default()
    }
}

fn codes(facts: &Facts) -> Vec<&'static str> {
    findings(facts, &doctor()).iter().map(|f| f.code).collect()
}

#[test]
fn nothing_to_say_about_an_empty_store() {
    assert!(findings(&facts(), &doctor()).is_empty());
}

#[test]
fn running_jobs_past_stale_after_and_a_sweep_are_stuck() {
    let mut f = facts();
    let mut fresh = job("a", "default", JobStatus::Running);
    fresh.heartbeat_at = Some(ago(61));
    let mut stale = job("b", "default", JobStatus::Running);
    stale.heartbeat_at = Some(ago(60 + 30 + 1));
    f.running = vec![fresh, stale];
    let found = findings(&f, &doctor());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, "stuck-running");
    assert_eq!(found[0].severity, Severity::Error);
    assert_eq!(found[0].ids, ["b"]);
    assert!(found[0].message.contains("no worker is alive"), "{}", found[0].message);
    f.workers = vec![worker(&["default"])];
    let found = findings(&f, &doctor());
    assert_eq!(
        found[0].message,
        "1 running job has had no heartbeat for over 1m, and the 1 worker alive has not rescued it"
    );
}

#[test]
fn waiting_jobs_past_their_types_timeout_are_overdue() {
    let mut f = facts();
    let mut overdue = job("w1", "mail", JobStatus::Waiting);
    overdue.finished_at = Some(ago(600 + 30 + 1));
    let mut in_time = job("w2", "mail", JobStatus::Waiting);
    in_time.finished_at = Some(ago(300));
    let mut untimed = job("w3", "mail", JobStatus::Waiting);
    untimed.job_type = "report.build".into();
    untimed.finished_at = Some(ago(100_000));
    f.waiting = vec![overdue, in_time, untimed];
    let found = findings(&f, &doctor());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].code, found[0].count), ("waiting-overdue", Some(1)));
    assert_eq!(found[0].queue.as_deref(), Some("mail"));
    assert_eq!(found[0].ids, ["w1"]);
}

fn queue(name: &str) -> QueueStats {
    QueueStats {
        queue: name.into(),
        ..QueueStats::default()
    }
}

#[test]
fn old_ready_jobs_are_late_only_while_none_of_the_queue_runs() {
    let mut f = facts();
    let mut q = queue("default");
    q.ready = 3;
    q.oldest_ready_at = Some(ago(301));
    f.queues = vec![q.clone()];
    let found = findings(&f, &doctor());
    assert_eq!((found[0].code, found[0].severity), ("ready-late", Severity::Error));
    f.workers = vec![worker(&["default"])];
    let found = findings(&f, &doctor());
    assert_eq!((found[0].code, found[0].severity), ("ready-late", Severity::Warning));
    q.running = 1;
    f.queues = vec![q.clone()];
    assert!(codes(&f).is_empty(), "busy workers are not idle");
    q.running = 0;
    q.oldest_ready_at = Some(ago(299));
    f.queues = vec![q];
    assert!(codes(&f).is_empty(), "not late yet");
}

#[test]
fn a_paused_queue_is_reported_once_paused_for_a_day_and_not_as_late() {
    let mut f = facts();
    let mut q = queue("mail");
    q.ready = 3;
    q.oldest_ready_at = Some(ago(100_000));
    f.queues = vec![q];
    f.pauses = vec![
        Pause {
            queue: "mail".into(),
            job_type: None,
            since: ago(2 * 86_400),
        },
        Pause {
            queue: "default".into(),
            job_type: Some("x".into()),
            since: ago(3600),
        },
    ];
    let found = findings(&f, &doctor());
    assert_eq!(codes(&f), ["paused-long"]);
    assert!(
        found[0].message.starts_with("queue mail has been paused for 2d"),
        "{}",
        found[0].message
    );
    assert_eq!(
        found[0].advice,
        "if the reason for the pause is gone, resume it: jobq resume mail"
    );
}

#[test]
fn jobs_rescued_more_than_the_threshold_are_named() {
    let mut f = facts();
    let mut lost = job("r1", "default", JobStatus::Pending);
    lost.errors = (1..=3)
        .map(|attempt| JobError {
            attempt,
            at: ago(10),
            error: "worker lost".into(),
        })
        .collect();
    let mut twice = lost.clone();
    twice.id = JobId::from_stored("r2".into());
    twice.errors.pop();
    f.often_rescued = vec![lost, twice];
    let found = findings(&f, &doctor());
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].code, found[0].count), ("often-rescued", Some(1)));
    assert_eq!(found[0].ids, ["r1"]);
}

#[test]
fn dead_letters_count_from_the_threshold_on() {
    let mut f = facts();
    let mut q = queue("default");
    q.dead = 99;
    f.queues = vec![q.clone()];
    assert!(codes(&f).is_empty());
    q.dead = 100;
    f.queues = vec![q];
    assert_eq!(codes(&f), ["dead-letters"]);
}

#[test]
fn errors_come_before_warnings_and_store_findings_are_kept() {
    let mut f = facts();
    let mut q = queue("default");
    q.dead = 500;
    f.queues = vec![q];
    f.store = vec![Finding::new(
        "redis-no-persistence",
        Severity::Error,
        "m".into(),
        "a".into(),
    )];
    assert_eq!(codes(&f), ["redis-no-persistence", "dead-letters"]);
}

#[test]
fn a_stranded_blocked_job_is_an_error_naming_it() {
    let mut f = facts();
    assert!(codes(&f).is_empty());
    f.stranded = vec![JobId::from_stored("b1".into()), JobId::from_stored("b2".into())];
    let found = findings(&f, &doctor());
    assert_eq!(found.len(), 1);
    let finding = &found[0];
    assert_eq!(
        (finding.code, finding.severity, finding.count),
        ("stranded-blocked", Severity::Error, Some(2))
    );
    assert_eq!(finding.ids, ["b1", "b2"]);
    assert!(
        finding.message.starts_with("2 jobs are blocked although"),
        "{}",
        finding.message
    );
}
