//! `jobq bridge`: the real binary consumes a real RabbitMQ queue or a real Kafka-protocol topic into
//! each store. Envelopes keep their ids, legacy messages become payloads of `--type`, bad messages are
//! rejected to the dead-letter queue (AMQP) or passed over (Kafka), each with a log line; nothing is
//! acknowledged before it is stored, so cut connections lose and duplicate nothing; SIGTERM finishes
//! the batch in hand and exits; the bridge shows in `jobq workers`. The other way, a `publish`
//! handler's jobs succeed once the broker confirms their envelope, and an unroutable one retries.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use jobq::Client;
use serde_json::json;

use crate::support::kafka::{OwnBroker, consume, fresh_topic, fresh_topic_on, kafka_servers, produce, produce_on};
use crate::support::process::{Process, jobq};
use crate::support::proxy::Proxy;
use crate::support::rabbitmq::{TestQueue, amqp_url};
use crate::support::{TestStore, eventually, lazy, mysql_store, postgres_store, redis_store, sqlite_store};

const WAIT: Duration = Duration::from_secs(60);

/// Starts `jobq bridge ARGS…` on `store`, logging to `bridge.log` in `dir`.
fn bridge(dir: &Path, store: &TestStore, args: &[&str]) -> Process {
    let config = dir.join("jobq.toml");
    std::fs::write(&config, "[worker]\nheartbeat = \"200ms\"\nshutdown_timeout = \"5s\"\n").unwrap();
    let mut cmd = jobq();
    cmd.args(["--url", store.url(), "--config"])
        .arg(&config)
        .arg("bridge")
        .args(args)
        .env("JOBQ_LOG", "jobq=info")
        .stdout(Stdio::null());
    Process::spawn(cmd, &dir.join("bridge.log"))
}

/// Jobs in the store, over every queue and status.
async fn jobs_in(store: &TestStore) -> u64 {
    let stats = Client::new(store.store().clone()).stats(&[]).await.expect("stats");
    stats.queues.iter().map(|q| q.total()).sum()
}

fn envelope(id: &str, n: usize) -> Vec<u8> {
    json!({"v": 1, "jobId": id, "jobType": "order.ship", "payload": {"n": n, "note": "zażółć ✓"}})
        .to_string()
        .into_bytes()
}

async fn wait_for_jobs(store: &TestStore, want: u64, process: &Process) {
    eventually(format!("{want} jobs in the store"), WAIT, async || {
        let n = jobs_in(store).await;
        if n >= want {
            Ok(n)
        } else {
            Err(lazy(move || format!("{n} jobs\n{}", process.log())))
        }
    })
    .await;
}

/// Envelopes, legacy bodies and bad ones into `store`: the first two become jobs (envelopes with
/// their ids and queues, legacy bodies as payloads of `--type` on `--to`), the bad ones go to the
/// dead-letter queue with one log line each; the bridge lists itself in `jobq workers`; SIGTERM
/// ends it with a summary.
async fn amqp_messages_become_jobs(store: TestStore) {
    let dir = tempfile::tempdir().unwrap();
    let queue = TestQueue::new().await;
    let mut messages: Vec<(Vec<u8>, Option<String>)> =
        (0..200).map(|n| (envelope(&format!("order-{n}"), n), None)).collect();
    messages.extend((0..50).map(|n| {
        (
            json!({"legacy": n}).to_string().into_bytes(),
            Some(format!("legacy-{n}")),
        )
    }));
    messages.push((b"not json at all".to_vec(), None));
    messages.push((vec![0xff, 0xfe], Some("binary-1".into())));
    messages.push((json!({"v": 1, "jobType": ""}).to_string().into_bytes(), None));
    queue.publish(&messages).await;

    let process = bridge(
        dir.path(),
        &store,
        &[
            &amqp_url(),
            "--from",
            &queue.name,
            "--to",
            "bridged",
            "--type",
            "legacy.import",
            "--name",
            "orders-bridge",
        ],
    );
    wait_for_jobs(&store, 250, &process).await;
    eventually("the rejected messages in the dead-letter queue", WAIT, async || {
        queue.ready(&queue.dead).await == 3
    })
    .await;

    let client = Client::new(store.store().clone());
    let order = client.get("order-7").await.expect("an envelope keeps its id");
    assert_eq!(
        (order.job_type.as_str(), order.queue.as_str()),
        ("order.ship", "bridged")
    );
    assert_eq!(order.payload.get(), r#"{"n":7,"note":"zażółć ✓"}"#);
    let legacy = client
        .get("legacy-3")
        .await
        .expect("a message id names a legacy message's job");
    assert_eq!(
        (legacy.job_type.as_str(), legacy.payload.get()),
        ("legacy.import", r#"{"legacy":3}"#)
    );

    // One log line per rejected message, with the reason.
    let log = process.log();
    assert_eq!(log.matches("rejected").count(), 3, "{log}");
    assert!(
        log.contains("invalid JSON") && log.contains("not UTF-8") && log.contains("binary-1"),
        "{log}"
    );

    // The bridge registers like a worker, with its counts.
    eventually("the bridge's registry entry with its counts", WAIT, async || {
        let workers = client.workers(Duration::from_secs(60)).await.unwrap();
        let entry = workers.iter().find(|w| w.name == "orders-bridge")?;
        let b = entry.bridge.as_ref()?;
        (entry.jobs_done == 250
            && b.rejected == 3
            && b.source.contains(&queue.name)
            && !b.source.contains("guest:guest"))
        .then_some(())
    })
    .await;

    process.signal(libc::SIGTERM);
    let status = process.exit(WAIT).await;
    assert!(status.success(), "{}", process.log());
    assert!(
        process
            .log()
            .contains("250 messages became new jobs, 0 were stored already, 3 were rejected"),
        "{}",
        process.log()
    );
    assert!(
        client
            .workers(Duration::from_secs(60))
            .await
            .unwrap()
            .iter()
            .all(|w| w.name != "orders-bridge"),
        "a stopped bridge leaves the registry"
    );
    // Unacknowledged deliveries go back to the queue when the bridge's connection closes.
    assert_eq!(queue.ready(&queue.name).await, 0, "every message was acknowledged");
    queue.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_messages_become_jobs_on_sqlite() {
    amqp_messages_become_jobs(sqlite_store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_messages_become_jobs_on_postgres() {
    amqp_messages_become_jobs(postgres_store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_messages_become_jobs_on_mysql() {
    amqp_messages_become_jobs(mysql_store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_messages_become_jobs_on_redis() {
    amqp_messages_become_jobs(redis_store().await).await;
}

/// Connections cut under a bridge at work: it connects again, the broker redelivers what was not
/// acknowledged, and every message ends as exactly one job, none lost, none twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_cut_connections_lose_and_duplicate_nothing() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let queue = TestQueue::new().await;
    let proxy = Proxy::start("127.0.0.1:5672").await;
    let through_proxy = amqp_url().replace("127.0.0.1:5672", &format!("127.0.0.1:{}", proxy.port()));
    let total = 6_000u64;
    let first: Vec<_> = (0..total / 2)
        .map(|n| (envelope(&format!("m-{n}"), n as usize), None))
        .collect();
    queue.publish(&first).await;
    let process = bridge(
        dir.path(),
        &store,
        &[&through_proxy, "--from", &queue.name, "--max-in-flight", "200"],
    );
    eventually("the bridge to store some jobs", WAIT, async || {
        jobs_in(&store).await > 0
    })
    .await;
    assert!(proxy.cut() > 0, "the bridge's connection was cut");
    let second: Vec<_> = (total / 2..total)
        .map(|n| (envelope(&format!("m-{n}"), n as usize), None))
        .collect();
    queue.publish(&second).await;
    process.wait_log("connected to", WAIT).await;
    proxy.cut();
    wait_for_jobs(&store, total, &process).await;
    process.signal(libc::SIGTERM);
    assert!(process.exit(WAIT).await.success(), "{}", process.log());
    assert_eq!(jobs_in(&store).await, total, "one job per message");
    assert_eq!(queue.ready(&queue.name).await, 0, "every message was acknowledged");
    let log = process.log();
    assert!(log.contains("lost amqp://guest:***@127.0.0.1"), "{log}");
    assert!(!log.contains("guest:guest"), "no password in the log:\n{log}");
    queue.remove().await;
}

/// RabbitMQ restarted under a bridge at work (`rabbitmqctl stop_app`, then `start_app`): the durable
/// queue keeps its persistent messages, the bridge connects again, and every message ends as exactly
/// one job. Ignored by default, as it stops the broker every other test uses:
/// `cargo test --test it -- --ignored --test-threads 1 bridge::amqp_broker_restart`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "restarts the machine's RabbitMQ; run alone (see the README)"]
async fn amqp_broker_restart_loses_and_duplicates_nothing() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let mut queue = TestQueue::new().await;
    let total = 20_000u64;
    let messages: Vec<_> = (0..total)
        .map(|n| (envelope(&format!("r-{n}"), n as usize), None))
        .collect();
    queue.publish(&messages).await;
    let process = bridge(
        dir.path(),
        &store,
        &[&amqp_url(), "--from", &queue.name, "--max-in-flight", "100"],
    );
    eventually("the bridge to store some jobs", WAIT, async || {
        jobs_in(&store).await > 0
    })
    .await;
    let rabbitmqctl = |verb: &str| {
        let out = std::process::Command::new("rabbitmqctl")
            .arg(verb)
            .output()
            .expect("running rabbitmqctl");
        assert!(
            out.status.success(),
            "rabbitmqctl {verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    rabbitmqctl("stop_app");
    process.wait_log("lost amqp://", WAIT).await;
    rabbitmqctl("start_app");
    process.wait_log("connected to", Duration::from_secs(120)).await;
    wait_for_jobs(&store, total, &process).await;
    process.signal(libc::SIGTERM);
    assert!(process.exit(WAIT).await.success(), "{}", process.log());
    assert_eq!(jobs_in(&store).await, total, "one job per message");
    queue.reconnect().await;
    assert_eq!(queue.ready(&queue.name).await, 0, "every message was acknowledged");
    queue.remove().await;
}

/// The same envelope twice (a producer's retry, a redelivery) is one job; SIGTERM while messages
/// keep coming stores and acknowledges the batch in hand, and leaves the rest on the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqp_redelivery_is_a_no_op_and_sigterm_loses_nothing() {
    let store = postgres_store().await;
    let dir = tempfile::tempdir().unwrap();
    let queue = TestQueue::new().await;
    queue
        .publish(&[(envelope("twice", 1), None), (envelope("twice", 1), None)])
        .await;
    let process = bridge(dir.path(), &store, &[&amqp_url(), "--from", &queue.name]);
    let client = Client::new(store.store().clone());
    eventually("the second copy counted as a duplicate", WAIT, async || {
        let workers = client.workers(Duration::from_secs(60)).await.unwrap();
        workers
            .iter()
            .any(|w| w.jobs_done == 1 && w.bridge.as_ref().is_some_and(|b| b.duplicates == 1))
    })
    .await;
    assert_eq!(jobs_in(&store).await, 1);

    let total = 5_000u64;
    let messages: Vec<_> = (0..total)
        .map(|n| (envelope(&format!("s-{n}"), n as usize), None))
        .collect();
    queue.publish(&messages).await;
    eventually("the bridge to be at work", WAIT, async || jobs_in(&store).await > 1).await;
    process.signal(libc::SIGTERM);
    let status = process.exit(WAIT).await;
    assert!(status.success(), "{}", process.log());
    let stored = jobs_in(&store).await - 1;
    let left = u64::from(queue.ready(&queue.name).await);
    assert_eq!(stored + left, total, "every message is a job or still on the queue");
    queue.remove().await;
}

/// Bad input: an unknown scheme or a missing `--from`/`--topic`/`--group` exits 2 with one line; an
/// unreachable broker or a missing queue exits 1 within the connect time-out, with no password shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bridges_are_refused_with_one_line() {
    let store = sqlite_store().await;
    let run = |args: &[&str]| {
        let out = jobq()
            .args(["--url", store.url(), "bridge"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap(), stderr)
    };
    let closed = crate::support::private::free_port();
    for (args, code, says) in [
        (
            vec!["nats://ana:s3cret@127.0.0.1:4222", "--from", "q"],
            2,
            "unknown broker scheme",
        ),
        (vec!["amqp://ana:s3cret@127.0.0.1:5672/%2f"], 2, "needs --from QUEUE"),
        (vec!["kafka://127.0.0.1:9092", "--group", "g"], 2, "needs --topic TOPIC"),
        (vec!["kafka://127.0.0.1:9092", "--topic", "t"], 2, "needs --group GROUP"),
        (
            vec!["amqp://ana:s3cret@127.0.0.1:5672/%2f", "--topic", "t"],
            2,
            "--topic and --group are for kafka",
        ),
    ] {
        let (got, stderr) = run(&args);
        assert_eq!(got, code, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
    let unreachable = format!("amqp://ana:s3cret@127.0.0.1:{closed}/%2f");
    let (got, stderr) = run(&[&unreachable, "--from", "q", "--connect-timeout", "3s"]);
    assert_eq!(got, 1, "{stderr}");
    assert!(
        stderr.contains("cannot connect to amqp://ana:***@127.0.0.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");

    let (got, stderr) = run(&[&amqp_url(), "--from", "jobq-test-no-such-queue"]);
    assert_eq!(got, 1, "{stderr}");
    assert!(
        stderr.contains("jobq-test-no-such-queue") && stderr.contains("NOT_FOUND"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");

    let (got, stderr) = run(&[
        &format!("kafka://127.0.0.1:{closed}"),
        "--topic",
        "t",
        "--group",
        "g",
        "--connect-timeout",
        "2s",
    ]);
    assert_eq!(got, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("cannot reach kafka://127.0.0.1:{closed}")),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
}

/// A Kafka topic of three partitions into `store`: envelopes keep their ids, legacy values get
/// `kafka:TOPIC:PARTITION:OFFSET`, a bad value is passed over with a log line; after SIGTERM the
/// group's committed offsets cover every message, so a second bridge of the group adds nothing.
async fn kafka_messages_become_jobs(store: TestStore) {
    let dir = tempfile::tempdir().unwrap();
    let topic = fresh_topic(3).await;
    let group = format!("{topic}-group");
    let mut messages: Vec<(String, Vec<u8>)> = (0..300)
        .map(|n| (format!("k{n}"), envelope(&format!("k-{n}"), n)))
        .collect();
    messages.extend((0..30).map(|n| (format!("l{n}"), json!({"legacy": n}).to_string().into_bytes())));
    messages.push(("bad".into(), b"{oops".to_vec()));
    produce(&topic, &messages).await;
    let url = format!("kafka://{}", kafka_servers());
    let args = [
        "--topic",
        topic.as_str(),
        "--group",
        group.as_str(),
        "--type",
        "legacy.import",
    ];
    let first = bridge(dir.path(), &store, &[&[url.as_str()][..], &args[..]].concat());
    wait_for_jobs(&store, 330, &first).await;
    first.wait_log("rejected message at offset", WAIT).await;
    first.signal(libc::SIGTERM);
    assert!(first.exit(WAIT).await.success(), "{}", first.log());
    let client = Client::new(store.store().clone());
    assert_eq!(client.get("k-42").await.unwrap().job_type, "order.ship");
    let legacy = client
        .list(&jobq::store::List {
            filter: jobq::store::JobFilter {
                job_types: vec!["legacy.import".into()],
                ..Default::default()
            },
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(legacy.len(), 30);
    assert!(
        legacy
            .iter()
            .all(|j| j.id.as_str().starts_with(&format!("kafka:{topic}:"))),
        "{:?}",
        legacy[0].id
    );

    // The offsets were committed: the group's next member starts after them.
    produce(&topic, &[("late".into(), envelope("late", 0))]).await;
    let second_dir = tempfile::tempdir().unwrap();
    let second = bridge(second_dir.path(), &store, &[&[url.as_str()][..], &args[..]].concat());
    wait_for_jobs(&store, 331, &second).await;
    second.signal(libc::SIGTERM);
    assert!(second.exit(WAIT).await.success(), "{}", second.log());
    assert_eq!(jobs_in(&store).await, 331);
    assert!(
        second
            .log()
            .contains("1 messages became new jobs, 0 were stored already, 0 were rejected"),
        "the group's second member read only the new message:\n{}",
        second.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_messages_become_jobs_on_sqlite() {
    kafka_messages_become_jobs(sqlite_store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_messages_become_jobs_on_postgres() {
    kafka_messages_become_jobs(postgres_store().await).await;
}

/// Killed connections between a Kafka bridge and its broker: every connection the bridge makes (the
/// first, and those the broker's metadata names) goes through a proxy, cut twice while messages
/// flow. librdkafka connects again, every message ends as exactly one job, and the offsets the
/// bridge commits cover them all: the group's next member reads only a message produced later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_cut_connections_lose_and_duplicate_nothing() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let broker = OwnBroker::behind_proxy().await;
    let servers = broker.servers();
    let topic = fresh_topic_on(&servers, 3).await;
    let group = format!("{topic}-group");
    let messages = |range: std::ops::Range<usize>| -> Vec<(String, Vec<u8>)> {
        range
            .map(|n| (format!("c{n}"), envelope(&format!("c-{n}"), n)))
            .collect()
    };
    let total = 6_000;
    produce_on(&servers, &topic, &messages(0..total / 2)).await;
    let url = format!("kafka://{servers}");
    let args = [
        url.as_str(),
        "--topic",
        &topic,
        "--group",
        &group,
        "--max-in-flight",
        "200",
    ];
    let first = bridge(dir.path(), &store, &args);
    eventually("the bridge to store some jobs", WAIT, async || {
        jobs_in(&store).await > 0
    })
    .await;
    assert!(broker.proxy.cut() > 0, "the bridge's connections were cut");
    produce_on(&servers, &topic, &messages(total / 2..total)).await;
    let before = jobs_in(&store).await;
    eventually("the bridge to store more jobs after the cut", WAIT, async || {
        jobs_in(&store).await > before
    })
    .await;
    broker.proxy.cut();
    wait_for_jobs(&store, total as u64, &first).await;
    first.signal(libc::SIGTERM);
    assert!(first.exit(WAIT).await.success(), "{}", first.log());
    assert_eq!(jobs_in(&store).await, total as u64, "one job per message");

    produce_on(&servers, &topic, &[("late".into(), envelope("late", 0))]).await;
    let second_dir = tempfile::tempdir().unwrap();
    let second = bridge(second_dir.path(), &store, &args);
    wait_for_jobs(&store, total as u64 + 1, &second).await;
    second.signal(libc::SIGTERM);
    assert!(second.exit(WAIT).await.success(), "{}", second.log());
    assert!(
        second
            .log()
            .contains("1 messages became new jobs, 0 were stored already, 0 were rejected"),
        "the offsets committed cover every message the first bridge stored:\n{}",
        second.log()
    );
}

/// Enqueues `n` jobs of `job_type` with ids `PREFIX-i` on `store`.
async fn enqueue(store: &TestStore, job_type: &str, prefix: &str, n: usize) {
    let client = Client::new(store.store().clone());
    let specs = (0..n)
        .map(|i| {
            let mut spec = jobq::JobSpec::new(job_type, json!({"n": i}));
            spec.id = Some(format!("{prefix}-{i}"));
            spec
        })
        .collect();
    client.enqueue_many(specs).await.expect("enqueue");
}

async fn count_status(store: &TestStore, status: jobq::JobStatus) -> usize {
    let client = Client::new(store.store().clone());
    client
        .list(&jobq::store::List {
            filter: jobq::store::JobFilter {
                statuses: vec![status],
                ..Default::default()
            },
            limit: 1000,
            ..Default::default()
        })
        .await
        .expect("list")
        .len()
}

/// A `publish` handler to RabbitMQ: each job's envelope lands on the queue with the job's id as its
/// message id, and the job succeeds; a publish no queue is bound for comes back unroutable and the
/// job retries (here, with one attempt, it goes dead with that error). No password in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_handler_hands_envelopes_to_rabbitmq() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let queue = TestQueue::new().await;
    let base = amqp_url();
    let config = format!(
        "{}\n[handlers.\"order.ship\"]\npublish = \"{base}/?routing_key={}\"\n\n[handlers.\"order.lost\"]\npublish = \"{base}/amq.direct?routing_key=nowhere-{}\"\nmax_attempts = 1\n",
        crate::support::process::FAST,
        queue.name,
        queue.name
    );
    enqueue(&store, "order.ship", "ship", 20).await;
    enqueue(&store, "order.lost", "lost", 1).await;
    let worker = &Process::worker(dir.path(), store.url(), &config, &[]);
    eventually(
        "20 published jobs succeeded and the unroutable one dead",
        WAIT,
        async || {
            let (ok, dead) = (
                count_status(&store, jobq::JobStatus::Succeeded).await,
                count_status(&store, jobq::JobStatus::Dead).await,
            );
            if ok == 20 && dead == 1 {
                Ok(())
            } else {
                Err(lazy(move || format!("{ok} succeeded, {dead} dead\n{}", worker.log())))
            }
        },
    )
    .await;
    let mut got = queue.take_all().await;
    got.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(got.len(), 20);
    for (body, id) in &got {
        let envelope: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(Some(envelope["jobId"].as_str().unwrap().to_string()), *id);
        assert_eq!(envelope["jobType"], "order.ship");
    }
    let lost = Client::new(store.store().clone()).get("lost-0").await.unwrap();
    let error = serde_json::to_string(&lost.errors).unwrap();
    assert!(error.contains("unroutable") && error.contains("guest:***@"), "{error}");
    assert!(
        !error.contains("guest:guest") && !worker.log().contains("guest:guest"),
        "no password shown"
    );
    queue.remove().await;
}

/// A `publish` handler to Kafka: every job's envelope is on the topic, keyed by its id, and the job
/// succeeded once the broker acknowledged it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_handler_hands_envelopes_to_kafka() {
    let store = postgres_store().await;
    let dir = tempfile::tempdir().unwrap();
    let topic = fresh_topic(2).await;
    let config = format!(
        "{}\n[handlers.\"order.ship\"]\npublish = \"kafka://{}/{topic}\"\n",
        crate::support::process::FAST,
        kafka_servers()
    );
    enqueue(&store, "order.ship", "k-ship", 20).await;
    let worker = &Process::worker(dir.path(), store.url(), &config, &[]);
    eventually("20 published jobs succeeded", WAIT, async || {
        let ok = count_status(&store, jobq::JobStatus::Succeeded).await;
        if ok == 20 {
            Ok(())
        } else {
            Err(lazy(move || format!("{ok} succeeded\n{}", worker.log())))
        }
    })
    .await;
    let mut got = consume(&topic, 20).await;
    got.sort();
    for (key, body) in &got {
        let envelope: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(envelope["jobId"].as_str().unwrap(), key);
    }
    let keys: std::collections::BTreeSet<_> = got.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys.len(), 20, "one message per job");
}
