//! The schema and the store's description of itself.

use jobq::job::JobStatus;
use jobq::store::DynStore;

use crate::support::jobs::*;

pub(super) async fn migrate_is_idempotent(store: &DynStore) {
    // The fixture migrated already; again, and concurrently, is harmless and keeps the data.
    add(store, spec("kept")).await;
    store.migrate().await.expect("migrating a second time");
    migrate_concurrently((0..4).map(|_| store.clone())).await;
    assert_eq!(get(store, &id("kept")).await.status, JobStatus::Pending);
    add(store, spec("after")).await;
}

pub(super) async fn info_describes_the_store(store: &DynStore) {
    let info = store.info().await.expect("info");
    assert_eq!(info.kind, store.kind());
    assert!(!info.version.is_empty());
    assert!(!info.url.contains(":secret@") && !info.url.is_empty());
}
