//! Cancel: live jobs (pending, running, waiting) by id or by filter; terminal jobs are never touched;
//! a running job's worker learns of it and its late answer is ignored.

use jobq::job::{JobSpec, JobStatus};
use jobq::store::{Cancel, CancelAnswer, CancelTarget, Cancelled, DynStore, JobFilter, Lease, LeaseState, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

/// The jobs a cancel cancelled, with their previous status, by id.
async fn cancel(store: &DynStore, target: CancelTarget, now: UnixMillis) -> Vec<(String, JobStatus)> {
    let answers = store.cancel(&Cancel { target, now }).await.expect("cancel");
    sorted(
        answers
            .into_iter()
            .filter_map(|answer| match answer {
                CancelAnswer::Cancelled(Cancelled { id, previous }) => Some((id.to_string(), previous)),
                _ => None,
            })
            .collect(),
    )
}

fn by_ids(names: &[&str]) -> CancelTarget {
    CancelTarget::Ids(names.iter().map(|n| id(n)).collect())
}

pub(super) async fn cancel_pending_running_and_waiting(store: &DynStore) {
    make(store, spec("w"), JobStatus::Waiting, T0).await;
    make(store, spec("r"), JobStatus::Running, T0).await;
    add(store, spec("p")).await;

    let cancelled = cancel(store, by_ids(&["p", "r", "w"]), at(500)).await;
    let expected = [
        ("p", JobStatus::Pending),
        ("r", JobStatus::Running),
        ("w", JobStatus::Waiting),
    ];
    assert_eq!(cancelled, expected.map(|(n, s)| (n.to_string(), s)));
    for name in ["p", "r", "w"] {
        let job = get(store, &id(name)).await;
        assert_eq!(
            (job.status, job.finished_at),
            (JobStatus::Cancelled, Some(at(500))),
            "{name}"
        );
    }
    assert!(claim(store, "default", WORKER, 10, at(1_000)).await.is_empty());
}

pub(super) async fn cancel_leaves_terminal_jobs_alone(store: &DynStore) {
    let mut before = Vec::new();
    for (n, status) in JobStatus::TERMINAL.into_iter().enumerate() {
        before.push(make(store, spec(status.as_str()), status, at(n as i64 * 10)).await);
    }
    let mut names: Vec<&str> = JobStatus::TERMINAL.iter().map(|s| s.as_str()).collect();
    names.push("no-such-job");
    assert!(cancel(store, by_ids(&names), at(900)).await.is_empty());
    assert!(cancel(store, CancelTarget::Ids(vec![]), at(900)).await.is_empty());
    for job in before {
        let now = get(store, &job.id).await;
        assert_eq!(
            (now.status, now.finished_at),
            (job.status, job.finished_at),
            "{}",
            job.id
        );
    }
}

pub(super) async fn cancel_by_filter_reaches_every_job_of_a_large_queue(store: &DynStore) {
    // More jobs than a store may cancel in one step; some running, and another queue left alone.
    const JOBS: usize = 23_456;
    let names: Vec<String> = (0..JOBS).map(|i| format!("big-{i:05}")).collect();
    for batch in names.chunks(5_000) {
        add_all(store, batch.iter().map(|n| spec(n).queue("big"))).await;
    }
    add(store, spec("elsewhere").queue("small")).await;
    let running = claim(store, "big", WORKER, 7, T0).await;
    assert_eq!(running.len(), 7);

    let big = CancelTarget::Filter(JobFilter {
        queues: vec!["big".into()],
        ..Default::default()
    });
    let cancelled = cancel(store, big, at(1)).await;
    assert_eq!(cancelled.len(), JOBS);
    let was_running = cancelled.iter().filter(|(_, s)| *s == JobStatus::Running).count();
    assert_eq!(was_running, 7);
    assert_eq!(get(store, &id("elsewhere")).await.status, JobStatus::Pending);
    assert_eq!(get(store, &id("big-23455")).await.status, JobStatus::Cancelled);
}

pub(super) async fn cancel_by_filter(store: &DynStore) {
    let typed =
        |name: &str, queue: &str, job_type: &str| JobSpec::new(job_type, serde_json::json!(name)).id(name).queue(queue);
    make(store, typed("m-running", "mail", "mail.send"), JobStatus::Running, T0).await;
    make(store, typed("i-done", "img", "img.resize"), JobStatus::Succeeded, T0).await;
    make(store, typed("i-waiting", "img", "img.resize"), JobStatus::Waiting, T0).await;
    add_all(
        store,
        [
            typed("m-send", "mail", "mail.send"),
            typed("m-digest", "mail", "mail.digest"),
            typed("i-pending", "img", "img.resize"),
            created_at(typed("d-old", "dated", "x"), at(-2_000)),
            created_at(typed("d-mid", "dated", "x"), at(-1_000)),
            created_at(typed("d-new", "dated", "x"), T0),
        ],
    )
    .await;
    let filter = |f: JobFilter| CancelTarget::Filter(f);

    // Created since (inclusive) and until (exclusive).
    let dated = JobFilter {
        queues: vec!["dated".into()],
        created_since: Some(at(-1_000)),
        created_until: Some(T0),
        ..Default::default()
    };
    assert_eq!(
        cancel(store, filter(dated), at(1)).await,
        [("d-mid".to_string(), JobStatus::Pending)]
    );

    // By queue: every live status, terminal ones left alone.
    let img = JobFilter {
        queues: vec!["img".into()],
        ..Default::default()
    };
    assert_eq!(
        cancel(store, filter(img), at(2)).await,
        [
            ("i-pending".to_string(), JobStatus::Pending),
            ("i-waiting".to_string(), JobStatus::Waiting)
        ]
    );
    assert_eq!(get(store, &id("i-done")).await.status, JobStatus::Succeeded);

    // By type and status together.
    let running_sends = JobFilter {
        job_types: vec!["mail.send".into()],
        statuses: vec![JobStatus::Running],
        ..Default::default()
    };
    assert_eq!(
        cancel(store, filter(running_sends), at(3)).await,
        [("m-running".to_string(), JobStatus::Running)]
    );
    assert_eq!(get(store, &id("m-send")).await.status, JobStatus::Pending);

    // Asking for terminal statuses matches nothing.
    let terminal = JobFilter {
        statuses: JobStatus::TERMINAL.to_vec(),
        ..Default::default()
    };
    assert!(cancel(store, filter(terminal), at(4)).await.is_empty());

    // An empty filter is every live job.
    assert_eq!(
        cancel(store, filter(JobFilter::default()), at(5)).await,
        [
            ("d-new".to_string(), JobStatus::Pending),
            ("d-old".to_string(), JobStatus::Pending),
            ("m-digest".to_string(), JobStatus::Pending),
            ("m-send".to_string(), JobStatus::Pending),
        ]
    );
    assert_eq!(get(store, &id("i-done")).await.status, JobStatus::Succeeded);
    assert_eq!(get(store, &id("m-send")).await.finished_at, Some(at(5)));
}

pub(super) async fn cancelled_running_job_tells_its_worker(store: &DynStore) {
    let job = make(store, spec("j"), JobStatus::Running, T0).await;
    let lease = Lease::of(&job);
    assert_eq!(
        cancel(store, by_ids(&["j"]), at(10)).await,
        [("j".to_string(), JobStatus::Running)]
    );

    assert_eq!(beat(store, &lease, at(15)).await, LeaseState::Cancelled);
    assert!(
        !finish(
            store,
            &lease,
            Transition::Succeeded {
                result: Some(raw("true"))
            },
            at(20)
        )
        .await
    );
    assert!(!finish(store, &lease, retry("interrupted", at(30)), at(20)).await);
    assert!(!release(store, &lease).await);

    let job = get(store, &lease.id).await;
    assert_eq!((job.status, job.finished_at), (JobStatus::Cancelled, Some(at(10))));
    assert!(job.result.is_none() && job.errors.is_empty());
}

pub(super) async fn cancel_answers_each_id_once_in_input_order(store: &DynStore) {
    make(store, spec("s"), JobStatus::Succeeded, T0).await;
    make(store, spec("w"), JobStatus::Waiting, T0).await;
    add(store, spec("p")).await;
    let answers = store
        .cancel(&Cancel {
            target: by_ids(&["s", "nope", "p", "w", "p"]),
            now: at(500),
        })
        .await
        .expect("cancel");
    assert_eq!(
        answers,
        [
            CancelAnswer::AlreadyTerminal {
                id: id("s"),
                status: JobStatus::Succeeded
            },
            CancelAnswer::NotFound(id("nope")),
            CancelAnswer::Cancelled(Cancelled {
                id: id("p"),
                previous: JobStatus::Pending
            }),
            CancelAnswer::Cancelled(Cancelled {
                id: id("w"),
                previous: JobStatus::Waiting
            }),
        ]
    );
    // Asked again, every id is terminal now (or still unknown).
    let again = store
        .cancel(&Cancel {
            target: by_ids(&["p", "nope"]),
            now: at(600),
        })
        .await
        .expect("cancel again");
    assert_eq!(
        again,
        [
            CancelAnswer::AlreadyTerminal {
                id: id("p"),
                status: JobStatus::Cancelled
            },
            CancelAnswer::NotFound(id("nope")),
        ]
    );
    assert_eq!(get(store, &id("p")).await.finished_at, Some(at(500)));
}
