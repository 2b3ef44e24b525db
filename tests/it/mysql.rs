//! MySQL / MariaDB behaviour beyond the shared contract: the documented table that applications insert
//! into inside their own transactions, utf8mb4 text end to end, migrations racing each other, a worker
//! whose connections are killed, a worker whose server restarts (a private MariaDB of the test's own),
//! lock-wait time-outs and deadlocks, and a server that cannot be reached.
//!
//! Each test works in a fresh database of the test server (`support::mysql_store_in`), dropped when its
//! store drops. Waits have deadlines and end as soon as their condition holds; nothing sleeps for a
//! fixed time to let something happen.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jobq::handler::{Outcome, handler_fn};
use jobq::job::{JobId, JobSpec, JobStatus};
use jobq::store::{self, DynStore, Lease, StoreError, StoreUrl};
use jobq::time::UnixMillis;
use jobq::worker::Worker;
use sqlx::{Connection, Executor, MySqlConnection};

use crate::support::jobs::*;
use crate::support::{
    MysqlSandbox, TestStore, connect_mysql, fresh_schema, mysql_admin, mysql_store_in, mysql_url, private,
    with_database,
};

/// How long anything that should happen soon may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// The documented insert an application runs inside its own transaction.
const ORDER_INSERT: &str =
    "INSERT INTO jobq_jobs (id, queue, job_type, payload) VALUES ('order-1', 'default', 'order.paid', '{\"order\":1}')";

/// A migrated store in a fresh database, and that database's name.
async fn fixture() -> (TestStore, String) {
    let database = fresh_schema();
    (mysql_store_in(&database).await, database)
}

/// A migrated store in a fresh database, opened with extra URL options (`lock_wait_timeout=1`…).
async fn fixture_with(options: &str) -> (DynStore, MysqlSandbox, String) {
    let database = fresh_schema();
    let sandbox = MysqlSandbox::create(&database).await;
    let url = format!("{}?{options}", with_database(&mysql_url(), &database));
    let store = connect_mysql(&url).await;
    store.migrate().await.expect("migrate");
    (store, sandbox, database)
}

/// A connection of an application's own to `database`.
async fn app_connection(database: &str) -> MySqlConnection {
    MySqlConnection::connect(&with_database(&mysql_url(), database))
        .await
        .expect("connecting as the application")
}

/// Waits until `check` holds, failing the test with `what` after [`DEADLINE`].
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < DEADLINE, "not within {DEADLINE:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How many jobs of the store have `status`.
async fn count(store: &DynStore, status: JobStatus) -> u64 {
    let stats = store
        .stats(&jobq::store::Stats {
            queues: vec![],
            now: UnixMillis::now(),
        })
        .await
        .expect("stats");
    stats.queues.iter().map(|q| q.count(status)).sum()
}

/// A library worker on `store` with quick heartbeats, rescue and polls, running `handler` for the
/// test jobs, 8 at once; stopped by the handle.
fn test_worker(
    store: &DynStore,
    handler: impl jobq::handler::Handler + 'static,
) -> (jobq::worker::WorkerHandle, Worker) {
    let worker = Worker::builder(store.clone())
        .heartbeat(Duration::from_millis(200))
        .stale_after(Duration::from_secs(2))
        .poll_interval(Duration::from_millis(50))
        .concurrency(8)
        .handler(JOB_TYPE, handler)
        .build()
        .expect("worker");
    (worker.handle(), worker)
}

/// A [`test_worker`] whose handler records every job id it runs.
fn recording_worker(store: &DynStore, ran: Arc<Mutex<Vec<String>>>) -> (jobq::worker::WorkerHandle, Worker) {
    test_worker(
        store,
        handler_fn(move |job, _cx| {
            let ran = ran.clone();
            async move {
                ran.lock().unwrap().push(job.id.to_string());
                Outcome::success()
            }
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_plain_insert_leaves_no_job() {
    let (store, database) = fixture().await;
    let mut app = app_connection(&database).await;
    let mut tx = app.begin().await.expect("begin");
    tx.execute(ORDER_INSERT).await.expect("the documented insert");
    tx.rollback().await.expect("rollback");
    assert!(store.get(&id("order-1")).await.expect("get").is_none());
    let now = UnixMillis::now().plus(Duration::from_secs(1));
    assert!(claim(&store, "default", WORKER, 10, now).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_plain_insert_gets_defaults_and_is_run_by_a_worker() {
    let (store, database) = fixture().await;
    let mut app = app_connection(&database).await;
    let before = UnixMillis::now();
    let mut tx = app.begin().await.expect("begin");
    // The application's own write and the job commit together (a transactional outbox).
    tx.execute("CREATE TABLE orders (id INT PRIMARY KEY) ENGINE = InnoDB")
        .await
        .expect("an application table");
    tx.execute("INSERT INTO orders VALUES (1)")
        .await
        .expect("the application's own write");
    tx.execute(ORDER_INSERT).await.expect("the documented insert");
    // Even the id and the queue may be left out.
    tx.execute("INSERT INTO jobq_jobs (job_type) VALUES ('order.audit')")
        .await
        .expect("an insert with the type alone");
    tx.commit().await.expect("commit");
    let after = UnixMillis::now();

    let job = get(&store, &id("order-1")).await;
    assert_eq!(
        (job.queue.as_str(), job.job_type.as_str(), job.payload.get()),
        ("default", "order.paid", r#"{"order":1}"#)
    );
    assert_eq!(
        (job.status, job.attempt, job.max_attempts, job.priority),
        (JobStatus::Pending, 0, 5, 0)
    );
    assert!(job.meta.is_empty() && job.errors.is_empty() && job.unique_key.is_none() && job.timeout_ms.is_none());
    assert!(job.started_at.is_none() && job.finished_at.is_none() && job.worker_id.is_none());
    // The server's clock fills the times: the same clock as ours on this machine.
    for t in [job.created_at, job.run_at] {
        assert!(
            before.0 - 5 <= t.0 && t.0 <= after.0 + 5,
            "{t:?} not within {before:?}..{after:?}"
        );
    }
    let audit = store
        .list(&jobq::store::List {
            filter: jobq::store::JobFilter {
                job_types: vec!["order.audit".into()],
                ..Default::default()
            },
            limit: 10,
            offset: 0,
        })
        .await
        .expect("list");
    assert_eq!(audit.len(), 1);
    // The generated id is a time-ordered UUIDv7, like the ids jobq makes.
    let generated = audit[0].id.to_string();
    let uuid = uuid::Uuid::parse_str(&generated).expect("a UUID");
    assert_eq!(uuid.get_version_num(), 7, "{generated}");
    let (secs, nanos) = uuid.get_timestamp().expect("a v7 timestamp").to_unix();
    let millis = secs as i64 * 1000 + i64::from(nanos / 1_000_000);
    assert!(before.0 - 5 <= millis && millis <= after.0 + 5, "{generated}");

    // A worker runs both.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let worker = Worker::builder(store.store().clone())
        .poll_interval(Duration::from_millis(50))
        .handler(
            "order.paid",
            handler_fn({
                let ran = ran.clone();
                move |job, _cx| {
                    let ran = ran.clone();
                    async move {
                        ran.lock().unwrap().push(job.id.to_string());
                        Outcome::success()
                    }
                }
            }),
        )
        .handler("order.audit", handler_fn(|_job, _cx| async { Outcome::success() }))
        .build()
        .expect("worker");
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    eventually("both plain inserts succeeded", || async {
        count(&store, JobStatus::Succeeded).await == 2
    })
    .await;
    handle.shutdown();
    run.await.expect("worker task").expect("worker");
    assert_eq!(*ran.lock().unwrap(), ["order-1"]);
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
async fn the_table_refuses_rows_jobq_could_not_read() {
    let (_store, database) = fixture().await;
    let mut app = app_connection(&database).await;
    for bad in [
        "INSERT INTO jobq_jobs (job_type, payload) VALUES ('t', '{not json')",
        "INSERT INTO jobq_jobs (job_type, meta) VALUES ('t', '[1, 2]')",
        "INSERT INTO jobq_jobs (job_type, status) VALUES ('t', 'later')",
        "INSERT INTO jobq_jobs (job_type, max_attempts) VALUES ('t', 0)",
        "INSERT INTO jobq_jobs (queue, payload) VALUES ('default', '{}')",
    ] {
        assert!(app.execute(bad).await.is_err(), "accepted: {bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_apply_each_version_once() {
    let database = fresh_schema();
    let _sandbox = MysqlSandbox::create(&database).await;
    let url = with_database(&mysql_url(), &database);
    // Separate stores, as separate processes would be: six pools racing on an empty database.
    let mut stores = Vec::new();
    for _ in 0..6 {
        stores.push(connect_mysql(&url).await);
    }
    let racers: Vec<_> = stores
        .iter()
        .map(|s| {
            let s = s.clone();
            tokio::spawn(async move { s.migrate().await })
        })
        .collect();
    for racer in racers {
        racer.await.expect("migrate task").expect("a concurrent migrate");
    }
    let mut conn = app_connection(&database).await;
    let versions: Vec<i32> = sqlx::query_scalar("SELECT version FROM jobq_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .expect("jobq_migrations");
    let expected: Vec<i32> = (1..=jobq::store::migrate::latest(jobq::store::StoreKind::Mysql) as i32).collect();
    assert_eq!(versions, expected);
    add(&stores[0], spec("after")).await;
    assert_eq!(get(&stores[5], &id("after")).await.status, JobStatus::Pending);
}

/// Kills every connection to `database` but the caller's; returns how many.
async fn kill_connections(admin: &mut MySqlConnection, database: &str) -> usize {
    let ids: Vec<i64> = sqlx::query_scalar(
        "SELECT CAST(id AS SIGNED) FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()",
    )
    .bind(database)
    .fetch_all(&mut *admin)
    .await
    .expect("processlist");
    for id in &ids {
        // The connection may have gone by itself meanwhile.
        let _ = admin.execute(format!("KILL CONNECTION {id}").as_str()).await;
    }
    ids.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_worker_survives_kill_of_its_connections_and_loses_no_job() {
    let (store, database) = fixture().await;
    const JOBS: usize = 600;
    let specs: Vec<JobSpec> = (0..JOBS).map(|i| spec(&format!("k-{i:04}"))).collect();
    add_all(&store, specs).await;
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (handle, worker) = recording_worker(store.store(), ran.clone());
    let run = tokio::spawn(worker.run());
    let mut admin = mysql_admin().await;
    // Kill the worker's connections again and again while it works through the queue (and once more
    // when it is done, while it idles).
    let mut killed = 0;
    let mut rounds = 0;
    while count(&store, JobStatus::Succeeded).await < JOBS as u64 && rounds < 2_000 {
        killed += kill_connections(&mut admin, &database).await;
        rounds += 1;
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    assert!(killed >= 3, "killed only {killed} connections");
    eventually("every job succeeded", || async {
        count(&store, JobStatus::Succeeded).await == JOBS as u64
    })
    .await;
    kill_connections(&mut admin, &database).await;
    // Still alive: a job enqueued after the last kill runs too.
    add(&store, spec("after-the-kills")).await;
    eventually("the job after the kills succeeded", || async {
        get(&store, &id("after-the-kills")).await.status == JobStatus::Succeeded
    })
    .await;
    handle.shutdown();
    run.await.expect("worker task").expect("worker");
    // At least once: every job ran; one whose claim's answer was cut off may have run twice.
    let ran: HashSet<String> = ran.lock().unwrap().iter().cloned().collect();
    assert_eq!(ran.len(), JOBS + 1);
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
    eventually("the unlocked jobs succeeded", || async {
        count(&store, JobStatus::Succeeded).await == (JOBS - 5) as u64
    })
    .await;
    operator.execute("COMMIT").await.expect("commit");
    eventually("the once-locked jobs succeeded too", || async {
        count(&store, JobStatus::Succeeded).await == JOBS as u64
    })
    .await;
    handle.shutdown();
    run.await.expect("worker task").expect("worker");
    assert_eq!(ran.lock().unwrap().len(), JOBS);
}

/// Waits until a transaction on `database` waits for a row lock, failing at once if `waiter` ended
/// before it ever waited (then nothing ever will, and its answer says why). The wait is read from
/// InnoDB's own status: `information_schema.innodb_trx` leaves out transactions that have only read
/// (with locks) so far, which is exactly what a waiting `SELECT … FOR UPDATE` is.
async fn someone_waits_for_a_lock<T: std::fmt::Debug>(
    admin: &mut MySqlConnection,
    database: &str,
    waiter: &mut tokio::task::JoinHandle<T>,
) {
    let start = Instant::now();
    loop {
        if waiter.is_finished() {
            panic!("the transaction ended before it waited for a lock: {:?}", waiter.await);
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
        let waiting = status.split("---TRANSACTION").any(|trx| {
            trx.contains("LOCK WAIT") && sessions.iter().any(|id| trx.contains(&format!("thread id {id},")))
        });
        if waiting {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "nobody on {database} waited for a lock; sessions {sessions:?}; InnoDB status:\n{status}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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
    let finishing = {
        let store = store.clone();
        let lease = Lease::of(&job);
        tokio::spawn(async move {
            store
                .finish(
                    &[jobq::store::Finish {
                        lease,
                        outcome: jobq::store::Transition::Succeeded { result: None },
                        progress: None,
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
    // Hold the lock past one time-out (1 s): the finish meets it, and tries again.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1_500) {
        assert!(
            !finishing.is_finished(),
            "the finish gave up or got through a held lock"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    operator.execute("COMMIT").await.expect("commit");
    let applied = tokio::time::timeout(DEADLINE, finishing)
        .await
        .expect("the finish ended")
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
            })
            .collect();
        tokio::spawn(async move { store.finish(&finishes, UnixMillis::now()).await })
    };
    let mut admin = mysql_admin().await;
    // The finish holds "a" and waits for "b"; the operator now asks for "a": a deadlock.
    someone_waits_for_a_lock(&mut admin, &database, &mut finishing).await;
    sqlx::query("SELECT id FROM jobq_jobs WHERE id = 'dl-a' FOR UPDATE")
        .fetch_all(&mut operator)
        .await
        .expect("the operator won the deadlock");
    operator.execute("COMMIT").await.expect("commit");
    let applied = tokio::time::timeout(DEADLINE, finishing)
        .await
        .expect("the finish ended")
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
    let notify = Arc::new(tokio::sync::Notify::new());
    let _subscription = store
        .subscribe(&jobq::store::WakeOn::Ready(vec!["mail".to_string()]), notify.clone())
        .expect("MySQL looks for work on its own");
    let mut app = app_connection(&database).await;
    app.execute("INSERT INTO jobq_jobs (queue, job_type) VALUES ('other', 'x')")
        .await
        .expect("insert");
    // Work in another queue, or not ready yet, wakes nobody.
    app.execute("INSERT INTO jobq_jobs (queue, job_type, run_at) VALUES ('mail', 'x', 99999999999999)")
        .await
        .expect("insert");
    let quiet = tokio::time::timeout(Duration::from_millis(200), notify.notified()).await;
    assert!(quiet.is_err(), "woken without ready work in the queue");
    app.execute("INSERT INTO jobq_jobs (queue, job_type) VALUES ('mail', 'mail.send')")
        .await
        .expect("insert");
    tokio::time::timeout(Duration::from_secs(5), notify.notified())
        .await
        .expect("woken by a plain INSERT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_fast_without_the_password() {
    for (url, within) in [
        // Nothing listens on port 1: refused at once.
        ("mysql://user:s3cret@127.0.0.1:1/db", Duration::from_secs(5)),
        // A non-routable address never answers: the connect time-out ends the wait.
        (
            "mysql://user:s3cret@10.255.255.1:3306/db?connect_timeout=1",
            Duration::from_secs(4),
        ),
    ] {
        let start = Instant::now();
        let err = store::connect(&StoreUrl::parse(url).expect("url"))
            .await
            .expect_err("an unreachable server");
        let elapsed = start.elapsed();
        assert!(elapsed < within, "{url}: took {elapsed:?}");
        assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
        let shown = format!("{:#}", anyhow::Error::from(err));
        assert!(!shown.contains("s3cret") && shown.contains("user:***@"), "{shown}");
        assert!(
            shown.starts_with("cannot reach the mysql store at mysql://user:***@"),
            "{shown}"
        );
    }
    // An unknown database is named, also without the password.
    let url = format!("{}?x=1", with_database(&mysql_url(), "jobq_no_such_database"));
    let err = store::connect(&StoreUrl::parse(&url).expect("url"))
        .await
        .expect_err("an unknown database");
    let shown = format!("{:#}", anyhow::Error::from(err));
    assert!(shown.contains("jobq_no_such_database"), "{shown}");
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
async fn a_running_worker_rides_out_a_server_restart() {
    // A server of the test's own: the shared one must stay up for every other test.
    let mut server = PrivateMariadb::start();
    let url = format!("mysql://root@127.0.0.1:{}/jobq", server.port);
    let store = connect_mysql(&url).await;
    store.migrate().await.expect("migrate");
    const JOBS: usize = 1_500;
    add_all(&store, (0..JOBS).map(|i| spec(&format!("r-{i:04}")))).await;
    // Naps of 5 ms at 8 at once: about a second of work, so the restart lands mid-run.
    let (handle, worker) = test_worker(
        &store,
        handler_fn(|_job, _cx| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Outcome::success()
        }),
    );
    let run = tokio::spawn(worker.run());
    eventually("a fifth of the jobs succeeded", || async {
        count(&store, JobStatus::Succeeded).await >= JOBS as u64 / 5
    })
    .await;
    let before = count(&store, JobStatus::Succeeded).await;
    assert!(
        before < JOBS as u64 * 3 / 4,
        "the run was nearly over ({before} done) before the restart"
    );
    server.stop();
    // Down long enough for claims, acknowledgements and heartbeats to fail and back off.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!run.is_finished(), "the worker gave up while the server was down");
    server.start_again();

    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        // Calls on connections the restart cut fail until the pool has replaced them.
        let done = match store
            .stats(&jobq::store::Stats {
                queues: vec![],
                now: UnixMillis::now(),
            })
            .await
        {
            Ok(stats) => stats.queues.iter().map(|q| q.succeeded).sum::<u64>(),
            Err(_) => 0,
        };
        if done == JOBS as u64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {done} of {JOBS} jobs succeeded after the restart"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count(&store, JobStatus::Running).await, 0);
    assert_eq!(count(&store, JobStatus::Pending).await, 0);
    handle.shutdown();
    run.await.expect("worker task").expect("worker");
}

/// A MariaDB server of the test's own in a temp dir, on 127.0.0.1 at a free port, without grant
/// tables (root needs no password). Killed when dropped.
struct PrivateMariadb {
    dir: tempfile::TempDir,
    port: u16,
    server: Option<std::process::Child>,
}

impl PrivateMariadb {
    fn start() -> PrivateMariadb {
        let dir = private::server_dir("jobq-mariadb-", "mysql");
        let port = private::free_port();
        let mut install = std::process::Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.path().join("data").display()))
            .arg("--skip-test-db")
            .arg("--auth-root-authentication-method=normal");
        if private::running_as_root() {
            install.arg("--user=mysql");
        }
        let out = install.output().unwrap_or_else(|e| {
            panic!("running mariadb-install-db: {e}; the restart test needs MariaDB's server programs (Debian: apt install mariadb-server)")
        });
        assert!(
            out.status.success(),
            "mariadb-install-db failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut server = PrivateMariadb {
            dir,
            port,
            server: None,
        };
        server.start_again();
        let created = std::process::Command::new("mariadb")
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &port.to_string(),
                "-u",
                "root",
                "-e",
                "CREATE DATABASE jobq",
            ])
            .status()
            .unwrap();
        assert!(created.success(), "creating the private server's database failed");
        server
    }

    fn start_again(&mut self) {
        let mut cmd = std::process::Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.path().join("data").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", self.dir.path().join("sock").display()))
            .arg("--skip-grant-tables")
            .arg("--innodb-buffer-pool-size=32M")
            .arg(format!("--log-error={}", self.dir.path().join("error.log").display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if private::running_as_root() {
            cmd.arg("--user=mysql");
        }
        self.server = Some(cmd.spawn().unwrap_or_else(|e| panic!("starting mariadbd: {e}")));
        let started = Instant::now();
        while std::process::Command::new("mariadb-admin")
            .args(["-h", "127.0.0.1", "-P", &self.port.to_string(), "-u", "root", "ping"])
            .output()
            .map(|o| !o.status.success())
            .unwrap_or(true)
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the private MariaDB did not come up: {}",
                std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A clean shutdown, waited for.
    fn stop(&mut self) {
        let _ = std::process::Command::new("mariadb-admin")
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &self.port.to_string(),
                "-u",
                "root",
                "shutdown",
            ])
            .output();
        if let Some(mut server) = self.server.take() {
            let _ = server.wait();
        }
    }
}

impl Drop for PrivateMariadb {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}
