//! Flow control, timed on every store (issue 16's speed targets): three workers in this process, each
//! on a store connection of its own with concurrency 16, drain 20,000 jobs of one type spread over 100
//! tenants (`meta.tenantId`) with a no-op handler, under six configurations of the type:
//! - `unlimited`: no flow control, the plain claim;
//! - `not binding`: `global_concurrency = 1000000` and `rate = "100000000/1s"`, limits that never hold a
//!   job back but make every claim a limited one;
//! - `50 at once`: `global_concurrency = 50` over the whole type (three workers could run 48 + 48);
//! - `50 per tenant`: `global_concurrency = 50` with `partition = "meta.tenantId"`: the limit held for
//!   each of the 100 tenants on its own (the issue's "global_concurrency = 50 over 20,000 jobs in 100
//!   partitions", where a partition is the limit's per-value scope);
//! - `lane per tenant`: `global_concurrency = 1` with `partition = "meta.tenantId"`, 100 lanes;
//! - `16 per worker`: no cluster-wide limit, but the type's per-worker `concurrency = 16` (the worker's
//!   own), which turns prefetching off: each claim asks only for free slots, so at most 48 jobs are
//!   leased at once, as under `50 at once`, with none of a limited claim's work. It is the reference for
//!   `50 at once`: what this many jobs in flight cost in claims and outcomes alone.
//!
//! Each prints jobs per second (from the workers' start to the last job's end) and fairness: the spread
//! of the tenants' last finishing times as a share of the whole drain (0 % when every tenant finishes
//! at the same moment, 100 % when one finishes at the start and another at the end).
//!
//! `cargo bench --bench flow` prints the median of JOBQ_BENCH_RUNS runs (default 3), taking turns
//! between the configurations run by run. The servers are the tests' own (`JOBQ_TEST_POSTGRES_URL`, …,
//! defaulting to the local ones), each run in a corner of its own; a server that is not running is
//! reported and left out. `JOBQ_BENCH_JOBS` changes the number of jobs; `JOBQ_BENCH_STORES=sqlite,redis`
//! measures only those stores, `JOBQ_BENCH_CONFIGS="unlimited,50 at once"` only those configurations
//! (with `unlimited` among them, the others' shares of it are printed), `JOBQ_BENCH_WORKERS` the number
//! of workers (default 3).

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../tests/it/support/mod.rs"]
mod support;

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{chosen, env_number, median, reachable, runs, stores};
use jobq::Client;
use jobq::handler::{Outcome, handler_fn};
use jobq::job::JobSpec;
use jobq::store::{FieldPath, Limit, Rate, Scope};
use jobq::worker::{HandlerOptions, Worker};
use serde_json::json;
use support::TestStore;
use tokio::sync::Notify;

const TYPE: &str = "bench.flow";
const TENANTS: usize = 100;

fn workers() -> usize {
    env_number("JOBQ_BENCH_WORKERS").unwrap_or(3)
}

fn jobs() -> usize {
    env_number("JOBQ_BENCH_JOBS").unwrap_or(20_000)
}

/// What a configuration sets on the type: a cluster-wide limit, a per-worker concurrency.
type Config = (Option<Limit>, Option<u32>);

/// The limits of each configuration.
fn configurations() -> Vec<(&'static str, Config)> {
    let limit = |gc: u32, rate: Option<&str>, partition: Option<&str>| Limit {
        scope: Scope::Type(TYPE.into()),
        global_concurrency: Some(gc),
        rate: rate.map(|r| r.parse::<Rate>().expect("a rate")),
        partition: partition.map(|p| p.parse::<FieldPath>().expect("a partition")),
    };
    let all = vec![
        ("unlimited", (None, None)),
        (
            "not binding",
            (Some(limit(1_000_000, Some("100000000/1s"), None)), None),
        ),
        ("50 at once", (Some(limit(50, None, None)), None)),
        ("50 per tenant", (Some(limit(50, None, Some("meta.tenantId"))), None)),
        ("lane per tenant", (Some(limit(1, None, Some("meta.tenantId"))), None)),
        ("16 per worker", (None, Some(16))),
    ];
    all.into_iter()
        .filter(|(name, _)| chosen("JOBQ_BENCH_CONFIGS", name))
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `RUST_LOG=jobq=debug` shows what the workers do.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .init();
    }
    let (runs, n) = (runs(), jobs());
    println!(
        "jobq flow control: {n} jobs, {TENANTS} tenants, {} workers of concurrency 16, medians of {runs} runs",
        workers()
    );
    for (name, server, open) in stores() {
        if server.as_deref().is_some_and(|url| !reachable(url)) {
            println!("{name}: not measured, no server");
            continue;
        }
        let configs = configurations();
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        let mut spreads: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        for _ in 0..runs {
            for (i, (_, config)) in configs.iter().enumerate() {
                let (rate, spread) = drain(open().await, n, config.clone()).await;
                rates[i].push(rate);
                spreads[i].push(spread);
            }
        }
        let unlimited = configs
            .iter()
            .position(|(config, _)| *config == "unlimited")
            .map(|i| median(rates[i].clone()));
        for (i, (config, _)) in configs.iter().enumerate() {
            let rate = median(rates[i].clone());
            let share = unlimited.map_or(String::new(), |u| format!(" ({:.0} % of unlimited)", 100.0 * rate / u));
            println!(
                "{name} {config}: {rate:.0} jobs/s{share}, tenants' finish spread {:.0} % of the drain",
                100.0 * median(spreads[i].clone())
            );
        }
    }
}

/// Enqueues `n` jobs over the tenants, drains them with three workers under `config`; jobs per second
/// and the tenants' finish spread as a share of the drain.
async fn drain(store: TestStore, n: usize, (limit, concurrency): Config) -> (f64, f64) {
    let client = Client::new(store.store().clone());
    let specs: Vec<JobSpec> = (0..n)
        .map(|i| JobSpec::new(TYPE, json!({ "i": i })).meta("tenantId", (i % TENANTS).to_string()))
        .collect();
    for chunk in specs.chunks(5_000) {
        client.enqueue_many(chunk.to_vec()).await.expect("enqueue");
    }
    let done = Arc::new(AtomicUsize::new(0));
    let all_done = Arc::new(Notify::new());
    let last_finish: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let mut handles = Vec::new();
    let mut runs = Vec::new();
    let started = Instant::now();
    for _ in 0..workers() {
        let store = support::connect(store.url()).await;
        let (done, all_done, last_finish) = (done.clone(), all_done.clone(), last_finish.clone());
        let handler = handler_fn(move |job, _cx| {
            let (done, all_done, last_finish) = (done.clone(), all_done.clone(), last_finish.clone());
            async move {
                let tenant = job.meta.get("tenantId").cloned().unwrap_or_default();
                last_finish.lock().unwrap().insert(tenant, Instant::now());
                if done.fetch_add(1, Ordering::Relaxed) + 1 == n {
                    all_done.notify_one();
                }
                Outcome::success()
            }
        });
        let options = HandlerOptions {
            limit: limit.clone(),
            concurrency,
            ..HandlerOptions::default()
        };
        let worker = Worker::builder(store)
            .concurrency(16)
            .poll_interval(Duration::from_millis(50))
            .handler_with(TYPE, handler, options)
            .build()
            .expect("a worker");
        handles.push(worker.handle());
        runs.push(tokio::spawn(worker.run()));
    }
    tokio::time::timeout(Duration::from_secs(600), all_done.notified())
        .await
        .expect("the drain to finish within 10 minutes");
    let took = started.elapsed();
    for h in &handles {
        h.shutdown();
    }
    for r in runs {
        r.await.expect("a worker task").expect("a worker run");
    }
    let finishes = last_finish.lock().unwrap();
    let first = finishes.values().min().copied().unwrap_or(started);
    let last = finishes.values().max().copied().unwrap_or(started);
    (
        n as f64 / took.as_secs_f64(),
        (last - first).as_secs_f64() / took.as_secs_f64(),
    )
}
