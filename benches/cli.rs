//! Whole-process benchmarks of the CLI on the SQLite default: what a user waits for at the terminal.
//!
//! `cargo bench --bench cli` prints medians of several runs of:
//! - `jobq enqueue --file` of 100,000 jobs into a fresh SQLite file (jobs/s, end to end);
//! - one `jobq enqueue TYPE '{}'` process, start to exit, on an existing database;
//! - `jobq list --limit 50`, `jobq show ID` and `jobq stats` on a database holding 1,000,000 jobs.
//!
//! Environment: JOBQ_BENCH_RUNS (default 5), JOBQ_BENCH_JOBS (default 100000),
//! JOBQ_BENCH_BIG (default 1000000), JOBQ_BENCH_SYNCHRONOUS (normal or full; default normal).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jobq::job::{JobSpec, JobStatus};
use jobq::store::{Claim, Finish, Lease, StoreUrl, Transition};
use jobq::{Client, UnixMillis};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn jobq(url: &str, args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_jobq"))
        .arg("--url")
        .arg(url)
        .args(args)
        .output()
        .expect("run jobq");
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "jobq {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs = env_or("JOBQ_BENCH_RUNS", 5);
    let n = env_or("JOBQ_BENCH_JOBS", 100_000);
    let big = env_or("JOBQ_BENCH_BIG", 1_000_000);
    let sync = std::env::var("JOBQ_BENCH_SYNCHRONOUS").unwrap_or_else(|_| "normal".into());
    let dir = tempfile::tempdir().unwrap();
    println!(
        "jobq CLI benchmarks: SQLite, WAL, synchronous={}, {runs} runs each, medians",
        sync.to_uppercase()
    );

    // Bulk enqueue from an NDJSON file: envelopes with ids, queues and payloads, as an export holds them.
    let file = dir.path().join("jobs.ndjson");
    let mut text = String::with_capacity(n * 120);
    for i in 0..n {
        text.push_str(&format!(
            "{{\"v\":1,\"jobType\":\"mail.send\",\"queue\":\"mail\",\"payload\":{{\"to\":\"user{i}@example.com\",\"n\":{i}}},\"meta\":{{\"tenantId\":\"t{}\"}}}}\n",
            i % 10
        ));
    }
    std::fs::write(&file, text).unwrap();
    let mut bulk = Vec::new();
    for run in 0..runs {
        let url = format!("sqlite://{}/bulk{run}.db?synchronous={sync}", dir.path().display());
        jobq(&url, &["migrate", "-q"]);
        bulk.push(jobq(&url, &["enqueue", "-q", "--file", file.to_str().unwrap()]));
    }
    let m = median(bulk);
    println!(
        "enqueue --file {n} jobs: median {:.0} jobs/s ({})",
        n as f64 / m.as_secs_f64(),
        ms(m)
    );

    // One enqueue process on an existing database.
    let url = format!("sqlite://{}/single.db?synchronous={sync}", dir.path().display());
    jobq(&url, &["migrate", "-q"]);
    let singles: Vec<Duration> = (0..runs.max(5) * 10)
        .map(|_| jobq(&url, &["enqueue", "-q", "mail.send", "{}"]))
        .collect();
    println!(
        "enqueue one job (process start to exit): median {}",
        ms(median(singles))
    );

    // A database of `big` jobs, most finished, as a busy queue looks after a while.
    let path = dir.path().join("big.db");
    let url = format!("sqlite://{}?synchronous={sync}", path.display());
    let probe_id = fill(&path, big);
    let list: Vec<Duration> = (0..runs).map(|_| jobq(&url, &["list", "--limit", "50"])).collect();
    let list_status: Vec<Duration> = (0..runs)
        .map(|_| jobq(&url, &["list", "--limit", "50", "--status", "dead"]))
        .collect();
    let show: Vec<Duration> = (0..runs).map(|_| jobq(&url, &["show", &probe_id])).collect();
    let stats: Vec<Duration> = (0..runs).map(|_| jobq(&url, &["stats"])).collect();
    println!("with {big} jobs: list --limit 50 median {}", ms(median(list)));
    println!(
        "with {big} jobs: list --limit 50 --status dead median {}",
        ms(median(list_status))
    );
    println!("with {big} jobs: show ID median {}", ms(median(show)));
    println!("with {big} jobs: stats median {}", ms(median(stats)));
}

/// Fills a database with `n` jobs over 4 queues: 80 % succeeded, 5 % dead, the rest pending; returns
/// the id of one job for `show`.
fn fill(path: &Path, n: usize) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = Client::connect(&StoreUrl::sqlite_file(path)).await.unwrap();
        let started = Instant::now();
        let chunk = 10_000;
        let mut probe = String::new();
        for start in (0..n).step_by(chunk) {
            let jobs: Vec<_> = (start..(start + chunk).min(n))
                .map(|i| {
                    let spec = JobSpec::new("report.build", serde_json::json!({"n": i})).queue(format!("q{}", i % 4));
                    client.validate(spec).unwrap()
                })
                .collect();
            client.enqueue_validated(&jobs).await.unwrap();
            // Finish most of them so the table looks like a long-running queue's.
            let claimed = client
                .store()
                .claim(&Claim {
                    queues: (0..4).map(|q| format!("q{q}")).collect(),
                    exclude_types: vec![],
                    worker: "bench".into(),
                    limit: (chunk * 85 / 100) as u32,
                    now: UnixMillis::now(),
                    flow: Default::default(),
                })
                .await
                .unwrap();
            let finishes: Vec<Finish> = claimed
                .iter()
                .enumerate()
                .map(|(k, job)| Finish {
                    progress: None,
                    lease: Lease::of(job),
                    outcome: if k % 17 == 0 {
                        Transition::Dead { error: "boom".into() }
                    } else {
                        Transition::Succeeded { result: None }
                    },
                    spawn: Vec::new(),
                })
                .collect();
            client.store().finish(&finishes, UnixMillis::now()).await.unwrap();
            if probe.is_empty() {
                probe = jobs[jobs.len() / 2].id.to_string();
            }
        }
        let stats = client.stats(&[]).await.unwrap();
        let total: u64 = stats.queues.iter().map(|q| q.total()).sum();
        let dead: u64 = stats.queues.iter().map(|q| q.count(JobStatus::Dead)).sum();
        println!(
            "filled {total} jobs ({dead} dead) in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        probe
    })
}
