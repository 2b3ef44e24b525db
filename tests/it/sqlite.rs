//! SQLite behaviour beyond the shared contract: the plain insert, which runs on a connection of its own
//! in the calling thread, from a current-thread runtime (what the one-shot commands use) and while
//! another connection holds the write lock (SQLite's `busy_timeout`, waited out or reported).
//!
//! Each test works in a fresh file in a temporary directory. Nothing sleeps to let something happen:
//! the lock is taken before the enqueue starts and let go by the test itself.

use std::time::Duration;

use jobq::job::JobStatus;
use jobq::store::{self, DynStore, EnqueueOutcome, Enqueued, StoreUrl};
use rusqlite::Connection;
use tempfile::TempDir;

use crate::support::jobs::*;
use crate::support::{connect, migrate, within};

/// How long anything that should happen soon may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// A migrated store on a fresh file, opened with the URL options `options`, and the directory that
/// holds the file (removed when dropped).
async fn fixture(options: &str) -> (DynStore, TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("jobq-test-")
        .tempdir()
        .expect("creating a temporary directory for a SQLite test store");
    let file = dir.path().join("jobs.db");
    let store = connect(&format!("sqlite://{}?{options}", file.display())).await;
    migrate(&store, "SQLite test store").await;
    (store, dir, file)
}

/// A store with one job written (so the direct connection is open), and a second connection to its
/// file holding SQLite's write lock (an immediate transaction), as another process's writer would.
async fn locked_by_another_writer(options: &str) -> (DynStore, TempDir, Connection) {
    let (store, dir, file) = fixture(options).await;
    store.enqueue(&[new_job(spec("before"))]).await.unwrap();
    let other = Connection::open(file).expect("opening a second connection");
    other.execute_batch("BEGIN IMMEDIATE").expect("taking the write lock");
    (store, dir, other)
}

#[test]
fn an_enqueue_on_a_current_thread_runtime_is_written() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = StoreUrl::sqlite_file(&dir.path().join("jobs.db"));
        let store = store::connect(&url).await.expect("opening the store");
        migrate(&store, "SQLite test store").await;
        // One producer alone, then several at once (which share commits).
        assert_eq!(
            store.enqueue(&[new_job(spec("alone"))]).await.unwrap(),
            vec![created("alone")]
        );
        let many = (0..16).map(|i| {
            let store = store.clone();
            async move { store.enqueue(&[new_job(spec(&format!("many-{i}")))]).await }
        });
        for (i, answer) in futures_util::future::join_all(many).await.into_iter().enumerate() {
            assert_eq!(answer.unwrap(), vec![created(&format!("many-{i}"))]);
        }
        // An id stored already still gets its answer from the checked path.
        let duplicate = Enqueued {
            id: id("alone"),
            outcome: EnqueueOutcome::Duplicate,
        };
        assert_eq!(store.enqueue(&[new_job(spec("alone"))]).await.unwrap(), vec![duplicate]);
        assert_eq!(count(&store, JobStatus::Pending, T0).await, 17);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_waits_for_another_writer_within_busy_timeout() {
    let (store, _dir, other) = locked_by_another_writer("busy_timeout=30s").await;
    let mut waiting = {
        let store = store.clone();
        tokio::spawn(async move { store.enqueue(&[new_job(spec("during"))]).await })
    };
    // While the lock is held the enqueue cannot finish (a bound on a wait, not a claim about speed).
    let early = tokio::time::timeout(Duration::from_millis(200), &mut waiting).await;
    assert!(
        early.is_err(),
        "an enqueue finished while another writer held the lock: {early:?}"
    );
    other.execute_batch("COMMIT").expect("letting the write lock go");
    let answer = within("an enqueue waiting for the write lock", DEADLINE, waiting).await;
    assert_eq!(answer.unwrap().unwrap(), vec![created("during")]);
    assert_eq!(count(&store, JobStatus::Pending, T0).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_past_busy_timeout_fails_saying_the_database_is_locked() {
    let (store, _dir, other) = locked_by_another_writer("busy_timeout=100ms").await;
    let failed = within(
        "an enqueue meeting a held write lock",
        DEADLINE,
        store.enqueue(&[new_job(spec("during"))]),
    )
    .await
    .expect_err("the write lock is held throughout");
    other.execute_batch("ROLLBACK").expect("letting the write lock go");
    assert_eq!(
        format!("{:#}", anyhow::Error::from(failed)),
        "sqlite store: enqueue failed: (code: 5) database is locked"
    );
    assert_eq!(count(&store, JobStatus::Pending, T0).await, 1);
}
