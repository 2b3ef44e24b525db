//! Retry: any finished job (succeeded, dead, cancelled, discarded) back to pending, attempts reset and
//! errors kept; live jobs and jobs whose unique key a live job holds are left as they are.

use jobq::job::{JobId, JobStatus, Progress};
use jobq::store::{DynStore, Finish, Lease, Retry, RetryAnswer, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

async fn retry_ids(store: &DynStore, names: &[&str], now: UnixMillis) -> Vec<RetryAnswer> {
    let retry = Retry {
        ids: names.iter().map(|n| id(n)).collect(),
        now,
    };
    store.retry(&retry).await.expect("retry")
}

/// What an answer says, comparable: the retried job's id, status and attempt; the others as they are.
fn said(answer: &RetryAnswer) -> String {
    match answer {
        RetryAnswer::Retried(job) => format!("retried {} {} {}", job.id, job.status, job.attempt),
        RetryAnswer::NotTerminal { status } => format!("not terminal: {status}"),
        RetryAnswer::KeyTaken { holder } => format!("key taken by {holder}"),
        RetryAnswer::NotFound => "not found".into(),
        other => format!("{other:?}"),
    }
}

pub(super) async fn retry_puts_every_finished_status_back_to_pending(store: &DynStore) {
    // Succeeded with a result and progress, after a failed first attempt: everything of its last run goes.
    add(store, spec("succeeded").queue("succeeded")).await;
    let first = claim_one(store, "succeeded", WORKER, T0).await;
    assert!(finish(store, &Lease::of(&first), retry("flaky", T0), T0).await);
    let second = claim_one(store, "succeeded", WORKER, at(1)).await;
    let done = Finish {
        lease: Lease::of(&second),
        outcome: Transition::Succeeded {
            result: Some(raw("42")),
        },
        progress: Some(Progress {
            percent: 100,
            message: Some("done".into()),
        }),
        spawn: Vec::new(),
    };
    assert_eq!(store.finish(&[done], at(2)).await.expect("finish"), [true]);
    for (n, status) in [JobStatus::Dead, JobStatus::Cancelled, JobStatus::Discarded]
        .into_iter()
        .enumerate()
    {
        let name = status.as_str();
        make(store, spec(name).queue(name), status, at(n as i64)).await;
    }
    let names = ["succeeded", "dead", "cancelled", "discarded"];
    let answers = retry_ids(store, &names, at(1_000)).await;
    let said: Vec<String> = answers.iter().map(said).collect();
    let expected: Vec<String> = names.iter().map(|n| format!("retried {n} pending 0")).collect();
    assert_eq!(said, expected);
    for (name, answer) in names.iter().zip(&answers) {
        let job = get(store, &id(name)).await;
        assert_eq!(
            (job.status, job.attempt, job.run_at),
            (JobStatus::Pending, 0, at(1_000)),
            "{name}"
        );
        assert_eq!(
            (job.started_at, job.finished_at, job.heartbeat_at),
            (None, None, None),
            "{name}"
        );
        assert!(
            job.result.is_none() && job.worker_id.is_none() && job.progress.is_none(),
            "{name}"
        );
        let RetryAnswer::Retried(answered) = answer else {
            unreachable!()
        };
        assert_eq!(
            serde_json::to_value(&**answered).unwrap(),
            serde_json::to_value(&job).unwrap(),
            "{name}"
        );
    }
    let errors: Vec<String> = get(store, &id("succeeded"))
        .await
        .errors
        .into_iter()
        .map(|e| e.error)
        .collect();
    assert_eq!(errors, ["flaky"], "the error history is kept");
    assert_eq!(get(store, &id("dead")).await.errors.len(), 1);
    assert!(claim(store, "dead", WORKER, 1, at(999)).await.is_empty());
    let again = claim_one(store, "dead", WORKER, at(1_000)).await;
    assert_eq!((again.attempt, again.status), (1, JobStatus::Running));
    assert_eq!(claim(store, "succeeded", WORKER, 1, at(1_000)).await.len(), 1);
}

pub(super) async fn retry_leaves_live_and_unknown_jobs_as_they_are(store: &DynStore) {
    let running = make(store, spec("running").queue("running"), JobStatus::Running, T0).await;
    make(store, spec("waiting").queue("waiting"), JobStatus::Waiting, T0).await;
    make(store, spec("dead").queue("dead"), JobStatus::Dead, T0).await;
    add(store, spec("pending")).await;
    let answers = retry_ids(
        store,
        &["pending", "running", "waiting", "nope", "dead", "dead"],
        at(10),
    )
    .await;
    let said: Vec<String> = answers.iter().map(said).collect();
    assert_eq!(
        said,
        [
            "not terminal: pending",
            "not terminal: running",
            "not terminal: waiting",
            "not found",
            "retried dead pending 0",
            "not terminal: pending"
        ]
    );
    let job = get(store, &id("running")).await;
    assert_eq!(
        (job.status, job.attempt, job.worker_id),
        (JobStatus::Running, 1, running.worker_id)
    );
    assert_eq!(get(store, &id("waiting")).await.status, JobStatus::Waiting);
    assert!(retry_ids(store, &[], at(10)).await.is_empty());
}

pub(super) async fn retry_leaves_a_job_whose_unique_key_a_live_job_holds(store: &DynStore) {
    // Two dead jobs that held one key in turn, and a third in another queue.
    make(store, spec("first").queue("q").unique_key("k"), JobStatus::Dead, T0).await;
    make(store, spec("second").queue("q").unique_key("k"), JobStatus::Dead, at(1)).await;
    make(
        store,
        spec("elsewhere").queue("other").unique_key("k"),
        JobStatus::Dead,
        at(2),
    )
    .await;
    let answers = retry_ids(store, &["first", "second", "elsewhere"], at(10)).await;
    let said: Vec<String> = answers.iter().map(said).collect();
    assert_eq!(
        said,
        [
            "retried first pending 0",
            "key taken by first",
            "retried elsewhere pending 0"
        ]
    );
    assert_eq!(get(store, &id("second")).await.status, JobStatus::Dead);
    // The retried job holds the key again.
    assert_eq!(
        enqueue(store, [spec("third").queue("q").unique_key("k")]).await,
        [coalesced("first")]
    );
    // A new live job holding it keeps a finished one from coming back.
    make(
        store,
        spec("second-b").queue("b").unique_key("k2"),
        JobStatus::Succeeded,
        at(20),
    )
    .await;
    add(store, spec("holder").queue("b").unique_key("k2")).await;
    let answers = retry_ids(store, &["second-b"], at(30)).await;
    assert!(
        matches!(&answers[..], [RetryAnswer::KeyTaken { holder }] if *holder == JobId::parse("holder").unwrap()),
        "{answers:?}"
    );
    assert_eq!(get(store, &id("second-b")).await.status, JobStatus::Succeeded);
}
