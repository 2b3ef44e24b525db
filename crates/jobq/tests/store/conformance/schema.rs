//! The schema and the store's description of itself.

use std::time::Duration;

use jobq::job::JobStatus;
use jobq::store::{DynStore, StoreError, StoreKind, WakeOn};

use crate::support::jobs::*;
use crate::support::within;

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

pub(super) async fn close_is_the_last_call_and_may_be_made_twice(store: &DynStore) {
    add(store, spec("before")).await;
    // A wake-up subscription holds a connection of its own where the store pushes them: closing ends
    // it too (and does not wait for it to be dropped).
    let notify = std::sync::Arc::new(tokio::sync::Notify::new());
    let _subscription = store.subscribe(&WakeOn::Ready(vec![]), notify);
    within("closing the store", Duration::from_secs(30), store.close()).await;
    within("closing it again", Duration::from_secs(30), store.close()).await;
    let after = within(
        "a call after closing",
        Duration::from_secs(30),
        store.get(&id("before")),
    )
    .await;
    match store.kind() {
        // The stores that close anything refuse calls after it, as a store that cannot be reached.
        StoreKind::Postgres | StoreKind::Mysql => {
            let e = after.expect_err("a call after closing");
            assert!(matches!(e, StoreError::Unavailable { .. }), "{e:?}");
        }
        // SQLite and Redis have nothing to say goodbye to and keep working.
        _ => assert_eq!(
            after.expect("a call after closing").map(|j| j.status),
            Some(JobStatus::Pending)
        ),
    }
}

pub(super) async fn sql_tables_say_where_an_application_finds_the_jobs(store: &DynStore) {
    // `tests/store/in_transaction.rs` writes through them on each SQL store; here, what each says.
    let tables = store.sql_tables();
    match store.kind() {
        StoreKind::Redis => assert!(tables.is_none(), "Redis keeps no SQL tables"),
        kind => {
            let tables = tables.unwrap_or_else(|| panic!("the {kind} store names its tables"));
            assert!(tables.jobs().ends_with("jobq_jobs"), "{}", tables.jobs());
            if kind == StoreKind::Sqlite {
                assert_eq!(
                    tables.jobs(),
                    "jobq_jobs",
                    "the application's main database is the store's file"
                );
            } else {
                // The test stores live in a schema (PostgreSQL) or database (MySQL) of their own,
                // which the application's connection may not have chosen.
                assert!(tables.jobs().contains('.'), "{}", tables.jobs());
            }
        }
    }
}
