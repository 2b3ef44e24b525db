//! `jobq list`: filters, paging and the three output formats.

use super::Sandbox;

/// Five jobs, oldest first: [ID1] mail.send/mail (cancelled), [ID2] mail.send/mail, [ID3]
/// report.build/reports (dead), [ID4] report.build/default, [ID5] mail.digest/mail.
fn five_jobs(env: &Sandbox) -> Vec<String> {
    let ids = vec![
        env.enqueue(&["mail.send", r#"{"to":"a@example.com"}"#, "--queue", "mail"]),
        env.enqueue(&["mail.send", r#"{"to":"b@example.com"}"#, "--queue", "mail"]),
        env.enqueue(&["report.build", "--queue", "reports", "--max-attempts", "1"]),
        env.enqueue(&["report.build"]),
        env.enqueue(&["mail.digest", "--queue", "mail", "--delay", "1h"]),
    ];
    env.ok(["cancel", &ids[0]]);
    env.kill("reports", "template missing: monthly.html");
    ids
}

#[test]
fn list_shows_jobs_newest_first() {
    let env = Sandbox::new();
    snap!("empty", env.run(["list"]));
    five_jobs(&env);
    snap!("all", env.run(["list"]));
}

#[test]
fn list_filters_by_queue_type_and_status() {
    let env = Sandbox::new();
    five_jobs(&env);
    snap!("queue", env.run(["list", "--queue", "mail"]));
    snap!("queues", env.run(["list", "--queue", "reports,default"]));
    snap!("type", env.run(["list", "--type", "mail.send"]));
    snap!(
        "types",
        env.run(["list", "--type", "mail.send", "--type", "mail.digest"])
    );
    snap!("status", env.run(["list", "--status", "pending"]));
    snap!("statuses", env.run(["list", "--status", "dead,cancelled"]));
    snap!(
        "statuses_repeated",
        env.run(["list", "--status", "dead", "--status", "cancelled"])
    );
    snap!(
        "combined",
        env.run(["list", "--queue", "mail", "--type", "mail.send", "--status", "pending"])
    );
    snap!("nothing", env.run(["list", "--queue", "nobody"]));
}

#[test]
fn list_filters_by_creation_time() {
    let env = Sandbox::new();
    five_jobs(&env);
    let count = |args: &[&str]| {
        let mut all = vec!["list", "-o", "json"];
        all.extend_from_slice(args);
        env.json(all).as_array().unwrap().len()
    };
    assert_eq!(count(&["--since", "1h"]), 5);
    assert_eq!(count(&["--until", "1h"]), 0);
    assert_eq!(count(&["--since", "2020-01-01T00:00:00Z"]), 5);
    assert_eq!(count(&["--since", "2099-01-01T00:00:00Z"]), 0);
    assert_eq!(count(&["--until", "2099-01-01T00:00:00Z"]), 5);
    assert_eq!(count(&["--until", "1577836800"]), 0);
    snap!("until", env.run(["list", "--until", "1h"]));
    snap!("bad_since", env.run(["list", "--since", "yesterday"]));
    snap!("bad_until", env.run(["list", "--until", "later"]));
}

#[test]
fn list_pages_with_limit_and_offset() {
    let env = Sandbox::new();
    five_jobs(&env);
    snap!("page_1", env.run(["list", "--limit", "2"]));
    snap!("page_2", env.run(["list", "--limit", "2", "--offset", "2"]));
    snap!("page_3", env.run(["list", "--limit", "2", "--offset", "4"]));
    snap!("past_the_end", env.run(["list", "--limit", "2", "--offset", "10"]));
    snap!("bad_limit", env.run(["list", "--limit", "-1"]));
}

#[test]
fn list_prints_json_and_ndjson_for_pipes() {
    let env = Sandbox::new();
    five_jobs(&env);
    let run = env.run(["list", "-o", "json", "--status", "dead"]);
    snap!("json", run);
    let jobs: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(jobs.as_array().unwrap().len(), 1);

    let run = env.run(["list", "-o", "ndjson"]);
    assert_eq!(run.code, 0);
    assert!(run.stderr.is_empty());
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 5);
    for line in lines {
        let job: serde_json::Value = serde_json::from_str(line).expect("each line is one JSON object");
        assert!(job["jobId"].is_string() && job["status"].is_string());
    }
    let mut cmd = env.command(["list", "--status", "cancelled"]);
    cmd.env("JOBQ_OUTPUT", "ndjson");
    snap!("ndjson_from_env", env.run_command(cmd));

    // An empty result is still valid JSON, and says nothing on stderr.
    snap!("json_empty", env.run(["list", "-o", "json", "--queue", "nobody"]));
    snap!("ndjson_empty", env.run(["list", "-o", "ndjson", "--queue", "nobody"]));
}

#[test]
fn list_refuses_bad_filters_and_formats() {
    let env = Sandbox::new();
    snap!("unknown_status", env.run(["list", "--status", "pending,finished"]));
    snap!("bad_queue", env.run(["list", "--queue", "no spaces"]));
    snap!("prometheus", env.run(["list", "-o", "prometheus"]));
    snap!("unknown_format", env.run(["list", "-o", "yaml"]));
}

#[test]
fn list_pages_after_a_job_by_cursor() {
    let env = Sandbox::new();
    let ids = five_jobs(&env);
    // Newest first, the first page of two ends with [ID4]: the page after it is the page at offset 2.
    snap!("after_page_1", env.run(["list", "--limit", "2", "--after", &ids[3]]));
    let json = |args: &[&str]| {
        let mut all = vec!["list", "-o", "json", "--limit", "2"];
        all.extend_from_slice(args);
        env.json(all)
    };
    assert_eq!(json(&["--after", &ids[3]]), json(&["--offset", "2"]));
    assert_eq!(json(&["--after", &ids[1]]), json(&["--offset", "4"]));
    snap!("after_the_oldest", env.run(["list", "--after", &ids[0]]));
    snap!(
        "after_no_such_job",
        env.run(["list", "--after", "0190a5b1-0000-7000-8000-000000000000"])
    );
}
