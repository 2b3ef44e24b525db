//! The worker registry: workers register and refresh themselves, are listed while seen recently, are
//! forgotten once not seen, and unregister on a clean exit.

use jobq::store::{BridgeInfo, DynStore, WorkerInfo};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

fn worker(id: &str, last_seen_at: UnixMillis, jobs_done: u64) -> WorkerInfo {
    WorkerInfo {
        id: id.to_string(),
        name: format!("name-of-{id}"),
        host: "host-a".into(),
        pid: 4242,
        queues: vec!["default".into(), "mail".into()],
        started_at: T0,
        last_seen_at,
        jobs_done,
        bridge: None,
    }
}

async fn workers(store: &DynStore, seen_since: UnixMillis) -> Vec<WorkerInfo> {
    let mut workers = store.workers(seen_since).await.expect("workers");
    workers.sort_by(|a, b| a.id.cmp(&b.id));
    workers
}

pub(super) async fn register_worker_upserts(store: &DynStore) {
    store
        .register_worker(&worker("w1", at(1_000), 0))
        .await
        .expect("register");
    assert_eq!(workers(store, T0).await, [worker("w1", at(1_000), 0)]);
    store
        .register_worker(&worker("w1", at(2_000), 7))
        .await
        .expect("register again");
    assert_eq!(
        workers(store, T0).await,
        [worker("w1", at(2_000), 7)],
        "one entry, refreshed"
    );
}

/// A bridge's entry carries what it reads and its counts, refreshed like a worker's.
pub(super) async fn a_bridge_registers_with_its_source_and_counts(store: &DynStore) {
    let bridge = |seen: i64, done: u64, rejected: u64| WorkerInfo {
        queues: Vec::new(),
        bridge: Some(BridgeInfo {
            source: "amqp://ana:***@broker:5672/%2f queue orders ✓".into(),
            duplicates: 2,
            rejected,
        }),
        ..worker("b1", at(seen), done)
    };
    store.register_worker(&bridge(1_000, 10, 1)).await.expect("register");
    store
        .register_worker(&worker("w1", at(1_000), 3))
        .await
        .expect("register");
    assert_eq!(
        workers(store, T0).await,
        [bridge(1_000, 10, 1), worker("w1", at(1_000), 3)]
    );
    store.register_worker(&bridge(2_000, 25, 4)).await.expect("refresh");
    assert_eq!(
        workers(store, T0).await[0],
        bridge(2_000, 25, 4),
        "the counts refreshed"
    );
}

pub(super) async fn workers_lists_the_seen_and_forgetting_removes_the_unseen(store: &DynStore) {
    for (id, seen) in [("old", 1_000), ("edge", 3_000), ("new", 5_000)] {
        store.register_worker(&worker(id, at(seen), 1)).await.expect("register");
    }
    let names = |workers: Vec<WorkerInfo>| workers.into_iter().map(|w| w.id).collect::<Vec<_>>();
    assert_eq!(names(workers(store, at(3_000)).await), ["edge", "new"]);
    // Listing changes nothing.
    assert_eq!(names(workers(store, T0).await), ["edge", "new", "old"]);
    assert_eq!(store.forget_workers(at(3_000)).await.expect("forget"), 1);
    // Forgotten for good, not just hidden.
    assert_eq!(names(workers(store, T0).await), ["edge", "new"]);
    assert_eq!(store.forget_workers(at(3_000)).await.expect("forget again"), 0);
}

pub(super) async fn unregister_worker_removes_it(store: &DynStore) {
    store
        .register_worker(&worker("w1", at(1_000), 0))
        .await
        .expect("register");
    store
        .register_worker(&worker("w2", at(1_000), 0))
        .await
        .expect("register");
    store.unregister_worker("w1").await.expect("unregister");
    store
        .unregister_worker("never-registered")
        .await
        .expect("unregistering an unknown worker is fine");
    assert_eq!(workers(store, T0).await, [worker("w2", at(1_000), 0)]);
}
