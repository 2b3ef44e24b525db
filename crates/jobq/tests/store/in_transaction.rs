//! Enqueue and emit inside the application's own sqlx transaction, on each SQL store, with the
//! application's own pool on the store's database: rolled back, there is no job (and no event);
//! committed, the job runs (and the event becomes its jobs); a unique key a live job holds and an id
//! that exists answer as a plain enqueue does, and a `keep-last` job queues behind a running holder
//! with everything that takes written in the transaction. Redis keeps no SQL tables and refuses.

use std::collections::BTreeMap;
use std::time::Duration;

use jobq::client::EventSpec;
use jobq::events::{Subscriber, Subscriptions};
use jobq::handler::Builtin;
use jobq::job::UniqueMode;
use jobq::store::{AppDatabase, EmitOutcome, EnqueueOutcome};
use jobq::time::UnixMillis;
use jobq::{Client, JobId, JobSpec, JobStatus, Worker};
use serde_json::json;

use crate::support::{self, TestStore, eventually, stop_worker};

/// The application's connection string for the store's database: the store's URL without jobq's
/// own options.
fn app_url(store: &TestStore) -> String {
    store.url().split('?').next().expect("a URL").to_string()
}

async fn sqlite() {
    let store = support::sqlite_store().await;
    let options: sqlx::sqlite::SqliteConnectOptions = app_url(&store).parse().expect("a SQLite URL");
    let pool = sqlx::SqlitePool::connect_with(options.busy_timeout(Duration::from_secs(10)))
        .await
        .expect("the application's SQLite pool opens the store's file");
    in_transaction(store, pool).await;
}

async fn postgres() {
    let store = support::postgres_store().await;
    let pool = sqlx::PgPool::connect(&app_url(&store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Postgres)));
    in_transaction(store, pool).await;
}

async fn mysql() {
    let store = support::mysql_store().await;
    let pool = sqlx::MySqlPool::connect(&app_url(&store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Mysql)));
    in_transaction(store, pool).await;
}

async fn in_transaction<DB: AppDatabase>(store: TestStore, pool: sqlx::Pool<DB>) {
    let client = Client::new(store.store().clone());

    // Rolled back: no job, no event.
    let mut tx = pool.begin().await.unwrap();
    let answer = client
        .enqueue_in(
            &mut tx,
            JobSpec::new("order.notify", json!({"order": 1})).id("rolled-back"),
        )
        .await
        .unwrap();
    assert_eq!(answer.outcome, EnqueueOutcome::Created);
    let event = |id: &str| EventSpec {
        name: "order.paid".into(),
        payload: json!({"order": 2}),
        id: Some(id.into()),
        meta: BTreeMap::new(),
        allow_none: false,
    };
    let emitted = client.emit_in(&mut tx, event("evt-1")).await.unwrap();
    assert_eq!(emitted.outcome, EmitOutcome::Emitted);
    tx.rollback().await.unwrap();
    assert!(
        matches!(client.get("rolled-back").await, Err(jobq::Error::NotFound { .. })),
        "a rolled-back enqueue leaves no job"
    );

    // Committed: the job, and the event's job, run.
    let mut tx = pool.begin().await.unwrap();
    let answer = client
        .enqueue_in(
            &mut tx,
            JobSpec::new("order.notify", json!({"order": 3})).id("committed"),
        )
        .await
        .unwrap();
    assert_eq!(answer.outcome, EnqueueOutcome::Created);
    let emitted = client.emit_in(&mut tx, event("evt-1")).await.unwrap();
    assert_eq!(
        emitted.outcome,
        EmitOutcome::Emitted,
        "the rolled-back event's id is free"
    );
    tx.commit().await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    let again = client.emit_in(&mut tx, event("evt-1")).await.unwrap();
    assert_eq!(again.outcome, EmitOutcome::Duplicate, "a committed event's id is taken");
    tx.rollback().await.unwrap();

    let subscriptions = Subscriptions(BTreeMap::from([(
        "order.paid".to_string(),
        vec![Subscriber::new("order.notify")],
    )]));
    let worker = Worker::builder(store.store().clone())
        .poll_interval(Duration::from_millis(20))
        .events(subscriptions)
        .handler("order.notify", Builtin::Noop)
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    let event_job = jobq::events::job_id("evt-1", 1);
    for id in [JobId::from_stored("committed".into()), event_job] {
        eventually(
            format!("job {id} to succeed"),
            Duration::from_secs(20),
            async || matches!(client.get(id.as_str()).await, Ok(job) if job.status == JobStatus::Succeeded),
        )
        .await;
    }
    stop_worker(&handle, run).await;

    // A unique key a live job holds coalesces; an id that exists is a duplicate (on SQLite the
    // holder of the id has just arrived, and waits in the arrivals table).
    let holder = client
        .enqueue(
            JobSpec::new("report.build", json!({}))
                .unique_key("monthly")
                .id("holder"),
        )
        .await
        .unwrap();
    assert_eq!(holder.outcome, EnqueueOutcome::Created);
    let plain = client
        .enqueue(JobSpec::new("report.build", json!({"plain": true})).id("plain"))
        .await
        .unwrap();
    assert_eq!(plain.outcome, EnqueueOutcome::Created);
    let mut tx = pool.begin().await.unwrap();
    let coalesced = client
        .enqueue_in(
            &mut tx,
            JobSpec::new("report.build", json!({}))
                .unique_key("monthly")
                .id("second"),
        )
        .await
        .unwrap();
    assert_eq!(coalesced.outcome, EnqueueOutcome::Coalesced);
    assert_eq!(coalesced.id.as_str(), "holder");
    let duplicate = client
        .enqueue_in(&mut tx, JobSpec::new("other.type", json!({})).id("plain"))
        .await
        .unwrap();
    assert_eq!(duplicate.outcome, EnqueueOutcome::Duplicate);
    assert_eq!(duplicate.id.as_str(), "plain");
    tx.commit().await.unwrap();
    assert!(matches!(client.get("second").await, Err(jobq::Error::NotFound { .. })));
    let kept = client.get("plain").await.unwrap();
    assert_eq!(kept.job_type, "report.build", "the existing job is left as it was");

    // A keep-last job queues behind a running holder: the key the holder gives up, the new job and
    // its edge are written in the transaction, or not at all.
    let weekly = |id: &str| {
        JobSpec::new("report.build", json!({}))
            .queue("weekly")
            .unique_key("weekly")
            .unique_mode(UniqueMode::KeepLast)
            .id(id)
    };
    client.enqueue(weekly("running")).await.unwrap();
    let claim = crate::support::jobs::claim_params(&["weekly"], "w1", 1, UnixMillis::now());
    let claimed = store.store().claim(&claim).await.unwrap();
    assert_eq!(crate::support::jobs::ids(&claimed), ["running"]);
    for commit in [false, true] {
        let mut tx = pool.begin().await.unwrap();
        let behind = client.enqueue_in(&mut tx, weekly("behind")).await.unwrap();
        assert_eq!(
            (behind.outcome, behind.id.as_str()),
            (EnqueueOutcome::QueuedBehind, "behind")
        );
        match commit {
            true => tx.commit().await.unwrap(),
            false => {
                tx.rollback().await.unwrap();
                assert!(matches!(client.get("behind").await, Err(jobq::Error::NotFound { .. })));
            }
        }
    }
    assert_eq!(client.get("behind").await.unwrap().status, JobStatus::Blocked);
    let replaced = client.enqueue(weekly("later")).await.unwrap();
    assert_eq!(
        (replaced.outcome, replaced.id.as_str()),
        (EnqueueOutcome::Replaced, "behind")
    );
    pool.close().await;
}

async fn redis() {
    let store = support::redis_store().await;
    let client = Client::new(store.store().clone());
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    let err = client
        .enqueue_in(&mut tx, JobSpec::new("order.notify", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(err, jobq::Error::Store(jobq::store::StoreError::Unsupported { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn sqlite_enqueues_and_emits_inside_the_applications_transaction() {
    sqlite().await;
}

#[tokio::test]
async fn postgres_enqueues_and_emits_inside_the_applications_transaction() {
    postgres().await;
}

#[tokio::test]
async fn mysql_enqueues_and_emits_inside_the_applications_transaction() {
    mysql().await;
}

#[tokio::test]
async fn redis_refuses_a_sql_transaction() {
    redis().await;
}
