//! Rescue: running jobs whose worker stopped heartbeating go back to pending (or dead), exactly once
//! however many workers sweep at the same moment.

use std::collections::HashSet;

use jobq::job::{DEFAULT_MAX_ATTEMPTS, JobError, JobStatus};
use jobq::store::{DynStore, Heartbeat, Lease, Rescue, Rescued};

use crate::support::jobs::*;

pub(super) async fn rescue_returns_stale_jobs_with_worker_lost(store: &DynStore) {
    add_all(store, [spec("a"), spec("b")]).await;
    let jobs = claim(store, "default", WORKER, 2, T0).await;
    let b = Heartbeat {
        lease: Lease::of(&jobs[1]),
        progress: None,
    };
    store.heartbeat(&[b], at(50_000)).await.expect("heartbeat");

    let rescued = rescue_stale(store, at(40_000), at(100_000), 100).await;
    let expected = Rescued {
        id: id("a"),
        job_type: JOB_TYPE.into(),
        attempt: 1,
        status: JobStatus::Pending,
    };
    assert_eq!(rescued, [expected]);

    let a = get(store, &id("a")).await;
    assert_eq!((a.status, a.attempt, a.run_at), (JobStatus::Pending, 1, at(100_000)));
    assert_eq!(
        a.errors,
        [JobError {
            attempt: 1,
            at: at(100_000),
            error: "worker lost".into()
        }]
    );
    assert!(a.worker_id.is_none() && a.finished_at.is_none());

    // A heartbeat exactly at the cut-off is not stale.
    let none = rescue_stale(store, at(50_000), at(100_000), 100).await;
    assert!(none.is_empty());
    assert_eq!(get(store, &id("b")).await.status, JobStatus::Running);

    // Runnable at once, as the next attempt.
    let again = claim_one(store, "default", "worker-2", at(100_000)).await;
    assert_eq!((again.id.as_str(), again.attempt), ("a", 2));
}

pub(super) async fn rescue_kills_when_attempts_used_up(store: &DynStore) {
    add(store, spec("j").max_attempts(2)).await;
    claim_one(store, "default", WORKER, T0).await;
    let rescue = |now| Rescue {
        stale_before: at(now - 60_000),
        now: at(now),
        limit: 100,
    };
    let first = store.rescue(&rescue(100_000)).await.expect("rescue");
    assert_eq!(
        first.iter().map(|r| (r.attempt, r.status)).collect::<Vec<_>>(),
        [(1, JobStatus::Pending)]
    );

    claim_one(store, "default", WORKER, at(100_000)).await;
    let second = store.rescue(&rescue(200_000)).await.expect("rescue");
    assert_eq!(
        second.iter().map(|r| (r.attempt, r.status)).collect::<Vec<_>>(),
        [(2, JobStatus::Dead)]
    );

    let job = get(store, &id("j")).await;
    assert_eq!(
        (job.status, job.attempt, job.finished_at),
        (JobStatus::Dead, 2, Some(at(200_000)))
    );
    assert_eq!(
        job.errors,
        [
            JobError {
                attempt: 1,
                at: at(100_000),
                error: "worker lost".into()
            },
            JobError {
                attempt: 2,
                at: at(200_000),
                error: "worker lost".into()
            },
        ]
    );
    assert!(job.worker_id.is_none());
    assert!(claim(store, "default", WORKER, 10, at(300_000)).await.is_empty());

    // A job left at the default number of attempts dies when the last of them is lost.
    add(store, spec("d").queue("defaults")).await;
    let mut now = 300_000;
    for attempt in 1..=DEFAULT_MAX_ATTEMPTS {
        claim_one(store, "defaults", WORKER, at(now)).await;
        now += 100_000;
        let status = if attempt == DEFAULT_MAX_ATTEMPTS {
            JobStatus::Dead
        } else {
            JobStatus::Pending
        };
        let lost = store.rescue(&rescue(now)).await.expect("rescue");
        assert_eq!(
            lost.iter().map(|r| (r.attempt, r.status)).collect::<Vec<_>>(),
            [(attempt, status)]
        );
    }
    assert_eq!(get(store, &id("d")).await.status, JobStatus::Dead);
}

pub(super) async fn rescue_leaves_fresh_heartbeats_alone(store: &DynStore) {
    // Every status, all long ago; only the running job whose worker went quiet is stale.
    let statuses = [
        JobStatus::Waiting,
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
    ];
    for status in statuses {
        make(store, spec(status.as_str()), status, at(-100_000)).await;
    }
    make(store, spec("quiet"), JobStatus::Running, at(-100_000)).await;
    let fresh = make(store, spec("fresh"), JobStatus::Running, at(-100_000)).await;
    store
        .heartbeat(
            &[Heartbeat {
                lease: Lease::of(&fresh),
                progress: None,
            }],
            at(-1_000),
        )
        .await
        .expect("heartbeat");
    add(store, spec("pending").run_at(at(-100_000))).await;

    let rescued = rescue_stale(store, at(-30_000), T0, 100).await;
    assert_eq!(rescued.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["quiet"]);
    for status in statuses {
        assert_eq!(get(store, &id(status.as_str())).await.status, status);
    }
    let fresh = get(store, &id("fresh")).await;
    assert_eq!(
        (fresh.status, fresh.attempt, fresh.errors.len()),
        (JobStatus::Running, 1, 0)
    );
    assert_eq!(get(store, &id("pending")).await.errors.len(), 0);
}

pub(super) async fn rescue_respects_limit(store: &DynStore) {
    add_all(store, (0..5).map(|i| spec(&format!("j{i}")))).await;
    assert_eq!(
        claim(store, "default", WORKER, 5, T0).await.len(),
        5,
        "every job is claimed"
    );
    let rescue = Rescue {
        stale_before: at(1),
        now: at(10),
        limit: 2,
    };
    let mut seen = HashSet::new();
    for expected in [2, 2, 1, 0] {
        let rescued = store.rescue(&rescue).await.expect("rescue");
        assert_eq!(rescued.len(), expected);
        seen.extend(rescued.into_iter().map(|r| r.id));
    }
    assert_eq!(seen.len(), 5);
}

pub(super) async fn concurrent_rescues_never_rescue_one_job_twice(store: &DynStore) {
    const STALE: usize = 60;
    const SWEEPERS: usize = 6;
    add_all(store, (0..STALE).map(|i| spec(&format!("stale-{i:02}")))).await;
    assert_eq!(claim(store, "default", WORKER, STALE as u32, T0).await.len(), STALE);
    add_all(store, (0..10).map(|i| spec(&format!("fresh-{i:02}")))).await;
    assert_eq!(claim(store, "default", WORKER, 10, at(100_000)).await.len(), 10);

    let mut sweepers = Vec::new();
    for _ in 0..SWEEPERS {
        let store = store.clone();
        sweepers.push(tokio::spawn(async move {
            let rescue = Rescue {
                stale_before: at(50_000),
                now: at(120_000),
                limit: 7,
            };
            let mut got = Vec::new();
            loop {
                let rescued = store.rescue(&rescue).await.expect("rescue");
                if rescued.is_empty() {
                    return got;
                }
                got.extend(rescued.into_iter().map(|r| r.id));
            }
        }));
    }
    let mut all = Vec::new();
    for sweeper in sweepers {
        all.extend(sweeper.await.expect("sweeper task"));
    }
    let unique: HashSet<_> = all.iter().cloned().collect();
    assert_eq!(unique.len(), all.len(), "a job was rescued twice");
    assert_eq!(all.len(), STALE);
    for job_id in &all {
        let job = get(store, job_id).await;
        assert_eq!((job.status, job.errors.len()), (JobStatus::Pending, 1), "{job_id}");
    }
    assert_eq!(get(store, &id("fresh-00")).await.status, JobStatus::Running);
}
