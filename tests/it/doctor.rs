//! `jobq doctor` on every store, run as the real binary against a store set up through the library:
//! a fresh store is healthy (exit 0) but for what its server itself is missing, and a store with each
//! problem made for real (a running job with an old heartbeat and no worker, a waiting job past its
//! type's `wait_timeout`, an old ready job nobody serves, a job rescued three times, a queue paused two
//! days ago, dead letters past the threshold) gets one finding of each (exit 1), as JSON and as one
//! line each. Then each store's own findings, read from its real server: Redis's persistence and
//! eviction as `CONFIG GET` reports them (read only: the server is shared with parallel tests),
//! SQLite's write-ahead log past a limit, PostgreSQL's autovacuum turned off for a table and dead rows.
//!
//! Times are the real present: the binary reads the system clock, so the problems are made minutes
//! or days in the past, far from any threshold.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use jobq::job::{JobSpec, Limits, NewJob};
use jobq::store::{Claim, DynStore, Finish, Health, Lease, Rescue, StoreKind, Transition};
use jobq::time::UnixMillis;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::process::jobq;
use crate::support::{TestStore, eventually, store_tests};

store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores every_store
    cases {
        a_fresh_store_has_nothing_wrong_but_what_its_server_lacks,
        each_problem_is_one_finding_and_the_exit_code_is_1,
    }
}

/// The config the doctor runs with: a type whose waits time out after a minute.
const CONFIG: &str = "[handlers.\"mail.send\"]\nbuiltin = \"noop\"\nwait_timeout = \"1m\"\n";

/// Runs `jobq --url URL --config jobq.toml doctor ARGS…` in `dir`.
fn doctor(store: &TestStore, dir: &Path, args: &[&str]) -> Output {
    let config = dir.join("jobq.toml");
    std::fs::write(&config, CONFIG).unwrap();
    jobq()
        .args(["--url", store.url(), "--config"])
        .arg(&config)
        .arg("doctor")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running jobq doctor")
}

/// The JSON report and the exit code.
fn doctor_json(store: &TestStore, dir: &Path, args: &[&str]) -> (Value, i32) {
    let mut all = vec!["-o", "json"];
    all.extend_from_slice(args);
    let out = doctor(store, dir, &all);
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "doctor wrote to stderr: {stderr}");
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (report, out.status.code().unwrap_or(-1))
}

/// The codes of a report's findings.
fn codes(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The finding with `code`.
fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} finding in {report:#}"))
}

/// Whether a finding is about the store's server or file rather than its jobs.
fn about_the_store(code: &str) -> bool {
    ["sqlite-", "postgres-", "redis-"].iter().any(|p| code.starts_with(p))
}

async fn a_fresh_store_has_nothing_wrong_but_what_its_server_lacks(store: TestStore) {
    let dir = TempDir::new().unwrap();
    let (report, code) = doctor_json(&store, dir.path(), &[]);
    let found = codes(&report);
    assert!(found.iter().all(|c| about_the_store(c)), "{report:#}");
    assert_eq!(report["healthy"], found.is_empty(), "{report:#}");
    assert_eq!(code, if found.is_empty() { 0 } else { 1 }, "{report:#}");
    assert_eq!(report["store"], store.kind().to_string(), "{report:#}");
    if found.is_empty() {
        let out = doctor(&store, dir.path(), &[]);
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok: nothing wrong found in "));
    }
}

fn new_job(spec: JobSpec, now: UnixMillis) -> NewJob {
    NewJob::validate(spec, now, &Limits::default()).expect("a valid job")
}

async fn claim(store: &DynStore, queue: &str, now: UnixMillis) -> jobq::job::Job {
    let claim = Claim {
        queues: vec![queue.into()],
        exclude_types: Vec::new(),
        worker: "gone-worker".into(),
        limit: 1,
        now,
        flow: Default::default(),
    };
    let mut jobs = store.claim(&claim).await.expect("claim");
    assert_eq!(jobs.len(), 1, "a job of {queue} to claim at {now}");
    jobs.remove(0)
}

async fn finish(store: &DynStore, job: &jobq::job::Job, outcome: Transition, now: UnixMillis) {
    let finish = Finish {
        lease: Lease::of(job),
        outcome,
        progress: None,
        spawn: Vec::new(),
    };
    assert_eq!(store.finish(&[finish], now).await.unwrap(), [true]);
}

/// Makes each problem the doctor looks for, `minutes` and days in the past.
async fn make_every_problem(store: &DynStore) {
    let now = UnixMillis::now();
    let ago = |secs: u64| now.minus(Duration::from_secs(secs));
    // A job lost by three workers in turn, seconds ago (so not late itself); first,
    // while no other job runs for its rescues to take.
    store
        .enqueue(&[new_job(
            JobSpec::new("x", Value::Null).queue("poison").run_at(ago(10)),
            ago(10),
        )])
        .await
        .unwrap();
    for n in 0..3u64 {
        let at = ago(10 - n);
        claim(store, "poison", at).await;
        let later = UnixMillis(at.0 + 1);
        let rescue = Rescue {
            stale_before: UnixMillis(later.0 + 1),
            now: later,
            limit: 10,
        };
        assert_eq!(store.rescue(&rescue).await.unwrap().len(), 1);
    }
    // A running job whose worker stopped beating ten minutes ago; no worker is registered.
    store
        .enqueue(&[new_job(
            JobSpec::new("x", Value::Null).queue("stuck").run_at(ago(600)),
            ago(600),
        )])
        .await
        .unwrap();
    claim(store, "stuck", ago(600)).await;
    // A job parked as waiting an hour ago, its type's wait_timeout a minute.
    store
        .enqueue(&[new_job(
            JobSpec::new("mail.send", Value::Null).queue("mail").run_at(ago(3600)),
            ago(3600),
        )])
        .await
        .unwrap();
    let job = claim(store, "mail", ago(3600)).await;
    finish(store, &job, Transition::Waiting, ago(3600)).await;
    // A job ready for an hour in a queue nobody serves.
    store
        .enqueue(&[new_job(
            JobSpec::new("x", Value::Null).queue("late").run_at(ago(3600)),
            ago(3600),
        )])
        .await
        .unwrap();
    // A queue paused two days ago.
    store
        .set_paused(&jobq::store::SetPaused {
            queue: "paused",
            job_type: None,
            paused: true,
            now: ago(2 * 86_400),
        })
        .await
        .unwrap();
    // Two dead letters.
    for _ in 0..2 {
        store
            .enqueue(&[new_job(
                JobSpec::new("x", Value::Null).queue("graveyard").run_at(ago(60)),
                ago(60),
            )])
            .await
            .unwrap();
        let job = claim(store, "graveyard", ago(60)).await;
        let dead = Transition::Dead { error: "no".into() };
        finish(store, &job, dead, ago(60)).await;
    }
}

async fn each_problem_is_one_finding_and_the_exit_code_is_1(store: TestStore) {
    make_every_problem(store.store()).await;
    let dir = TempDir::new().unwrap();
    let (report, code) = doctor_json(&store, dir.path(), &["--dead-letters", "2"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["healthy"], false);
    let mut jobs: Vec<String> = codes(&report).into_iter().filter(|c| !about_the_store(c)).collect();
    jobs.sort();
    assert_eq!(
        jobs,
        [
            "dead-letters",
            "often-rescued",
            "paused-long",
            "ready-late",
            "stuck-running",
            "waiting-overdue"
        ],
        "{report:#}"
    );
    let stuck = finding(&report, "stuck-running");
    assert_eq!(
        (stuck["severity"].as_str(), stuck["count"].as_u64()),
        (Some("error"), Some(1))
    );
    assert!(
        stuck["message"].as_str().unwrap().contains("no worker is alive"),
        "{stuck}"
    );
    assert_eq!(stuck["ids"].as_array().map(Vec::len), Some(1));
    let waiting = finding(&report, "waiting-overdue");
    assert_eq!(
        (waiting["queue"].as_str(), waiting["count"].as_u64()),
        (Some("mail"), Some(1))
    );
    let late = finding(&report, "ready-late");
    assert_eq!(
        (late["queue"].as_str(), late["severity"].as_str()),
        (Some("late"), Some("error"))
    );
    assert_eq!(late["advice"], "start a worker for it: jobq worker --queue late");
    let rescued = finding(&report, "often-rescued");
    assert_eq!(rescued["count"], 1, "{rescued}");
    let paused = finding(&report, "paused-long");
    assert_eq!(paused["queue"], "paused");
    assert_eq!(
        paused["advice"],
        "if the reason for the pause is gone, resume it: jobq resume paused"
    );
    let dead = finding(&report, "dead-letters");
    assert_eq!(
        (dead["queue"].as_str(), dead["count"].as_u64()),
        (Some("graveyard"), Some(2))
    );
    for f in report["findings"].as_array().unwrap() {
        assert!(!f["advice"].as_str().unwrap_or_default().is_empty(), "{f}");
    }

    // For people: one line per finding, severity first, errors before warnings.
    let out = doctor(&store, dir.path(), &["--dead-letters", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), report["findings"].as_array().unwrap().len(), "{text}");
    assert!(
        lines[0].starts_with("error: [") && lines.last().unwrap().starts_with("warning: ["),
        "{text}"
    );
    // Below the threshold the dead letters are not a finding.
    let (lenient, _) = doctor_json(&store, dir.path(), &["--dead-letters", "3"]);
    assert!(!codes(&lenient).contains(&"dead-letters".to_string()), "{lenient:#}");
}

// Each store's own findings, against its real server.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_persistence_and_eviction_are_read_as_the_server_reports_them() {
    let store = crate::support::redis_store().await;
    let conn = ::redis::Client::open(crate::support::server_url(StoreKind::Redis))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("connecting to the test Redis");
    let get = |name: &'static str| {
        let mut conn = conn.clone();
        async move {
            let reply: Vec<String> = ::redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query_async(&mut conn)
                .await
                .unwrap();
            reply.get(1).cloned().unwrap_or_default()
        }
    };
    let (aof, save, policy) = (
        get("appendonly").await,
        get("save").await,
        get("maxmemory-policy").await,
    );
    let found = store.health(&Health::default()).await.unwrap();
    let codes: Vec<&str> = found.iter().map(|f| f.code).collect();
    let expected_persistence = aof == "no" && save.trim().is_empty();
    assert_eq!(
        codes.contains(&"redis-no-persistence"),
        expected_persistence,
        "appendonly {aof}, save {save:?}: {found:?}"
    );
    assert_eq!(
        codes.contains(&"redis-evicting"),
        policy != "noeviction",
        "policy {policy}: {found:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_write_ahead_log_past_its_limit_is_a_finding() {
    let store = crate::support::sqlite_store().await;
    let jobs: Vec<NewJob> = (0..200)
        .map(|n| new_job(JobSpec::new("x", serde_json::json!({ "n": n })), UnixMillis::now()))
        .collect();
    store.enqueue(&jobs).await.unwrap();
    let wal = format!(
        "{}-wal",
        store.url().trim_start_matches("sqlite://").split('?').next().unwrap()
    );
    // Checkpoints copy the log back but never shrink its file, so its size only grows from here.
    let size = eventually(
        "a write-ahead log with something in it",
        Duration::from_secs(10),
        async || std::fs::metadata(&wal).ok().map(|m| m.len()).filter(|&n| n > 0),
    )
    .await;
    let strict = Health {
        sqlite_wal_bytes: size - 1,
        ..Health::default()
    };
    let found = store.health(&strict).await.unwrap();
    assert_eq!(
        found.iter().map(|f| f.code).collect::<Vec<_>>(),
        ["sqlite-wal-large"],
        "{found:?}"
    );
    assert!(found[0].count.unwrap() >= size);
    assert_eq!(store.health(&Health::default()).await.unwrap(), []);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_autovacuum_off_for_a_table_and_dead_rows_are_findings() {
    use sqlx::Executor;
    let schema = crate::support::fresh_name();
    let store = crate::support::postgres_store_in(&schema).await;
    let mut admin = crate::support::postgres::admin().await;
    let server_off: String = sqlx::query_scalar("SHOW autovacuum")
        .fetch_one(&mut admin)
        .await
        .unwrap();
    let found = store.health(&Health::default()).await.unwrap();
    assert_eq!(
        found.iter().any(|f| f.code == "postgres-autovacuum-off"),
        server_off != "on",
        "the server's own setting: {found:?}"
    );

    admin
        .execute(format!("ALTER TABLE \"{schema}\".jobq_jobs SET (autovacuum_enabled = false)").as_str())
        .await
        .unwrap();
    let found = store.health(&Health::default()).await.unwrap();
    let off = found
        .iter()
        .find(|f| f.code == "postgres-autovacuum-off" && f.message.contains("table jobq_jobs"))
        .unwrap_or_else(|| panic!("no finding for the table: {found:?}"));
    assert_eq!(
        off.advice,
        "turn it back on: ALTER TABLE jobq_jobs RESET (autovacuum_enabled);"
    );

    // Dead rows: 300 jobs deleted, and ANALYZE records the estimate at once.
    let jobs: Vec<NewJob> = (0..300)
        .map(|n| new_job(JobSpec::new("x", serde_json::json!({ "n": n })), UnixMillis::now()))
        .collect();
    store.enqueue(&jobs).await.unwrap();
    admin
        .execute(format!("DELETE FROM \"{schema}\".jobq_jobs").as_str())
        .await
        .unwrap();
    let strict = Health {
        postgres_dead_rows: 100,
        postgres_dead_ratio: 0.0,
        ..Health::default()
    };
    eventually(
        "a dead-rows finding for jobq_jobs",
        Duration::from_secs(30),
        async || {
            admin
                .execute(format!("ANALYZE \"{schema}\".jobq_jobs").as_str())
                .await
                .unwrap();
            let found = store.health(&strict).await.unwrap();
            found
                .iter()
                .any(|f| f.code == "postgres-dead-rows" && f.message.starts_with("table jobq_jobs holds"))
                .then_some(())
                .ok_or_else(|| format!("{found:?}"))
        },
    )
    .await;
}
