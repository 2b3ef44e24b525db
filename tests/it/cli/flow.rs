//! `jobq pause`, `jobq resume` and `jobq queues`, and the flow-control keys of the config refused
//! with one line (exit 2) when they do not read.

use super::Sandbox;

#[test]
fn pause_and_resume_show_in_queues_and_stats() {
    let mut env = Sandbox::new();
    env.filter_ages();
    env.enqueue(&["mail.send", "--queue", "mail"]);
    snap!("pause", env.run(["pause", "mail"]));
    snap!("again", env.run(["pause", "mail"]));
    snap!("type", env.run(["pause", "reports", "--type", "report.build"]));
    let report = env.json(["queues", "-o", "json"]);
    assert_eq!(report["queues"][0]["queue"], "mail", "{report}");
    assert!(report["queues"][0]["pausedSince"].is_i64(), "{report}");
    assert_eq!(report["queues"][0]["ready"], 1, "{report}");
    assert_eq!(
        report["queues"][1]["queue"], "reports",
        "a queue with no jobs may be paused: {report}"
    );
    assert_eq!(report["queues"][1]["pausedTypes"][0], "report.build", "{report}");
    snap!("table", env.run(["queues"]));
    let stats = env.json(["stats", "-o", "json"]);
    assert_eq!(stats["paused"][0]["queue"], "mail", "{stats}");
    snap!("resume", env.run(["resume", "mail"]));
    snap!("not_paused", env.run(["resume", "mail"]));
    let report = env.json(["queues", "-o", "json"]);
    assert!(report["queues"][0]["pausedSince"].is_null(), "{report}");
}

#[test]
fn pausing_a_bad_queue_name_changes_nothing() {
    let env = Sandbox::new();
    snap!("queue", env.run(["pause", "no spaces allowed"]));
    snap!("type", env.run(["pause", "mail", "--type", ""]));
    let report = env.json(["queues", "-o", "json"]);
    assert_eq!(report["queues"].as_array().map(Vec::len), Some(0), "{report}");
}

#[test]
fn limits_that_do_not_read_are_refused() {
    let env = Sandbox::new();
    let cases = [
        (
            "rate",
            "[handlers.sync]\nbuiltin = \"noop\"\nrate = \"ten per minute\"\n",
        ),
        ("zero", "[handlers.sync]\nbuiltin = \"noop\"\nglobal_concurrency = 0\n"),
        ("negative", "[queues.mail]\nglobal_concurrency = -1\n"),
        (
            "partition",
            "[handlers.sync]\nbuiltin = \"noop\"\npartition = \"tenantId\"\n",
        ),
        ("queue_name", "[queues.\"no spaces\"]\nrate = \"1/1s\"\n"),
    ];
    for (name, config) in cases {
        env.write("jobq.toml", config);
        let run = env.run(["queues"]);
        assert_eq!(run.code, 2, "{name}: {}", run.snapshot);
        snap!(name, run);
    }
}
