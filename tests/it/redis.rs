//! Redis behaviour beyond the shared contract: the inbox that any client pushes to (driven here by
//! `redis-cli`, a client that knows nothing of jobq), its rejected items and their listing by `jobq
//! inbox`, items left behind by an ingester that died, wake-ups, and a worker that carries on while
//! its connections are killed under it.
//!
//! Each test works under a fresh key prefix (`support::redis_store_in`), deleted when its store drops.
//! Waits have deadlines and end as soon as their condition holds.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use jobq::handler::{Outcome, handler_fn};
use jobq::job::{JobSpec, JobStatus};
use jobq::store::{JobFilter, List, Stats};
use jobq::time::UnixMillis;
use jobq::worker::Worker;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::jobs::*;
use crate::support::{TestStore, connect_redis, fresh_prefix, redis_store_in, redis_url, with_prefix};

/// How long anything that should happen at once may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(10);

/// A migrated store under a fresh prefix, and that prefix.
async fn fixture() -> (TestStore, String) {
    let prefix = fresh_prefix();
    (redis_store_in(&prefix).await, prefix)
}

/// The store's newest jobs, up to 10.
async fn first_jobs(store: &TestStore) -> Vec<jobq::job::Job> {
    store
        .list(&List {
            filter: JobFilter::default(),
            limit: 10,
            offset: 0,
        })
        .await
        .unwrap()
}

/// Runs `redis-cli` against the test server with `args`; returns its output, failing on an error.
fn redis_cli(args: &[&str]) -> String {
    redis_cli_at(&redis_url(), args)
}

/// Runs `redis-cli -c` (which follows a cluster's redirections) against `url` with `args`; returns its
/// output, failing on an error.
pub(crate) fn redis_cli_at(url: &str, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-c", "-u", url])
        .args(args)
        .output()
        .expect("running redis-cli (the Redis tests need it on PATH)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && !text.starts_with("ERR"),
        "redis-cli {args:?}: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Runs the `jobq` binary on `url` (no config file); returns exit code and stdout.
fn jobq(url: &str, args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_jobq"))
        .arg("--url")
        .arg(url)
        .args(args)
        .current_dir(dir.path())
        .env_remove("JOBQ_URL")
        .env_remove("JOBQ_CONFIG")
        .env_remove("JOBQ_OUTPUT")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_envelope_pushed_by_redis_cli_becomes_a_job_keeping_id_meta_and_creation_time() {
    let (store, prefix) = fixture().await;
    let inbox = format!("{prefix}inbox:mail");
    let envelope = r#"{"v":1,"jobId":"php-1","jobType":"mail.send","payload":{"to":"a@b"},"meta":{"tenantId":"t9"},"createdAt":1700000000,"maxAttempts":3}"#;
    redis_cli(&["LPUSH", &inbox, envelope]);
    redis_cli(&["LPUSH", &inbox, r#"{"user":5}"#]);
    redis_cli(&["LPUSH", &inbox, "not json at all"]);

    let jobs = claim(&store, "mail", WORKER, 10, T0).await;
    assert_eq!(ids(&jobs), ["php-1"], "claiming ingests the inbox first");
    let job = &jobs[0];
    assert_eq!((job.job_type.as_str(), job.queue.as_str()), ("mail.send", "mail"));
    assert_eq!(value(&job.payload), json!({"to": "a@b"}));
    assert_eq!(job.meta.get("tenantId").map(String::as_str), Some("t9"));
    assert_eq!(job.created_at, UnixMillis(1_700_000_000_000));
    assert_eq!((job.max_attempts, job.attempt), (3, 1));
    assert_eq!(redis_cli(&["LLEN", &inbox]).trim(), "0", "every item was taken");

    // The two that are not envelopes are kept aside with the reason, and `jobq inbox` lists them.
    let url = with_prefix(&redis_url(), &prefix);
    let (code, out) = jobq(&url, &["inbox", "-o", "json"]);
    assert_eq!(code, 0, "{out}");
    let items: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0]["item"], json!(r#"{"user":5}"#));
    assert!(
        items[0]["error"].as_str().unwrap().contains("not a jobq envelope"),
        "{items:?}"
    );
    assert_eq!(items[0]["queue"], json!("mail"));
    assert!(
        items[1]["error"].as_str().unwrap().contains("invalid JSON"),
        "{items:?}"
    );
    let (code, _) = jobq(&url, &["inbox", "--queue", "mail", "--clear"]);
    assert_eq!(code, 0);
    let (_, out) = jobq(&url, &["inbox", "-o", "json"]);
    assert_eq!(serde_json::from_str::<Vec<Value>>(&out).unwrap(), Vec::<Value>::new());

    // The same id pushed again is a harmless duplicate.
    redis_cli(&["LPUSH", &inbox, envelope]);
    assert!(claim(&store, "mail", WORKER, 10, T0).await.is_empty());
    assert_eq!(ids(&first_jobs(&store).await), ["php-1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_envelope_becomes_the_payload_of_the_default_type() {
    let prefix = fresh_prefix();
    let _sandbox = redis_store_in(&prefix).await;
    let url = format!(
        "{}&inbox_default_type=legacy.import",
        with_prefix(&redis_url(), &prefix)
    );
    let store = connect_redis(&url).await;
    let inbox = format!("{prefix}inbox:default");
    redis_cli(&["LPUSH", &inbox, r#"{"user":5}"#]);
    redis_cli(&["LPUSH", &inbox, "42"]);
    let jobs = claim(&store, "default", WORKER, 10, T0).await;
    assert_eq!(jobs.len(), 2);
    assert!(jobs.iter().all(|j| j.job_type == "legacy.import"));
    let payloads: Vec<Value> = jobs.iter().map(|j| value(&j.payload)).collect();
    assert!(
        payloads.contains(&json!({"user": 5})) && payloads.contains(&json!(42)),
        "{payloads:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_items_of_an_ingester_that_died_are_taken_over_and_enqueued_once() {
    let (store, prefix) = fixture().await;
    let inbox = format!("{prefix}inbox:default");
    let registry = format!("{{{inbox}}}:processing");
    // An ingester took two items into its processing list, recorded when, and died: perhaps before
    // enqueueing them, perhaps after. One item names its job id, the other does not.
    let processing = format!("{registry}:dead-worker:0190a0b0-0000-7000-8000-000000000000");
    let dead_ingester = || {
        redis_cli(&["DEL", &processing]);
        redis_cli(&[
            "RPUSH",
            &processing,
            r#"{"v":1,"jobId":"kept","jobType":"t"}"#,
            r#"{"v":1,"jobType":"t","payload":"no id"}"#,
        ]);
        redis_cli(&["HSET", &registry, &processing, &T0.0.to_string()]);
    };
    dead_ingester();
    let stale = jobq::store::redis::inbox::STALE_AFTER.as_millis() as i64;

    // While the list is recent its ingester may still be at work: it is left alone.
    assert!(claim(&store, "default", WORKER, 10, at(1_000)).await.is_empty());
    assert_eq!(
        redis_cli(&["LLEN", &processing]).trim(),
        "2",
        "a recent list is left alone"
    );

    // Once stale, the next claim's ingest takes the list over and enqueues its items.
    let later = at(stale + 1);
    let jobs = claim(&store, "default", WORKER, 10, later).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(ids(&jobs).contains(&"kept".to_string()), "{jobs:?}");
    assert_eq!(redis_cli(&["EXISTS", &processing]).trim(), "0");
    assert_eq!(redis_cli(&["HLEN", &registry]).trim(), "0");

    // Taken over again (its ingester had enqueued the items, then stalled instead of dying): the item
    // without an id gets the same id as before, so neither becomes a second job.
    dead_ingester();
    assert!(claim(&store, "default", WORKER, 10, at(2 * stale + 2)).await.is_empty());
    assert_eq!(redis_cli(&["EXISTS", &processing]).trim(), "0");
    let all = first_jobs(&store).await;
    assert_eq!(all.len(), 2, "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_wakes_on_enqueues_and_on_inbox_pushes() {
    let (store, prefix) = fixture().await;
    let notify = Arc::new(Notify::new());
    let _subscription = store
        .subscribe(&jobq::store::WakeOn::Ready(vec!["mail".to_string()]), notify.clone())
        .expect("redis pushes");
    // The first signal says "connected".
    tokio::time::timeout(DEADLINE, notify.notified())
        .await
        .expect("connected");

    add(&store, spec("other").queue("elsewhere")).await;
    add(&store, spec("m1").queue("mail")).await;
    let started = Instant::now();
    tokio::time::timeout(DEADLINE, notify.notified())
        .await
        .expect("woken by an enqueue");
    assert!(started.elapsed() < Duration::from_secs(1));

    redis_cli(&["LPUSH", &format!("{prefix}inbox:mail"), r#"{"v":1,"jobType":"t"}"#]);
    tokio::time::timeout(DEADLINE, notify.notified())
        .await
        .expect("woken by an inbox push");
}

/// A Redis user of one test's own, so that `CLIENT KILL USER` reaches that test's connections only.
struct AclUser(String);

impl AclUser {
    fn new() -> AclUser {
        let name = format!("jobq_test_{:016x}", rand::random::<u64>());
        redis_cli(&["ACL", "SETUSER", &name, "on", &format!(">{name}"), "~*", "&*", "+@all"]);
        AclUser(name)
    }

    /// The test server's URL, logging in as this user.
    fn url(&self, prefix: &str) -> String {
        let mut url = url::Url::parse(&redis_url()).unwrap();
        url.set_username(&self.0).unwrap();
        url.set_password(Some(&self.0)).unwrap();
        with_prefix(url.as_str(), prefix)
    }

    /// Kills every connection of this user; returns how many there were.
    fn kill_connections(&self) -> u32 {
        redis_cli(&["CLIENT", "KILL", "USER", &self.0])
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

impl Drop for AclUser {
    fn drop(&mut self) {
        let _ = Command::new("redis-cli")
            .arg("-u")
            .arg(redis_url())
            .args(["ACL", "DELUSER", &self.0])
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_worker_survives_its_connections_being_killed_and_loses_no_job() {
    let (store, prefix) = fixture().await;
    let user = AclUser::new();
    let worker_store = connect_redis(&user.url(&prefix)).await;
    let runs = Arc::new(AtomicU32::new(0));
    let counted = runs.clone();
    let worker = Worker::builder(worker_store)
        .concurrency(8)
        .heartbeat(Duration::from_millis(100))
        .stale_after(Duration::from_secs(2))
        .poll_interval(Duration::from_millis(50))
        .handler(
            "work",
            handler_fn(move |_job, _cx| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    Outcome::success()
                }
            }),
        )
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());

    const JOBS: usize = 600;
    let now = UnixMillis::now();
    let jobs: Vec<_> = (0..JOBS)
        .map(|i| {
            jobq::job::NewJob::validate(
                JobSpec::new("work", json!({ "i": i })).id(format!("j{i:04}")),
                now,
                &Default::default(),
            )
            .unwrap()
        })
        .collect();
    for chunk in jobs.chunks(100) {
        store.enqueue(chunk).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(user.kill_connections() > 0, "the worker had connections to kill");
    }

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stats = store
            .stats(&Stats {
                queues: vec![],
                now: UnixMillis::now(),
            })
            .await
            .unwrap();
        let done = stats.queues.first().map(|q| q.succeeded).unwrap_or(0);
        if done == JOBS as u64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {done} of {JOBS} jobs succeeded: {stats:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    handle.shutdown();
    let report = tokio::time::timeout(DEADLINE, run).await.unwrap().unwrap().unwrap();
    // A finish whose answer was cut off is sent again and then finds its own outcome already applied
    // (answered as stale), so the worker's own count may fall short; the store's is what counts.
    assert!(report.jobs_done > 0, "{report:?}");
    for job in store
        .list(&List {
            filter: JobFilter::default(),
            limit: JOBS as u32,
            offset: 0,
        })
        .await
        .unwrap()
    {
        assert_eq!(job.status, JobStatus::Succeeded, "{}", job.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_fast_without_the_password() {
    let url = "redis://:secret@127.0.0.1:1/0?connect_timeout=2";
    let started = Instant::now();
    let err = jobq::store::connect(&jobq::store::StoreUrl::parse(url).unwrap())
        .await
        .unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    let text = format!("{:#}", anyhow::Error::from(err));
    assert!(!text.contains("secret") && text.contains("***"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

/// A Redis server of one test's own, on a free port, without persistence: it can be killed and
/// started again without disturbing the shared one.
struct PrivateServer {
    port: u16,
    child: std::process::Child,
}

impl PrivateServer {
    fn start(port: u16) -> PrivateServer {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("starting redis-server (the Redis tests need it on PATH)");
        let deadline = Instant::now() + DEADLINE;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server on port {port} did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
        PrivateServer { port, child }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_carries_on_after_a_server_restart_that_lost_everything() {
    let port = crate::support::private::free_port();
    let mut server = PrivateServer::start(port);
    let url = server.url();
    let store = connect_redis(&url).await;
    store.migrate().await.unwrap();
    let runs = Arc::new(AtomicU32::new(0));
    let counted = runs.clone();
    let worker = Worker::builder(store.clone())
        .heartbeat(Duration::from_millis(100))
        .stale_after(Duration::from_secs(2))
        .poll_interval(Duration::from_millis(50))
        .handler(
            "work",
            handler_fn(move |_job, _cx| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    Outcome::success()
                }
            }),
        )
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());

    let wait_runs = |n: u32| {
        let runs = runs.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(20);
            while runs.load(Ordering::SeqCst) < n {
                assert!(Instant::now() < deadline, "{} of {n} runs", runs.load(Ordering::SeqCst));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let job = |name: &str| {
        jobq::job::NewJob::validate(
            JobSpec::new("work", json!(name)).id(name),
            UnixMillis::now(),
            &Default::default(),
        )
        .unwrap()
    };
    store.enqueue(&[job("before")]).await.unwrap();
    wait_runs(1).await;

    // The server dies and comes back empty (no persistence): scripts, jobs and registry are gone.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server = PrivateServer::start(port);

    // The producer's first call may meet the dead connection; it reconnects on the next.
    let mut enqueued = false;
    for _ in 0..50 {
        if store.enqueue(&[job("after")]).await.is_ok() {
            enqueued = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(enqueued, "enqueueing after the restart");
    wait_runs(2).await;
    assert_eq!(
        store.get(&id("after")).await.unwrap().map(|j| j.status),
        Some(JobStatus::Succeeded)
    );
    handle.shutdown();
    tokio::time::timeout(DEADLINE, run).await.unwrap().unwrap().unwrap();
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_forgets_a_queue_it_empties_and_an_enqueue_brings_it_back() {
    let (store, prefix) = fixture().await;
    let registry = format!("{prefix}queues");
    add(&store, spec("t1").queue("temp")).await;
    add(&store, spec("k1").queue("kept")).await;
    assert!(redis_cli(&["SMEMBERS", &registry]).contains("temp"));
    let cancel = jobq::store::Cancel {
        target: jobq::store::CancelTarget::Ids(vec![id("t1")]),
        now: T0,
    };
    assert_eq!(store.cancel(&cancel).await.unwrap().len(), 1);

    let removed = store
        .cleanup(&jobq::store::Cleanup {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(removed, 1);
    // Every key of the emptied queue is gone, its wake-up stream too; the other queue stays.
    let members = redis_cli(&["SMEMBERS", &registry]);
    assert!(!members.contains("temp") && members.contains("kept"), "{members}");
    assert_eq!(
        redis_cli(&["--scan", "--pattern", &format!("{prefix}{{temp}}*")]).trim(),
        ""
    );

    add(&store, spec("t2").queue("temp")).await;
    assert!(redis_cli(&["SMEMBERS", &registry]).contains("temp"));
    assert_eq!(ids(&claim(&store, "temp", WORKER, 10, T0).await), ["t2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_job_hash_holds_only_the_fields_that_differ_from_their_defaults() {
    let (store, prefix) = fixture().await;
    add(&store, spec("bare").queue("mail")).await;
    add(
        &store,
        spec("full")
            .queue("mail")
            .priority(2)
            .max_attempts(9)
            .meta("tenantId", "t1")
            .timeout(Duration::from_secs(3))
            .unique_key("k"),
    )
    .await;
    let fields = |id: &str| -> Vec<String> {
        let mut keys: Vec<String> = redis_cli(&["HKEYS", &format!("{prefix}{{mail}}:job:{id}")])
            .lines()
            .map(str::to_string)
            .collect();
        keys.sort();
        keys
    };
    // No queue (the key names it), status, attempt, or priority and max attempts at their defaults:
    // each field costs Redis time on the bulk enqueue path, and memory while the job waits.
    assert_eq!(fields("bare"), ["c", "p", "r", "t"]);
    assert_eq!(fields("full"), ["c", "m", "ma", "p", "pr", "r", "t", "to", "u"]);

    // Read back whole, by id, by a claim and by a listing (claims and listings get each job as one
    // string whose parts are joined by a byte UTF-8 never holds: any text survives it).
    add(
        &store,
        JobSpec::new("t.\u{fc}", json!({"s": "\u{e9}=:\u{1}\u{1F600}"}))
            .id("\u{fc}n\u{ef}-\u{1F600}")
            .queue("mail")
            .meta("k", "v\u{ff}")
            .priority(3),
    )
    .await;
    let bare = get(&store, &id("bare")).await;
    assert_eq!(
        (bare.queue.as_str(), bare.priority, bare.max_attempts),
        ("mail", 0, jobq::job::DEFAULT_MAX_ATTEMPTS)
    );
    assert_eq!(get(&store, &id("full")).await.max_attempts, 9);
    let claimed = claim(&store, "mail", WORKER, 10, T0).await;
    assert_eq!(ids(&claimed), ["bare", "full", "\u{fc}n\u{ef}-\u{1F600}"]);
    assert!(claimed.iter().all(|j| j.queue == "mail"));
    let odd = &claimed[2];
    assert_eq!(odd.job_type, "t.\u{fc}");
    assert_eq!(value(&odd.payload), json!({"s": "\u{e9}=:\u{1}\u{1F600}"}));
    assert_eq!(odd.meta.get("k").map(String::as_str), Some("v\u{ff}"));
    let listed = first_jobs(&store).await;
    assert_eq!(listed.len(), 3);
    assert!(
        listed
            .iter()
            .all(|j| j.queue == "mail" && j.status == JobStatus::Running)
    );
    let odd_listed = listed.iter().find(|j| j.id == odd.id).expect("listed");
    assert_eq!(
        (&odd_listed.payload.get(), &odd_listed.meta),
        (&odd.payload.get(), &odd.meta)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_reports_the_key_layout_version() {
    let (_store, prefix) = fixture().await;
    let (code, out) = jobq(&with_prefix(&redis_url(), &prefix), &["migrate"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.trim_end().ends_with("is at schema version 2"), "{out}");
}
