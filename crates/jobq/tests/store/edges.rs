//! The edges of jobs that wait for others, on each SQL store, read and written here through an
//! application's own connection to the store's database: whatever deletes a job (delete, cleanup,
//! retention) deletes the rows of `jobq_deps` it waited by; the upgrade to schema version 10
//! counts on each dependent the edges still open (`waiting_for`); and an enqueue that deadlocks
//! with another transaction over the jobs it names is tried again.

use std::time::Duration;

use jobq::job::{DependOn, JobStatus};
use jobq::store::{Delete, DynStore, Lease, Transition};
use jobq::{Client, JobId, JobSpec};
use serde_json::json;

use crate::support::{self, TestStore};

fn app_url(store: &TestStore) -> String {
    store.url().split('?').next().expect("a URL").to_string()
}

/// `jobq_deps` as the application's connection names it (in the store's schema, if any).
fn edges_table(store: &DynStore) -> String {
    let tables = store.sql_tables().expect("a SQL store");
    tables.jobs().replace("jobq_jobs", "jobq_deps")
}

/// Enqueues a dependency and two jobs after it, deletes one of the two: one edge is left; deletes
/// the other and the dependency: none.
async fn edges_go_with_their_dependents(store: &DynStore, count: impl AsyncFn() -> i64) {
    let client = Client::new(store.clone());
    let d = client.enqueue(JobSpec::new("t", json!({})).id("d")).await.unwrap().id;
    for name in ["j1", "j2"] {
        client
            .enqueue(JobSpec::new("t", json!({})).id(name).after(d.clone()))
            .await
            .unwrap();
    }
    assert_eq!(count().await, 2);
    let delete = |ids: &[&str]| Delete {
        ids: ids.iter().map(|i| JobId::parse(i).unwrap()).collect(),
        force: false,
    };
    store.delete(&delete(&["j1"])).await.unwrap();
    assert_eq!(count().await, 1);
    store.delete(&delete(&["j2", "d"])).await.unwrap();
    assert_eq!(count().await, 0);
}

/// A job after three others, one of which has ended, as schema version 9 left it (the ended one's
/// edge marked `met`, no count of open edges on the dependent), then the upgrade's count (the
/// statement of `0010_waiting_for` that sets `waiting_for`): the job waits for the two others,
/// and runs once both have ended. Without the count it would run at the first of them.
async fn the_upgrade_to_10_counts_the_edges_still_open(store: &DynStore, exec: impl AsyncFn(&str)) {
    use crate::support::jobs::{T0, WORKER, at, claim_one, finish, get, id, spec};
    for name in ["d1", "d2", "d3"] {
        store
            .enqueue(&[crate::support::jobs::new_job(spec(name))])
            .await
            .unwrap();
    }
    let j = ["d1", "d2", "d3"]
        .iter()
        .fold(spec("j").run_at(at(1_000)), |j, d| j.after_on(id(d), DependOn::Finish));
    store.enqueue(&[crate::support::jobs::new_job(j)]).await.unwrap();
    let queue = jobq::job::DEFAULT_QUEUE;
    let done = Transition::Succeeded { result: None };
    let d1 = claim_one(store, queue, WORKER, T0).await;
    assert!(finish(store, &Lease::of(&d1), done.clone(), at(1)).await);

    let tables = store.sql_tables().expect("a SQL store");
    let (jobs, deps) = (tables.jobs(), tables.jobs().replace("jobq_jobs", "jobq_deps"));
    exec(&format!(
        "UPDATE {deps} SET resolved = 'met' WHERE dependency = '{}'",
        d1.id
    ))
    .await;
    exec(&format!("UPDATE {jobs} SET waiting_for = 0")).await;
    let migration = jobq::store::migrate::migrations(store.kind())
        .iter()
        .find(|m| m.version == 10)
        .expect("migration 10");
    let count = jobq::store::migrate::statements(migration.sql)
        .into_iter()
        .find(|s| s.starts_with("UPDATE"))
        .expect("the migration's count");
    // In the store's schema, where it has one.
    let count = count.replace("jobq_jobs", jobs).replace("jobq_deps", &deps);
    exec(&count).await;

    for (name, at_ms, blocked) in [("d2", 2, true), ("d3", 3, false)] {
        let d = claim_one(store, queue, WORKER, at(at_ms)).await;
        assert_eq!(d.id.as_str(), name);
        assert!(finish(store, &Lease::of(&d), done.clone(), at(at_ms)).await);
        let expected = if blocked {
            JobStatus::Blocked
        } else {
            JobStatus::Pending
        };
        assert_eq!(get(store, &id("j")).await.status, expected, "after {name}");
    }
}

/// Runs the cases above on a test store through the application's own pool, whatever its database.
macro_rules! through_the_applications_pool {
    ($store:expr, $pool:expr) => {{
        let (store, pool) = (&$store, &$pool);
        let sql = format!("SELECT COUNT(*) FROM {}", edges_table(store.store()));
        edges_go_with_their_dependents(store.store(), async || {
            sqlx::query_scalar::<_, i64>(&sql).fetch_one(pool).await.unwrap()
        })
        .await;
        the_upgrade_to_10_counts_the_edges_still_open(store.store(), async |statement: &str| {
            sqlx::query(statement).execute(pool).await.unwrap();
        })
        .await;
    }};
}

async fn postgres_pool(store: &TestStore) -> sqlx::PgPool {
    sqlx::PgPool::connect(&app_url(store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Postgres)))
}

#[tokio::test]
async fn sqlite() {
    let store = support::sqlite_store().await;
    let options: sqlx::sqlite::SqliteConnectOptions = app_url(&store).parse().expect("a SQLite URL");
    let pool = sqlx::SqlitePool::connect_with(options.busy_timeout(Duration::from_secs(10)))
        .await
        .unwrap();
    through_the_applications_pool!(store, pool);
}

#[tokio::test]
async fn postgres() {
    let store = support::postgres_store().await;
    let pool = postgres_pool(&store).await;
    through_the_applications_pool!(store, pool);
}

#[tokio::test]
async fn mysql() {
    let store = support::mysql_store().await;
    let pool = sqlx::MySqlPool::connect(&app_url(&store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Mysql)));
    through_the_applications_pool!(store, pool);
}

/// An enqueue after running jobs locks them in id order; another transaction (here the
/// application's, as an outcome statement may, in its plan's order) holding the second and then
/// asking for the first deadlocks with it. PostgreSQL breaks the deadlock by failing the enqueue,
/// whose wait began first; the enqueue is then tried again, whole, and goes in once the other
/// transaction has committed.
#[tokio::test]
async fn postgres_an_enqueue_that_deadlocks_is_tried_again() {
    use crate::support::jobs::{get, id, new_job, spec};
    let store = support::postgres_store().await;
    let pool = postgres_pool(&store).await;
    let dynstore = store.store().clone();
    dynstore
        .enqueue(&[new_job(spec("a")), new_job(spec("b"))])
        .await
        .unwrap();
    let tables = dynstore.sql_tables().expect("a SQL store");
    let lock = |name: &str| format!("SELECT id FROM {} WHERE id = '{}' FOR UPDATE", tables.jobs(), id(name));

    let mut other = pool.begin().await.unwrap();
    sqlx::query(&lock("b")).execute(&mut *other).await.unwrap();
    let enqueue = tokio::spawn({
        let store = dynstore.clone();
        let j = spec("j")
            .after_on(id("a"), DependOn::Success)
            .after_on(id("b"), DependOn::Success);
        async move { store.enqueue(&[new_job(j)]).await }
    });
    // The enqueue holds `a` and waits for `b`.
    let waiting = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() \
                   AND wait_event_type = 'Lock'";
    while sqlx::query_scalar::<_, i64>(waiting).fetch_one(&pool).await.unwrap() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sqlx::query(&lock("a")).execute(&mut *other).await.unwrap();
    other.commit().await.unwrap();

    let answers = enqueue.await.unwrap().expect("the enqueue, tried again");
    assert_eq!(answers[0].outcome, jobq::store::EnqueueOutcome::Created);
    assert_eq!(get(&dynstore, &id("j")).await.status, JobStatus::Blocked);
}
