//! The edges of jobs that wait for others leave with their dependents, on each SQL store: whatever
//! deletes a job (delete, cleanup, retention) deletes the rows of `jobq_deps` it waited by, read here
//! through an application's own connection to the store's database.

use std::time::Duration;

use jobq::store::{Delete, DynStore};
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

#[tokio::test]
async fn sqlite() {
    let store = support::sqlite_store().await;
    let options: sqlx::sqlite::SqliteConnectOptions = app_url(&store).parse().expect("a SQLite URL");
    let pool = sqlx::SqlitePool::connect_with(options.busy_timeout(Duration::from_secs(10)))
        .await
        .unwrap();
    let sql = format!("SELECT COUNT(*) FROM {}", edges_table(store.store()));
    edges_go_with_their_dependents(store.store(), async || {
        sqlx::query_scalar::<_, i64>(&sql).fetch_one(&pool).await.unwrap()
    })
    .await;
}

#[tokio::test]
async fn postgres() {
    let store = support::postgres_store().await;
    let pool = sqlx::PgPool::connect(&app_url(&store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Postgres)));
    let sql = format!("SELECT COUNT(*) FROM {}", edges_table(store.store()));
    edges_go_with_their_dependents(store.store(), async || {
        sqlx::query_scalar::<_, i64>(&sql).fetch_one(&pool).await.unwrap()
    })
    .await;
}

#[tokio::test]
async fn mysql() {
    let store = support::mysql_store().await;
    let pool = sqlx::MySqlPool::connect(&app_url(&store))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", support::server_hint(jobq::store::StoreKind::Mysql)));
    let sql = format!("SELECT COUNT(*) FROM {}", edges_table(store.store()));
    edges_go_with_their_dependents(store.store(), async || {
        sqlx::query_scalar::<_, i64>(&sql).fetch_one(&pool).await.unwrap()
    })
    .await;
}
