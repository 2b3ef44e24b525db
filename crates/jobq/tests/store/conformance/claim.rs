//! Claim: which ready jobs a worker gets, in what order, what the lease records, and that two claimers
//! never get the same job.

use std::collections::HashSet;

use jobq::job::{JobSpec, JobStatus, Progress};
use jobq::store::{Claim, DynStore, Heartbeat, Lease};

use crate::support::jobs::*;

pub(super) async fn claim_orders_by_priority_then_run_at(store: &DynStore) {
    // Enqueued out of order; (priority, run_at, id) decides.
    add_all(
        store,
        [
            spec("p1-early").priority(1).run_at(at(-9_000)),
            spec("p0-late-b").run_at(at(-1_000)),
            spec("p0-late").run_at(at(-1_000)),
            spec("p0-early").run_at(at(-5_000)),
            spec("neg").priority(-1).run_at(at(-100)),
        ],
    )
    .await;
    let first = claim(store, "default", WORKER, 2, T0).await;
    assert_eq!(ids(&first), ["neg", "p0-early"]);
    let rest = claim(store, "default", WORKER, 10, T0).await;
    assert_eq!(ids(&rest), ["p0-late", "p0-late-b", "p1-early"]);
}

pub(super) async fn claim_ignores_future_run_at(store: &DynStore) {
    add_all(
        store,
        [
            spec("later").run_at(at(1_000)),
            spec("now").run_at(T0),
            spec("first").priority(-5).run_at(at(1)),
        ],
    )
    .await;
    assert_eq!(ids(&claim(store, "default", WORKER, 10, T0).await), ["now"]);
    assert_eq!(ids(&claim(store, "default", WORKER, 10, at(999)).await), ["first"]);
    // run_at is the first instant the job may run.
    assert_eq!(ids(&claim(store, "default", WORKER, 10, at(1_000)).await), ["later"]);
}

pub(super) async fn claim_respects_limit(store: &DynStore) {
    add_all(store, (0..5).map(|i| spec(&format!("j{i}")))).await;
    assert!(claim(store, "default", WORKER, 0, T0).await.is_empty());
    assert_eq!(ids(&claim(store, "default", WORKER, 2, T0).await), ["j0", "j1"]);
    assert_eq!(ids(&claim(store, "default", WORKER, 2, T0).await), ["j2", "j3"]);
    assert_eq!(ids(&claim(store, "default", WORKER, 2, T0).await), ["j4"]);
    assert!(claim(store, "default", WORKER, 2, T0).await.is_empty());
}

pub(super) async fn claim_only_from_named_queues(store: &DynStore) {
    add_all(
        store,
        [
            spec("a5").queue("a").priority(5),
            spec("b1").queue("b").priority(1),
            spec("a0").queue("a").priority(0),
            spec("b3").queue("b").priority(3),
            spec("c-first").queue("c").priority(-10),
        ],
    )
    .await;
    assert!(
        store
            .claim(&claim_params(&[], WORKER, 10, T0))
            .await
            .expect("claim")
            .is_empty()
    );
    assert!(claim(store, "nothing-here", WORKER, 10, T0).await.is_empty());
    assert_eq!(ids(&claim(store, "b", WORKER, 1, T0).await), ["b1"]);
    // Several queues are one ordering: the best jobs of all of them, merged.
    let merged = store
        .claim(&claim_params(&["a", "b"], WORKER, 2, T0))
        .await
        .expect("claim");
    assert_eq!(ids(&merged), ["a0", "b3"]);
    let merged = store
        .claim(&claim_params(&["b", "a"], WORKER, 10, T0))
        .await
        .expect("claim");
    assert_eq!(ids(&merged), ["a5"]);
    assert_eq!(get(store, &id("c-first")).await.status, JobStatus::Pending);
    assert_eq!(ids(&claim(store, "c", WORKER, 10, T0).await), ["c-first"]);
}

pub(super) async fn claim_skips_excluded_types(store: &DynStore) {
    add_all(
        store,
        [
            JobSpec::new("mail.send", serde_json::json!(1)).id("x1"),
            JobSpec::new("img.resize", serde_json::json!(2)).id("y1").priority(1),
            JobSpec::new("mail.send", serde_json::json!(3)).id("x2").priority(2),
            JobSpec::new("report.build", serde_json::json!(4)).id("z1").priority(3),
        ],
    )
    .await;
    let claim = Claim {
        exclude_types: vec!["mail.send".into(), "report.build".into()],
        ..claim_params(&["default"], WORKER, 10, T0)
    };
    assert_eq!(ids(&store.claim(&claim).await.expect("claim")), ["y1"]);
    assert_eq!(get(store, &id("x1")).await.status, JobStatus::Pending);
    assert_eq!(
        ids(&self::claim(store, "default", WORKER, 10, T0).await),
        ["x1", "x2", "z1"]
    );
}

pub(super) async fn claim_sets_running_attempt_worker_and_times(store: &DynStore) {
    add(store, spec("j").max_attempts(3)).await;
    let job = claim_one(store, "default", "w-a", at(100)).await;
    assert_eq!(job.status, JobStatus::Running);
    assert_eq!(job.attempt, 1);
    assert_eq!(job.max_attempts, 3);
    assert_eq!(job.worker_id.as_deref(), Some("w-a"));
    assert_eq!(job.started_at, Some(at(100)));
    assert_eq!(job.heartbeat_at, Some(at(100)));
    assert!(job.finished_at.is_none() && job.progress.is_none());
    assert_eq!(value(&job.payload), serde_json::json!({"n": "j"}));
    assert_eq!(job.run_at, T0);

    // The returned job is what the store holds.
    let stored = get(store, &job.id).await;
    assert_eq!(
        (
            stored.status,
            stored.attempt,
            stored.worker_id.clone(),
            stored.started_at,
            stored.heartbeat_at
        ),
        (
            job.status,
            job.attempt,
            job.worker_id.clone(),
            job.started_at,
            job.heartbeat_at
        )
    );

    // The next attempt starts afresh: new worker and times, no progress from the last attempt.
    let beat = Heartbeat {
        lease: Lease::of(&job),
        progress: Some(Progress {
            percent: 50,
            message: Some("half".into()),
        }),
    };
    store.heartbeat(&[beat], at(200)).await.expect("heartbeat");
    assert!(finish(store, &Lease::of(&job), retry("flaky", at(300)), at(250)).await);
    let again = claim_one(store, "default", "w-b", at(300)).await;
    assert_eq!(again.attempt, 2);
    assert_eq!(again.worker_id.as_deref(), Some("w-b"));
    assert_eq!((again.started_at, again.heartbeat_at), (Some(at(300)), Some(at(300))));
    assert!(again.progress.is_none());
    assert!(get(store, &job.id).await.progress.is_none());
}

pub(super) async fn claim_is_exclusive(store: &DynStore) {
    const JOBS: usize = 500;
    const CLAIMERS: u32 = 8;
    add_all(
        store,
        (0..JOBS).map(|i| {
            spec(&format!("x{i:04}"))
                .queue(if i % 2 == 0 { "a" } else { "b" })
                .priority((i % 7) as i32)
        }),
    )
    .await;

    let mut tasks = Vec::new();
    for claimer in 0..CLAIMERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let worker = format!("claimer-{claimer}");
            // Claimers alternate between one queue and both, so both claim paths race.
            let queues: &[&str] = if claimer % 2 == 0 { &["a", "b"] } else { &["b"] };
            let mut got = Vec::new();
            for round in 0.. {
                let limit = (claimer + round) % 5 + 1;
                let jobs = store
                    .claim(&claim_params(queues, &worker, limit, T0))
                    .await
                    .expect("claim");
                assert!(
                    jobs.len() <= limit as usize,
                    "{} jobs for a limit of {limit}",
                    jobs.len()
                );
                if jobs.is_empty() {
                    break;
                }
                for job in &jobs {
                    assert_eq!((job.worker_id.as_deref(), job.attempt), (Some(worker.as_str()), 1));
                }
                got.extend(jobs.into_iter().map(|j| j.id));
            }
            got
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("claimer task"));
    }
    // Odd claimers stop when queue b is empty; whatever they left in a was taken by the even ones.
    let unique: HashSet<_> = all.iter().cloned().collect();
    assert_eq!(unique.len(), all.len(), "a job was claimed twice");
    assert_eq!(all.len(), JOBS, "every job is claimed once in total");
    let queues = stats(store, &[], T0).await;
    assert_eq!(queues.iter().map(|q| q.running).sum::<u64>(), JOBS as u64);
    assert_eq!(queues.iter().map(|q| q.ready).sum::<u64>(), 0);
}
