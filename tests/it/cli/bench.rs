//! `jobq bench`: a tiny run of every workload against the sandbox's SQLite file, checked for the
//! shape of its JSON report and for leaving nothing behind but the user's own jobs. (Its `--help`
//! is snapshotted with every other subcommand's in `help.rs`.)

use serde_json::Value;

use super::Sandbox;

/// Runs `jobq bench ARGS… -o json` and parses the report.
fn bench(env: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let run = env.run(all);
    assert_eq!(run.code, 0, "the bench failed:\n{}", run.snapshot());
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", run.stdout))
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_tiny_bench_reports_every_workload_and_leaves_only_the_users_jobs() {
    let env = Sandbox::new();
    let mine = env.enqueue(&["mail.send", "--queue", "default"]);
    let report = bench(
        &env,
        &[
            "--jobs",
            "200",
            "--bulk-jobs",
            "200",
            "--single-jobs",
            "50",
            "--producers",
            "2",
            "--batch-size",
            "64",
            "--latency-jobs",
            "20",
            "--spacing",
            "5ms",
            "--rate",
            "200",
            "--duration",
            "500ms",
        ],
    );

    // The conditions the figures were taken under.
    assert_eq!(report["jobq"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(["debug", "release"].contains(&report["jobq"]["profile"].as_str().unwrap()));
    assert_eq!(report["store"]["kind"], "sqlite");
    assert!(report["store"]["version"].as_str().unwrap().starts_with("SQLite "));
    assert_eq!(report["store"]["settings"]["journal_mode"], "WAL");
    assert_eq!(report["store"]["settings"]["synchronous"], "NORMAL");
    assert!(number(&report["machine"]["cores"]) >= 1.0);
    assert!(report["machine"]["cpu"].is_string());
    assert!(report["date"].as_str().unwrap().ends_with('Z'));
    let queue = report["queue"].as_str().unwrap();
    assert!(queue.starts_with("jobq-bench-"), "{queue}");

    // One block per workload.
    let single = &report["enqueue"]["single"];
    assert_eq!(single["jobs"], 50);
    assert!(number(&single["jobsPerSecond"]) > 0.0);
    assert_eq!(single["callMs"]["count"], 50);
    assert_eq!(single["producers"], 2);
    // Every job the producers enqueued is read back by id: none lost, none written twice.
    let get = &report["enqueue"]["get"];
    assert_eq!(
        (get["jobs"].as_u64(), get["callMs"]["count"].as_u64()),
        (Some(50), Some(50))
    );
    assert!(number(&get["jobsPerSecond"]) > 0.0);
    let bulk = &report["enqueue"]["bulk"];
    assert_eq!(
        (bulk["jobs"].as_u64(), bulk["batchSize"].as_u64()),
        (Some(200), Some(64))
    );
    assert!(number(&bulk["jobsPerSecond"]) > 0.0);
    let drain = &report["drain"];
    assert_eq!(drain["jobs"], 200);
    assert_eq!(drain["workers"]["mode"], "in-process");
    assert!(drain["measured"].as_str().unwrap().contains("startedAt"));
    assert!(number(&drain["jobsPerSecond"]) > 0.0);
    assert!(number(&drain["wallSeconds"]) >= number(&drain["seconds"]) - 0.001);
    let steady = &report["steady"];
    assert_eq!(steady["enqueued"], 100);
    assert_eq!(steady["targetRate"], 200);
    for key in ["min", "avg", "max", "samples"] {
        assert!(steady["depth"][key].is_number(), "depth.{key}: {steady}");
    }
    let latency = &report["latency"];
    assert_eq!(latency["jobs"], 20);
    assert_eq!(latency["ms"]["count"], 20);
    assert!(number(&latency["ms"]["p50"]) > 0.0);
    assert!(number(&latency["ms"]["p99"]) >= number(&latency["ms"]["p50"]));

    // The bench queue is gone; the user's job is as it was.
    assert_eq!(env.statuses(), vec![(mine.clone(), "pending".to_string())]);
    let stats = env.json(["stats", "-o", "json"]);
    assert!(!stats.to_string().contains("jobq-bench-"), "{stats}");
    assert!(!std::env::temp_dir().join(format!("{queue}.toml")).exists());
}

#[test]
fn a_bench_with_worker_processes_drains_and_cleans_up() {
    let env = Sandbox::new();
    let report = bench(
        &env,
        &["drain", "--processes", "2", "--jobs", "200", "--concurrency", "4"],
    );
    let drain = &report["drain"];
    assert_eq!(drain["jobs"], 200);
    assert_eq!(drain["workers"]["mode"], "processes");
    assert_eq!(drain["workers"]["processes"], 2);
    assert_eq!(drain["workers"]["concurrency"], 4);
    assert!(number(&drain["workerPeakRssMib"]) > 0.0);
    assert!(report["enqueue"].is_null() && report["latency"].is_null());
    assert!(env.statuses().is_empty());
    assert!(env.json(["workers", "-o", "json"]).as_array().unwrap().is_empty());
}

#[test]
fn a_bench_enqueue_with_worker_processes_reports_the_jobs_worked_off() {
    let env = Sandbox::new();
    let report = bench(
        &env,
        &[
            "enqueue",
            "--processes",
            "1",
            "--single-jobs",
            "200",
            "--bulk-jobs",
            "0",
        ],
    );
    let single = &report["enqueue"]["single"];
    assert_eq!(single["jobs"], 200);
    let beside = &single["beside"];
    assert_eq!(beside["workers"]["mode"], "processes");
    assert_eq!(beside["workers"]["processes"], 1);
    assert!(
        number(&beside["seconds"]) >= number(&single["seconds"]) - 0.001,
        "{single}"
    );
    assert!(number(&beside["jobsPerSecond"]) > 0.0);
    // Every job was read back after the workers had finished it.
    assert_eq!(report["enqueue"]["get"]["jobs"], 200);
    assert!(env.statuses().is_empty());
    assert!(env.json(["workers", "-o", "json"]).as_array().unwrap().is_empty());
}

#[test]
fn bench_refuses_other_output_formats() {
    let env = Sandbox::new();
    snap!(env.run(["bench", "drain", "-o", "ndjson"]));
}
