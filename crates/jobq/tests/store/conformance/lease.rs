//! The lease: heartbeats, finishing an attempt with each outcome, releasing, and the fence that makes a
//! late answer from an old attempt or another worker change nothing.

use jobq::job::{ERROR_HISTORY_CAP, Job, JobError, JobStatus, Progress};
use jobq::store::{Cancel, CancelTarget, DynStore, Finish, Heartbeat, Lease, LeaseState, Rescue, Transition};
use serde_json::json;

use crate::support::jobs::*;

/// Claims `name` (in a queue of its own) as [`WORKER`] at `T0`, has the job rescued, and claims it
/// again as `again` at `at(20)`: returns the leases of the lost first attempt and of the current one.
async fn lost_and_current(store: &DynStore, name: &str, again: &str) -> (Lease, Lease) {
    let queue = format!("q-{name}");
    add(store, spec(name).queue(&queue)).await;
    let first = claim_one(store, &queue, WORKER, T0).await;
    let rescue = Rescue {
        stale_before: at(10),
        now: at(20),
        limit: 100,
    };
    assert_eq!(store.rescue(&rescue).await.expect("rescue").len(), 1);
    let second = claim_one(store, &queue, again, at(20)).await;
    assert_eq!(second.attempt, 2);
    (Lease::of(&first), Lease::of(&second))
}

pub(super) async fn heartbeat_records_time_and_progress(store: &DynStore) {
    add(store, spec("j")).await;
    let lease = Lease::of(&claim_one(store, "default", WORKER, T0).await);
    let progress = Progress {
        percent: 40,
        message: Some("resizing 3/8".into()),
    };
    let beat = Heartbeat {
        lease: lease.clone(),
        progress: Some(progress.clone()),
    };
    assert_eq!(
        store.heartbeat(&[beat], at(10)).await.expect("heartbeat"),
        [LeaseState::Held]
    );
    let job = get(store, &lease.id).await;
    assert_eq!((job.heartbeat_at, job.progress), (Some(at(10)), Some(progress.clone())));

    // A beat without progress keeps the last one.
    assert_eq!(beat_once(store, &lease, None, at(20)).await, LeaseState::Held);
    let job = get(store, &lease.id).await;
    assert_eq!((job.heartbeat_at, job.progress), (Some(at(20)), Some(progress)));

    // New progress replaces the old, message included.
    let bare = Progress {
        percent: 60,
        message: None,
    };
    assert_eq!(
        beat_once(store, &lease, Some(bare.clone()), at(30)).await,
        LeaseState::Held
    );
    let job = get(store, &lease.id).await;
    assert_eq!((job.heartbeat_at, job.progress), (Some(at(30)), Some(bare)));
    assert_eq!(
        (job.status, job.attempt, job.started_at),
        (JobStatus::Running, 1, Some(T0))
    );
}

async fn beat_once(store: &DynStore, lease: &Lease, progress: Option<Progress>, now: jobq::UnixMillis) -> LeaseState {
    let answers = store
        .heartbeat(
            &[Heartbeat {
                lease: lease.clone(),
                progress,
            }],
            now,
        )
        .await
        .expect("heartbeat");
    answers[0]
}

pub(super) async fn heartbeat_reports_cancelled(store: &DynStore) {
    add(store, spec("j")).await;
    let lease = Lease::of(&claim_one(store, "default", WORKER, T0).await);
    store
        .cancel(&Cancel {
            target: CancelTarget::Ids(vec![lease.id.clone()]),
            now: at(5),
        })
        .await
        .expect("cancel");
    assert_eq!(beat(store, &lease, at(10)).await, LeaseState::Cancelled);
    let job = get(store, &lease.id).await;
    assert_eq!((job.status, job.heartbeat_at), (JobStatus::Cancelled, Some(T0)));
}

pub(super) async fn heartbeat_reports_lost(store: &DynStore) {
    add_all(store, ["a", "b", "c", "d", "e"].map(spec)).await;
    let jobs = claim(store, "default", WORKER, 5, T0).await;
    let [a, b, c, d, e] = [0, 1, 2, 3, 4].map(|i| Lease::of(&jobs[i]));
    assert_eq!(
        store
            .heartbeat(
                &[a.clone(), b.clone()].map(|lease| Heartbeat { lease, progress: None }),
                at(50)
            )
            .await
            .expect("heartbeat"),
        [LeaseState::Held, LeaseState::Held]
    );
    // c is released, d rescued (its heartbeat is stale), e finished.
    assert!(release(store, &c).await);
    assert!(finish(store, &e, Transition::Succeeded { result: None }, at(55)).await);
    let rescued = rescue_stale(store, at(10), at(60), 100).await;
    assert_eq!(rescued.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(), ["d"]);

    let wrong_attempt = Lease {
        attempt: 2,
        ..a.clone()
    };
    let wrong_worker = Lease {
        worker: "someone-else".into(),
        ..b.clone()
    };
    let unknown = Lease {
        id: id("ghost"),
        ..a.clone()
    };
    let beats = [wrong_attempt, wrong_worker, c, d, e, unknown].map(|lease| Heartbeat { lease, progress: None });
    assert_eq!(
        store.heartbeat(&beats, at(70)).await.expect("heartbeat"),
        [LeaseState::Lost; 6]
    );

    // Beats under a wrong lease touched nothing; the real leases still hold.
    assert_eq!(get(store, &a.id).await.heartbeat_at, Some(at(50)));
    assert_eq!(get(store, &b.id).await.heartbeat_at, Some(at(50)));
    assert_eq!(beat(store, &a, at(80)).await, LeaseState::Held);
    assert_eq!(beat(store, &b, at(80)).await, LeaseState::Held);
}

pub(super) async fn finish_applies_only_to_current_lease(store: &DynStore) {
    let (lost, current) = lost_and_current(store, "j", "worker-2").await;
    assert!(!finish(store, &lost, Transition::Succeeded { result: Some(raw("1")) }, at(30)).await);
    let other_worker = Lease {
        worker: lost.worker.clone(),
        ..current.clone()
    };
    assert!(!finish(store, &other_worker, Transition::Dead { error: "late".into() }, at(30)).await);
    let ghost = Lease {
        id: id("ghost"),
        ..current.clone()
    };
    assert!(!finish(store, &ghost, Transition::Succeeded { result: None }, at(30)).await);

    let job = get(store, &current.id).await;
    assert_eq!(
        (job.status, job.attempt, job.worker_id.as_deref()),
        (JobStatus::Running, 2, Some("worker-2"))
    );
    assert!(job.result.is_none() && job.finished_at.is_none());
    assert_eq!(
        job.errors.iter().map(|e| e.error.as_str()).collect::<Vec<_>>(),
        ["worker lost"]
    );

    // The current lease applies, once.
    assert!(finish(store, &current, Transition::Succeeded { result: None }, at(40)).await);
    assert!(!finish(store, &current, Transition::Dead { error: "twice".into() }, at(50)).await);
    let job = get(store, &current.id).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Succeeded, Some(at(40))));
}

pub(super) async fn finish_succeeded_records_result(store: &DynStore) {
    add_all(store, [spec("with-result"), spec("without")]).await;
    let jobs = claim(store, "default", WORKER, 2, T0).await;
    let answers = store
        .finish(
            &[
                Finish {
                    progress: None,
                    lease: Lease::of(&jobs[0]),
                    outcome: Transition::Succeeded {
                        result: Some(raw(r#"{"ok": true, "n": [1, 2]}"#)),
                    },
                    spawn: Vec::new(),
                },
                Finish {
                    progress: None,
                    lease: Lease::of(&jobs[1]),
                    outcome: Transition::Succeeded { result: None },
                    spawn: Vec::new(),
                },
            ],
            at(50),
        )
        .await
        .expect("finish");
    assert_eq!(answers, [true, true]);

    let job = get(store, &id("with-result")).await;
    assert_eq!(job.status, JobStatus::Succeeded);
    assert_eq!(job.result.as_deref().map(value), Some(json!({"ok": true, "n": [1, 2]})));
    assert_eq!(
        (job.finished_at, job.attempt, job.started_at),
        (Some(at(50)), 1, Some(T0))
    );
    assert!(job.worker_id.is_none() && job.errors.is_empty());
    let job = get(store, &id("without")).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Succeeded, Some(at(50))));
    assert!(job.result.is_none());
}

pub(super) async fn finish_records_progress_reported_with_it(store: &DynStore) {
    add_all(store, [spec("quick"), spec("beaten")]).await;
    let leases: Vec<Lease> = claim(store, "default", WORKER, 2, T0)
        .await
        .iter()
        .map(Lease::of)
        .collect();
    let lease = |name: &str| leases.iter().find(|l| l.id.as_str() == name).expect("claimed").clone();
    let (quick, beaten) = (lease("quick"), lease("beaten"));
    let reported = Progress {
        percent: 50,
        message: Some("halfway".into()),
    };
    assert_eq!(
        beat_once(store, &beaten, Some(reported.clone()), at(5)).await,
        LeaseState::Held
    );
    let last = Progress {
        percent: 90,
        message: None,
    };
    let finishes = [
        // A job quicker than a heartbeat reports its progress with its outcome.
        Finish {
            lease: quick.clone(),
            outcome: Transition::Succeeded { result: None },
            progress: Some(last.clone()),
            spawn: Vec::new(),
        },
        // No new progress keeps what the last heartbeat recorded.
        Finish {
            lease: beaten.clone(),
            outcome: Transition::Succeeded { result: None },
            progress: None,
            spawn: Vec::new(),
        },
    ];
    assert_eq!(store.finish(&finishes, at(10)).await.expect("finish"), [true, true]);
    assert_eq!(get(store, &quick.id).await.progress, Some(last));
    assert_eq!(get(store, &beaten.id).await.progress, Some(reported));
}

/// Enqueues a job `j`, claims it at `T0` and finishes its attempt with `outcome` at `at(100)`; returns
/// the job as stored then.
async fn finish_the_first_attempt(store: &DynStore, outcome: Transition) -> Job {
    add(store, spec("j")).await;
    let lease = Lease::of(&claim_one(store, "default", WORKER, T0).await);
    assert!(finish(store, &lease, outcome, at(100)).await);
    get(store, &lease.id).await
}

/// The error history of a job whose first attempt ended at `at(100)` with `error`.
fn first_attempt_error(error: &str) -> [JobError; 1] {
    [JobError {
        attempt: 1,
        at: at(100),
        error: error.into(),
    }]
}

pub(super) async fn finish_retry_schedules_pending_with_error(store: &DynStore) {
    let job = finish_the_first_attempt(store, retry("smtp timed out", at(30_000))).await;
    assert_eq!(job.status, JobStatus::Pending);
    assert_eq!(job.run_at, at(30_000));
    assert_eq!(
        job.attempt, 1,
        "a retry keeps the attempt count; the next claim raises it"
    );
    assert_eq!(job.errors, first_attempt_error("smtp timed out"));
    assert!(job.worker_id.is_none() && job.finished_at.is_none() && job.result.is_none());
}

pub(super) async fn finish_dead_records_error(store: &DynStore) {
    let dead = Transition::Dead {
        error: "bad input".into(),
    };
    let job = finish_the_first_attempt(store, dead).await;
    assert_eq!(
        (job.status, job.finished_at, job.attempt),
        (JobStatus::Dead, Some(at(100)), 1)
    );
    assert_eq!(job.errors, first_attempt_error("bad input"));
    assert!(job.worker_id.is_none());
    assert!(claim(store, "default", WORKER, 10, at(1_000_000)).await.is_empty());
}

pub(super) async fn finish_discarded_records_reason(store: &DynStore) {
    let discarded = Transition::Discarded {
        reason: "order was refunded".into(),
    };
    let job = finish_the_first_attempt(store, discarded).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Discarded, Some(at(100))));
    assert_eq!(job.errors, first_attempt_error("order was refunded"));
    assert!(job.worker_id.is_none());
    assert!(claim(store, "default", WORKER, 10, at(1_000_000)).await.is_empty());
}

pub(super) async fn finish_waiting_parks_the_job(store: &DynStore) {
    add(store, spec("j")).await;
    let lease = Lease::of(&claim_one(store, "default", WORKER, T0).await);
    assert!(finish(store, &lease, Transition::Waiting, at(100)).await);
    let job = get(store, &lease.id).await;
    assert_eq!(job.status, JobStatus::Waiting);
    assert_eq!(
        job.finished_at,
        Some(at(100)),
        "waiting sets finished_at, like the terminal outcomes"
    );
    assert!(job.worker_id.is_none() && job.errors.is_empty());
    assert!(claim(store, "default", WORKER, 10, at(1_000_000)).await.is_empty());
    assert_eq!(beat(store, &lease, at(110)).await, LeaseState::Lost);
}

pub(super) async fn retried_job_is_claimable_at_its_run_at_with_the_next_attempt(store: &DynStore) {
    add(store, spec("j").max_attempts(5)).await;
    let first = claim_one(store, "default", WORKER, T0).await;
    assert!(finish(store, &Lease::of(&first), retry("first", at(30_000)), at(100)).await);

    assert!(claim(store, "default", WORKER, 10, at(29_999)).await.is_empty());
    let queues = stats(store, &[], at(29_999)).await;
    assert_eq!((queues[0].ready, queues[0].scheduled), (0, 1));

    let second = claim_one(store, "default", WORKER, at(30_000)).await;
    assert_eq!((second.id.as_str(), second.attempt), ("j", 2));
    assert!(finish(store, &Lease::of(&second), retry("second", at(90_000)), at(30_100)).await);
    let third = claim_one(store, "default", WORKER, at(90_000)).await;
    assert_eq!(third.attempt, 3);
    let attempts: Vec<u32> = third.errors.iter().map(|e| e.attempt).collect();
    assert_eq!(attempts, [1, 2]);
}

pub(super) async fn error_history_is_capped(store: &DynStore) {
    let rounds = ERROR_HISTORY_CAP as u32 + 3;
    add(store, spec("j").max_attempts(rounds + 10)).await;
    for n in 1..=rounds {
        let now = at(i64::from(n) * 1_000);
        let job = claim_one(store, "default", WORKER, now).await;
        assert_eq!(job.attempt, n);
        assert!(finish(store, &Lease::of(&job), retry(&format!("failure {n}"), now), now).await);
    }
    let job = get(store, &id("j")).await;
    assert_eq!(job.errors.len(), ERROR_HISTORY_CAP);
    let oldest_kept = rounds - ERROR_HISTORY_CAP as u32 + 1;
    let expected: Vec<JobError> = (oldest_kept..=rounds)
        .map(|n| JobError {
            attempt: n,
            at: at(i64::from(n) * 1_000),
            error: format!("failure {n}"),
        })
        .collect();
    assert_eq!(job.errors, expected, "newest last, oldest dropped first");
}

pub(super) async fn release_does_not_use_an_attempt(store: &DynStore) {
    add(store, spec("j").run_at(at(-500))).await;
    let job = claim_one(store, "default", WORKER, T0).await;
    let beat = Heartbeat {
        lease: Lease::of(&job),
        progress: Some(Progress {
            percent: 10,
            message: None,
        }),
    };
    store.heartbeat(&[beat], at(10)).await.expect("heartbeat");
    assert!(release(store, &Lease::of(&job)).await);

    let released = get(store, &job.id).await;
    assert_eq!((released.status, released.attempt), (JobStatus::Pending, 0));
    assert_eq!(released.run_at, at(-500), "a released job keeps its place in the queue");
    assert!(released.worker_id.is_none() && released.progress.is_none() && released.errors.is_empty());
    assert!(released.finished_at.is_none());

    let again = claim_one(store, "default", WORKER, at(20)).await;
    assert_eq!(
        again.attempt, 1,
        "the released attempt is run again under the same number"
    );

    // After a retry, release goes back to the attempt before, not to zero.
    assert!(finish(store, &Lease::of(&again), retry("flaky", at(30)), at(25)).await);
    let second = claim_one(store, "default", WORKER, at(30)).await;
    assert_eq!(second.attempt, 2);
    assert!(release(store, &Lease::of(&second)).await);
    let job = get(store, &job.id).await;
    assert_eq!((job.status, job.attempt, job.errors.len()), (JobStatus::Pending, 1, 1));
    assert_eq!(claim_one(store, "default", WORKER, at(40)).await.attempt, 2);
}

pub(super) async fn release_is_fenced_like_finish(store: &DynStore) {
    let (lost, current) = lost_and_current(store, "j", "worker-2").await;
    let other_worker = Lease {
        worker: lost.worker.clone(),
        ..current.clone()
    };
    let ghost = Lease {
        id: id("ghost"),
        ..current.clone()
    };
    let answers = store.release(&[lost, other_worker, ghost]).await.expect("release");
    assert_eq!(answers, [false, false, false]);
    let job = get(store, &current.id).await;
    assert_eq!(
        (job.status, job.attempt, job.worker_id.as_deref()),
        (JobStatus::Running, 2, Some("worker-2"))
    );

    assert!(release(store, &current).await);
    assert!(!release(store, &current).await);
    let job = get(store, &current.id).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 1));
}

pub(super) async fn batches_answer_each_lease_on_its_own(store: &DynStore) {
    // One worker can hold a stale and a current lease on the same job: its first attempt was rescued
    // (a long pause) and it claimed the job again. A batch answers each lease by its own fence.
    let (lost, current) = lost_and_current(store, "j", WORKER).await;
    let beats = [lost.clone(), current.clone()].map(|lease| Heartbeat { lease, progress: None });
    assert_eq!(
        store.heartbeat(&beats, at(30)).await.expect("heartbeat"),
        [LeaseState::Lost, LeaseState::Held]
    );
    let finishes = [
        Finish {
            progress: None,
            lease: lost,
            outcome: Transition::Succeeded { result: None },
            spawn: Vec::new(),
        },
        Finish {
            progress: None,
            lease: current.clone(),
            outcome: Transition::Dead {
                error: "bad input".into(),
            },
            spawn: Vec::new(),
        },
    ];
    assert_eq!(store.finish(&finishes, at(40)).await.expect("finish"), [false, true]);
    assert_eq!(get(store, &current.id).await.status, JobStatus::Dead);

    let (lost, current) = lost_and_current(store, "k", WORKER).await;
    assert_eq!(
        store.release(&[lost, current.clone()]).await.expect("release"),
        [false, true]
    );
    let job = get(store, &current.id).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 1));

    // Different jobs in one batch are answered in input order.
    add_all(store, [spec("x").queue("mixed"), spec("y").queue("mixed")]).await;
    let jobs = claim(store, "mixed", WORKER, 2, at(50)).await;
    let [x, y] = [Lease::of(&jobs[0]), Lease::of(&jobs[1])];
    let stale_y = Lease {
        attempt: 7,
        ..y.clone()
    };
    let finishes = [
        Finish {
            progress: None,
            lease: stale_y,
            outcome: Transition::Succeeded { result: None },
            spawn: Vec::new(),
        },
        Finish {
            progress: None,
            lease: x,
            outcome: Transition::Succeeded { result: None },
            spawn: Vec::new(),
        },
    ];
    assert_eq!(store.finish(&finishes, at(60)).await.expect("finish"), [false, true]);
    assert_eq!(get(store, &y.id).await.status, JobStatus::Running);
}
