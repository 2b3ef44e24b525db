//! Replay of dead jobs: back to pending from now with a fresh attempt count and the error history kept;
//! selected by id, queue, type and limit (oldest death first); nothing but dead jobs ever moves.

use jobq::job::{JobId, JobSpec, JobStatus};
use jobq::store::{DynStore, JobFilter, Lease, ReplayDead, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

/// Replays every dead job at `now`; returns the ids replayed.
async fn replay_all(store: &DynStore, now: UnixMillis) -> Vec<String> {
    replay(
        store,
        ReplayDead {
            now,
            ..Default::default()
        },
    )
    .await
}

/// Replays the dead jobs among `ids` at `now`; returns the ids replayed.
async fn replay_ids(store: &DynStore, ids: Vec<JobId>, now: UnixMillis) -> Vec<String> {
    replay(
        store,
        ReplayDead {
            ids,
            now,
            ..Default::default()
        },
    )
    .await
}

/// Replays what `replay` selects; returns the ids replayed, sorted.
async fn replay(store: &DynStore, replay: ReplayDead) -> Vec<String> {
    sorted(
        store
            .replay_dead(&replay)
            .await
            .expect("replay_dead")
            .iter()
            .map(|job| job.id.to_string())
            .collect(),
    )
}

pub(super) async fn replay_dead_resets_attempt_keeping_errors(store: &DynStore) {
    add(store, spec("j").max_attempts(3)).await;
    let first = claim_one(store, "default", WORKER, T0).await;
    assert!(finish(store, &Lease::of(&first), retry("first", at(10)), at(5)).await);
    let second = claim_one(store, "default", WORKER, at(10)).await;
    let result = Transition::Dead { error: "second".into() };
    assert!(finish(store, &Lease::of(&second), result, at(20)).await);
    let dead = get(store, &id("j")).await;

    assert_eq!(replay_all(store, at(1_000)).await, ["j"]);
    let job = get(store, &id("j")).await;
    assert_eq!(
        (job.status, job.attempt, job.run_at),
        (JobStatus::Pending, 0, at(1_000))
    );
    assert_eq!(job.errors, dead.errors, "the error history is kept");
    assert_eq!(job.errors.len(), 2);
    assert!(job.finished_at.is_none() && job.result.is_none() && job.worker_id.is_none());
    assert_eq!(job.max_attempts, 3);

    assert!(claim(store, "default", WORKER, 10, at(999)).await.is_empty());
    let again = claim_one(store, "default", WORKER, at(1_000)).await;
    assert_eq!(again.attempt, 1, "a replayed job gets all its attempts again");
}

pub(super) async fn replay_dead_by_ids_queue_type_and_limit(store: &DynStore) {
    let typed =
        |name: &str, queue: &str, job_type: &str| JobSpec::new(job_type, serde_json::json!(name)).id(name).queue(queue);
    // Deaths at 10, 20, … in this order.
    let dead = [
        ("d1", "a", "x"),
        ("d2", "a", "y"),
        ("d3", "b", "x"),
        ("d4", "b", "y"),
        ("d5", "a", "x"),
    ];
    for (n, (name, queue, job_type)) in dead.into_iter().enumerate() {
        make(
            store,
            typed(name, queue, job_type),
            JobStatus::Dead,
            at(10 * (n as i64 + 1)),
        )
        .await;
    }
    let now = at(1_000);

    let by_ids = ReplayDead {
        ids: vec![id("d4"), id("d2"), id("no-such-job")],
        now,
        ..Default::default()
    };
    assert_eq!(replay(store, by_ids).await, ["d2", "d4"]);

    let oldest_of_a_x = ReplayDead {
        filter: JobFilter {
            queues: vec!["a".into()],
            job_types: vec!["x".into()],
            ..Default::default()
        },
        limit: Some(1),
        now,
        ..Default::default()
    };
    assert_eq!(replay(store, oldest_of_a_x).await, ["d1"]);

    // Filters combine with ids.
    let b_only = ReplayDead {
        filter: JobFilter {
            queues: vec!["b".into()],
            ..Default::default()
        },
        ids: vec![id("d5")],
        now,
        ..Default::default()
    };
    assert!(replay(store, b_only).await.is_empty());

    let type_x = ReplayDead {
        filter: JobFilter {
            job_types: vec!["x".into()],
            ..Default::default()
        },
        now,
        ..Default::default()
    };
    assert_eq!(replay(store, type_x).await, ["d3", "d5"]);

    assert_eq!(
        stats(store, &[], now)
            .await
            .iter()
            .map(|q| (q.dead, q.ready))
            .collect::<Vec<_>>(),
        [(0, 3), (0, 2)]
    );
}

pub(super) async fn replay_ignores_non_dead_jobs(store: &DynStore) {
    let others = [
        JobStatus::Running,
        JobStatus::Waiting,
        JobStatus::Succeeded,
        JobStatus::Cancelled,
        JobStatus::Discarded,
        JobStatus::Pending,
    ];
    for status in others {
        make(store, spec(status.as_str()), status, T0).await;
    }
    let every_id: Vec<JobId> = others.iter().map(|s| id(s.as_str())).collect();
    assert!(replay_ids(store, every_id, at(10)).await.is_empty());
    assert!(replay_all(store, at(10)).await.is_empty());
    for status in others {
        let job = get(store, &id(status.as_str())).await;
        assert_eq!(job.status, status);
        assert_eq!(job.run_at, T0);
    }
}

pub(super) async fn replay_brings_back_one_live_job_per_unique_key(store: &DynStore) {
    // A unique key is held by at most one live job, and replay keeps it that way.
    make(store, spec("k1").unique_key("k"), JobStatus::Dead, at(10)).await;
    make(store, spec("k2").unique_key("k"), JobStatus::Dead, at(20)).await;

    // Any dead holder may come back while the key is free, not only the first one.
    assert_eq!(replay_ids(store, vec![id("k2")], at(30)).await, ["k2"]);
    // While k2 is live, k1 stays dead.
    assert!(replay_ids(store, vec![id("k1")], at(40)).await.is_empty());
    assert!(replay_all(store, at(40)).await.is_empty());
    assert_eq!(get(store, &id("k1")).await.status, JobStatus::Dead);

    // With the key free again and both candidates in one call, only one comes back.
    let k2 = claim_one(store, "default", WORKER, at(50)).await;
    assert!(
        finish(
            store,
            &Lease::of(&k2),
            Transition::Dead { error: "again".into() },
            at(60)
        )
        .await
    );
    let back = replay_all(store, at(70)).await;
    assert_eq!(back.len(), 1, "{back:?}");
    let statuses = [get(store, &id("k1")).await.status, get(store, &id("k2")).await.status];
    assert_eq!(sorted(statuses.to_vec()), [JobStatus::Pending, JobStatus::Dead]);
    assert_eq!(
        enqueue(store, [spec("k3").unique_key("k")]).await,
        [coalesced(&back[0])]
    );
}

pub(super) async fn replay_dry_run_names_exactly_the_jobs_a_replay_moves(store: &DynStore) {
    // Each request gets dead jobs of its own (queues `a<n>`, `b<n>`), deaths out of id order, a type
    // filtered out, two deaths sharing a key, a key a live job holds, and a job that is not dead.
    let requests: [fn(usize) -> ReplayDead; 4] = [
        |_| ReplayDead::default(),
        |_| ReplayDead {
            limit: Some(2),
            ..Default::default()
        },
        |n| ReplayDead {
            filter: JobFilter {
                queues: vec![format!("a{n}")],
                job_types: vec![JOB_TYPE.into()],
                ..Default::default()
            },
            ..Default::default()
        },
        |n| ReplayDead {
            ids: ["k-second", "held-dead", "late", "done", "nope"]
                .iter()
                .map(|name| id(&format!("{name}-{n}")))
                .collect(),
            ..Default::default()
        },
    ];
    for (n, request) in requests.iter().enumerate() {
        let (a, b) = (format!("a{n}"), format!("b{n}"));
        let named = |name: &str| format!("{name}-{n}");
        make(store, spec(&named("late")).queue(&a), JobStatus::Dead, at(90)).await;
        make(store, spec(&named("early")).queue(&b), JobStatus::Dead, at(10)).await;
        let other_type = JobSpec::new("other.type", serde_json::json!({}))
            .id(named("other-type"))
            .queue(&a);
        make(store, other_type, JobStatus::Dead, at(20)).await;
        make(
            store,
            spec(&named("k-first")).queue(&a).unique_key(named("k")),
            JobStatus::Dead,
            at(30),
        )
        .await;
        make(
            store,
            spec(&named("k-second")).queue(&a).unique_key(named("k")),
            JobStatus::Dead,
            at(40),
        )
        .await;
        make(
            store,
            spec(&named("held-dead")).queue(&b).unique_key(named("h")),
            JobStatus::Dead,
            at(50),
        )
        .await;
        add(store, spec(&named("held-live")).queue(&b).unique_key(named("h"))).await;
        make(store, spec(&named("done")).queue(&a), JobStatus::Succeeded, at(60)).await;

        let dry = ReplayDead {
            now: at(100),
            dry_run: true,
            ..request(n)
        };
        let preview = store.replay_dead(&dry).await.expect("dry run");
        assert!(!preview.is_empty(), "{dry:?}");
        // Oldest death first, as they are: a dry run changes nothing.
        let deaths: Vec<_> = preview.iter().map(|j| (j.finished_at, j.id.to_string())).collect();
        assert_eq!(deaths, sorted(deaths.clone()), "{dry:?}");
        for job in &preview {
            assert_eq!(get(store, &job.id).await.status, JobStatus::Dead, "{dry:?}");
        }
        let again = store.replay_dead(&dry).await.expect("dry run again");
        assert_eq!(ids(&again), ids(&preview));

        let moved = replay(
            store,
            ReplayDead {
                now: at(100),
                ..request(n)
            },
        )
        .await;
        assert_eq!(sorted(ids(&preview)), moved, "{dry:?}");
    }
}
