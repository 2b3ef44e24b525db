//! How long the things take whose outcome the integration tests check: failing on a server that cannot
//! be reached, a subscription's signal, an idle worker's wake-up, and retry back-off as it happens. The
//! tests assert what happens, never how fast (on a loaded machine such an assertion fails for reasons
//! that are not jobq's); this prints the times, for people to judge.
//!
//! `cargo bench --bench timings` prints the median (and the slowest) of JOBQ_BENCH_RUNS runs (default
//! 5) of each of these, next to the test whose outcome it times:
//! - `store::connect` to a PostgreSQL, MySQL or Redis server that cannot be reached (refused, and a
//!   non-routable address under `connect_timeout=1`): `server_stores::<store>::an_unreachable_server_fails_fast_without_the_password`;
//! - `jobq stats` on an unreachable PostgreSQL, process start to exit:
//!   `postgres::the_cli_fails_fast_on_an_unreachable_server_without_the_password`;
//! - `jobq list` on a SQLite file that cannot be opened, start to exit:
//!   `cli::errors::an_unreachable_store_fails_quickly_on_one_line`;
//! - a Redis subscription's signal after an enqueue:
//!   `redis::a_subscription_wakes_on_enqueues_and_on_inbox_pushes`;
//! - enqueue to start (`createdAt` → `startedAt`) of 20 jobs enqueued one at a time for an idle
//!   `jobq worker` polling every 50 ms, on each store:
//!   `worker::<store>::a_job_enqueued_by_another_process_wakes_the_idle_worker`;
//! - the gaps between the three attempts of an exec job that always asks for a retry, with back-off
//!   100 ms × 3^(attempt-1), on SQLite: `worker::sqlite::retries_back_off_exponentially_then_die`.
//!
//! The servers are the tests' own (`JOBQ_TEST_POSTGRES_URL`, `JOBQ_TEST_MYSQL_URL`, `JOBQ_TEST_REDIS_URL`,
//! defaulting to the local ones), each run in a corner of its own that is removed afterwards, as the
//! tests do it (the bench shares `tests/it/support`). A server that is not running is reported, and
//! its figures are left out.

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../tests/it/support/mod.rs"]
mod support;

// Each bench uses some of what the benches share.
#[allow(dead_code)]
mod common;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{env_number, reachable, stores};
use futures_util::FutureExt;
use jobq::Client;
use jobq::job::{JobSpec, JobStatus};
use jobq::store::{self, StoreKind, StoreUrl};
use serde_json::json;
use support::process::{self, Process};
use support::{TestStore, eventually};

/// Waits of the bench: as long as the tests allow.
const WAIT: Duration = Duration::from_secs(30);

/// Runs per timing: `JOBQ_BENCH_RUNS`, 5 unless set.
fn runs() -> usize {
    env_number("JOBQ_BENCH_RUNS").unwrap_or(5)
}

/// `median … (slowest …)` of some durations.
fn summary(mut xs: Vec<Duration>) -> String {
    xs.sort();
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    format!("median {} (slowest {})", ms(xs[xs.len() / 2]), ms(xs[xs.len() - 1]))
}

/// Times `runs` runs of `f`.
async fn timed<F: Future>(runs: usize, mut f: impl FnMut() -> F) -> Vec<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        f().await;
        times.push(started.elapsed());
    }
    times
}

#[tokio::main]
async fn main() {
    let runs = runs();
    println!("jobq timings: median and slowest of {runs} runs");
    unreachable_servers(runs).await;
    unreachable_from_the_cli(runs);
    if reachable(&support::redis::redis_url()) {
        redis_subscription(runs).await;
    } else {
        println!("Redis subscription: not measured, no server at JOBQ_TEST_REDIS_URL");
    }
    for (name, server, open) in stores() {
        if server.as_deref().is_some_and(|url| !reachable(url)) {
            println!("idle worker on {name}: not measured, no server");
            continue;
        }
        idle_worker_wake_up(name, open().await, runs).await;
    }
    retry_back_off(runs).await;
}

/// `store::connect` to servers that cannot be reached.
async fn unreachable_servers(runs: usize) {
    let kinds = [StoreKind::Postgres, StoreKind::Mysql, StoreKind::Redis];
    for url in kinds.into_iter().flat_map(support::server::unreachable) {
        let parsed = StoreUrl::parse(url).expect("a valid URL");
        let times = timed(runs, || async {
            store::connect(&parsed).await.expect_err("an unreachable server");
        })
        .await;
        println!("connect to {}: fails in {}", parsed.redacted(), summary(times));
    }
}

/// `jobq` failing on a store it cannot open, process start to exit.
fn unreachable_from_the_cli(runs: usize) {
    let home = tempfile::tempdir().unwrap();
    for url in ["postgres://user:s3cret@127.0.0.1:1/db", "sqlite:///proc/nope/jobs.db"] {
        let command = if url.starts_with("sqlite") { "list" } else { "stats" };
        let times = (0..runs)
            .map(|_| {
                let started = Instant::now();
                let out = process::jobq()
                    .args(["--url", url, command])
                    .current_dir(home.path())
                    .env("HOME", home.path())
                    .output()
                    .expect("running jobq");
                assert!(!out.status.success(), "jobq {command} on {url} succeeded");
                started.elapsed()
            })
            .collect();
        let shown = StoreUrl::parse(url).map(|u| u.to_string()).unwrap_or_default();
        println!("jobq {command} on {shown}: fails in {}", summary(times));
    }
}

/// An enqueue until the signal of a subscription to its queue.
async fn redis_subscription(runs: usize) {
    let store = support::redis_store().await;
    let notify = Arc::new(tokio::sync::Notify::new());
    let _subscription = store
        .subscribe(&jobq::store::WakeOn::Ready(vec!["mail".to_string()]), notify.clone())
        .expect("redis pushes");
    // The first signal says "connected".
    tokio::time::timeout(WAIT, notify.notified()).await.expect("connected");
    let mut n = 0;
    let times = timed(runs, || {
        n += 1;
        let (store, notify) = (&store, &notify);
        async move {
            // A signal left over from the last round would answer at once.
            let _ = notify.notified().now_or_never();
            support::jobs::add(store, support::jobs::spec(&format!("m{n}")).queue("mail")).await;
            tokio::time::timeout(WAIT, notify.notified()).await.expect("woken");
        }
    })
    .await;
    println!("Redis subscription: signal after an enqueue {}", summary(times));
}

/// An idle `jobq worker` polling every 50 ms: enqueue to start of jobs enqueued one at a time.
async fn idle_worker_wake_up(name: &str, store: TestStore, runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let config = "[worker]\npoll_interval = \"50ms\"\n\n[handlers.n]\nbuiltin = \"noop\"\n";
    let worker = Process::worker(dir.path(), store.url(), config, &["--name", "timings"]);
    worker.wait_log("worker started", WAIT).await;
    let client = Client::new(store.store().clone());
    let mut latencies = Vec::new();
    // The first job only lets the worker go idle.
    for i in 0..=runs.max(20) {
        let id = client.enqueue(JobSpec::new("n", json!(i))).await.unwrap().id;
        let job = eventually(format!("job {i} to succeed on {name}"), WAIT, async || {
            let job = client.get(id.as_str()).await.ok()?;
            (job.status == JobStatus::Succeeded).then_some(job)
        })
        .await;
        if i > 0 {
            let ms = job.started_at.expect("a started job").0 - job.created_at.0;
            latencies.push(Duration::from_millis(ms as u64));
        }
    }
    println!("idle worker on {name}: enqueue to start {}", summary(latencies));
}

/// Gaps between the attempts of a job whose handler always asks for a retry.
async fn retry_back_off(runs: usize) {
    let mut first = Vec::new();
    let mut second = Vec::new();
    for _ in 0..runs {
        let store = support::sqlite_store().await;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("flaky.sh");
        write_script(&script, "echo \"attempt $JOBQ_ATTEMPT failed\"; exit 75");
        let config = format!(
            "[worker]\npoll_interval = \"50ms\"\n\n[retry]\nbase_delay = \"100ms\"\njitter = 0.0\nmultiplier = 3.0\n\n\
             [handlers.flaky]\nexec = [\"{}\"]\nmax_attempts = 3\n",
            script.display()
        );
        let client = Client::new(store.store().clone());
        let id = client.enqueue(JobSpec::new("flaky", json!({}))).await.unwrap().id;
        let _worker = Process::worker(dir.path(), store.url(), &config, &["--name", "timings"]);
        let job = eventually("the flaky job to die", WAIT, async || {
            let job = client.get(id.as_str()).await.ok()?;
            (job.status == JobStatus::Dead).then_some(job)
        })
        .await;
        let gap = |i: usize| Duration::from_millis((job.errors[i + 1].at.0 - job.errors[i].at.0) as u64);
        first.push(gap(0));
        second.push(gap(1));
    }
    println!(
        "retry back-off of 100 ms (SQLite): next attempt after {}",
        summary(first)
    );
    println!(
        "retry back-off of 300 ms (SQLite): next attempt after {}",
        summary(second)
    );
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
