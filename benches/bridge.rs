//! `jobq bridge` throughput: messages a second from a RabbitMQ queue and from a Kafka topic into each
//! store, as the real binary moves them.
//!
//! Per broker and store (`JOBQ_BENCH_BROKERS=amqp,kafka` and `JOBQ_BENCH_STORES` narrow them), each of
//! `JOBQ_BENCH_RUNS` runs (3 unless set) fills a fresh queue or topic with `JOBQ_BENCH_MESSAGES`
//! (100,000 unless set) envelopes of 1 KB with ids, then starts `jobq bridge` (the release build's, or
//! `JOBQ_BENCH_JOBQ`) on a fresh store and times it until the store holds every job: the rate over
//! the whole run (start-up, connecting and, on Kafka, joining the consumer group included), and the
//! rate after the first job was stored. On Kafka, a plain consumer reading the topic is timed beside
//! it first (the broker's own rate, its group join included). The queue is persistent
//! and durable (what a producer that must not lose work uses), the Kafka topic has 3 partitions on
//! Tansu (memory-only, started here as the tests start it), the stores are the tests' servers.
//!
//! `JOBQ_BENCH_TRANSIENT=1` publishes the AMQP messages transient instead.
//! `JOBQ_BENCH_KAFKA_QUERY` is appended to the Kafka URL (`?fetch.wait.max.ms=10`).
//! `JOBQ_BENCH_BRIDGE_ARGS` adds flags to the bridge's (`--max-in-flight 4000`).
//!
//! `cargo bench --bench bridge` runs it all; `JOBQ_BENCH_BROKERS=amqp JOBQ_BENCH_STORES=sqlite
//! JOBQ_BENCH_MESSAGES=20000 cargo bench --bench bridge` is a quick look.

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../tests/it/support/mod.rs"]
mod support;

#[allow(dead_code)]
mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{chosen, env_number, median, runs, stores};
use jobq::Client;
use support::process::Process;

fn main() {
    let messages = env_number("JOBQ_BENCH_MESSAGES").unwrap_or(100_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let bodies: Vec<Vec<u8>> = (0..messages).map(envelope).collect();
    println!(
        "jobq bridge: {messages} envelopes of {} bytes, medians of {} runs",
        bodies[0].len(),
        runs()
    );
    for broker in ["amqp", "kafka"] {
        if !chosen("JOBQ_BENCH_BROKERS", broker) {
            continue;
        }
        for (name, _, open) in stores() {
            let mut whole = Vec::new();
            let mut steady = Vec::new();
            for _ in 0..runs() {
                let (w, s) = runtime.block_on(async {
                    let store = open().await;
                    match broker {
                        "amqp" => amqp_run(&store, &bodies).await,
                        _ => kafka_run(&store, &bodies).await,
                    }
                });
                whole.push(w);
                steady.push(s);
            }
            let shown = |xs: &[f64]| xs.iter().map(|r| format!("{r:.0}")).collect::<Vec<_>>().join(", ");
            println!(
                "{broker} → {name}: {:.0} messages/s from start to the last job (runs: {}); {:.0}/s after the first job (runs: {})",
                median(whole.clone()),
                shown(&whole),
                median(steady.clone()),
                shown(&steady)
            );
        }
    }
}

/// An envelope of about 1 KB with an id, as a PHP or Python producer would publish it.
fn envelope(n: usize) -> Vec<u8> {
    let pad = "x".repeat(900);
    serde_json::json!({"v": 1, "jobId": format!("bench-{n}"), "jobType": "order.ship", "payload": {"n": n, "pad": pad}})
        .to_string()
        .into_bytes()
}

/// `JOBQ_BENCH_TRANSIENT=1`: publish the AMQP messages transient, to see the broker's disk path's share.
fn transient() -> bool {
    std::env::var("JOBQ_BENCH_TRANSIENT").is_ok_and(|v| v == "1")
}

fn binary() -> PathBuf {
    std::env::var("JOBQ_BENCH_JOBQ")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_jobq")))
}

/// Runs the bridge on `store` with `args` until the store holds `want` jobs: messages a second over
/// the whole run, and after the first job was stored.
async fn time_bridge(store: &support::TestStore, args: &[String], want: u64) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(binary());
    let extra = std::env::var("JOBQ_BENCH_BRIDGE_ARGS").unwrap_or_default();
    cmd.args(["--url", store.url(), "bridge"])
        .args(args)
        .args(["--name", "bench"])
        .args(extra.split_whitespace())
        .stdout(Stdio::null());
    let started = Instant::now();
    let process = Process::spawn(cmd, &dir.path().join("bridge.log"));
    let client = Client::new(store.store().clone());
    // The first job marks the end of connecting (and, on Kafka, of joining the consumer group).
    let any = jobq::store::List {
        limit: 1,
        ..Default::default()
    };
    loop {
        if !client.list(&any).await.expect("list").is_empty() {
            break;
        }
        give_up(&started, &process, want);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let first = started.elapsed().as_secs_f64();
    // A cheap look first (one job by id, the last message published), so that watching takes little
    // of the machine the bridge and the broker share; then the count, which a partitioned topic
    // needs (its partitions finish in any order).
    let last = format!("bench-{}", want - 1);
    loop {
        if client.get(&last).await.is_ok() {
            break;
        }
        give_up(&started, &process, want);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    loop {
        let stats = client.stats(&[]).await.expect("stats");
        let n: u64 = stats.queues.iter().map(|q| q.ready).sum();
        if n >= want {
            break;
        }
        give_up(&started, &process, want);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    process.signal(libc::SIGTERM);
    process.exit(Duration::from_secs(60)).await;
    (want as f64 / secs, want as f64 / (secs - first))
}

async fn amqp_run(store: &support::TestStore, bodies: &[Vec<u8>]) -> (f64, f64) {
    let queue = support::rabbitmq::TestQueue::new().await;
    for chunk in bodies.chunks(10_000) {
        let messages: Vec<(Vec<u8>, Option<String>)> = chunk.iter().map(|b| (b.clone(), None)).collect();
        queue.publish_as(&messages, !transient()).await;
    }
    let args = vec![support::rabbitmq::amqp_url(), "--from".into(), queue.name.clone()];
    let rate = time_bridge(store, &args, bodies.len() as u64).await;
    queue.remove().await;
    rate
}

async fn kafka_run(store: &support::TestStore, bodies: &[Vec<u8>]) -> (f64, f64) {
    let topic = support::kafka::fresh_topic(3).await;
    for chunk in bodies.chunks(10_000) {
        let messages: Vec<(String, Vec<u8>)> = chunk
            .iter()
            .enumerate()
            .map(|(i, b)| (i.to_string(), b.clone()))
            .collect();
        support::kafka::produce(&topic, &messages).await;
    }
    // The broker's own rate beside it: a plain consumer (librdkafka's defaults) reading the topic.
    let started = Instant::now();
    support::kafka::consume(&topic, bodies.len()).await;
    println!(
        "  a plain consumer read the topic at {:.0} messages/s",
        bodies.len() as f64 / started.elapsed().as_secs_f64()
    );
    let args = vec![
        format!(
            "kafka://{}{}",
            support::kafka::kafka_servers(),
            std::env::var("JOBQ_BENCH_KAFKA_QUERY").unwrap_or_default()
        ),
        "--topic".into(),
        topic.clone(),
        "--group".into(),
        format!("{topic}-bench"),
    ];
    time_bridge(store, &args, bodies.len() as u64).await
}

fn give_up(started: &Instant, process: &Process, want: u64) {
    if started.elapsed() > Duration::from_secs(600) {
        panic!("the bridge did not store {want} jobs in 10 minutes\n{}", process.log());
    }
}
