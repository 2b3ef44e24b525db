//! MySQL / MariaDB behaviour beyond the shared contract and the server-store suite
//! (`server_stores::mysql`, `server_stores::sql::mysql`): utf8mb4 text end to end, lock-wait time-outs
//! and deadlocks, a plain INSERT waking an idle subscription, database isolation, and an unknown
//! database named in the error.
//!
//! Each test works in a fresh database of the test server (`support::mysql_store_in`), dropped when its
//! store drops. Waits end as soon as their condition holds (`support::eventually`); nothing sleeps for
//! a fixed time to let something happen.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobq::handler::{Outcome, handler_fn};
use jobq::job::{JobId, JobSpec, JobStatus};
use jobq::store::{self, DynStore, Lease, StoreUrl};
use jobq::time::UnixMillis;
use jobq::worker::Worker;
use sqlx::{Executor, MySqlConnection};

use crate::support::jobs::*;
use crate::support::mysql::{app_connection, create_database, mysql_admin, mysql_url, with_database};
use crate::support::{
    ServerSandbox, TestStore, connect, eventually, fresh_name, lazy, mysql_store_in, stop_worker, subscribe, within,
    woken,
};

/// How long anything that should happen soon may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// A migrated store in a fresh database, and that database's name.
async fn fixture() -> (TestStore, String) {
    let database = fresh_name();
    (mysql_store_in(&database).await, database)
}

/// A migrated store in a fresh database, opened with extra URL options (`lock_wait_timeout=1`…).
async fn fixture_with(options: &str) -> (DynStore, ServerSandbox, String) {
    let database = fresh_name();
    let sandbox = create_database(&database).await;
    let url = format!("{}?{options}", with_database(&mysql_url(), &database));
    let store = connect(&url).await;
    store.migrate().await.expect("migrate");
    (store, sandbox, database)
}

/// How many jobs of the store have succeeded.
async fn succeeded(store: &DynStore) -> u64 {
    count(store, JobStatus::Succeeded, UnixMillis::now()).await
}

/// A library worker on `store` with quick heartbeats, rescue and polls, recording every job id it
/// runs, 8 at once; stopped by the handle.
fn recording_worker(store: &DynStore, ran: Arc<Mutex<Vec<String>>>) -> (jobq::worker::WorkerHandle, Worker) {
    let worker = Worker::builder(store.clone())
        .heartbeat(Duration::from_millis(200))
        .stale_after(Duration::from_secs(2))
        .poll_interval(Duration::from_millis(50))
        .concurrency(8)
        .handler(
            JOB_TYPE,
            handler_fn(move |job, _cx| {
                let ran = ran.clone();
                async move {
                    ran.lock().unwrap().push(job.id.to_string());
                    Outcome::success()
                }
            }),
        )
        .build()
        .expect("worker");
    (worker.handle(), worker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emoji_and_cjk_text_round_trips_everywhere() {
    let (store, database) = fixture().await;
    let payload = r#"{"greeting":"こんにちは世界 🎉","name":"Zoë 👩🏽‍💻","han":"漢字","kor":"한국어"}"#;
    let mut spec = spec("unicode-1")
        .meta("tenant", "租户 🏢")
        .unique_key("键 🔑")
        .queue("intl");
    spec.payload = serde_json::from_str(payload).unwrap();
    add(&store, spec).await;
    let job = get(&store, &id("unicode-1")).await;
    assert_eq!(job.payload.get(), payload);
    assert_eq!(job.meta.get("tenant").map(String::as_str), Some("租户 🏢"));
    assert_eq!(job.unique_key.as_deref(), Some("键 🔑"));

    // The unique key still coalesces, byte for byte (a different emoji is a different key).
    let again = enqueue(&store, [spec_in("unicode-2", "intl").unique_key("键 🔑")]).await;
    assert_eq!(again[0], coalesced("unicode-1"));
    let other = enqueue(&store, [spec_in("unicode-3", "intl").unique_key("键 🗝")]).await;
    assert_eq!(other[0], created("unicode-3"));

    // Results, errors and progress messages too.
    let running = claim(&store, "intl", WORKER, 10, UnixMillis::now()).await;
    let first = running.iter().find(|j| j.id == id("unicode-1")).expect("claimed");
    let beat = jobq::store::Heartbeat {
        lease: Lease::of(first),
        progress: Some(jobq::job::Progress {
            percent: 50,
            message: Some("半分 ⏳".into()),
        }),
    };
    store.heartbeat(&[beat], UnixMillis::now()).await.expect("heartbeat");
    assert_eq!(
        get(&store, &first.id).await.progress.and_then(|p| p.message).as_deref(),
        Some("半分 ⏳")
    );
    let result = r#"{"ok":"完了 ✅"}"#;
    assert!(
        finish(
            &store,
            &Lease::of(first),
            jobq::store::Transition::Succeeded {
                result: Some(raw(result))
            },
            UnixMillis::now()
        )
        .await
    );
    assert_eq!(get(&store, &first.id).await.result.expect("a result").get(), result);
    let second = running.iter().find(|j| j.id == id("unicode-3")).expect("claimed");
    assert!(
        finish(
            &store,
            &Lease::of(second),
            retry("失敗しました 💥", T0),
            UnixMillis::now()
        )
        .await
    );
    assert_eq!(get(&store, &second.id).await.errors[0].error, "失敗しました 💥");

    // An application's own utf8mb4 insert reads back the same, and the stored bytes are UTF-8.
    let mut app = app_connection(&database).await;
    app.execute("SET NAMES utf8mb4").await.expect("utf8mb4");
    app.execute(
        "INSERT INTO jobq_jobs (id, job_type, payload, meta) VALUES ('app-1', 't', '{\"s\": \"🦀 錆\"}', '{\"k\": \"値\"}')",
    )
    .await
    .expect("insert");
    let job = get(&store, &id("app-1")).await;
    assert_eq!(job.payload.get(), r#"{"s":"🦀 錆"}"#);
    assert_eq!(job.meta.get("k").map(String::as_str), Some("値"));
    let hex: String = sqlx::query_scalar("SELECT HEX(JSON_VALUE(payload, '$.s')) FROM jobq_jobs WHERE id = 'app-1'")
        .fetch_one(&mut app)
        .await
        .expect("hex");
    assert_eq!(hex, "F09FA68020E98C86");
    let charsets: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT CAST(CHARACTER_SET_NAME AS CHAR) FROM information_schema.columns \
         WHERE table_schema = DATABASE() AND table_name LIKE 'jobq\\_%' AND CHARACTER_SET_NAME IS NOT NULL",
    )
    .fetch_all(&mut app)
    .await
    .expect("charsets");
    assert_eq!(charsets, ["utf8mb4"]);
}

/// A spec in a given queue.
fn spec_in(name: &str, queue: &str) -> JobSpec {
    spec(name).queue(queue)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locked_rows_never_wedge_the_claim_loop() {
    let (store, _sandbox, database) = fixture_with("lock_wait_timeout=1").await;
    const JOBS: usize = 60;
    add_all(&store, (0..JOBS).map(|i| spec(&format!("l-{i:03}")))).await;
    // An operator's transaction holds five pending jobs' rows.
    let mut operator = app_connection(&database).await;
    operator.execute("BEGIN").await.expect("begin");
    let held =
        sqlx::query("SELECT id FROM jobq_jobs WHERE id IN ('l-000', 'l-017', 'l-030', 'l-041', 'l-059') FOR UPDATE")
            .fetch_all(&mut operator)
            .await
            .expect("lock");
    assert_eq!(held.len(), 5);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (handle, worker) = recording_worker(&store, ran.clone());
    let run = tokio::spawn(worker.run());
    // Claims pass over the locked rows: everything else runs while the lock is held.
    eventually("the unlocked jobs to succeed", DEADLINE, async || {
        succeeded(&store).await == (JOBS - 5) as u64
    })
    .await;
    operator.execute("COMMIT").await.expect("commit");
    eventually("the once-locked jobs to succeed too", DEADLINE, async || {
        succeeded(&store).await == JOBS as u64
    })
    .await;
    stop_worker(&handle, run).await;
    assert_eq!(ran.lock().unwrap().len(), JOBS);
}

/// A statement waiting for a row lock: its session, and its number among the server's queries (a
/// statement run again, in a transaction tried again, has a new one).
#[derive(Debug, Clone, Copy, PartialEq)]
struct LockWait {
    session: i64,
    query: i64,
}

/// Waits until a statement on `database` (other than `other_than`) waits for a row lock, failing at
/// once if `waiter` ended first (then nothing ever will, and its answer says why). The wait is read from
/// InnoDB's own status: `information_schema.innodb_trx` leaves out transactions that have only read
/// (with locks) so far, which is exactly what a waiting `SELECT … FOR UPDATE` is.
async fn someone_waits_for_a_lock<T: std::fmt::Debug>(
    admin: &mut MySqlConnection,
    database: &str,
    waiter: &mut tokio::task::JoinHandle<T>,
    other_than: Option<LockWait>,
) -> LockWait {
    eventually(
        format!("a statement on {database} to wait for a row lock"),
        DEADLINE,
        async || {
            if waiter.is_finished() {
                panic!(
                    "the transaction ended before it waited for a lock: {:?}",
                    (&mut *waiter).await
                );
            }
            let sessions: Vec<i64> =
                sqlx::query_scalar("SELECT CAST(id AS SIGNED) FROM information_schema.processlist WHERE db = ?")
                    .bind(database)
                    .fetch_all(&mut *admin)
                    .await
                    .expect("processlist");
            let (_, _, status): (String, String, String) = sqlx::query_as("SHOW ENGINE INNODB STATUS")
                .fetch_one(&mut *admin)
                .await
                .expect("innodb status");
            // A waiting transaction's section names its session (`thread id 12,`) and its statement
            // (`query id 345`).
            let waiting = status
                .split("---TRANSACTION")
                .filter(|trx| trx.contains("LOCK WAIT"))
                .filter_map(|trx| {
                    let session = *sessions.iter().find(|id| trx.contains(&format!("thread id {id},")))?;
                    let query = trx.split("query id ").nth(1)?.split_whitespace().next()?.parse().ok()?;
                    Some(LockWait { session, query })
                })
                .find(|wait| Some(*wait) != other_than);
            waiting.ok_or_else(|| lazy(move || format!("sessions {sessions:?}; InnoDB status:\n{status}")))
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_outlasts_lock_wait_time_outs() {
    let (store, _sandbox, database) = fixture_with("lock_wait_timeout=1").await;
    add(&store, spec("slow-lock")).await;
    add(&store, spec("free")).await;
    let running = claim(&store, "default", WORKER, 1, UnixMillis::now()).await;
    let job = running.into_iter().next().expect("a job");
    let mut operator = app_connection(&database).await;
    operator.execute("BEGIN").await.expect("begin");
    sqlx::query("SELECT id FROM jobq_jobs WHERE id = ? FOR UPDATE")
        .bind(job.id.as_str())
        .fetch_all(&mut operator)
        .await
        .expect("lock");
    let mut finishing = {
        let store = store.clone();
        let lease = Lease::of(&job);
        tokio::spawn(async move {
            store
                .finish(
                    &[jobq::store::Finish {
                        lease,
                        outcome: jobq::store::Transition::Succeeded { result: None },
                        progress: None,
                        spawn: Vec::new(),
                    }],
                    UnixMillis::now(),
                )
                .await
        })
    };
    // Meanwhile a claim is not held up by the locked row.
    let other = claim(&store, "default", "worker-2", 10, UnixMillis::now()).await;
    assert_eq!(other.len(), 1);
    assert_ne!(other[0].id, job.id);
    // Hold the lock past one time-out (1 s): the finish waits for it, meets the time-out, and waits
    // again in a transaction tried again, neither giving up nor getting through the held lock.
    let mut admin = mysql_admin().await;
    let first = someone_waits_for_a_lock(&mut admin, &database, &mut finishing, None).await;
    let again = someone_waits_for_a_lock(&mut admin, &database, &mut finishing, Some(first)).await;
    assert_ne!(first.query, again.query);
    operator.execute("COMMIT").await.expect("commit");
    let applied = within("the finish", DEADLINE, finishing)
        .await
        .expect("finish task")
        .expect("the finish succeeded after the lock went");
    assert_eq!(applied, [true]);
    assert_eq!(get(&store, &job.id).await.status, JobStatus::Succeeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_chosen_as_a_deadlock_victim_is_run_again() {
    let (store, _sandbox, database) = fixture_with("lock_wait_timeout=20").await;
    // The finish locks its jobs in id order: "a" first, then "b".
    add_all(&store, [spec("dl-a"), spec("dl-b")]).await;
    let running = claim(&store, "default", WORKER, 2, UnixMillis::now()).await;
    assert_eq!(running.len(), 2);
    let mut operator = app_connection(&database).await;
    operator
        .execute("CREATE TABLE ballast (n INT PRIMARY KEY) ENGINE = InnoDB")
        .await
        .expect("ballast table");
    operator.execute("BEGIN").await.expect("begin");
    // Make the operator's transaction the heavier one, so that InnoDB picks the finish as the victim.
    operator
        .execute(
            "INSERT INTO ballast SELECT n FROM (WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
             WHERE n < 900) SELECT n FROM s) AS g",
        )
        .await
        .expect("ballast rows");
    sqlx::query("SELECT id FROM jobq_jobs WHERE id = 'dl-b' FOR UPDATE")
        .fetch_all(&mut operator)
        .await
        .expect("lock b");
    let mut finishing = {
        let store = store.clone();
        let finishes: Vec<jobq::store::Finish> = running
            .iter()
            .map(|j| jobq::store::Finish {
                lease: Lease::of(j),
                outcome: jobq::store::Transition::Succeeded { result: None },
                progress: None,
                spawn: Vec::new(),
            })
            .collect();
        tokio::spawn(async move { store.finish(&finishes, UnixMillis::now()).await })
    };
    let mut admin = mysql_admin().await;
    // The finish holds "a" and waits for "b"; the operator now asks for "a": a deadlock.
    someone_waits_for_a_lock(&mut admin, &database, &mut finishing, None).await;
    sqlx::query("SELECT id FROM jobq_jobs WHERE id = 'dl-a' FOR UPDATE")
        .fetch_all(&mut operator)
        .await
        .expect("the operator won the deadlock");
    operator.execute("COMMIT").await.expect("commit");
    let applied = within("the finish", DEADLINE, finishing)
        .await
        .expect("finish task")
        .expect("the finish was run again and succeeded");
    assert_eq!(applied, [true, true]);
    for job in &running {
        assert_eq!(get(&store, &job.id).await.status, JobStatus::Succeeded);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_insert_wakes_an_idle_subscription() {
    let (store, database) = fixture().await;
    let (_subscription, notify) = subscribe(&store, &["mail"]);
    let mut app = app_connection(&database).await;
    app.execute("INSERT INTO jobq_jobs (queue, job_type) VALUES ('other', 'x')")
        .await
        .expect("insert");
    // Work in another queue, or not ready yet, wakes nobody.
    app.execute("INSERT INTO jobq_jobs (queue, job_type, run_at) VALUES ('mail', 'x', 99999999999999)")
        .await
        .expect("insert");
    // Not a wait for something to happen: for a while (200 ms, forty of the subscription's looks), no
    // signal may come.
    let quiet = tokio::time::timeout(Duration::from_millis(200), notify.notified()).await;
    assert!(quiet.is_err(), "woken without ready work in the queue");
    app.execute("INSERT INTO jobq_jobs (queue, job_type) VALUES ('mail', 'mail.send')")
        .await
        .expect("insert");
    woken(&notify, "a plain INSERT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn databases_keep_stores_apart() {
    let (a, _) = fixture().await;
    let (b, _) = fixture().await;
    add(&a, spec("only-in-a")).await;
    add(&b, spec("only-in-b")).await;
    assert!(b.get(&id("only-in-a")).await.expect("get").is_none());
    assert!(
        a.get(&JobId::from_stored("only-in-b".into()))
            .await
            .expect("get")
            .is_none()
    );
    assert_eq!(ids(&claim(&b, "default", WORKER, 10, T0).await), ["only-in-b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_database_is_named() {
    let url = format!("{}?x=1", with_database(&mysql_url(), "jobq_no_such_database"));
    let err = store::connect(&StoreUrl::parse(&url).expect("url"))
        .await
        .expect_err("an unknown database");
    let shown = format!("{:#}", anyhow::Error::from(err));
    assert!(shown.contains("jobq_no_such_database"), "{shown}");
}
