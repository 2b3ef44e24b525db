//! Delete: jobs removed for good, by id or by filter; running and waiting jobs only when forced, and a
//! forced delete of a running job is a lost lease for its worker.

use jobq::job::{JobSpec, JobStatus};
use jobq::store::{
    Delete, DeleteAnswer, DeleteMatching, DeletedCount, DynStore, JobFilter, Lease, LeaseState, Transition,
};

use crate::support::jobs::*;

async fn delete(store: &DynStore, names: &[&str], force: bool) -> Vec<DeleteAnswer> {
    let delete = Delete {
        ids: names.iter().map(|n| id(n)).collect(),
        force,
    };
    store.delete(&delete).await.expect("delete")
}

async fn delete_matching(store: &DynStore, filter: JobFilter, force: bool, limit: u32) -> DeletedCount {
    let delete = DeleteMatching { filter, force, limit };
    store.delete_matching(&delete).await.expect("delete by filter")
}

async fn exists(store: &DynStore, name: &str) -> bool {
    store.get(&id(name)).await.expect("get").is_some()
}

/// One job of each status, each in a queue named after it (so each is the next ready job of its queue).
async fn one_of_each(store: &DynStore) {
    for (n, status) in JobStatus::ALL.into_iter().enumerate() {
        let name = status.as_str();
        make(store, spec(name).queue(name), status, at(n as i64)).await;
    }
}

pub(super) async fn delete_removes_jobs_of_every_status_but_refuses_held_ones(store: &DynStore) {
    one_of_each(store).await;
    let names: Vec<&str> = JobStatus::ALL.iter().map(|s| s.as_str()).collect();
    let mut asked = names.clone();
    asked.push("no-such-job");
    let answers = delete(store, &asked, false).await;
    let mut expected: Vec<DeleteAnswer> = JobStatus::ALL
        .into_iter()
        .map(|s| match s {
            JobStatus::Running | JobStatus::Waiting => DeleteAnswer::Refused { status: s },
            _ => DeleteAnswer::Deleted { previous: s },
        })
        .collect();
    expected.push(DeleteAnswer::NotFound);
    assert_eq!(answers, expected);
    for name in names {
        let held = name == "running" || name == "waiting";
        assert_eq!(exists(store, name).await, held, "{name}");
    }
    assert_eq!(get(store, &id("running")).await.status, JobStatus::Running);
    // What is left pending is the job the blocked one waited for.
    assert_eq!(count(store, JobStatus::Pending, at(100)).await, 1);
    assert!(exists(store, "blocked.dependency").await);
    assert!(claim(store, "pending", WORKER, 10, at(100)).await.is_empty());
    assert!(delete(store, &[], false).await.is_empty());
}

pub(super) async fn delete_answers_each_input_in_order_as_if_one_after_another(store: &DynStore) {
    add(store, spec("a")).await;
    assert_eq!(
        delete(store, &["a", "nope", "a"], false).await,
        [
            DeleteAnswer::Deleted {
                previous: JobStatus::Pending
            },
            DeleteAnswer::NotFound,
            DeleteAnswer::NotFound
        ]
    );
}

pub(super) async fn delete_forced_takes_a_running_jobs_lease_and_its_outcome_is_ignored(store: &DynStore) {
    let running = make(store, spec("r").queue("r"), JobStatus::Running, T0).await;
    let lease = Lease::of(&running);
    make(store, spec("w").queue("w"), JobStatus::Waiting, T0).await;
    assert_eq!(
        delete(store, &["r", "w"], true).await,
        [
            DeleteAnswer::Deleted {
                previous: JobStatus::Running
            },
            DeleteAnswer::Deleted {
                previous: JobStatus::Waiting
            }
        ]
    );
    assert!(!exists(store, "r").await && !exists(store, "w").await);
    assert_eq!(beat(store, &lease, at(10)).await, LeaseState::Lost);
    let success = Transition::Succeeded { result: Some(raw("1")) };
    assert!(!finish(store, &lease, success, at(20)).await);
    assert!(!release(store, &lease).await);
    assert!(!exists(store, "r").await, "a late outcome does not bring the job back");
    assert_eq!(count(store, JobStatus::Running, at(30)).await, 0);
    assert_eq!(count(store, JobStatus::Waiting, at(30)).await, 0);
}

pub(super) async fn delete_gives_up_the_unique_key(store: &DynStore) {
    add(store, spec("a").unique_key("k")).await;
    assert_eq!(enqueue(store, [spec("b").unique_key("k")]).await, [coalesced("a")]);
    delete(store, &["a"], false).await;
    assert_eq!(enqueue(store, [spec("c").unique_key("k")]).await, [created("c")]);
}

pub(super) async fn delete_matching_selects_by_queue_type_status_and_creation_time(store: &DynStore) {
    let typed =
        |name: &str, queue: &str, job_type: &str| JobSpec::new(job_type, serde_json::json!(name)).id(name).queue(queue);
    make(
        store,
        created_at(typed("old-run", "mail", "send"), at(-5_000)),
        JobStatus::Running,
        T0,
    )
    .await;
    make(
        store,
        created_at(typed("old-wait", "mail", "send"), at(-5_000)),
        JobStatus::Waiting,
        T0,
    )
    .await;
    make(
        store,
        created_at(typed("old-dead", "mail", "send"), at(-5_000)),
        JobStatus::Dead,
        T0,
    )
    .await;
    add_all(
        store,
        [
            created_at(typed("old-send", "mail", "send"), at(-4_000)),
            created_at(typed("old-digest", "mail", "digest"), at(-4_000)),
            created_at(typed("new-send", "mail", "send"), at(-10)),
            created_at(typed("old-other", "other", "send"), at(-4_000)),
        ],
    )
    .await;
    let old_sends = JobFilter {
        queues: vec!["mail".into()],
        job_types: vec!["send".into()],
        created_until: Some(at(-1_000)),
        ..Default::default()
    };
    // Without force the running and waiting jobs stay, and are counted.
    assert_eq!(
        delete_matching(store, old_sends.clone(), false, 100).await,
        DeletedCount { deleted: 2, refused: 2 }
    );
    for (name, kept) in [
        ("old-run", true),
        ("old-wait", true),
        ("old-dead", false),
        ("old-send", false),
        ("old-digest", true),
        ("new-send", true),
        ("old-other", true),
    ] {
        assert_eq!(exists(store, name).await, kept, "{name}");
    }
    // By status: only the waiting one, forced.
    let waiting = JobFilter {
        statuses: vec![JobStatus::Waiting],
        ..old_sends.clone()
    };
    assert_eq!(
        delete_matching(store, waiting, true, 100).await,
        DeletedCount { deleted: 1, refused: 0 }
    );
    assert!(exists(store, "old-run").await && !exists(store, "old-wait").await);
    // Forced, the running one goes too.
    assert_eq!(
        delete_matching(store, old_sends, true, 100).await,
        DeletedCount { deleted: 1, refused: 0 }
    );
    assert!(!exists(store, "old-run").await);
    assert!(exists(store, "new-send").await && exists(store, "old-digest").await && exists(store, "old-other").await);
}

pub(super) async fn delete_matching_deletes_in_bounded_batches(store: &DynStore) {
    make(store, spec("held").queue("q"), JobStatus::Running, T0).await;
    let names: Vec<String> = (0..25).map(|n| format!("j{n:02}")).collect();
    add_all(store, names.iter().map(|n| spec(n).queue("q"))).await;
    let every = JobFilter {
        queues: vec!["q".into()],
        ..Default::default()
    };
    let mut calls = Vec::new();
    loop {
        let n = delete_matching(store, every.clone(), false, 10).await;
        calls.push(n.deleted);
        assert_eq!(n.refused, 1);
        if n.deleted < 10 {
            break;
        }
    }
    assert_eq!(calls, [10, 10, 5]);
    assert_eq!(count(store, JobStatus::Pending, at(10)).await, 0);
    assert!(exists(store, "held").await);
}
