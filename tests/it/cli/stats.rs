//! `jobq stats`: counts by queue and status as a table, JSON and Prometheus text.

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

/// Jobs in two queues: mail has 2 ready, 1 scheduled, 1 running, 1 succeeded; reports has 1 dead,
/// 1 waiting, 1 cancelled.
fn some_jobs(env: &Sandbox) {
    env.enqueue(&["report.build", "--queue", "reports"]);
    env.kill("reports", "boom");
    env.enqueue(&["report.build", "--queue", "reports"]);
    env.settle("reports", Transition::Waiting, UnixMillis::now());
    let c = env.enqueue(&["report.build", "--queue", "reports"]);
    env.ok(["cancel", &c]);
    env.enqueue(&["mail.send", "--queue", "mail"]);
    env.settle("mail", Transition::Succeeded { result: None }, UnixMillis::now());
    env.enqueue(&["mail.send", "--queue", "mail"]);
    env.claim("mail");
    env.enqueue(&["mail.send", "--queue", "mail"]);
    env.enqueue(&["mail.send", "--queue", "mail"]);
    env.enqueue(&["mail.send", "--queue", "mail", "--delay", "1h"]);
}

#[test]
fn stats_on_an_empty_store_names_the_store() {
    let env = Sandbox::new();
    snap!("table", env.run(["stats"]));
    snap!("json", env.run(["stats", "-o", "json"]));
    snap!("prometheus", env.run(["stats", "-o", "prometheus"]));
}

#[test]
fn stats_counts_by_queue_and_status() {
    let mut env = Sandbox::new();
    env.filter_ages();
    some_jobs(&env);
    snap!("table", env.run(["stats"]));
    snap!("one_queue", env.run(["stats", "--queue", "reports"]));
    snap!("unknown_queue", env.run(["stats", "--queue", "nobody"]));
    let run = env.run(["stats", "-o", "json"]);
    snap!("json", run);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(stats["totals"]["ready"], 2);
    assert_eq!(stats["totals"]["scheduled"], 1);
}

#[test]
fn stats_prints_the_prometheus_exposition_format() {
    let mut env = Sandbox::new();
    env.filter_ages();
    some_jobs(&env);
    let run = env.run(["stats", "-o", "prometheus"]);
    snap!("all", run);
    // Every line is a comment (# HELP / # TYPE) or `name{labels} value`.
    for line in run.stdout.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            assert!(
                comment.starts_with("HELP jobq_") || comment.starts_with("TYPE jobq_"),
                "{line}"
            );
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        assert!(series.starts_with("jobq_") && series.ends_with('}'), "{line}");
        let name = &series[..series.find('{').expect("labels")];
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{line}");
        value.parse::<f64>().unwrap_or_else(|_| panic!("not a number: {line}"));
    }
    snap!("one_queue", env.run(["stats", "-o", "prometheus", "--queue", "mail"]));
}

#[test]
fn stats_refuses_bad_arguments() {
    let env = Sandbox::new();
    snap!("bad_queue", env.run(["stats", "--queue", "a b"]));
    snap!("ndjson", env.run(["stats", "-o", "ndjson"]));
    snap!("watch_zero", env.run(["stats", "--watch", "0"]));
    snap!("watch_word", env.run(["stats", "--watch", "often"]));
}
