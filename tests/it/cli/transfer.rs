//! `jobq export`, `import` and `copy`: jobs of every status, with unicode and a 1 MiB payload, go
//! round SQLite → PostgreSQL → MySQL → Redis → SQLite and come back with every field as it was; a bad
//! line refuses the whole file; held ids are skipped, replaced or refuse the import; a copy resumes and
//! moves; a flow in flight goes round with its edges and goes on where it arrives.

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;
use crate::support::TestStore;
use crate::support::mysql::mysql_store;
use crate::support::postgres::postgres_store;
use crate::support::redis::redis_store;
use crate::support::sqlite::sqlite_store;

/// Fresh server stores (and one more SQLite file) for a test, opened on a runtime of their own; each
/// is removed when the test drops it.
fn stores() -> (TestStore, TestStore, TestStore, TestStore) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        (
            postgres_store().await,
            mysql_store().await,
            redis_store().await,
            sqlite_store().await,
        )
    })
}

/// Jobs in every status, made the way workers and operators make them.
fn every_status(env: &Sandbox) {
    let big = format!("{{\"blob\":\"{}\"}}", "x".repeat(1024 * 1024 - 12));
    env.write("big.json", &big);
    env.enqueue(&["media.resize", "@big.json", "--queue", "media"]);
    env.enqueue(&[
        "mail.send",
        r#"{"to":"zofia@example.pl","subject":"zażółć gęślą jaźń ✓ 日本語"}"#,
        "--meta",
        "tenantId=7",
        "--unique-key",
        "welcome-7",
        "--priority",
        "-3",
    ]);
    env.enqueue(&[
        "mail.send",
        "{}",
        "--delay",
        "1h",
        "--max-attempts",
        "9",
        "--timeout",
        "30s",
    ]);
    env.enqueue(&["report.build", "--queue", "done"]);
    env.settle(
        "done",
        Transition::Succeeded {
            result: Some(serde_json::value::RawValue::from_string("{\"rows\":12}".into()).unwrap()),
        },
        UnixMillis::now(),
    );
    env.enqueue(&["invoice.pdf", "--queue", "dead"]);
    env.kill("dead", "renderer crashed: ünïcode");
    env.enqueue(&["sms.send", "--queue", "waiting"]);
    env.settle("waiting", Transition::Waiting, UnixMillis::now());
    env.enqueue(&["crm.sync", "--queue", "running"]);
    env.claim("running");
    env.enqueue(&["push.send", "--queue", "discard"]);
    env.settle(
        "discard",
        Transition::Discarded {
            reason: "device gone".into(),
        },
        UnixMillis::now(),
    );
    let cancelled = env.enqueue(&["mail.send", "--queue", "cancel"]);
    env.ok(["cancel", &cancelled]);
}

/// An export's lines, sorted (exports list newest first; ties may come in either order).
fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn every_job_goes_round_every_store_exactly() {
    let env = Sandbox::new();
    every_status(&env);
    let exported = env.ok(["export"]);
    assert_eq!(exported.lines().count(), 9);
    let statuses: std::collections::BTreeSet<String> = env.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(statuses.len(), 7, "every status: {statuses:?}");
    let (pg, mysql, redis, sqlite) = stores();
    let mut from = env.url();
    for to in [pg.url(), mysql.url(), redis.url(), sqlite.url()] {
        let run = env.run(["--url", &from, "copy", "--to", to, "--keep-running"]);
        assert_eq!(run.code, 0, "copy {from} → {to}:\n{}", run.stderr);
        assert!(run.stderr.contains("copied 9 jobs"), "{}", run.stderr);
        from = to.to_string();
    }
    let back = env.ok(["--url", sqlite.url(), "export"]);
    assert_eq!(
        sorted_lines(&back),
        sorted_lines(&exported),
        "every field of every job came back"
    );

    // Import restores a file into a store of any kind; a running job arrives released.
    let file = env.write("jobs.ndjson", format!("{exported}\n"));
    let (pg, _mysql, _redis, _sqlite) = stores();
    let run = env.run(["--url", pg.url(), "import", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let again = env.ok(["--url", pg.url(), "export", "--status", "pending", "--queue", "running"]);
    let job: serde_json::Value = serde_json::from_str(&again).expect("one job");
    assert_eq!(
        (
            job["status"].as_str(),
            job["attempt"].as_u64(),
            job["workerId"].is_null()
        ),
        (Some("pending"), Some(0), true)
    );
}

#[test]
fn a_bad_line_or_another_version_refuses_the_whole_file() {
    let env = Sandbox::new();
    env.enqueue(&["mail.send"]);
    env.enqueue(&["mail.send"]);
    let exported = env.ok(["export"]);
    let mut lines: Vec<&str> = exported.lines().collect();
    let (pg, _mysql, _redis, _sqlite) = stores();
    let good = lines[0].to_string();
    lines[1] = r#"{"v":1,"jobType":"mail.send","payload":{}}"#;
    let bad = env.write("bad.ndjson", lines.join("\n"));
    let run = env.run(["--url", pg.url(), "import", bad.to_str().unwrap()]);
    run.assert_one_line_error();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("bad.ndjson:2") && run.stderr.contains("not an exported job"),
        "{}",
        run.stderr
    );
    let newer = env.write("newer.ndjson", good.replacen("\"v\":1", "\"v\":7", 1));
    let run = env.run(["--url", pg.url(), "import", newer.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("version 7"), "{}", run.stderr);
    assert_eq!(env.ok(["--url", pg.url(), "export"]), "", "nothing was written");
}

#[test]
fn held_ids_are_skipped_replaced_or_refuse_and_a_copy_resumes_and_moves() {
    let env = Sandbox::new();
    let first = env.enqueue(&["mail.send", r#"{"n":1}"#]);
    env.enqueue(&["mail.send", r#"{"n":2}"#]);
    let file = env.write("jobs.ndjson", env.ok(["export"]));
    let file = file.to_str().unwrap();
    let (target, _mysql, redis, _sqlite) = stores();
    let to = target.url();

    // The target holds one of the two: fail writes nothing, skip writes the other, replace both.
    env.ok(["--url", to, "import", file]);
    env.ok(["--url", to, "delete", &first]);
    env.ok(["--url", to, "cancel", "--queue", "default", "--yes"]);
    let run = env.run(["--url", to, "import", file, "--on-conflict", "fail"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("holds a job"), "{}", run.stderr);
    assert!(
        env.run(["--url", to, "show", &first]).code == 3,
        "fail wrote the job it does not hold"
    );
    let counts = |imported: u64, replaced: u64, skipped: u64| serde_json::json!({"imported": imported, "replaced": replaced, "skipped": skipped, "keyTaken": 0, "withDependencies": 0, "dryRun": false});
    assert_eq!(env.json(["--url", to, "import", file, "-o", "json"]), counts(1, 0, 1));
    let replace = ["--url", to, "import", file, "--on-conflict", "replace", "-o", "json"];
    assert_eq!(env.json(replace), counts(0, 2, 0));
    let pending = env.ok(["--url", to, "export", "--status", "pending"]);
    assert_eq!(
        pending.lines().count(),
        2,
        "replaced whole, the cancelled one pending again"
    );

    // A copy brings the pauses and the schedules' state along.
    env.write(
        "jobq.toml",
        "[schedules.nightly]\ncron = \"30 2 * * *\"\ntype = \"report.build\"\nqueue = \"reports\"\n",
    );
    env.ok(["pause", "default"]);
    env.ok(["schedules", "pause", "nightly"]);
    let run = env.run(["copy", "--to", redis.url()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("with 1 pauses and 1 schedules' state"),
        "{}",
        run.stderr
    );
    let queues = env.json(["--url", redis.url(), "queues", "-o", "json"]);
    assert!(queues.to_string().contains("pausedSince"), "{queues}");
    assert!(!queues["queues"][0]["pausedSince"].is_null(), "{queues}");
    let schedules = env.json(["--url", redis.url(), "schedules", "-o", "json"]);
    assert_eq!(schedules[0]["paused"], true, "{schedules}");

    // A copy into a store that holds some of the jobs stops, naming one; --resume goes on, and --move
    // leaves the source with nothing it copied.
    let run = env.run(["copy", "--to", redis.url()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--resume"), "{}", run.stderr);
    env.enqueue(&["mail.send", r#"{"n":3}"#]);
    let run = env.run(["copy", "--to", redis.url(), "--resume", "--move"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("copied 1 job") && run.stderr.contains("3 deleted from the source"),
        "{}",
        run.stderr
    );
    assert_eq!(env.ok(["export"]), "");
    assert_eq!(env.ok(["--url", redis.url(), "export"]).lines().count(), 3);
}

#[test]
fn a_flow_in_flight_goes_round_every_store_with_its_edges_and_goes_on_there() {
    let env = Sandbox::new();
    env.write(
        "etl.json",
        r#"{"jobs": [
            {"ref": "extract", "type": "etl.extract", "queue": "etl"},
            {"ref": "load", "type": "etl.load", "queue": "etl", "after": ["extract"]},
            {"ref": "audit", "type": "etl.audit", "queue": "audit",
             "after": [{"ref": "extract", "on": "finish"}, "load"]},
            {"ref": "alert", "type": "etl.alert", "queue": "audit", "join": "any",
             "after": [{"ref": "extract", "on": "failure"}, {"ref": "load", "on": "failure"}]}
        ]}"#,
    );
    let ids = env.json(["flow", "etl.json", "-o", "json"]);
    let id = |r: &str| ids[r].as_str().unwrap().to_string();
    // Half-way: extract has succeeded, load may run, audit and alert still wait for it.
    env.settle("etl", Transition::Succeeded { result: None }, UnixMillis::now());
    let exported = env.ok(["export"]);
    let audit_line = exported
        .lines()
        .find(|l| l.contains(&id("audit")))
        .expect("audit's line");
    assert!(audit_line.contains(r#""after":[{"#), "{audit_line}");

    let (pg, mysql, redis, sqlite) = stores();
    let mut from = env.url();
    for to in [pg.url(), mysql.url(), redis.url(), sqlite.url()] {
        let run = env.run(["--url", &from, "copy", "--to", to]);
        assert_eq!(run.code, 0, "copy {from} → {to}:\n{}", run.stderr);
        assert!(
            run.stderr.contains("copied 4 jobs") && run.stderr.contains(", 3 with the jobs they wait for"),
            "{}",
            run.stderr
        );
        from = to.to_string();
    }
    let back = env.ok(["--url", sqlite.url(), "export"]);
    assert_eq!(
        sorted_lines(&back),
        sorted_lines(&exported),
        "every job came back with its edges as they stood"
    );

    // Moved once more, the live jobs leave the source last, with nothing broken on the way.
    let (moved, _mysql, _redis, _sqlite) = stores();
    let run = env.run(["--url", sqlite.url(), "copy", "--to", moved.url(), "--move"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("4 deleted from the source"), "{}", run.stderr);
    assert_eq!(env.ok(["--url", sqlite.url(), "export"]), "");
    let there = env.ok(["--url", moved.url(), "export"]);
    assert_eq!(sorted_lines(&there), sorted_lines(&exported));

    // The flow goes on where it arrived: load's end releases audit, and cancels alert (nothing failed).
    let run = env.run([
        "--url",
        moved.url(),
        "worker",
        "--queue",
        "etl",
        "--queue",
        "audit",
        "--burst",
        "--handler",
        "etl.load=builtin:noop",
        "--handler",
        "etl.audit=builtin:noop",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let status = |name: &str| env.json(["--url", moved.url(), "show", &id(name), "-o", "json"])["status"].clone();
    assert_eq!(
        [status("load"), status("audit"), status("alert")],
        ["succeeded", "succeeded", "cancelled"]
    );

    // An import of the export into a fresh store does the same, whatever the order of its lines.
    let (pg, _mysql, _redis, _sqlite) = stores();
    let reversed: Vec<&str> = exported.lines().rev().collect();
    let file = env.write("etl.ndjson", reversed.join("\n"));
    let imported = env.json(["--url", pg.url(), "import", file.to_str().unwrap(), "-o", "json"]);
    assert_eq!(
        (&imported["imported"], &imported["withDependencies"]),
        (&serde_json::json!(4), &serde_json::json!(3))
    );
    let blocked = env.json(["--url", pg.url(), "list", "--status", "blocked", "-o", "json"]);
    assert_eq!(blocked.as_array().map(Vec::len), Some(2), "{blocked}");
    let doctor = env.run(["--url", pg.url(), "doctor"]);
    assert!(
        !doctor.stdout.contains("stranded") && !doctor.stderr.contains("stranded"),
        "{}",
        doctor.snapshot()
    );
}
