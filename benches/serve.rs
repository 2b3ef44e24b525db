//! `jobq serve` at a million jobs: how fast the admin API answers what the dashboard and Prometheus
//! ask of it, how many requests a second it serves to 100 clients at once, and how much memory the
//! server holds.
//!
//! Per store (`JOBQ_BENCH_STORES` narrows them), the bench fills a store with `JOBQ_BENCH_JOBS` jobs
//! (1,000,000 unless set) through the `Store` contract, as workers would leave them: five queues of
//! different sizes, nine types, created over the last week, most succeeded, some dead, cancelled,
//! discarded, waiting and running, and a backlog of ready and scheduled jobs, and brings the planner's
//! statistics up to date (`ANALYZE`, which the test servers' autovacuum, off, would do). Then it starts the real
//! `jobq serve` binary on it and measures, `JOBQ_BENCH_RUNS` times (3 unless set) with a fresh server
//! each time:
//! - `GET /api/v1/jobs?limit=50`: the first page, a dead-letter page of one queue
//!   (`queue=mail&status=dead`), and a page 10,000 jobs deep (`JOBQ_BENCH_DEPTH`), reached by the
//!   `Link: rel="next"` cursor the server sends (by `offset` from a server that sends none): p50 and
//!   p95 of 200 requests each (or as many as 20 s allow, at least 5), one at a time;
//! - `GET /metrics` and `GET /api/v1/stats`: p50 of 20 requests each;
//! - 100 clients (`JOBQ_BENCH_CLIENTS`) at once for 30 s (`JOBQ_BENCH_LOAD_SECS`), each sending its
//!   next request as soon as the last is answered, a mix of the first page (40 %), the dead-letter
//!   page (20 %), one job by id (30 %) and the stats (10 %): requests a second, p50, p99 and errors
//!   (any answer but 200, or no answer). The load comes from this process (reqwest on tokio, 100
//!   kept-alive connections), on the same machine as the server;
//! - the server's resident memory (`VmRSS` of `/proc/<pid>/status`) once it has started and before
//!   any request, and idle again after the load (its peak, `VmHWM`, beside it).
//!
//! Filling a million jobs takes minutes. `JOBQ_BENCH_KEEP=1` fills a named corner instead of a fresh
//! one (the SQLite file `<target>/tmp/serve-bench/jobs-<N>.db`, the PostgreSQL schema and MariaDB
//! database `jobq_serve_bench_<N>`, the Redis prefix `jobq_serve_bench_<N>:`), keeps it afterwards,
//! and reuses it when it already holds the N jobs. The servers are the tests' own
//! (`JOBQ_TEST_*_URL`).
//!
//! `JOBQ_BENCH_STORES=sqlite JOBQ_BENCH_JOBS=100000 JOBQ_BENCH_LOAD_SECS=5 cargo bench --bench serve`
//! is a quick look. `JOBQ_BENCH_JOBQ=PATH` serves with another build's `jobq` binary (to measure a
//! build before a change on the same stores).

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../tests/it/support/mod.rs"]
mod support;

#[allow(dead_code)]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{env_number, median, reachable, runs, stores};
use jobq::job::{JobSpec, Limits, NewJob};
use jobq::store::{Cancel, CancelTarget, Claim, DynStore, Finish, Lease, Stats, Transition};
use jobq::time::UnixMillis;
use serde_json::{Value, json};
use support::process::{Process, jobq};

/// How long the server may take to start.
const START: Duration = Duration::from_secs(60);

/// Queues, their share of the jobs in percent, and their types.
const QUEUES: [(&str, u64, &[&str]); 5] = [
    ("default", 30, &["report.build", "cache.warm"]),
    ("mail", 30, &["mail.send", "mail.digest"]),
    ("webhooks", 20, &["webhook.deliver"]),
    ("billing", 10, &["invoice.render", "charge.capture"]),
    ("media", 10, &["image.resize", "video.transcode"]),
];

/// Where a job ends up, per mille of the jobs: what a week of a busy queue leaves behind.
const MIX: [(Target, u64); 8] = [
    (Target::Succeeded, 900),
    (Target::Dead, 20),
    (Target::Cancelled, 10),
    (Target::Discarded, 5),
    (Target::Waiting, 5),
    (Target::Running, 5),
    (Target::Ready, 35),
    (Target::Scheduled, 20),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Succeeded,
    Dead,
    Cancelled,
    Discarded,
    Waiting,
    Running,
    Ready,
    Scheduled,
}

impl Target {
    /// Whether the fill claims the job (everything but pending and cancelled jobs).
    fn claimed(self) -> bool {
        !matches!(self, Target::Ready | Target::Scheduled | Target::Cancelled)
    }
}

/// Job `n`'s queue, type and fate: a fixed scramble of `n`, so every fill is the same.
fn job_of(n: u64) -> (&'static str, &'static str, Target) {
    let h = n.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ n;
    let mut q = h % 100;
    let (queue, types) = QUEUES
        .iter()
        .find_map(|&(name, share, types)| {
            if q < share {
                Some((name, types))
            } else {
                q -= share;
                None
            }
        })
        .expect("shares add up to 100");
    let job_type = types[((h >> 8) % types.len() as u64) as usize];
    let mut t = (h >> 16) % 1000;
    let target = MIX
        .iter()
        .find_map(|&(target, share)| {
            if t < share {
                Some(target)
            } else {
                t -= share;
                None
            }
        })
        .expect("shares add up to 1000");
    (queue, job_type, target)
}

#[tokio::main]
async fn main() {
    let jobs = env_number("JOBQ_BENCH_JOBS").unwrap_or(1_000_000) as u64;
    let keep = std::env::var("JOBQ_BENCH_KEEP").is_ok_and(|v| v == "1");
    let runs = runs();
    println!("jobq serve: {jobs} jobs per store, {runs} runs, medians");
    for (name, server, open) in stores() {
        if server.as_deref().is_some_and(|url| !reachable(url)) {
            println!("{name}: not measured, no server");
            continue;
        }
        let (store, url) = if keep {
            let (store, url) = kept(name, jobs).await;
            (Err(store), url)
        } else {
            let store = open().await;
            let url = store.url().to_string();
            (Ok(store), url)
        };
        let dyn_store: &DynStore = match &store {
            Ok(test) => test.store(),
            Err(kept) => kept,
        };
        fill(name, dyn_store, jobs).await;
        analyze(name, &url).await;
        let mut all = Vec::new();
        for run in 1..=runs {
            let figures = measure(name, &url).await;
            println!("{name} run {run}: {}", figures.line());
            all.push(figures);
        }
        println!("{name} median: {}", Figures::median(&all).line());
    }
}

/// A store under a name of its own that outlives the bench: opened, migrated, never removed.
async fn kept(name: &str, jobs: u64) -> (DynStore, String) {
    let corner = format!("jobq_serve_bench_{jobs}");
    let url = match name {
        "sqlite" => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-bench");
            std::fs::create_dir_all(&dir).unwrap();
            format!("sqlite://{}", dir.join(format!("jobs-{jobs}.db")).display())
        }
        "postgres" => support::postgres::with_schema(&support::postgres::postgres_url(), &corner),
        "mysql" => {
            let mut admin = support::mysql::mysql_admin().await;
            let sql = format!("CREATE DATABASE IF NOT EXISTS `{corner}`");
            sqlx::Executor::execute(&mut admin, sql.as_str())
                .await
                .expect("creating the kept database");
            support::mysql::with_database(&support::mysql::mysql_url(), &corner)
        }
        "redis" => support::redis::with_prefix(&support::redis::redis_url(), &format!("{corner}:")),
        other => panic!("no kept corner for {other}"),
    };
    let store = support::connect(&url).await;
    support::migrate(&store, &format!("kept {name} store")).await;
    println!("{name}: JOBQ_BENCH_KEEP=1, kept at {}", support::shown(&url));
    (store, url)
}

/// Jobs in the store now.
async fn total(store: &DynStore) -> u64 {
    let now = UnixMillis::now();
    let stats = store.stats(&Stats { queues: vec![], now }).await.expect("stats");
    stats.queues.iter().map(|q| q.total()).sum()
}

/// Fills the store with `jobs` jobs as described at the top, unless it already holds them.
async fn fill(name: &str, store: &DynStore, jobs: u64) {
    let there = total(store).await;
    if there == jobs {
        println!("{name}: reusing the {jobs} jobs already there");
        return;
    }
    assert_eq!(
        there, 0,
        "{name}: the store holds {there} jobs, not 0 or {jobs}: remove the kept corner and run again"
    );
    let started = Instant::now();
    let now = UnixMillis::now();
    let week = 7 * 24 * 3_600_000;
    let limits = Limits {
        max_payload_bytes: 1 << 20,
        default_max_attempts: 5,
    };
    // Job n was created at an even pace over the last week, n = 0 first.
    let created = |n: u64| UnixMillis(now.0 - week + (n as i64 * week / jobs as i64));
    let spec = |n: u64| {
        let (queue, job_type, target) = job_of(n);
        let c = created(n);
        let run_at = match target {
            Target::Scheduled => UnixMillis(now.0 + 3_600_000 + (n as i64 % 86_400_000)),
            // Claimed jobs are due long before the others, so the fill's claims take them only.
            t if t.claimed() => UnixMillis(c.0 - 10 * week),
            _ => c,
        };
        let payload = json!({"account": n % 7919, "to": format!("user{}@example.com", n % 104_729), "n": n});
        let spec = JobSpec::new(job_type, payload).queue(queue).run_at(run_at);
        let spec = JobSpec {
            created_at: Some(c),
            ..spec
        };
        NewJob::validate(spec, now, &limits).expect("a valid job")
    };
    // First the jobs the fill claims, then the rest, so a claim finds only the former.
    for claimed in [true, false] {
        let mut batch = Vec::new();
        let mut cancel = Vec::new();
        for n in 0..jobs {
            let target = job_of(n).2;
            if target.claimed() != claimed {
                continue;
            }
            let job = spec(n);
            if target == Target::Cancelled {
                cancel.push(job.id.clone());
            }
            batch.push(job);
            if batch.len() == 5_000 {
                store.enqueue(&batch).await.expect("enqueue");
                batch.clear();
            }
        }
        if !batch.is_empty() {
            store.enqueue(&batch).await.expect("enqueue");
        }
        for ids in cancel.chunks(1_000) {
            let target = CancelTarget::Ids(ids.to_vec());
            store.cancel(&Cancel { target, now }).await.expect("cancel");
        }
        if claimed {
            finish_claimed(store, now).await;
        }
    }
    let there = total(store).await;
    assert_eq!(there, jobs, "{name}: jobs after the fill");
    println!(
        "{name}: filled with {jobs} jobs in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

/// Brings the server's statistics of `jobq_jobs` up to date, as autovacuum's analyze or MariaDB's
/// persistent statistics would after a day of work (the test servers run without autovacuum): a
/// planner that still believes the table empty walks the wrong index for a filtered page.
async fn analyze(name: &str, url: &str) {
    let parsed = url::Url::parse(url).expect("a store URL");
    let sql = match name {
        "postgres" => {
            let schema = parsed
                .query_pairs()
                .find(|(k, _)| k == "schema")
                .map(|(_, v)| v.into_owned())
                .expect("a schema");
            format!("ANALYZE \"{schema}\".jobq_jobs")
        }
        "mysql" => format!("ANALYZE TABLE `{}`.jobq_jobs", parsed.path().trim_start_matches('/')),
        _ => return,
    };
    let started = Instant::now();
    match name {
        "postgres" => {
            let mut admin = support::postgres::admin().await;
            sqlx::Executor::execute(&mut admin, sql.as_str())
                .await
                .expect("analyze");
        }
        _ => {
            let mut admin = support::mysql::mysql_admin().await;
            sqlx::Executor::execute(&mut admin, sql.as_str())
                .await
                .expect("analyze");
        }
    }
    println!("{name}: {sql} in {:.1} s", started.elapsed().as_secs_f64());
}

/// Claims every due job of every queue and brings each to its fate (running ones stay running).
async fn finish_claimed(store: &DynStore, now: UnixMillis) {
    for (queue, _, _) in QUEUES {
        loop {
            let claim = Claim {
                queues: vec![queue.to_string()],
                exclude_types: Vec::new(),
                worker: "serve-bench".to_string(),
                limit: 1_000,
                now,
                flow: Default::default(),
            };
            let claimed = store.claim(&claim).await.expect("claim");
            if claimed.is_empty() {
                break;
            }
            let finishes: Vec<Finish> = claimed
                .iter()
                .filter_map(|job| {
                    let payload: Value = serde_json::from_str(job.payload.get()).expect("a payload");
                    let outcome = match job_of(payload["n"].as_u64().expect("n")).2 {
                        Target::Succeeded => Transition::Succeeded { result: None },
                        Target::Dead => Transition::Dead {
                            error: "smtp: 550 mailbox unavailable".into(),
                        },
                        Target::Discarded => Transition::Discarded {
                            reason: "account closed".into(),
                        },
                        Target::Waiting => Transition::Waiting,
                        _ => return None,
                    };
                    Some(Finish {
                        lease: Lease::of(job),
                        outcome,
                        progress: None,
                        spawn: Vec::new(),
                    })
                })
                .collect();
            store.finish(&finishes, now).await.expect("finish");
        }
    }
}

/// One run's figures, in milliseconds (memory in MiB).
#[derive(Debug, Clone, Default)]
struct Figures {
    values: BTreeMap<&'static str, f64>,
}

/// The order and spelling of a run's figures.
const SHOWN: [(&str, &str); 17] = [
    ("first_p50", "list first page p50 {} ms"),
    ("first_p95", "p95 {} ms"),
    ("dead_p50", "dead-letter page p50 {} ms"),
    ("dead_p95", "p95 {} ms"),
    ("deep_p50", "page 10,000 deep p50 {} ms"),
    ("deep_p95", "p95 {} ms"),
    ("show_p50", "show p50 {} ms"),
    ("metrics_p50", "/metrics p50 {} ms"),
    ("stats_p50", "stats p50 {} ms"),
    ("rps", "load {} req/s"),
    ("load_p50", "p50 {} ms"),
    ("load_p99", "p99 {} ms"),
    ("errors", "errors {}"),
    ("rss_start", "RSS after start {} MiB"),
    ("rss_idle", "idle after the load {} MiB"),
    ("rss_peak", "peak {} MiB"),
    ("deep_by", "(deep page by {})"),
];

impl Figures {
    fn set(&mut self, key: &'static str, value: f64) {
        self.values.insert(key, value);
    }

    fn line(&self) -> String {
        SHOWN
            .iter()
            .filter_map(|(key, text)| {
                let v = *self.values.get(key)?;
                let shown = match *key {
                    "rps" | "errors" => format!("{v:.0}"),
                    "rss_start" | "rss_idle" | "rss_peak" => format!("{v:.1}"),
                    "deep_by" => (if v > 0.0 { "cursor" } else { "offset" }).to_string(),
                    _ => format!("{v:.2}"),
                };
                Some(text.replace("{}", &shown))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn median(all: &[Figures]) -> Figures {
        let mut out = Figures::default();
        for (key, _) in SHOWN {
            let values: Vec<f64> = all.iter().filter_map(|f| f.values.get(key).copied()).collect();
            if !values.is_empty() {
                out.set(key, median(values));
            }
        }
        out
    }
}

/// Starts `jobq serve` on the store and measures it once.
async fn measure(name: &str, url: &str) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    // Another build's binary when asked (its figures beside this build's, on the same stores).
    let mut cmd = match std::env::var_os("JOBQ_BENCH_JOBQ") {
        Some(other) => {
            let mut other = std::process::Command::new(other);
            other
                .env_remove("JOBQ_URL")
                .env_remove("JOBQ_CONFIG")
                .stdin(std::process::Stdio::null());
            other
        }
        None => jobq(),
    };
    cmd.args(["--url", url, "serve", "--listen", "127.0.0.1:0"])
        .env_remove("JOBQ_LOG")
        .stdout(std::process::Stdio::null());
    let server = Process::spawn(cmd, &dir.path().join("serve.log"));
    let base = support::eventually(format!("jobq serve on {name} to listen"), START, async || {
        let log = server.log();
        let at = log.find("serving http://").ok_or_else(|| log.clone())?;
        let rest = &log[at + "serving ".len()..];
        Ok::<_, String>(rest[..rest.find("/api/v1").ok_or_else(|| log.clone())?].to_string())
    })
    .await;
    // Idle after start: no request yet.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut f = Figures::default();
    f.set("rss_start", memory(server.pid(), "VmRSS"));

    let http = reqwest::Client::builder().pool_max_idle_per_host(256).build().unwrap();
    let first = format!("{base}/api/v1/jobs?limit=50");
    let dead = format!("{base}/api/v1/jobs?limit=50&queue=mail&status=dead");
    let (deep, by_cursor) = deep_page(&http, &base).await;
    f.set("deep_by", if by_cursor { 1.0 } else { 0.0 });
    for (key, url, n) in [
        ("first", &first, 200),
        ("dead", &dead, 200),
        ("deep", &deep, 200),
        ("metrics", &format!("{base}/metrics"), 20),
        ("stats", &format!("{base}/api/v1/stats"), 20),
    ] {
        // One request first, unmeasured: connections and prepared statements.
        get(&http, url)
            .await
            .unwrap_or_else(|e| panic!("{name}: GET {url}: {e}"));
        let mut times = Vec::with_capacity(n);
        // At most 20 s of one kind: a build that takes seconds a request gets fewer samples.
        let enough = Instant::now() + Duration::from_secs(20);
        for _ in 0..n {
            if times.len() >= 5 && Instant::now() > enough {
                break;
            }
            let started = Instant::now();
            get(&http, url)
                .await
                .unwrap_or_else(|e| panic!("{name}: GET {url}: {e}"));
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        match key {
            "metrics" => f.set("metrics_p50", quantile(&times, 0.5)),
            "stats" => f.set("stats_p50", quantile(&times, 0.5)),
            "first" => {
                f.set("first_p50", quantile(&times, 0.5));
                f.set("first_p95", quantile(&times, 0.95));
            }
            "dead" => {
                f.set("dead_p50", quantile(&times, 0.5));
                f.set("dead_p95", quantile(&times, 0.95));
            }
            _ => {
                f.set("deep_p50", quantile(&times, 0.5));
                f.set("deep_p95", quantile(&times, 0.95));
            }
        }
    }
    // Ids to show: the jobs of the first page and of the dead-letter page.
    let mut ids = Vec::new();
    for url in [&first, &dead] {
        let jobs: Vec<Value> = serde_json::from_str(&get(&http, url).await.unwrap().1).unwrap();
        ids.extend(
            jobs.iter()
                .filter_map(|j| j["jobId"].as_str().map(|id| format!("{base}/api/v1/jobs/{id}"))),
        );
    }
    assert!(!ids.is_empty(), "{name}: the pages listed no jobs");
    let mut times = Vec::new();
    for url in ids.iter().take(50) {
        let started = Instant::now();
        get(&http, url).await.unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    f.set("show_p50", quantile(&times, 0.5));

    let urls = Arc::new(Mix {
        first,
        dead,
        stats: format!("{base}/api/v1/stats"),
        shows: ids,
    });
    load(&http, urls, &mut f).await;
    // Idle again: the load's connections closed, the server left alone for a moment.
    drop(http);
    tokio::time::sleep(Duration::from_secs(2)).await;
    f.set("rss_idle", memory(server.pid(), "VmRSS"));
    f.set("rss_peak", memory(server.pid(), "VmHWM"));
    server.signal(libc::SIGTERM);
    server.exit(START).await;
    f
}

/// The URL of the page `JOBQ_BENCH_DEPTH` jobs deep (10,000 unless set), by the server's cursor when
/// it sends one (`Link: <…>; rel="next"`), else by offset; and whether it came by cursor.
async fn deep_page(http: &reqwest::Client, base: &str) -> (String, bool) {
    let depth = env_number("JOBQ_BENCH_DEPTH").unwrap_or(10_000);
    let mut url = format!("{base}/api/v1/jobs?limit=50");
    for _ in 0..depth / 50 {
        let answer = http.get(&url).send().await.expect("a page");
        let next = answer
            .headers()
            .get(reqwest::header::LINK)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix('<'))
            .and_then(|v| v.split_once(">; rel=\"next\"").map(|(u, _)| u.to_string()));
        let Some(next) = next else {
            return (format!("{base}/api/v1/jobs?limit=50&offset={depth}"), false);
        };
        url = if next.starts_with('/') {
            format!("{base}{next}")
        } else {
            next
        };
    }
    (url, true)
}

/// GET, failing on anything but 200: the status and the body.
async fn get(http: &reqwest::Client, url: &str) -> Result<(u16, String), String> {
    let answer = http.get(url).send().await.map_err(|e| e.to_string())?;
    let status = answer.status().as_u16();
    let body = answer.text().await.map_err(|e| e.to_string())?;
    if status == 200 {
        Ok((status, body))
    } else {
        Err(format!("{status}: {body}"))
    }
}

/// What the load's clients ask for.
struct Mix {
    first: String,
    dead: String,
    stats: String,
    shows: Vec<String>,
}

/// `JOBQ_BENCH_CLIENTS` clients (100) for `JOBQ_BENCH_LOAD_SECS` (30): requests a second, p50, p99,
/// errors.
async fn load(http: &reqwest::Client, mix: Arc<Mix>, f: &mut Figures) {
    let clients = env_number("JOBQ_BENCH_CLIENTS").unwrap_or(100);
    let secs = env_number("JOBQ_BENCH_LOAD_SECS").unwrap_or(30) as u64;
    let until = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (http, mix) = (http.clone(), mix.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut errors = 0u64;
                let mut i = c * 7;
                while Instant::now() < until {
                    i += 1;
                    let url = match i % 10 {
                        0..=3 => &mix.first,
                        4 | 5 => &mix.dead,
                        6 => &mix.stats,
                        _ => &mix.shows[i % mix.shows.len()],
                    };
                    let sent = Instant::now();
                    match get(&http, url).await {
                        Ok(_) => times.push(sent.elapsed().as_secs_f64() * 1000.0),
                        Err(_) => errors += 1,
                    }
                }
                (times, errors)
            })
        })
        .collect();
    let mut times = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (t, e) = task.await.unwrap();
        times.extend(t);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    f.set("rps", (times.len() as u64 + errors) as f64 / elapsed);
    f.set("load_p50", quantile(&times, 0.5));
    f.set("load_p99", quantile(&times, 0.99));
    f.set("errors", errors as f64);
}

/// The `q` quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// A memory figure of `/proc/<pid>/status` in MiB.
fn memory(pid: i32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
