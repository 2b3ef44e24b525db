//! Redis behaviour beyond the shared contract and the server-store suite (`server_stores::redis`): the
//! inbox that any client pushes to (driven here by `redis-cli`, a client that knows nothing of jobq),
//! its rejected items and their listing by `jobq inbox`, items left behind by an ingester that died,
//! wake-ups, a worker whose server restarts having lost everything, the key layout, and the commands
//! one job's calls send.
//!
//! Each test works under a fresh key prefix (`support::redis_store_in`), deleted when its store drops.
//! Waits end as soon as their condition holds (`support::eventually`).

use std::time::Duration;

use jobq::job::{JobSpec, JobStatus};
use jobq::time::UnixMillis;
use serde_json::{Value, json};

use crate::support::jobs::*;
use crate::support::process::{self, Process};
use crate::support::redis::{Monitor, PrivateRedis, fresh_prefix, redis_cli, redis_url, with_prefix};
use crate::support::{TestStore, connect, eventually, lazy, private, redis_store_in, subscribe, woken};

/// How long anything that should happen at once may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(10);

/// A migrated store under a fresh prefix, and that prefix.
async fn fixture() -> (TestStore, String) {
    let prefix = fresh_prefix();
    (redis_store_in(&prefix).await, prefix)
}

/// Runs the `jobq` binary on `url` (no config file); returns exit code and stdout.
fn jobq(url: &str, args: &[&str]) -> (i32, String) {
    let out = process::output(url, args);
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
    assert_eq!(ids(&newest_jobs(&store).await), ["php-1"]);
}

/// What a PHP application builds and sends: its job envelope's `toArray()`, whose `meta` defaults to an
/// empty array, which PHP's `json_encode` writes as `[]`. Pushed onto the inbox with phpredis unless
/// the inbox is `-`; printed either way. Arguments: host, port, database, password (or ""), inbox, id.
const PHP_PRODUCER: &str = r#"<?php
[, $host, $port, $db, $password, $inbox, $id] = $argv;
$envelope = [
    'v' => 1, 'jobId' => $id, 'jobType' => 'php.empty', 'payload' => ['n' => 1], 'meta' => [],
    'attempt' => 0, 'maxAttempts' => 3, 'createdAt' => time(),
];
$line = json_encode($envelope);
if ($inbox !== '-') {
    $redis = new Redis();
    $redis->connect($host, (int) $port);
    if ($password !== '') {
        $redis->auth($password);
    }
    $redis->select((int) $db);
    $redis->lPush($inbox, $line);
}
echo $line, "\n";
"#;

/// Runs [`PHP_PRODUCER`] for job `id`, pushing onto `inbox` (`-`: printing only); returns its line.
fn php_envelope(dir: &std::path::Path, inbox: &str, id: &str) -> String {
    let script = dir.join("producer.php");
    std::fs::write(&script, PHP_PRODUCER).unwrap();
    let server = url::Url::parse(&redis_url()).expect("the test Redis URL");
    let out = std::process::Command::new("php")
        .arg(&script)
        .arg(server.host_str().unwrap_or("127.0.0.1"))
        .arg(server.port().unwrap_or(6379).to_string())
        .arg(
            server
                .path()
                .trim_start_matches('/')
                .parse::<u32>()
                .unwrap_or(0)
                .to_string(),
        )
        .arg(server.password().unwrap_or(""))
        .args([inbox, id])
        .output()
        .expect("running php: apt-get install -y php-cli php-redis (this test needs both)");
    assert!(out.status.success(), "php: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Issue 43: an envelope a PHP application builds with no meta (`"meta":[]`) runs, whether it comes
/// through the inbox (pushed with phpredis), `jobq enqueue --file` or the HTTP API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_php_envelope_with_empty_meta_runs_from_the_inbox_a_file_and_the_api() {
    let has_phpredis = std::process::Command::new("php")
        .args(["-r", "exit(extension_loaded('redis') ? 0 : 1);"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_phpredis,
        "this test needs PHP with phpredis: apt-get install -y php-cli php-redis"
    );
    let (store, prefix) = fixture().await;
    let url = with_prefix(&redis_url(), &prefix);
    let dir = tempfile::tempdir().unwrap();

    let line = php_envelope(dir.path(), &format!("{prefix}inbox:default"), "php-inbox");
    assert!(line.contains(r#""meta":[]"#), "PHP wrote {line}");
    let (code, _) = jobq(&url, &["worker", "--burst", "--handler", "php.empty=builtin:noop"]);
    assert_eq!(code, 0);
    let job = get(&store, &id("php-inbox")).await;
    assert_eq!((job.status, job.meta.len()), (JobStatus::Succeeded, 0));
    assert_eq!(value(&job.payload), json!({"n": 1}));
    let (_, out) = jobq(&url, &["inbox", "-o", "json"]);
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&out).unwrap(),
        Vec::<Value>::new(),
        "nothing set aside"
    );

    let file = dir.path().join("jobs.ndjson");
    std::fs::write(&file, php_envelope(dir.path(), "-", "php-file")).unwrap();
    let (code, out) = jobq(&url, &["enqueue", "--file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let job = get(&store, &id("php-file")).await;
    assert_eq!((job.status, job.meta.len()), (JobStatus::Pending, 0));

    let api = crate::serve::Api::start(&store).await;
    let line: Value = serde_json::from_str(&php_envelope(dir.path(), "-", "php-api")).unwrap();
    let (status, body) = api.post("/api/v1/jobs", line).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let job = get(&store, &id("php-api")).await;
    assert_eq!((job.status, job.meta.len()), (JobStatus::Pending, 0));
}

/// `claim` under one cluster-wide concurrency limit on `job_type`.
fn under_limit(job_type: &str, global_concurrency: u32, claim: jobq::store::Claim) -> jobq::store::Claim {
    let flow = jobq::store::Flow {
        limits: vec![jobq::store::Limit {
            scope: jobq::store::Scope::Type(job_type.into()),
            global_concurrency: Some(global_concurrency),
            rate: None,
            partition: None,
        }],
        ..Default::default()
    };
    jobq::store::Claim {
        flow: std::sync::Arc::new(flow),
        ..claim
    }
}

/// How many slots of `job_type`'s limit the store under `prefix` counts as in use (`flow:used`; a count
/// at zero may stay in the hash until the next recount, or be gone).
fn slots_in_use(prefix: &str, job_type: &str) -> u32 {
    let count = redis_cli(&["HGET", &format!("{prefix}flow:used"), &format!("type:{job_type}\n")]);
    count.trim().parse().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_under_a_cluster_wide_limit_takes_inbox_items_and_holds_the_limit() {
    let (store, prefix) = fixture().await;
    let inbox = format!("{prefix}inbox:mail");
    for n in 1..=3 {
        let envelope = format!(r#"{{"v":1,"jobId":"php-{n}","jobType":"mail.send","payload":{{}}}}"#);
        redis_cli(&["LPUSH", &inbox, &envelope]);
    }
    let limited = |worker: &str| under_limit("mail.send", 2, claim_params(&["mail"], worker, 10, T0));

    let first = store.claim(&limited(WORKER)).await.unwrap();
    assert_eq!(ids(&first), ["php-1", "php-2"], "the inbox is taken, up to the limit");
    assert!(
        store.claim(&limited("worker-2")).await.unwrap().is_empty(),
        "the limit is full"
    );
    assert_eq!(redis_cli(&["LLEN", &inbox]).trim(), "0", "every item was taken");
    assert_eq!(get(&store, &id("php-3")).await.status, JobStatus::Pending);
}

/// A claim under a full limit that reads only held-back jobs remembers the run it read, so the claims
/// after it (every idle worker's, at each wake-up) do not read it again; a job that arrives behind
/// the run, and one put in ahead of it, still start at the next claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_held_back_jobs_is_read_once_and_jobs_around_it_still_start() {
    let (store, prefix) = fixture().await;
    let limited = |worker: &str| under_limit("mail.send", 1, claim_params(&["default"], worker, 10, at(10)));
    let mail = (0..=300).map(|n| {
        JobSpec::new("mail.send", json!({}))
            .id(format!("mail-{n:03}"))
            .run_at(at(n - 1000))
    });
    enqueue(&store, mail).await;
    assert_eq!(ids(&store.claim(&limited(WORKER)).await.unwrap()), ["mail-000"]);

    assert!(
        store.claim(&limited("worker-2")).await.unwrap().is_empty(),
        "the limit is full"
    );
    let run = format!("{prefix}flow:held:{prefix}{{default}}:pend:0");
    assert!(
        redis_cli(&["GET", &run]).contains("mail-300"),
        "the run read is remembered"
    );

    add(&store, JobSpec::new("report", json!({})).id("behind").run_at(at(0))).await;
    assert_eq!(
        ids(&store.claim(&limited("worker-2")).await.unwrap()),
        ["behind"],
        "a job behind the run starts"
    );
    add(&store, JobSpec::new("report", json!({})).id("ahead").run_at(at(-5000))).await;
    assert_eq!(
        ids(&store.claim(&limited("worker-2")).await.unwrap()),
        ["ahead"],
        "a job put in ahead of the run starts"
    );
    assert!(store.claim(&limited("worker-3")).await.unwrap().is_empty());
    assert_eq!(get(&store, &id("mail-001")).await.status, JobStatus::Pending);
}

/// A limit's slot count is trusted, and recounted from the running jobs themselves (their `sl`): at
/// the first limited claim under a flow prefix, then at most once a minute, and at most once a second
/// while the count is at the limit, where a count too high (a running job's hash deleted by hand)
/// would hold jobs back; longer when the last recount read many jobs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slot_counts_are_recounted_first_then_once_a_minute_and_at_the_limit_once_a_second() {
    let (store, prefix) = fixture().await;
    let used = format!("{prefix}flow:used");
    let field = "type:mail.send\n";
    let count = || slots_in_use(&prefix, "mail.send");
    let inflate = || redis_cli(&["HINCRBY", &used, field, "300"]);
    let limited = |gc: u32, now: i64| under_limit("mail.send", gc, claim_params(&["default"], WORKER, 1, at(now)));
    enqueue(
        &store,
        (1..=5).map(|n| {
            JobSpec::new("mail.send", json!({}))
                .id(format!("mail-{n}"))
                .run_at(at(n))
        }),
    )
    .await;

    inflate();
    assert_eq!(ids(&store.claim(&limited(1000, 10)).await.unwrap()), ["mail-1"]);
    assert_eq!(count(), 1, "the first claim recounts: one job runs");

    inflate();
    assert_eq!(ids(&store.claim(&limited(1000, 20)).await.unwrap()), ["mail-2"]);
    assert_eq!(count(), 302, "no recount within the minute");

    assert!(
        store.claim(&limited(302, 30)).await.unwrap().is_empty(),
        "within a second of the last recount, the count stands at the limit"
    );
    assert_eq!(
        ids(&store.claim(&limited(302, 1_100)).await.unwrap()),
        ["mail-3"],
        "a second later the limit recounts, and only two run"
    );
    assert_eq!(count(), 3);

    inflate();
    assert_eq!(ids(&store.claim(&limited(1000, 61_100)).await.unwrap()), ["mail-4"]);
    assert_eq!(count(), 4, "a minute later a claim recounts again");

    // Had that recount read 20,000 running jobs, the next at the limit would wait two seconds.
    let last = format!("{}:20000", at(61_100).0);
    redis_cli(&["SET", &format!("{prefix}flow:counted"), &last]);
    inflate();
    assert!(store.claim(&limited(304, 62_200)).await.unwrap().is_empty());
    assert_eq!(
        ids(&store.claim(&limited(304, 63_100)).await.unwrap()),
        ["mail-5"],
        "two seconds after a recount that read 20,000 jobs"
    );
    assert_eq!(count(), 5);
}

/// A lease taken by a version that kept a set of members per slot (`flow:slots:…`, its `sl` the JSON
/// list of those sets) is counted by the first recount, and its `sl` rewritten, so that its end gives
/// its slot back; the old set is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_from_the_slot_set_version_is_counted_and_gives_its_slot_back() {
    use jobq::store::{Lease, Transition};

    let (store, prefix) = fixture().await;
    let used = format!("{prefix}flow:used");
    let field = "type:mail.send\n";
    let old_set = format!("{prefix}flow:slots:{field}");
    let count = || slots_in_use(&prefix, "mail.send");
    let limited = |now: i64| under_limit("mail.send", 10, claim_params(&["default"], WORKER, 1, at(now)));
    enqueue(
        &store,
        (1..=2).map(|n| {
            JobSpec::new("mail.send", json!({}))
                .id(format!("mail-{n}"))
                .run_at(at(n))
        }),
    )
    .await;
    let first = store.claim(&limited(10)).await.unwrap();
    assert_eq!(ids(&first), ["mail-1"]);
    // Make mail-1's lease one the earlier version took: a member of the old set, named in its `sl`.
    let job_key = format!("{prefix}{{default}}:job:mail-1");
    assert_eq!(
        redis_cli(&["EXISTS", &job_key]).trim(),
        "1",
        "the job's hash is {job_key}"
    );
    let old_sl = serde_json::to_string(&[&old_set]).unwrap();
    redis_cli(&["HSET", &job_key, "sl", &old_sl]);
    redis_cli(&["SADD", &old_set, &format!("{prefix}{{default}}:\nmail-1\n1")]);
    redis_cli(&["DEL", &used, &format!("{prefix}flow:counted")]);

    assert_eq!(ids(&store.claim(&limited(20)).await.unwrap()), ["mail-2"]);
    assert_eq!(count(), 2, "the old lease is counted with the new one");
    assert_eq!(redis_cli(&["EXISTS", &old_set]).trim(), "0", "the old set is gone");
    assert!(
        redis_cli(&["HGET", &job_key, "sl"]).trim().starts_with('#'),
        "its sl is rewritten"
    );
    assert!(
        finish(
            &store,
            &Lease::of(&first[0]),
            Transition::Succeeded { result: None },
            at(30)
        )
        .await
    );
    assert_eq!(count(), 1, "its end gives the slot back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_envelope_becomes_the_payload_of_the_default_type() {
    let prefix = fresh_prefix();
    let _sandbox = redis_store_in(&prefix).await;
    let url = format!(
        "{}&inbox_default_type=legacy.import",
        with_prefix(&redis_url(), &prefix)
    );
    let store = connect(&url).await;
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
    let all = newest_jobs(&store).await;
    assert_eq!(all.len(), 2, "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_wakes_on_enqueues_and_on_inbox_pushes() {
    let (store, prefix) = fixture().await;
    let (_subscription, notify) = subscribe(&store, &["mail"]);
    // The first signal says "connected".
    woken(&notify, "connecting").await;

    add(&store, spec("other").queue("elsewhere")).await;
    add(&store, spec("m1").queue("mail")).await;
    // How soon the signal comes is measured by `cargo bench --bench timings`, not asserted here.
    woken(&notify, "an enqueue").await;

    redis_cli(&["LPUSH", &format!("{prefix}inbox:mail"), r#"{"v":1,"jobType":"t"}"#]);
    woken(&notify, "an inbox push").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_carries_on_after_a_server_restart_that_lost_everything() {
    let port = private::free_port();
    let mut server = PrivateRedis::start(port).await;
    let url = server.url();
    let store = connect(&url).await;
    store.migrate().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = "[worker]\nheartbeat = \"100ms\"\nstale_after = \"2s\"\npoll_interval = \"50ms\"\n\n\
                  [handlers.work]\nbuiltin = \"noop\"\n";
    let worker = Process::worker(dir.path(), &url, config, &["--name", "restart-test"]);
    let job = |name: &str| {
        jobq::job::NewJob::validate(
            JobSpec::new("work", json!(name)).id(name),
            UnixMillis::now(),
            &Default::default(),
        )
        .unwrap()
    };
    let ran = async |name: &str, worker: &Process| {
        eventually(format!("job {name} to succeed"), Duration::from_secs(20), async || {
            worker.assert_running();
            match store.get(&id(name)).await {
                Ok(Some(job)) if job.status == JobStatus::Succeeded => Ok(()),
                answer => Err(lazy(move || format!("{answer:?}\n{}", worker.log()))),
            }
        })
        .await
    };
    store.enqueue(&[job("before")]).await.unwrap();
    ran("before", &worker).await;

    // The server dies and comes back empty (no persistence): scripts, jobs and registry are gone. It
    // stays away until the worker has found it gone.
    server.kill();
    worker.wait_log("claiming jobs failed", DEADLINE).await;
    server = PrivateRedis::start(port).await;

    // The producer's first call may meet the dead connection; it reconnects on the next.
    eventually("an enqueue after the restart", DEADLINE, async || {
        store.enqueue(&[job("after")]).await
    })
    .await;
    ran("after", &worker).await;
    worker.signal(libc::SIGTERM);
    let status = worker.exit(DEADLINE).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log());
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
    let listed = newest_jobs(&store).await;
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
    assert!(out.trim_end().ends_with("is at schema version 5"), "{out}");
}

/// Layout 3 added each queue's created-order index: a prefix written at layout 2 gets it from its
/// status indexes at the next migrate, and lists as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_from_layout_2_indexes_every_job_by_creation_time() {
    let (store, prefix) = fixture().await;
    make(&store, spec("old-done").queue("q"), JobStatus::Succeeded, at(-3_000)).await;
    add(&store, spec("old-ready").queue("q")).await;
    add(&store, spec("other").queue("r")).await;
    // What layout 2 had: no created-order index.
    redis_cli(&["DEL", &format!("{prefix}{{q}}:made"), &format!("{prefix}{{r}}:made")]);
    redis_cli(&["SET", &format!("{prefix}version"), "2"]);
    assert!(
        newest_jobs(&store).await.is_empty(),
        "nothing indexed before the migration"
    );
    store.migrate().await.expect("migrate from layout 2");
    assert_eq!(
        sorted(ids(&newest_jobs(&store).await)),
        ["old-done", "old-ready", "other"]
    );
    assert_eq!(redis_cli(&["GET", &format!("{prefix}version")]).trim(), "5");
}

/// A queue's index of expiries holds the jobs no claim has taken: a claim takes out the job it
/// leases, and the sweep drops a cancelled job's entry once its expiry comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_of_expiries_keeps_only_jobs_no_claim_has_taken() {
    let (store, prefix) = fixture().await;
    let index = format!("{prefix}{{q}}:expiry");
    let soon = UnixMillis(UnixMillis::now().0 + 3_600_000);
    add(&store, spec("a-taken").queue("q").expires_at(soon)).await;
    add(&store, spec("b-cancelled").queue("q").expires_at(at(60_000))).await;
    add(&store, spec("c-plain").queue("q")).await;
    assert_eq!(redis_cli(&["ZCARD", &index]).trim(), "2", "only jobs with an expiry");
    let claimed = claim(&store, "q", WORKER, 1, T0).await;
    assert_eq!(ids(&claimed), ["a-taken"]);
    assert_eq!(redis_cli(&["ZRANGE", &index, "0", "-1"]).trim(), "b-cancelled");
    let cancel = jobq::store::Cancel {
        target: jobq::store::CancelTarget::Ids(vec![id("b-cancelled")]),
        now: T0,
    };
    store.store().cancel(&cancel).await.expect("cancel");
    let expire = jobq::store::Expire {
        queues: vec!["q".into()],
        limit: 100,
    };
    assert_eq!(store.store().expire(&expire).await.expect("expire"), 0);
    assert_eq!(
        redis_cli(&["ZCARD", &index]).trim(),
        "0",
        "the cancelled job's entry is dropped"
    );
    assert_eq!(get(&store, &id("b-cancelled")).await.status, JobStatus::Cancelled);
}

/// Issue 14: enqueueing, reading and finishing one job each send the server one command, one round
/// trip (the queue registration is part of the enqueue script, the job's queue is found inside the
/// get script). Counted with `MONITOR` on a server of the test's own, so no other test's commands mix
/// in. A cluster registers a new queue with a second command (see `enqueue.lua`); not tested here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_jobs_enqueue_get_and_finish_send_one_command_each() {
    let server = PrivateRedis::start(private::free_port()).await;
    let store = connect(&server.url()).await;
    store.migrate().await.unwrap();
    let mut monitor = Monitor::start(&server).await;

    for name in ["first", "second"] {
        add(&store, spec(name)).await;
        assert_eq!(monitor.commands().await, ["EVALSHA"], "enqueue of {name}");
    }
    let unique = add(&store, spec("unique").unique_key("k")).await;
    assert_eq!(monitor.commands().await, ["EVALSHA"], "enqueue with a unique key");
    assert_eq!(get(&store, &unique).await.unique_key.as_deref(), Some("k"));
    assert_eq!(monitor.commands().await, ["EVALSHA"], "get");
    assert!(store.get(&id("nobody")).await.unwrap().is_none());
    assert_eq!(monitor.commands().await, ["EVALSHA"], "get of an unknown id");

    let job = claim_one(&store, "default", WORKER, T0).await;
    monitor.commands().await;
    let done = jobq::store::Transition::Succeeded { result: None };
    assert!(finish(&store, &jobq::store::Lease::of(&job), done, T0).await);
    assert_eq!(monitor.commands().await, ["EVALSHA"], "finish");
}

/// Every command opens the store, and opening sends the server only the scripts it lacks: a new
/// server (or one that lost them) gets each script's text, one that has them a single
/// `SCRIPT EXISTS`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_store_loads_only_the_scripts_the_server_lacks() {
    let server = PrivateRedis::start(private::free_port()).await;
    let mut monitor = Monitor::start(&server).await;
    let script_commands = |sent: &[String]| sent.iter().filter(|c| *c == "SCRIPT").count();

    connect(&server.url()).await.migrate().await.unwrap();
    let sent = monitor.commands().await;
    let every_script = script_commands(&sent);
    assert!(every_script > 2, "a new server is sent every script: {sent:?}");

    connect(&server.url()).await.migrate().await.unwrap();
    let sent = monitor.commands().await;
    assert_eq!(
        script_commands(&sent),
        1,
        "a server that has them: one SCRIPT EXISTS: {sent:?}"
    );

    server.cli(&["SCRIPT", "FLUSH"]);
    monitor.commands().await;
    let store = connect(&server.url()).await;
    store.migrate().await.unwrap();
    let sent = monitor.commands().await;
    assert_eq!(
        script_commands(&sent),
        every_script,
        "a server that lost them gets them all again"
    );
    add(&store, spec("after a flush")).await;
    assert_eq!(monitor.commands().await, ["EVALSHA"], "and runs them by hash");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_pushed_by_redis_cli_are_expanded_once_by_racing_workers_and_after_one_died() {
    let (store, prefix) = fixture().await;
    let list = format!("{prefix}events");
    redis_cli(&[
        "LPUSH",
        &list,
        r#"{"event":"user.registered","id":"ev-1","payload":{"userId":7}}"#,
    ]);
    redis_cli(&["LPUSH", &list, r#"{"event":"user.deleted"}"#]);
    redis_cli(&["LPUSH", &list, "not an event"]);
    let now = UnixMillis::now();
    let expand = jobq::store::ExpandEvents {
        expander: &two_jobs,
        limit: 100,
        now,
    };
    let racers = (0..4).map(|_| store.expand_events(&expand));
    let expanded: usize = futures_util::future::join_all(racers)
        .await
        .into_iter()
        .map(|n| n.expect("expand"))
        .sum();
    assert_eq!(expanded, 2, "two events, each expanded once");
    assert_eq!(newest_jobs(&store).await.len(), 4);
    let first = get(&store, &id("evt:ev-1#1")).await;
    assert_eq!(first.payload.get(), r#"{"userId":7}"#);
    let rejected = redis_cli(&["LRANGE", &format!("{{{list}}}:rejected"), "0", "-1"]);
    assert!(rejected.contains("not an event"), "{rejected}");

    // A worker that took a batch and died: its list is taken over once stale, and the events it had
    // already emitted are not emitted twice.
    let registry = format!("{{{list}}}:processing");
    let processing = format!("{registry}:0190a0b0-0000-7000-8000-000000000000");
    redis_cli(&[
        "RPUSH",
        &processing,
        r#"{"event":"user.registered","id":"ev-1"}"#,
        r#"{"event":"order.paid","id":"ev-2"}"#,
    ]);
    redis_cli(&["HSET", &registry, &processing, &now.0.to_string()]);
    let stale = jobq::store::redis::inbox::STALE_AFTER.as_millis() as i64;
    let later = UnixMillis(now.0 + stale + 1);
    assert_eq!(
        store
            .expand_events(&jobq::store::ExpandEvents {
                expander: &two_jobs,
                limit: 100,
                now: later
            })
            .await
            .expect("expand"),
        2
    );
    assert_eq!(redis_cli(&["EXISTS", &processing]).trim(), "0");
    let jobs = newest_jobs(&store).await;
    assert_eq!(jobs.len(), 6, "ev-1 again is a duplicate; ev-2 is new: {jobs:?}");
}

/// A limited lease takes a slot of its limit's count, and every way the lease ends gives it back
/// (finish, release, cancel, rescue, a forced delete), so that the count stays exact without being
/// recounted.
#[tokio::test]
async fn a_limited_lease_gives_its_slot_back_however_it_ends() {
    use jobq::store::{Lease, Rescue, Transition};

    let (store, prefix) = fixture().await;
    add_all(&store, (1..=5).map(|n| spec(&format!("j{n}")))).await;
    let claim = under_limit(JOB_TYPE, 10, claim_params(&["default"], WORKER, 10, T0));
    let jobs = store.claim(&claim).await.expect("claim");
    assert_eq!(jobs.len(), 5);
    let held = || slots_in_use(&prefix, JOB_TYPE);
    assert_eq!(held(), 5);
    assert!(
        finish(
            &store,
            &Lease::of(&jobs[0]),
            Transition::Succeeded { result: None },
            at(1)
        )
        .await
    );
    assert_eq!(held(), 4, "a finished job gives its slot back");
    assert!(release(&store, &Lease::of(&jobs[1])).await);
    assert_eq!(held(), 3, "a released job gives its slot back");
    let report = jobq::Client::new(store.store().clone())
        .cancel(&[jobs[2].id.to_string()])
        .await
        .expect("cancel");
    assert_eq!(report.cancelled.len(), 1);
    assert_eq!(held(), 2, "a cancelled job gives its slot back");
    let delete = jobq::store::Delete {
        ids: vec![jobs[3].id.clone()],
        force: true,
    };
    store.delete(&delete).await.expect("delete");
    assert_eq!(held(), 1, "a job deleted while it ran gives its slot back");
    let rescue = Rescue {
        stale_before: at(1_000_000),
        now: at(1_000_000),
        limit: 10,
    };
    assert_eq!(store.rescue(&rescue).await.expect("rescue").len(), 1);
    assert_eq!(held(), 0, "a rescued job gives its slot back");
}

/// A job retried after a limited lease and then taken by a claim without limits (a worker whose config
/// has none) holds no slot, and its end gives none back: the slot count of the jobs still running
/// under the limit stays right.
#[tokio::test]
async fn a_lease_without_limits_gives_back_no_slot_of_an_earlier_limited_lease() {
    use jobq::store::{Lease, Transition};

    let (store, prefix) = fixture().await;
    add_all(&store, (1..=2).map(|n| spec(&format!("j{n}")))).await;
    let jobs = store
        .claim(&under_limit(JOB_TYPE, 10, claim_params(&["default"], WORKER, 2, T0)))
        .await
        .expect("claim");
    assert_eq!(jobs.len(), 2);
    let held = || slots_in_use(&prefix, JOB_TYPE);
    let retry = Transition::Retry {
        error: "try again".into(),
        run_at: at(1),
        expires_at: None,
    };
    assert!(finish(&store, &Lease::of(&jobs[0]), retry, at(1)).await);
    assert_eq!(held(), 1);
    let again = store
        .claim(&claim_params(&["default"], WORKER, 1, at(2)))
        .await
        .expect("claim without limits");
    assert_eq!(ids(&again), ids(&jobs[..1]));
    assert!(
        finish(
            &store,
            &Lease::of(&again[0]),
            Transition::Succeeded { result: None },
            at(3)
        )
        .await
    );
    assert_eq!(held(), 1, "the job still running under the limit holds its slot");
}
