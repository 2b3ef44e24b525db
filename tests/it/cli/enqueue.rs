//! `jobq enqueue`: one job from arguments, many from an NDJSON file, and every input it must refuse
//! without writing anything.

use serde_json::json;

use super::Sandbox;

#[test]
fn enqueue_prints_the_new_id_and_stores_the_payload() {
    let env = Sandbox::new();
    let run = env.run(["enqueue", "mail.send", r#"{"to":"ana@example.com"}"#]);
    snap!("enqueue", run);
    let id = run.stdout.trim();
    snap!("show", env.run(["show", id, "-o", "json"]));
}

#[test]
fn enqueue_without_a_payload_sends_an_empty_object() {
    let env = Sandbox::new();
    let id = env.enqueue(&["cache.warm"]);
    assert_eq!(env.job(&id)["payload"], json!({}));
}

#[test]
fn enqueue_reads_the_payload_from_a_file() {
    let env = Sandbox::new();
    env.write("params.json", r#"{ "month": "2026-01", "pages": [1, 2] }"#);
    let run = env.run(["enqueue", "report.build", "@params.json"]);
    snap!(run);
    assert_eq!(
        env.job(run.stdout.trim())["payload"],
        json!({"month": "2026-01", "pages": [1, 2]})
    );
}

#[test]
fn enqueue_reads_the_payload_from_stdin() {
    let env = Sandbox::new();
    let run = env.run_with_stdin(["enqueue", "report.build", "-"], "[1, \"two\", {\"three\": 3}]\n");
    snap!(run);
    assert_eq!(env.job(run.stdout.trim())["payload"], json!([1, "two", {"three": 3}]));
}

#[test]
fn enqueue_takes_any_json_value_as_the_payload() {
    let env = Sandbox::new();
    for (arg, value) in [
        ("-5", json!(-5)),
        ("2.5", json!(2.5)),
        (r#""text""#, json!("text")),
        ("null", json!(null)),
    ] {
        let id = env.enqueue(&["t", arg]);
        assert_eq!(env.job(&id)["payload"], value, "payload {arg}");
    }
}

#[test]
fn enqueue_takes_queue_priority_delay_attempts_timeout_and_meta() {
    let env = Sandbox::new();
    let id = env.enqueue(&[
        "mail.send",
        "{}",
        "--queue",
        "mail",
        "--priority",
        "-5",
        "--delay",
        "10m",
        "--max-attempts",
        "3",
        "--timeout",
        "1m30s",
        "--meta",
        "tenantId=42",
        "--meta",
        "traceparent=00-abc-01",
        "--meta",
        "note=a=b",
    ]);
    let job = env.job(&id);
    assert_eq!(job["queue"], "mail");
    assert_eq!(job["priority"], -5);
    assert_eq!(job["maxAttempts"], 3);
    assert_eq!(job["timeoutMs"], 90_000);
    assert_eq!(
        job["meta"],
        json!({"note": "a=b", "tenantId": "42", "traceparent": "00-abc-01"})
    );
    assert_eq!(
        job["runAt"].as_i64().unwrap() - job["createdAt"].as_i64().unwrap(),
        600_000
    );
    snap!("show", env.run(["show", &id]));
    snap!("list", env.run(["list"]));
}

#[test]
fn enqueue_at_takes_rfc3339_or_unix_seconds() {
    let env = Sandbox::new();
    let a = env.enqueue(&["report.build", "--at", "2030-01-01T00:00:00Z"]);
    let b = env.enqueue(&["report.build", "--at", "1893456000"]);
    let c = env.enqueue(&["report.build", "--at", "2030-01-01T01:00:00+01:00"]);
    for id in [a, b, c] {
        assert_eq!(env.job(&id)["runAt"], 1_893_456_000_000i64);
    }
    snap!(env.run(["stats"]));
}

#[test]
fn enqueue_delay_and_at_exclude_each_other() {
    let env = Sandbox::new();
    snap!(env.run(["enqueue", "t", "--delay", "1m", "--at", "1893456000"]));
}

#[test]
fn enqueue_with_a_live_unique_key_returns_the_existing_job() {
    let env = Sandbox::new();
    snap!(
        "first",
        env.run(["enqueue", "invoice.send", "--unique-key", "invoice-7"])
    );
    snap!(
        "again",
        env.run([
            "enqueue",
            "invoice.send",
            r#"{"other":true}"#,
            "--unique-key",
            "invoice-7"
        ])
    );
    snap!(
        "again_json",
        env.run(["enqueue", "invoice.send", "--unique-key", "invoice-7", "-o", "json"])
    );
    // Another queue is another namespace of keys.
    snap!(
        "other_queue",
        env.run(["enqueue", "invoice.send", "--unique-key", "invoice-7", "--queue", "q2"])
    );
    // -q leaves out the note, not the id.
    snap!(
        "quiet",
        env.run(["enqueue", "invoice.send", "--unique-key", "invoice-7", "-q"])
    );
    assert_eq!(env.statuses().len(), 2);
}

#[test]
fn enqueue_with_an_existing_id_leaves_the_job_alone() {
    let env = Sandbox::new();
    snap!(
        "first",
        env.run(["enqueue", "order.paid", r#"{"n":1}"#, "--id", "order-42"])
    );
    snap!(
        "again",
        env.run(["enqueue", "order.paid", r#"{"n":2}"#, "--id", "order-42"])
    );
    snap!(
        "again_json",
        env.run(["enqueue", "order.paid", "--id", "order-42", "-o", "json"])
    );
    assert_eq!(env.job("order-42")["payload"], json!({"n": 1}));
}

#[test]
fn enqueue_json_output_is_one_document() {
    let env = Sandbox::new();
    snap!(env.run(["enqueue", "mail.send", "-o", "json"]));
}

#[test]
fn enqueue_file_takes_envelopes_and_legacy_lines() {
    let env = Sandbox::new();
    env.write(
        "jobs.ndjson",
        concat!(
            r#"{"v":1,"jobId":"php-1","jobType":"mail.send","payload":{"to":"a@example.com"},"meta":{"tenantId":"t9"},"attempt":3,"maxAttempts":7,"createdAt":1700000000}"#,
            "\n",
            r#"{"jobId":"php-2","jobType":"mail.send","queue":"mail","priority":-1,"runAt":"2030-01-01T00:00:00Z"}"#,
            "\n",
            "\n",
            r#"{"v":1,"jobType":"report.build","payload":[1,2]}"#,
            "\n",
            r#"{"order":17,"note":"no jobType: legacy"}"#,
            "\n",
            r#""just a string""#,
            "\n",
        ),
    );
    let from_file = ["enqueue", "--file", "jobs.ndjson", "--type", "legacy.import"];
    snap!("enqueue", env.run([&from_file[..], &["--queue", "imports"]].concat()));
    snap!("list", env.run(["list"]));
    let php1 = env.job("php-1");
    assert_eq!(
        php1["createdAt"], 1_700_000_000_000i64,
        "createdAt in seconds is read as seconds"
    );
    assert_eq!(php1["attempt"], 0, "a new job starts afresh");
    assert_eq!(php1["maxAttempts"], 7);
    assert_eq!(
        php1["queue"], "imports",
        "--queue applies to lines that do not name one"
    );
    let php2 = env.job("php-2");
    assert_eq!(php2["queue"], "mail");
    assert_eq!(php2["runAt"], 1_893_456_000_000i64);
    // Reading the same file again finds every envelope with an id present already.
    snap!("again", env.run([&from_file[..], &["-o", "json"]].concat()));
}

#[test]
fn enqueue_file_reads_stdin() {
    let env = Sandbox::new();
    let input = "{\"a\":1}\n{\"a\":2}\n";
    snap!(env.run_with_stdin(
        ["enqueue", "--file", "-", "--type", "legacy.import", "-o", "json"],
        input
    ));
    assert_eq!(env.statuses().len(), 2);
}

#[test]
fn enqueue_file_with_a_bad_line_names_it_and_writes_nothing() {
    let env = Sandbox::new();
    env.write(
        "jobs.ndjson",
        concat!(
            r#"{"v":1,"jobType":"mail.send","payload":{}}"#,
            "\n",
            r#"{"v":1,"jobType":"mail.send","payload":{}}"#,
            "\n",
            "{\"v\":1,\"jobType\":\"mail.send\",\"payload\":\n",
        ),
    );
    snap!("bad_json", env.run(["enqueue", "--file", "jobs.ndjson"]));
    snap!("list", env.run(["list"]));

    env.write(
        "queue.ndjson",
        "{\"v\":1,\"jobType\":\"a\"}\n{\"v\":1,\"jobType\":\"a\",\"queue\":\"no spaces\"}\n",
    );
    snap!("bad_queue", env.run(["enqueue", "--file", "queue.ndjson"]));

    env.write("legacy.ndjson", "{\"v\":1,\"jobType\":\"a\"}\n{\"order\":1}\n");
    snap!("legacy_without_type", env.run(["enqueue", "--file", "legacy.ndjson"]));

    env.write("half.ndjson", "{\"v\":1,\"jobType\":\"a\"}\n{\"jobType\":\"b\"}\n");
    snap!(
        "envelope_without_id_or_v",
        env.run(["enqueue", "--file", "half.ndjson"])
    );

    assert!(env.statuses().is_empty(), "a refused file writes nothing");
}

#[test]
fn enqueue_file_refuses_a_missing_file_and_an_empty_type() {
    let env = Sandbox::new();
    snap!("missing", env.run(["enqueue", "--file", "nope.ndjson"]));
    env.write("jobs.ndjson", "{\"a\":1}\n");
    snap!(
        "empty_type",
        env.run(["enqueue", "--file", "jobs.ndjson", "--type", ""])
    );
    assert!(env.statuses().is_empty());
}

#[test]
fn enqueue_file_excludes_single_job_arguments() {
    let env = Sandbox::new();
    snap!("type", env.run(["enqueue", "mail.send", "--file", "jobs.ndjson"]));
    snap!("id", env.run(["enqueue", "--file", "jobs.ndjson", "--id", "x"]));
    snap!(
        "default_type_without_file",
        env.run(["enqueue", "mail.send", "--type", "legacy"])
    );
}

#[test]
fn enqueue_refuses_invalid_json() {
    let env = Sandbox::new();
    snap!("unquoted_string", env.run(["enqueue", "greet", "hello"]));
    snap!("truncated", env.run(["enqueue", "greet", r#"{"to":"#]));
    env.write("bad.json", "{\"to\": [1,}");
    snap!("file", env.run(["enqueue", "greet", "@bad.json"]));
    snap!("stdin", env.run_with_stdin(["enqueue", "greet", "-"], "nope"));
    snap!("missing_file", env.run(["enqueue", "greet", "@missing.json"]));
    assert!(env.statuses().is_empty());
}

#[test]
fn enqueue_refuses_a_payload_over_one_mebibyte() {
    let env = Sandbox::new();
    // {"blob":"…"} is 11 bytes around the string.
    let limit = 1024 * 1024;
    env.write("big.json", format!("{{\"blob\":\"{}\"}}", "x".repeat(limit - 11 + 1)));
    snap!("over", env.run(["enqueue", "upload", "@big.json"]));
    snap!(
        "over_stdin",
        env.run_with_stdin(["enqueue", "upload", "-"], &format!("\"{}\"", "y".repeat(limit)))
    );
    env.write(
        "big.ndjson",
        format!(
            "{{\"v\":1,\"jobType\":\"a\"}}\n{{\"v\":1,\"jobType\":\"a\",\"payload\":\"{}\"}}\n",
            "z".repeat(limit)
        ),
    );
    snap!("over_in_file", env.run(["enqueue", "--file", "big.ndjson"]));
    assert!(env.statuses().is_empty(), "nothing was written");
    // Exactly at the limit is fine.
    env.write("edge.json", format!("{{\"blob\":\"{}\"}}", "x".repeat(limit - 11)));
    let id = env.enqueue(&["upload", "@edge.json"]);
    assert_eq!(env.status(&id), "pending");
}

#[test]
fn enqueue_refuses_bad_values() {
    let env = Sandbox::new();
    snap!("empty_type", env.run(["enqueue", "", "{}"]));
    snap!("blank_type", env.run(["enqueue", "  ", "{}"]));
    snap!("long_type", env.run(["enqueue", &"t".repeat(129)]));
    snap!("queue_with_space", env.run(["enqueue", "t", "--queue", "bad queue"]));
    snap!("queue_too_long", env.run(["enqueue", "t", "--queue", &"q".repeat(65)]));
    snap!("delay", env.run(["enqueue", "t", "--delay", "soon"]));
    snap!("negative_delay", env.run(["enqueue", "t", "--delay", "-5s"]));
    snap!("at", env.run(["enqueue", "t", "--at", "tomorrow"]));
    snap!("timeout", env.run(["enqueue", "t", "--timeout", "forever"]));
    snap!("timeout_zero", env.run(["enqueue", "t", "--timeout", "0s"]));
    snap!("negative_timeout", env.run(["enqueue", "t", "--timeout", "-1s"]));
    snap!("max_attempts_zero", env.run(["enqueue", "t", "--max-attempts", "0"]));
    snap!(
        "max_attempts_negative",
        env.run(["enqueue", "t", "--max-attempts", "-1"])
    );
    snap!("priority_not_a_number", env.run(["enqueue", "t", "--priority", "high"]));
    snap!("meta_without_equals", env.run(["enqueue", "t", "--meta", "tenantId"]));
    snap!("meta_empty_key", env.run(["enqueue", "t", "--meta", "=42"]));
    snap!("empty_id", env.run(["enqueue", "t", "--id", ""]));
    snap!("empty_unique_key", env.run(["enqueue", "t", "--unique-key", ""]));
    snap!("output_ndjson", env.run(["enqueue", "t", "-o", "ndjson"]));
    snap!("no_type", env.run(["enqueue"]));
    snap!("unknown_flag", env.run(["enqueue", "t", "--prio", "1"]));
    snap!("unknown_flag_after_payload", env.run(["enqueue", "t", "{}", "--bogus"]));
    assert!(env.statuses().is_empty(), "nothing was written");
}

#[test]
fn enqueue_refuses_an_unknown_url_scheme_without_showing_the_password() {
    let env = Sandbox::new();
    let url = "postgress://user:s3cret@db.example/jobs";
    let run = env.run(["--url", url, "enqueue", "t"]);
    snap!("flag", run);
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));

    let mut cmd = env.command(["enqueue", "t"]);
    cmd.env("JOBQ_URL", url);
    let run = env.run_command(cmd);
    snap!("env", run);
    assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"));
}

#[test]
fn enqueue_after_holds_a_job_until_its_dependency_has_ended() {
    let env = Sandbox::new();
    let build = env.enqueue(&["report.build"]);
    let mail = env.enqueue(&["report.mail", "{}", "--after", &build]);
    let alert = env.enqueue(&["report.alert", "{}", "--after", &format!("{build}:failure")]);
    assert_eq!(env.status(&mail), "blocked");
    let blocked = env.json(["list", "--status", "blocked", "-o", "json"]);
    let ids: Vec<&str> = blocked
        .as_array()
        .expect("a JSON array")
        .iter()
        .map(|j| j["jobId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [alert.as_str(), mail.as_str()]);
    let stats = env.json(["stats", "-o", "json"]);
    assert_eq!(stats["totals"]["blocked"], json!(2));
    // Only the dependency is claimed; its success runs the one and cancels the other.
    let succeeded = jobq::store::Transition::Succeeded { result: None };
    assert_eq!(
        env.settle("default", succeeded, jobq::UnixMillis::now()),
        [build.as_str()]
    );
    assert_eq!(env.status(&mail), "pending");
    let cancelled = env.job(&alert);
    assert_eq!(cancelled["status"], "cancelled");
    let error = cancelled["errors"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("dependency {build} ended succeeded")),
        "{error}"
    );
}

#[test]
fn enqueue_after_an_unknown_job_is_refused_and_writes_nothing() {
    let env = Sandbox::new();
    let run = env.run(["enqueue", "report.mail", "{}", "--after", "no-such-job:finish"]);
    assert_eq!(run.code, 3, "{}", run.snapshot());
    assert!(run.stderr.contains("no job with id no-such-job"), "{}", run.stderr);
    assert!(env.statuses().is_empty());
    let run = env.run(["enqueue", "report.mail", "{}", "--id", "a", "--after", "a"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(run.stderr.contains("cannot run after itself"), "{}", run.stderr);
}

#[test]
fn flow_enqueues_a_graph_at_once_and_refuses_a_cycle_naming_it() {
    let env = Sandbox::new();
    env.write(
        "report.json",
        r#"{"jobs": [
            {"ref": "mail", "type": "report.mail", "after": ["build"]},
            {"ref": "build", "type": "report.build", "payload": {"month": "2026-11"}, "queue": "reports"},
            {"ref": "alert", "type": "report.alert", "after": [{"ref": "build", "on": "failure"}]}
        ]}"#,
    );
    let ids = env.json(["flow", "report.json", "-o", "json"]);
    let id = |r: &str| ids[r].as_str().unwrap().to_string();
    assert_eq!(env.status(&id("build")), "pending");
    assert_eq!(env.status(&id("mail")), "blocked");
    assert_eq!(env.status(&id("alert")), "blocked");
    assert_eq!(env.job(&id("build"))["queue"], "reports");
    let lines = env.ok(["flow", "report.json"]);
    assert_eq!(
        lines.lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(),
        ["mail", "build", "alert"]
    );

    env.write(
        "cycle.json",
        r#"{"jobs": [{"ref": "a", "type": "t", "after": ["b"]}, {"ref": "b", "type": "t", "after": ["a"]}]}"#,
    );
    let run = env.run(["flow", "cycle.json"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(run.stderr.contains("a cycle: a → b → a"), "{}", run.stderr);
    env.write(
        "unknown.json",
        r#"{"jobs": [{"ref": "a", "type": "t", "after": [{"id": "no-such-job"}]}]}"#,
    );
    let run = env.run(["flow", "unknown.json"]);
    assert_eq!(run.code, 3, "{}", run.snapshot());
    assert_eq!(env.statuses().len(), 6, "only the two good flows' jobs");
}

#[test]
fn enqueue_takes_an_expiry_in_or_at() {
    let env = Sandbox::new();
    let within = env.enqueue(&["code.send", "--expires-in", "10m"]);
    let job = env.job(&within);
    assert_eq!(
        job["expiresAt"].as_i64().unwrap() - job["createdAt"].as_i64().unwrap(),
        600_000
    );
    let at = env.enqueue(&["code.send", "--expires-at", "2030-01-01T00:00:00Z"]);
    assert_eq!(env.job(&at)["expiresAt"], 1_893_456_000_000i64);
    let plain = env.enqueue(&["code.send"]);
    assert_eq!(env.job(&plain)["expiresAt"], json!(null));
    // A delayed job's expiry must come after its run time; `expiresAt` in a file line too.
    env.write(
        "jobs.ndjson",
        "{\"v\":1,\"jobType\":\"code.send\",\"jobId\":\"f1\",\"expiresAt\":\"2030-01-01T00:00:00Z\"}\n",
    );
    let run = env.run(["enqueue", "--file", "jobs.ndjson"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(env.job("f1")["expiresAt"], 1_893_456_000_000i64);
}

#[test]
fn enqueue_refuses_an_expiry_that_could_never_be_met() {
    let env = Sandbox::new();
    for (args, says) in [
        (vec!["--expires-in", "-5m"], "--expires-in"),
        (vec!["--expires-in", "soon"], "--expires-in"),
        (vec!["--expires-in", "0s"], "already passed"),
        (vec!["--expires-at", "2001-01-01T00:00:00Z"], "already passed"),
        (
            vec!["--expires-at", "2030-01-01T00:00:00Z", "--at", "2031-01-01T00:00:00Z"],
            "could never start",
        ),
        (
            vec!["--expires-in", "1m", "--expires-at", "2030-01-01T00:00:00Z"],
            "cannot be used with",
        ),
    ] {
        let mut argv = vec!["enqueue", "code.send"];
        argv.extend(args.iter().copied());
        let run = env.run(argv);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{args:?}: {}", run.stderr);
    }
    assert_eq!(env.run(["list", "-o", "json"]).stdout.trim(), "[]", "nothing enqueued");
}

#[test]
fn a_types_unique_key_template_makes_the_key_from_the_job() {
    let env = Sandbox::new();
    env.write(
        "jobq.toml",
        "[handlers.\"order.sync\"]\nbuiltin = \"noop\"\nunique = \"{meta.tenantId}:{payload.order.id}\"\n",
    );
    let first = env.enqueue(&["order.sync", r#"{"order":{"id":7}}"#, "--meta", "tenantId=t1"]);
    assert_eq!(env.job(&first)["uniqueKey"], "t1:7");
    let again = env.run([
        "enqueue",
        "order.sync",
        r#"{"order":{"id":7}}"#,
        "--meta",
        "tenantId=t1",
        "-o",
        "json",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let answer: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        (answer["id"].as_str(), answer["outcome"].as_str()),
        (Some(first.as_str()), Some("coalesced"))
    );
    // A key given outright stands; a file's lines get theirs from their own payloads.
    let own = env.enqueue(&["order.sync", r#"{"order":{"id":7}}"#, "--unique-key", "mine"]);
    assert_eq!(env.job(&own)["uniqueKey"], "mine");
    env.write(
        "orders.ndjson",
        "{\"v\":1,\"jobType\":\"order.sync\",\"jobId\":\"f1\",\"meta\":{\"tenantId\":\"t2\"},\"payload\":{\"order\":{\"id\":8}}}\n",
    );
    let run = env.run(["enqueue", "--file", "orders.ndjson"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(env.job("f1")["uniqueKey"], "t2:8");
    // A job without the field is refused, naming it, and nothing is written.
    let before = env.run(["list", "-o", "json"]).stdout;
    let run = env.run(["enqueue", "order.sync", r#"{"order":{}}"#, "--meta", "tenantId=t1"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("the job has no payload.order.id"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert_eq!(env.run(["list", "-o", "json"]).stdout, before);
}

/// Runs `jobq enqueue ARGS -o json` and returns its answer's id and outcome.
fn answer(env: &Sandbox, args: &[&str]) -> (String, String) {
    let mut argv = vec!["enqueue"];
    argv.extend(args.iter().copied());
    argv.extend(["-o", "json"]);
    let run = env.run(argv);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    (
        answer["id"].as_str().unwrap().to_string(),
        answer["outcome"].as_str().unwrap().to_string(),
    )
}

#[test]
fn unique_modes_replace_debounce_and_throttle_answer_with_the_holder() {
    let env = Sandbox::new();
    let (holder, outcome) = answer(&env, &["cache.warm", r#"{"v":1}"#, "--unique-key", "page-1"]);
    assert_eq!(outcome, "created");
    let (id, outcome) = answer(
        &env,
        &[
            "cache.warm",
            r#"{"v":2}"#,
            "--unique-key",
            "page-1",
            "--unique-mode",
            "replace",
        ],
    );
    assert_eq!((id.as_str(), outcome.as_str()), (holder.as_str(), "replaced"));
    assert_eq!(env.job(&holder)["payload"], json!({"v": 2}));
    assert_eq!(env.job(&holder)["uniqueMode"], "replace");

    let digest = [
        "digest.send",
        "--unique-key",
        "d",
        "--debounce",
        "30s",
        "--max-wait",
        "5m",
    ];
    let (debounced, outcome) = answer(&env, &digest);
    assert_eq!(outcome, "created");
    let job = env.job(&debounced);
    assert_eq!(
        job["runAt"].as_i64().unwrap() - job["createdAt"].as_i64().unwrap(),
        30_000,
        "a debounced job runs its window from now"
    );
    assert_eq!(
        (
            job["uniqueMode"].as_str(),
            job["debounceMs"].as_i64(),
            job["maxWaitMs"].as_i64()
        ),
        (Some("debounce"), Some(30_000), Some(300_000))
    );
    let (id, outcome) = answer(&env, &digest);
    assert_eq!((id.as_str(), outcome.as_str()), (debounced.as_str(), "debounced"));
    let shown = env.run(["show", &debounced]);
    assert!(
        shown.stdout.contains("d (debounce 30s (max wait 5m))"),
        "{}",
        shown.stdout
    );

    let (throttled, outcome) = answer(&env, &["report.mail", "--unique-key", "r", "--throttle", "1h"]);
    assert_eq!(outcome, "created");
    let run = env.run(["enqueue", "report.mail", "--unique-key", "r", "--throttle", "1h"]);
    assert_eq!((run.code, run.stdout.trim()), (0, throttled.as_str()), "{}", run.stderr);
    assert!(run.stderr.contains("throttle window is not over"), "{}", run.stderr);

    // A file's lines take the mode from their own fields, or from the flags.
    env.write(
        "jobs.ndjson",
        "{\"v\":1,\"jobType\":\"cache.warm\",\"jobId\":\"f1\",\"uniqueKey\":\"page-1\",\"uniqueMode\":\"replace\",\"payload\":{\"v\":3}}\n\
         {\"v\":1,\"jobType\":\"report.mail\",\"jobId\":\"f2\",\"uniqueKey\":\"r\"}\n",
    );
    let run = env.run(["enqueue", "--file", "jobs.ndjson", "--throttle", "1h", "-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let counts: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        counts,
        json!({"created": 0, "coalesced": 0, "duplicate": 0, "replaced": 1, "debounced": 0, "throttled": 1,
               "queued-behind": 0, "cancelled-previous": 0})
    );
    assert_eq!(env.job(&holder)["payload"], json!({"v": 3}));
}

/// `jobq enqueue` of a job of `key` with payload `{"v": v}` in `mode` (`--unique-mode` words).
fn synced(key: &str, v: i64, mode: &[&str]) -> Vec<String> {
    let mut argv = vec![
        "calendar.sync".to_string(),
        format!("{{\"v\":{v}}}"),
        "--unique-key".into(),
        key.into(),
    ];
    argv.extend(mode.iter().map(|w| w.to_string()));
    argv
}

#[test]
fn keep_last_queues_a_job_behind_a_running_holder_and_says_so() {
    let env = Sandbox::new();
    let keep_last = ["--unique-mode", "keep-last"];
    let run = |v: i64| {
        let argv = synced("acct-7", v, &keep_last);
        answer(&env, &argv.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (holder, outcome) = run(1);
    assert_eq!(outcome, "created");
    assert_eq!(env.claim("default"), std::slice::from_ref(&holder));
    let (follower, outcome) = run(2);
    assert_eq!(outcome, "queued-behind");
    assert_ne!(follower, holder);
    assert_eq!(env.status(&follower), "blocked");
    let (id, outcome) = run(3);
    assert_eq!((id.as_str(), outcome.as_str()), (follower.as_str(), "replaced"));
    assert_eq!(env.job(&follower)["payload"], json!({"v": 3}));
    assert_eq!(env.job(&follower)["uniqueMode"], "keep-last");

    // Said on stderr without -o json; `replace` with the running rule `queue-behind` is keep-last.
    let running = env.enqueue(&["calendar.sync", "{}", "--unique-key", "acct-8"]);
    assert_eq!(env.claim("default"), [running]);
    let mut argv = vec!["enqueue".to_string()];
    argv.extend(synced(
        "acct-8",
        4,
        &["--unique-mode", "replace", "--unique-running", "queue-behind"],
    ));
    let run = env.run(argv);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("starts once it has ended"), "{}", run.stderr);
    assert_eq!(env.status(run.stdout.trim()), "blocked");
    assert_eq!(env.job(run.stdout.trim())["uniqueMode"], "keep-last");

    // cancel-running says so too.
    let running = env.enqueue(&["calendar.sync", "{}", "--unique-key", "acct-9"]);
    assert_eq!(env.claim("default"), [running]);
    let argv = synced("acct-9", 5, &["--unique-mode", "cancel-running"]);
    let (behind, outcome) = answer(&env, &argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(outcome, "cancelled-previous");
    assert_eq!(env.status(&behind), "blocked");
}

#[test]
fn a_types_unique_mode_applies_to_its_jobs_with_a_key() {
    let env = Sandbox::new();
    env.write(
        "jobq.toml",
        "[handlers.\"search.index\"]\nbuiltin = \"noop\"\nunique = \"{payload.doc}\"\ndebounce = \"10s\"\nmax_wait = \"1m\"\n",
    );
    let (first, outcome) = answer(&env, &["search.index", r#"{"doc":"a"}"#]);
    assert_eq!(outcome, "created");
    assert_eq!(env.job(&first)["uniqueMode"], "debounce");
    let (id, outcome) = answer(&env, &["search.index", r#"{"doc":"a"}"#]);
    assert_eq!((id.as_str(), outcome.as_str()), (first.as_str(), "debounced"));
    // The producer's own mode stands.
    let (id, outcome) = answer(&env, &["search.index", r#"{"doc":"a"}"#, "--unique-mode", "coalesce"]);
    assert_eq!((id.as_str(), outcome.as_str()), (first.as_str(), "coalesced"));
}

#[test]
fn enqueue_refuses_a_bad_unique_mode_naming_it() {
    let env = Sandbox::new();
    for (args, says) in [
        (
            vec!["--unique-key", "k", "--unique-mode", "sometimes"],
            "unknown unique mode \"sometimes\"",
        ),
        (vec!["--unique-mode", "replace"], "needs a unique key"),
        (vec!["--unique-key", "k", "--debounce", "-5s"], "--debounce"),
        (vec!["--unique-key", "k", "--debounce", "0s"], "at least 1ms"),
        (vec!["--unique-key", "k", "--unique-mode", "throttle"], "needs a window"),
        (
            vec!["--unique-key", "k", "--debounce", "1m", "--max-wait", "10s"],
            "at least the debounce window",
        ),
        (
            vec!["--unique-key", "k", "--debounce", "1m", "--throttle", "1m"],
            "not both",
        ),
        (
            vec!["--unique-key", "k", "--debounce", "1m", "--delay", "5m"],
            "takes no run time",
        ),
        (
            vec![
                "--unique-key",
                "k",
                "--unique-mode",
                "replace",
                "--unique-running",
                "later",
            ],
            "unknown running rule \"later\"",
        ),
        (
            vec![
                "--unique-key",
                "k",
                "--throttle",
                "1m",
                "--unique-running",
                "queue-behind",
            ],
            "does not apply to unique mode throttle",
        ),
    ] {
        let mut argv = vec!["enqueue", "t"];
        argv.extend(args.iter().copied());
        let run = env.run(argv);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{args:?}: {}", run.stderr);
    }
    env.write(
        "jobq.toml",
        "[handlers.t]\nbuiltin = \"noop\"\nunique_mode = \"often\"\n",
    );
    let run = env.run(["enqueue", "t"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("unique_mode"), "{}", run.stderr);
    std::fs::remove_file(env.path().join("jobq.toml")).unwrap();
    assert_eq!(env.run(["list", "-o", "json"]).stdout.trim(), "[]", "nothing enqueued");
}
