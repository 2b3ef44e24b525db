//! PostgreSQL behaviour beyond the shared contract: the documented table that applications insert into
//! inside their own transactions (rolled back: no job; committed: run by an idle worker at once), schema isolation, migrations racing each other, the NOTIFY trigger
//! and the store's subscription to it (including a killed listening connection), exact payloads, and a
//! server that cannot be reached (from the library and from the binary, without the password).
//!
//! Each test works in a fresh schema of the test database (`support::postgres_store_in`), dropped when
//! its store drops. Waits have deadlines and end as soon as their condition holds; nothing sleeps.

use std::collections::HashSet;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use jobq::handler::{Outcome, handler_fn};
use jobq::job::{JobStatus, NewJob};
use jobq::store::{self, EnqueueOutcome, Lease, StoreError, StoreUrl};
use jobq::time::UnixMillis;
use jobq::worker::Worker;
use serde_json::json;
use sqlx::postgres::PgListener;
use sqlx::{Connection, Executor, PgConnection};
use tokio::sync::Notify;

use crate::support::jobs::*;
use crate::support::{
    PostgresSandbox, TestStore, connect_postgres, fresh_schema, postgres_store_in, postgres_url, with_schema,
};

/// How long anything that should happen at once may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(10);

/// The documented insert an application runs inside its own transaction.
const ORDER_INSERT: &str =
    "INSERT INTO jobq_jobs (id, queue, job_type, payload) VALUES ('order-1', 'default', 'order.paid', '{\"order\":1}')";

/// A migrated store in a fresh schema, and that schema's name.
async fn fixture() -> (TestStore, String) {
    let schema = fresh_schema();
    (postgres_store_in(&schema).await, schema)
}

/// A connection of an application's own, with `schema` on its search path.
async fn app_connection(schema: &str) -> PgConnection {
    let mut conn = PgConnection::connect(&postgres_url())
        .await
        .expect("connecting as the application");
    conn.execute(format!("SET search_path TO \"{schema}\"").as_str())
        .await
        .expect("setting the search path");
    conn
}

/// Waits until `notify` is signalled, failing the test after [`DEADLINE`].
async fn woken(notify: &Notify, what: &str) {
    tokio::time::timeout(DEADLINE, notify.notified())
        .await
        .unwrap_or_else(|_| panic!("not woken: {what}"));
}

/// Drops a permit `notify` may hold, so that the next wait needs a new signal.
fn drain(notify: &Notify) {
    let _ = notify.notified().now_or_never();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_plain_insert_leaves_no_job() {
    let (store, schema) = fixture().await;
    let mut app = app_connection(&schema).await;
    let mut tx = app.begin().await.expect("begin");
    tx.execute(ORDER_INSERT).await.expect("the documented insert");
    tx.rollback().await.expect("rollback");
    assert!(store.get(&id("order-1")).await.expect("get").is_none());
    let now = UnixMillis::now().plus(Duration::from_secs(1));
    assert!(claim(&store, "default", WORKER, 10, now).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_plain_insert_is_claimable_with_defaults_in_every_other_column() {
    let (store, schema) = fixture().await;
    let mut app = app_connection(&schema).await;
    let before = UnixMillis::now();
    let mut tx = app.begin().await.expect("begin");
    // The application's own write and the job commit together (a transactional outbox).
    tx.execute("CREATE TABLE orders (id int PRIMARY KEY)")
        .await
        .expect("an application table");
    tx.execute("INSERT INTO orders VALUES (1)")
        .await
        .expect("the application's own write");
    tx.execute(ORDER_INSERT).await.expect("the documented insert");
    // Even the id and the queue may be left out.
    let generated: String = sqlx::query_scalar("INSERT INTO jobq_jobs (job_type) VALUES ('order.audit') RETURNING id")
        .fetch_one(&mut *tx)
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
    assert!(job.progress.is_none() && job.result.is_none() && job.worker_id.is_none());
    assert!(job.started_at.is_none() && job.finished_at.is_none() && job.heartbeat_at.is_none());
    // The server's clock fills the times: the same clock as ours on this machine.
    for t in [job.created_at, job.run_at] {
        assert!(
            before.0 - 5 <= t.0 && t.0 <= after.0 + 5,
            "{t:?} not within {before:?}..{after:?}"
        );
    }

    // The generated id is a time-ordered UUIDv7, like the ids jobq makes.
    let uuid = uuid::Uuid::parse_str(&generated).expect("a UUID");
    assert_eq!(uuid.get_version_num(), 7, "{generated}");
    let (secs, nanos) = uuid.get_timestamp().expect("a v7 timestamp").to_unix();
    let millis = secs as i64 * 1000 + i64::from(nanos / 1_000_000);
    assert!(before.0 - 5 <= millis && millis <= after.0 + 5, "{generated}");
    let audit = get(&store, &jobq::job::JobId::from_stored(generated.clone())).await;
    assert_eq!((audit.queue.as_str(), audit.payload.get()), ("default", "null"));

    let claimed = claim(&store, "default", WORKER, 10, after.plus(Duration::from_secs(1))).await;
    assert_eq!(sorted(ids(&claimed)), sorted(vec![generated, "order-1".to_string()]));
    assert!(claimed.iter().all(|j| j.status == JobStatus::Running && j.attempt == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_plain_insert_is_run_by_an_idle_worker_woken_by_the_trigger() {
    let (store, schema) = fixture().await;
    // A poll far longer than the deadline: only the insert trigger's NOTIFY can start the job in time.
    let worker = Worker::builder(store.store().clone())
        .poll_interval(Duration::from_secs(600))
        .handler("order.paid", handler_fn(|_job, _cx| async { Outcome::success() }))
        .build()
        .expect("a worker");
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    // Let the worker reach its idle wait before the application commits.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut app = app_connection(&schema).await;
    let mut tx = app.begin().await.expect("begin");
    tx.execute(ORDER_INSERT).await.expect("the documented insert");
    tx.commit().await.expect("commit");

    let deadline = Instant::now() + DEADLINE;
    loop {
        let job = get(&store, &id("order-1")).await;
        if job.status == JobStatus::Succeeded {
            assert_eq!(job.attempt, 1);
            break;
        }
        assert!(Instant::now() < deadline, "the committed job never ran: {job:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle.shutdown();
    let report = tokio::time::timeout(DEADLINE, run)
        .await
        .expect("the worker stops")
        .unwrap()
        .unwrap();
    assert_eq!(report.jobs_done, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_refuses_rows_jobq_could_not_read() {
    let (_store, schema) = fixture().await;
    let mut app = app_connection(&schema).await;
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
async fn payloads_come_back_as_written() {
    let (store, schema) = fixture().await;
    // Key order, a duplicate key and the spelling of numbers survive (JSON, not JSONB).
    let text = r#"{"z":1,"a":{"y":[1.50,2e3,-0]},"z":"again","s":"a b\n\"c\""}"#;
    let mut job = new_job(spec("exact"));
    job.payload = raw(text);
    let answers = store.enqueue(std::slice::from_ref(&job)).await.expect("enqueue");
    assert_eq!(answers[0].outcome, EnqueueOutcome::Created);
    assert_eq!(get(&store, &id("exact")).await.payload.get(), text);

    // An application's pretty-printed JSON comes back compact, in its own order.
    let mut app = app_connection(&schema).await;
    app.execute(
        "INSERT INTO jobq_jobs (id, job_type, payload, meta) \
         VALUES ('pretty', 't', '{\n  \"b\": [1, 2],\n  \"a\": \"x y\"\n}', '{\"tenantId\": 7}')",
    )
    .await
    .expect("insert");
    let pretty = get(&store, &id("pretty")).await;
    assert_eq!(pretty.payload.get(), r#"{"b":[1,2],"a":"x y"}"#);
    assert_eq!(pretty.meta.get("tenantId").map(String::as_str), Some("7"));

    // Results too.
    let running = claim_one(&store, "default", WORKER, at(1)).await;
    let result = r#"{"k":2,"a":1}"#;
    assert!(
        finish(
            &store,
            &Lease::of(&running),
            jobq::store::Transition::Succeeded {
                result: Some(raw(result))
            },
            at(2)
        )
        .await
    );
    assert_eq!(get(&store, &running.id).await.result.expect("a result").get(), result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_keep_stores_apart() {
    // A name that needs quoting: capitals, a space and a quote.
    let odd = format!("Jobq \"{}\"", fresh_schema());
    let (a, schema_a) = fixture().await;
    let b = postgres_store_in(&odd).await;
    add(&a, spec("only-in-a")).await;
    add(&b, spec("only-in-b")).await;
    assert!(b.get(&id("only-in-a")).await.expect("get").is_none());
    assert!(a.get(&id("only-in-b")).await.expect("get").is_none());
    assert_eq!(ids(&claim(&b, "default", WORKER, 10, T0).await), ["only-in-b"]);

    // Every table, index and function landed in the store's own schema, with the jobq_ prefix.
    let mut conn = PgConnection::connect(&postgres_url()).await.expect("connect");
    for schema in [&schema_a, &odd] {
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') \
             UNION ALL SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
             WHERE n.nspname = $1",
        )
        .bind(schema)
        .fetch_all(&mut conn)
        .await
        .expect("catalog");
        let names: HashSet<String> = names.into_iter().collect();
        for expected in [
            "jobq_jobs",
            "jobq_workers",
            "jobq_migrations",
            "jobq_jobs_ready",
            "jobq_uuid_v7",
        ] {
            assert!(names.contains(expected), "{expected} missing from {schema}: {names:?}");
        }
        assert!(names.iter().all(|n| n.starts_with("jobq_")), "{names:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_apply_each_version_once() {
    let schema = fresh_schema();
    let url = with_schema(&postgres_url(), &schema);
    let _sandbox = PostgresSandbox::new(&postgres_url(), &schema);
    // Separate stores, as separate processes would be: six pools racing on a schema that does not exist.
    let mut stores = Vec::new();
    for _ in 0..6 {
        stores.push(connect_postgres(&url).await);
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
    let mut conn = app_connection(&schema).await;
    let versions: Vec<i32> = sqlx::query_scalar("SELECT version FROM jobq_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .expect("jobq_migrations");
    let expected: Vec<i32> = (1..=jobq::store::migrate::latest(jobq::store::StoreKind::Postgres) as i32).collect();
    assert_eq!(versions, expected);
    add(&stores[0], spec("after")).await;
    assert_eq!(get(&stores[5], &id("after")).await.status, JobStatus::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_insert_trigger_notifies_when_the_transaction_commits() {
    let (store, schema) = fixture().await;
    let mut listener = PgListener::connect(&postgres_url()).await.expect("listener");
    listener.listen("jobq_jobs").await.expect("LISTEN");
    let mut app = app_connection(&schema).await;

    // A rolled-back insert sends nothing; a committed one after it is the first thing heard.
    let mut tx = app.begin().await.expect("begin");
    tx.execute("INSERT INTO jobq_jobs (job_type, queue) VALUES ('t', 'rolled-back')")
        .await
        .expect("insert");
    tx.rollback().await.expect("rollback");
    let mut tx = app.begin().await.expect("begin");
    tx.execute("INSERT INTO jobq_jobs (job_type, queue) VALUES ('t', 'mail'), ('t', 'mail'), ('t', 'sms')")
        .await
        .expect("insert");
    tx.commit().await.expect("commit");
    // jobq's own enqueue goes through the same trigger.
    add(&store, spec("from-jobq").queue("reports")).await;

    let mut heard = Vec::new();
    while heard.len() < 3 {
        let n = tokio::time::timeout(DEADLINE, listener.recv())
            .await
            .expect("a notification")
            .expect("recv");
        let payload: serde_json::Value = serde_json::from_str(n.payload()).expect("JSON payload");
        if payload["schema"] == json!(schema) {
            heard.push(payload["queue"].as_str().expect("a queue").to_string());
        }
    }
    // One notification per queue and statement, in commit order.
    assert_eq!(sorted(heard[..2].to_vec()), ["mail", "sms"]);
    assert_eq!(heard[2], "reports");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_wakes_on_inserts_releases_and_rescues() {
    let (store, schema) = fixture().await;
    let notify = Arc::new(Notify::new());
    let _subscription = store
        .subscribe(&jobq::store::WakeOn::Ready(vec!["mail".to_string()]), notify.clone())
        .expect("PostgreSQL pushes wake-ups");
    // The listener signals once when it is connected (work may have arrived before it listened).
    woken(&notify, "listening").await;

    let mut app = app_connection(&schema).await;
    app.execute("INSERT INTO jobq_jobs (queue, job_type) VALUES ('mail', 'mail.send')")
        .await
        .expect("insert");
    woken(&notify, "a plain INSERT").await;

    let job = claim_one(&store, "mail", WORKER, UnixMillis::now().plus(Duration::from_secs(1))).await;
    drain(&notify);
    assert_eq!(store.release(&[Lease::of(&job)]).await.expect("release"), [true]);
    woken(&notify, "a release").await;

    let job = claim_one(&store, "mail", WORKER, UnixMillis::now().plus(Duration::from_secs(1))).await;
    drain(&notify);
    let rescue = jobq::store::Rescue {
        stale_before: UnixMillis::now().plus(DEADLINE),
        now: UnixMillis::now(),
        limit: 10,
    };
    let rescued = store.rescue(&rescue).await.expect("rescue");
    assert_eq!(rescued.len(), 1);
    assert_eq!(rescued[0].id, job.id);
    woken(&notify, "a rescue").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_reconnects_after_its_connection_is_killed() {
    let (store, schema) = fixture().await;
    let notify = Arc::new(Notify::new());
    let _subscription = store
        .subscribe(&jobq::store::WakeOn::Ready(Vec::new()), notify.clone())
        .expect("PostgreSQL pushes wake-ups");
    woken(&notify, "listening").await;

    let mut admin = PgConnection::connect(&postgres_url()).await.expect("connect");
    let listener_pid = || {
        sqlx::query_scalar::<_, i32>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'",
        )
        .bind(format!("jobq listener {schema}"))
    };
    let first = wait_for_listener(&mut admin, &listener_pid, None).await;
    let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(first)
        .fetch_one(&mut admin)
        .await
        .expect("kill");
    assert!(killed);
    // While the connection is down the subscription keeps its waiter polling.
    woken(&notify, "the connection loss").await;
    woken(&notify, "polling while down").await;
    let second = wait_for_listener(&mut admin, &listener_pid, Some(first)).await;
    assert_ne!(first, second);

    drain(&notify);
    add(&store, spec("after-reconnect")).await;
    woken(&notify, "an enqueue after reconnecting").await;
}

/// Waits for the listening connection of a subscription to be up (and, with `not`, to be a new one).
async fn wait_for_listener(
    admin: &mut PgConnection,
    query: &impl Fn() -> sqlx::query::QueryScalar<'static, sqlx::Postgres, i32, sqlx::postgres::PgArguments>,
    not: Option<i32>,
) -> i32 {
    let start = Instant::now();
    loop {
        let pids: Vec<i32> = query().fetch_all(&mut *admin).await.expect("pg_stat_activity");
        if let Some(pid) = pids.into_iter().find(|p| Some(*p) != not) {
            return pid;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no listening connection within {DEADLINE:?}"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_larger_than_one_statement_keeps_the_order_rules() {
    let (store, _schema) = fixture().await;
    // 12,000 jobs: the second half repeats the first half's unique keys (coalesced into them, across
    // statement boundaries), and the last job repeats the first id (a duplicate).
    const HALF: usize = 6_000;
    let mut specs: Vec<_> = (0..2 * HALF)
        .map(|i| spec(&format!("bulk-{i:05}")).unique_key(format!("k{}", i % HALF)))
        .collect();
    specs.push(spec("bulk-00000"));
    let jobs: Vec<NewJob> = specs.into_iter().map(new_job).collect();
    let answers = store.enqueue(&jobs).await.expect("enqueue");
    for i in 0..HALF {
        assert_eq!(answers[i], created(&format!("bulk-{i:05}")));
        assert_eq!(answers[HALF + i], coalesced(&format!("bulk-{i:05}")));
    }
    assert_eq!(answers[2 * HALF], duplicate("bulk-00000"));
    let stats = store
        .stats(&jobq::store::Stats {
            queues: vec![],
            now: T0,
        })
        .await
        .expect("stats");
    assert_eq!(stats.queues[0].total(), HALF as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_id_in_a_batch_without_keys_leaves_the_rest_created_once() {
    let (store, _schema) = fixture().await;
    add(&store, spec("old")).await;
    // Small (one statement) and large (a transaction of two statements): the plain insert fails on the
    // existing id, changes nothing, and the batch is answered job by job.
    for n in [3, 15_000] {
        let mut names: Vec<String> = (0..n).map(|i| format!("b{n}-{i:05}")).collect();
        names.insert(n / 2, "old".to_string());
        let answers = enqueue(&store, names.iter().map(|name| spec(name))).await;
        for (name, answer) in names.iter().zip(&answers) {
            let expected = if name == "old" { duplicate(name) } else { created(name) };
            assert_eq!(answer, &expected);
        }
    }
    let stats = store
        .stats(&jobq::store::Stats {
            queues: vec![],
            now: T0,
        })
        .await
        .expect("stats");
    assert_eq!(stats.queues[0].total(), 1 + 3 + 15_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_fast_without_the_password() {
    for (url, within) in [
        // Nothing listens on port 1: refused at once.
        ("postgres://user:s3cret@127.0.0.1:1/db", Duration::from_secs(5)),
        // A non-routable address never answers: the connect time-out ends the wait.
        (
            "postgres://user:s3cret@10.255.255.1:5432/db?connect_timeout=1",
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
            shown.starts_with("cannot reach the postgres store at postgres://user:***@"),
            "{shown}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_never_shows_its_password() {
    // The test server trusts local connections, so a password added to the URL is accepted and ignored;
    // a URL that carries a real one is checked with that.
    let mut url = url::Url::parse(&postgres_url()).expect("JOBQ_TEST_POSTGRES_URL");
    if url.password().is_none() {
        url.set_password(Some("s3cret")).expect("a URL that takes a password");
    }
    let password = format!(":{}@", url.password().expect("a password"));
    let store = connect_postgres(url.as_str()).await;
    let info = store.info().await.expect("info");
    for shown in [format!("{store:?}"), format!("{info:?}"), info.url.clone()] {
        assert!(!shown.contains(&password), "{shown}");
    }
    assert!(info.url.contains(":***@"), "{}", info.url);
}

#[test]
fn the_cli_fails_fast_on_an_unreachable_server_without_the_password() {
    let home = tempfile::tempdir().expect("temp dir");
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_jobq"))
        .args(["--url", "postgres://user:s3cret@127.0.0.1:1/db", "stats"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env_remove("JOBQ_URL")
        .env_remove("JOBQ_CONFIG")
        .output()
        .expect("running jobq");
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        !stdout.contains("s3cret") && !stderr.contains("s3cret"),
        "{stdout}{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot reach the postgres store at postgres://user:***@127.0.0.1:1/db"),
        "{stderr}"
    );
}
