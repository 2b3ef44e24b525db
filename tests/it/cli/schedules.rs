//! `jobq schedules`: bad schedules refused with exit 2 naming the schedule and the key, unknown names
//! with exit 3, trigger, pause and resume through the store, and the next tick times.

use serde_json::Value;

use super::Sandbox;

const GOOD: &str = r#"
[handlers."report.build"]
builtin = "noop"

[schedules.hourly]
every = "1h"
type = "report.build"
payload = { kind = "hourly" }
queue = "reports"
"#;

#[test]
fn a_schedule_that_does_not_parse_is_refused_naming_the_schedule_and_the_key() {
    let cases = [
        ("cron = \"61 * * * *\"\ntype = \"t\"", "cron"),
        ("every = \"soon\"\ntype = \"t\"", "every"),
        (
            "cron = \"0 3 * * *\"\ntimezone = \"Mars/Olympus\"\ntype = \"t\"",
            "timezone",
        ),
        ("every = \"1m\"\ntype = \"t\"\noverlap = \"sometimes\"", "overlap"),
        ("every = \"1m\"", "type"),
        ("every = \"1m\"\ntype = \"t\"\npayload = \"{not json\"", "payload"),
        ("type = \"t\"", "needs cron or every"),
    ];
    for (table, key) in cases {
        let sandbox = Sandbox::new();
        sandbox.write("jobq.toml", format!("[schedules.broken]\n{table}\n"));
        for args in [vec!["schedules"], vec!["worker"]] {
            let run = sandbox.run(&args);
            assert_eq!(run.code, 2, "{args:?} with {table:?}: {}", run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
            assert!(
                run.stderr.contains("[schedules.\"broken\"]") && run.stderr.contains(key),
                "{args:?} with {table:?} names the schedule and {key}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn an_unknown_schedule_exits_3() {
    let sandbox = Sandbox::new();
    sandbox.write("jobq.toml", GOOD);
    for action in ["trigger", "pause", "resume", "next"] {
        let run = sandbox.run(["schedules", action, "nosuch"]);
        assert_eq!(run.code, 3, "{action}: {}", run.stderr);
        assert!(run.stderr.contains("no schedule named \"nosuch\""), "{}", run.stderr);
    }
}

#[test]
fn trigger_enqueues_one_run_now_with_the_schedules_meta() {
    let sandbox = Sandbox::new();
    sandbox.write("jobq.toml", GOOD);
    let run = sandbox.run(["schedules", "trigger", "hourly"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let id = run.stdout.trim().to_string();
    let shown = sandbox.run(["show", &id, "-o", "json"]);
    let job: Value = serde_json::from_str(&shown.stdout).expect("job JSON");
    assert_eq!(job["queue"], "reports");
    assert_eq!(job["jobType"], "report.build");
    assert_eq!(job["payload"]["kind"], "hourly");
    assert_eq!(job["meta"]["schedule"], "hourly");
    assert_eq!(job["meta"]["trigger"], "manual");
}

#[test]
fn pause_and_resume_are_recorded_in_the_store() {
    let sandbox = Sandbox::new();
    sandbox.write("jobq.toml", GOOD);
    let listed = |sandbox: &Sandbox| -> Value {
        let run = sandbox.run(["schedules", "-o", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str(&run.stdout).expect("JSON")
    };
    assert_eq!(listed(&sandbox)[0]["paused"], false);
    assert_eq!(sandbox.run(["schedules", "pause", "hourly"]).code, 0);
    let rows = listed(&sandbox);
    assert_eq!(rows[0]["name"], "hourly");
    assert_eq!(rows[0]["paused"], true);
    assert_eq!(rows[0]["when"], "every 1h");
    assert_eq!(sandbox.run(["schedules", "resume", "hourly"]).code, 0);
    assert_eq!(listed(&sandbox)[0]["paused"], false);
}

#[test]
fn next_lists_the_coming_ticks_without_touching_the_store() {
    let sandbox = Sandbox::new();
    sandbox.write("jobq.toml", GOOD);
    let run = sandbox.run(["schedules", "next", "hourly", "--count", "3"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ticks: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(ticks.len(), 3);
    assert!(ticks.iter().all(|t| t.ends_with(":00:00.000Z")), "{ticks:?}");
    assert!(!sandbox.path().join("jobs.db").exists(), "no store was opened");
}
