//! Resolve: a waiting job finished from outside (succeed, fail, retry, discard); only a job that is
//! waiting at that moment changes, one of two racing resolves wins, and answers come per input.

use futures_util::future::join_all;
use jobq::job::{ERROR_HISTORY_CAP, Job, JobSpec, JobStatus};
use jobq::store::{DynStore, Lease, Resolution, Resolve, ResolveAnswer, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

fn resolve_as(name: &str, action: Resolution) -> Resolve {
    Resolve {
        id: id(name),
        attempt: None,
        action,
    }
}

/// Resolves one job at `now`; returns the answer.
async fn resolve(store: &DynStore, name: &str, action: Resolution, now: UnixMillis) -> ResolveAnswer {
    let answers = store.resolve(&[resolve_as(name, action)], now).await.expect("resolve");
    assert_eq!(answers.len(), 1);
    answers[0]
}

fn resolved(status: JobStatus) -> ResolveAnswer {
    ResolveAnswer::Resolved { status }
}

fn fail(error: &str) -> Resolution {
    Resolution::Fail { error: error.into() }
}

/// A job parked as waiting at `T0`, after its first attempt.
async fn waiting(store: &DynStore, spec: JobSpec) -> Job {
    let job = make(store, spec, JobStatus::Waiting, T0).await;
    assert_eq!((job.attempt, job.finished_at), (1, Some(T0)));
    job
}

pub(super) async fn resolve_finishes_a_waiting_job_each_way(store: &DynStore) {
    for name in ["ok", "bad", "dropped", "later", "again"] {
        waiting(store, spec(name).queue(name)).await;
    }
    let result = Some(raw(r#"{"charge":"ch_1"}"#));
    assert_eq!(
        resolve(store, "ok", Resolution::Succeed { result }, at(100)).await,
        resolved(JobStatus::Succeeded)
    );
    let job = get(store, &id("ok")).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Succeeded, Some(at(100))));
    assert_eq!(
        job.result.as_deref().map(value),
        Some(serde_json::json!({"charge": "ch_1"}))
    );
    assert!(job.errors.is_empty() && job.worker_id.is_none());

    assert_eq!(
        resolve(store, "bad", fail("card declined"), at(200)).await,
        resolved(JobStatus::Dead)
    );
    let job = get(store, &id("bad")).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Dead, Some(at(200))));
    let errors: Vec<(u32, UnixMillis, &str)> = job.errors.iter().map(|e| (e.attempt, e.at, e.error.as_str())).collect();
    assert_eq!(errors, [(1, at(200), "card declined")]);

    let discard = Resolution::Discard {
        reason: "order withdrawn".into(),
    };
    assert_eq!(
        resolve(store, "dropped", discard, at(300)).await,
        resolved(JobStatus::Discarded)
    );
    let job = get(store, &id("dropped")).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Discarded, Some(at(300))));
    assert_eq!(job.errors.last().map(|e| e.error.as_str()), Some("order withdrawn"));

    // A retry with a delay and an error: pending at its run time, attempt unchanged, not finished.
    let later = Resolution::Retry {
        run_at: at(10_000),
        error: Some("provider busy".into()),
    };
    assert_eq!(
        resolve(store, "later", later, at(400)).await,
        resolved(JobStatus::Pending)
    );
    let job = get(store, &id("later")).await;
    assert_eq!(
        (job.status, job.attempt, job.run_at, job.finished_at),
        (JobStatus::Pending, 1, at(10_000), None)
    );
    assert_eq!(
        job.errors.last().map(|e| (e.attempt, e.error.as_str())),
        Some((1, "provider busy"))
    );
    assert!(claim(store, "later", WORKER, 1, at(9_999)).await.is_empty());
    assert_eq!(claim_one(store, "later", WORKER, at(10_000)).await.attempt, 2);

    // A retry without either: runnable at once, no error recorded.
    let now = Resolution::Retry {
        run_at: at(500),
        error: None,
    };
    assert_eq!(
        resolve(store, "again", now, at(500)).await,
        resolved(JobStatus::Pending)
    );
    let job = get(store, &id("again")).await;
    assert_eq!(
        (job.status, job.run_at, job.errors.len()),
        (JobStatus::Pending, at(500), 0)
    );
    assert_eq!(claim_one(store, "again", WORKER, at(500)).await.attempt, 2);
}

pub(super) async fn resolve_answers_not_waiting_and_changes_nothing(store: &DynStore) {
    let mut before = Vec::new();
    for (n, status) in [
        JobStatus::Running,
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
    ]
    .into_iter()
    .enumerate()
    {
        let name = status.as_str();
        before.push(make(store, spec(name).queue(name), status, at(n as i64)).await);
    }
    before.push(make(store, spec("pending"), JobStatus::Pending, T0).await);
    let mut names: Vec<String> = before.iter().map(|j| j.id.to_string()).collect();
    names.push("no-such-job".into());
    let resolves: Vec<Resolve> = names
        .iter()
        .map(|n| resolve_as(n, Resolution::Succeed { result: None }))
        .collect();
    let answers = store.resolve(&resolves, at(900)).await.expect("resolve");
    let mut expected: Vec<ResolveAnswer> = before
        .iter()
        .map(|j| ResolveAnswer::NotWaiting { status: j.status })
        .collect();
    expected.push(ResolveAnswer::NotFound);
    assert_eq!(answers, expected);
    for job in before {
        let now = get(store, &job.id).await;
        assert_eq!(
            (now.status, now.finished_at, now.errors.len(), now.result.is_some()),
            (job.status, job.finished_at, job.errors.len(), job.result.is_some()),
            "{}",
            job.id
        );
    }
    assert!(store.resolve(&[], at(900)).await.expect("an empty resolve").is_empty());
}

pub(super) async fn resolve_answers_each_input_in_order_as_if_one_after_another(store: &DynStore) {
    waiting(store, spec("w")).await;
    let resolves = [
        resolve_as("w", fail("first")),
        resolve_as("nope", fail("x")),
        resolve_as("w", Resolution::Succeed { result: None }),
    ];
    let answers = store.resolve(&resolves, at(10)).await.expect("resolve");
    assert_eq!(
        answers,
        [
            resolved(JobStatus::Dead),
            ResolveAnswer::NotFound,
            ResolveAnswer::NotWaiting {
                status: JobStatus::Dead
            }
        ]
    );
    let job = get(store, &id("w")).await;
    assert_eq!((job.status, job.errors.len()), (JobStatus::Dead, 1));
}

pub(super) async fn resolve_with_an_attempt_applies_only_to_that_attempt(store: &DynStore) {
    waiting(store, spec("w")).await;
    let stale = Resolve {
        id: id("w"),
        attempt: Some(2),
        action: fail("timed out"),
    };
    assert_eq!(
        store.resolve(&[stale], at(10)).await.expect("resolve"),
        [ResolveAnswer::NotWaiting {
            status: JobStatus::Waiting
        }]
    );
    assert_eq!(get(store, &id("w")).await.status, JobStatus::Waiting);
    let current = Resolve {
        id: id("w"),
        attempt: Some(1),
        action: fail("timed out"),
    };
    assert_eq!(
        store.resolve(&[current], at(20)).await.expect("resolve"),
        [resolved(JobStatus::Dead)]
    );
}

pub(super) async fn resolve_racing_resolves_of_one_job_apply_once(store: &DynStore) {
    waiting(store, spec("w")).await;
    let actions: Vec<Resolution> = (0..8)
        .map(|n| match n % 3 {
            0 => Resolution::Succeed {
                result: Some(raw(&n.to_string())),
            },
            1 => fail(&format!("failed by {n}")),
            _ => Resolution::Retry {
                run_at: at(5_000),
                error: Some(format!("retried by {n}")),
            },
        })
        .collect();
    let racers = actions.iter().map(|action| {
        let r = resolve_as("w", action.clone());
        async move { store.resolve(std::slice::from_ref(&r), at(100)).await }
    });
    let answers: Vec<ResolveAnswer> = join_all(racers)
        .await
        .into_iter()
        .map(|a| a.expect("resolve")[0])
        .collect();
    let winners: Vec<usize> = (0..answers.len())
        .filter(|&n| matches!(answers[n], ResolveAnswer::Resolved { .. }))
        .collect();
    assert_eq!(winners.len(), 1, "one resolve applies: {answers:?}");
    let winner = &actions[winners[0]];
    let job = get(store, &id("w")).await;
    assert_eq!(job.status, winner.status());
    assert_eq!(answers[winners[0]], resolved(winner.status()));
    for (n, answer) in answers.iter().enumerate() {
        if n != winners[0] {
            assert_eq!(
                *answer,
                ResolveAnswer::NotWaiting {
                    status: winner.status()
                }
            );
        }
    }
    assert_eq!(job.errors.len(), usize::from(winner.error().is_some()));
}

pub(super) async fn resolve_frees_the_unique_key_of_a_finished_job_and_keeps_a_retried_ones(store: &DynStore) {
    waiting(store, spec("a").queue("a").unique_key("k")).await;
    waiting(store, spec("b").queue("b").unique_key("k")).await;
    assert_eq!(
        enqueue(
            store,
            [
                spec("a2").queue("a").unique_key("k"),
                spec("b2").queue("b").unique_key("k")
            ]
        )
        .await,
        [coalesced("a"), coalesced("b")],
        "a waiting job holds its key"
    );
    resolve(store, "a", Resolution::Succeed { result: None }, at(10)).await;
    let retry = Resolution::Retry {
        run_at: at(10),
        error: None,
    };
    resolve(store, "b", retry, at(10)).await;
    assert_eq!(
        enqueue(
            store,
            [
                spec("a3").queue("a").unique_key("k"),
                spec("b3").queue("b").unique_key("k")
            ]
        )
        .await,
        [created("a3"), coalesced("b")]
    );
}

pub(super) async fn resolve_keeps_the_error_history_capped(store: &DynStore) {
    add(store, spec("j").max_attempts(100)).await;
    let cap = ERROR_HISTORY_CAP as i64;
    for n in 0..cap {
        let job = claim_one(store, "default", WORKER, at(n)).await;
        assert!(finish(store, &Lease::of(&job), retry(&format!("e{n}"), at(n)), at(n)).await);
    }
    let job = claim_one(store, "default", WORKER, at(cap)).await;
    assert!(finish(store, &Lease::of(&job), Transition::Waiting, at(cap)).await);
    resolve(store, "j", fail("last"), at(cap + 1)).await;
    let job = get(store, &id("j")).await;
    assert_eq!(job.errors.len(), ERROR_HISTORY_CAP);
    assert_eq!(job.errors.first().map(|e| e.error.as_str()), Some("e1"));
    assert_eq!(
        job.errors.last().map(|e| (e.attempt, e.error.as_str())),
        Some((cap as u32 + 1, "last"))
    );
}
