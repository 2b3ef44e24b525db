//! `jobq show ID`: one job in full.

use serde_json::json;

use super::Sandbox;

#[test]
fn show_prints_every_field() {
    let env = Sandbox::new();
    let id = env.enqueue(&[
        "mail.send",
        r#"{"to":"ana@example.com","cc":["bo@example.com"]}"#,
        "--queue",
        "mail",
        "--priority",
        "3",
        "--timeout",
        "30s",
        "--meta",
        "tenantId=42",
        "--unique-key",
        "welcome-ana",
        "--max-attempts",
        "2",
    ]);
    snap!("table", env.run(["show", &id]));
    snap!("json", env.run(["show", &id, "-o", "json"]));
}

#[test]
fn show_prints_the_error_history_of_a_dead_job() {
    let env = Sandbox::new();
    let id = env.enqueue(&["report.build", "--queue", "reports", "--max-attempts", "1"]);
    env.kill("reports", "template missing: monthly.html");
    snap!("table", env.run(["show", &id]));
    snap!("json", env.run(["show", &id, "-o", "json"]));
}

#[test]
fn show_prints_a_running_job_with_its_worker() {
    let env = Sandbox::new();
    let id = env.enqueue(&["video.encode", "--queue", "media"]);
    env.claim("media");
    snap!(env.run(["show", &id]));
}

#[test]
fn show_an_unknown_id_is_not_found() {
    let env = Sandbox::new();
    snap!("unknown", env.run(["show", "no-such-job"]));
    snap!(
        "unknown_json",
        env.run(["show", "0193a5c4-0000-7000-8000-000000000000", "-o", "json"])
    );
    snap!("empty", env.run(["show", ""]));
    snap!("missing", env.run(["show"]));
    snap!("prometheus", env.run(["show", "x", "-o", "prometheus"]));
}

#[test]
fn show_lists_what_a_job_waits_for_and_what_waits_for_it() {
    let env = Sandbox::new();
    env.enqueue(&["report.build", "{}", "--id", "build"]);
    env.enqueue(&["report.mail", "{}", "--id", "mail", "--after", "build"]);
    env.enqueue(&["report.alert", "{}", "--id", "alert", "--after", "build:failure"]);
    let succeeded = jobq::store::Transition::Succeeded { result: None };
    env.settle("default", succeeded, jobq::UnixMillis::now());

    let build = env.json(["show", "build", "-o", "json"]);
    assert_eq!(build["dependencies"], json!([]));
    assert_eq!(
        build["dependents"],
        json!([
            {"jobId": "alert", "jobType": "report.alert", "queue": "default", "status": "cancelled", "on": "failure", "state": "broken"},
            {"jobId": "mail", "jobType": "report.mail", "queue": "default", "status": "pending", "on": "success", "state": "met"},
        ])
    );
    let mail = env.json(["show", "mail", "-o", "json"]);
    assert_eq!(
        mail["dependencies"],
        json!([{"jobId": "build", "jobType": "report.build", "queue": "default", "status": "succeeded", "on": "success", "state": "met"}])
    );
    let table = env.run(["show", "build"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    let below = table
        .stdout
        .split("waited for by:")
        .nth(1)
        .expect("the dependents' table");
    for word in ["alert", "report.alert", "cancelled", "failure", "broken", "mail", "met"] {
        assert!(below.contains(word), "{word} in\n{}", table.stdout);
    }
    assert!(!table.stdout.contains("waits for:"), "{}", table.stdout);
}
