//! `jobq batch`: members and a callback in one call; `jobq batch show ID`: where it stands.

use jobq::store::Transition;
use jobq::time::UnixMillis;
use serde_json::json;

use super::Sandbox;

#[test]
fn a_batch_runs_its_callback_once_every_member_has_ended() {
    let env = Sandbox::new();
    let file = env.write(
        "images.ndjson",
        concat!(
            r#"{"v":1,"jobId":"img-1","jobType":"image.resize","payload":{"n":1}}"#,
            "\n",
            r#"{"v":1,"jobId":"img-2","jobType":"image.resize","payload":{"n":2}}"#,
            "\n\n",
            r#"{"v":1,"jobId":"img-3","jobType":"image.resize","payload":{"n":3},"queue":"slow"}"#,
            "\n",
        ),
    );
    let file = file.to_str().unwrap();
    let made = env.json([
        "batch",
        "--file",
        file,
        "--then",
        "album.publish",
        "--then-payload",
        r#"{"album":7}"#,
        "--id",
        "album",
        "-o",
        "json",
    ]);
    assert_eq!(made["batch"], "album");
    assert_eq!(made["members"].as_array().unwrap().len(), 3);
    assert_eq!(made["then"], json!({"id": "album", "outcome": "created"}));
    assert_eq!(env.status("album"), "blocked");
    let album = env.job("album");
    assert_eq!(album["payload"], json!({"album": 7}));
    let status = env.json(["batch", "show", "album", "-o", "json"]);
    assert_eq!(
        (status["members"].clone(), status["ended"].clone()),
        (json!(3), json!(0))
    );
    assert_eq!(status["counts"]["pending"], 3);
    assert_eq!(status["thenStatus"], "blocked");

    // Two end one way, one another: the callback runs after all three, whatever their ends.
    env.settle("default", Transition::Succeeded { result: None }, UnixMillis::now());
    assert_eq!(env.status("album"), "blocked");
    env.kill("slow", "corrupt image");
    assert_eq!(env.status("album"), "pending");
    snap!(env.run(["batch", "show", "album"]));
    let status = env.json(["batch", "show", "album", "-o", "json"]);
    assert_eq!(
        (status["counts"]["succeeded"].clone(), status["counts"]["dead"].clone()),
        (json!(2), json!(1))
    );
}

#[test]
fn a_batch_refuses_an_empty_file_and_show_refuses_a_job_that_is_no_batch() {
    let env = Sandbox::new();
    let empty = env.write("empty.ndjson", "\n");
    let run = env.run(["batch", "--file", empty.to_str().unwrap(), "--then", "t"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("holds no job"), "{}", run.stderr);
    let id = env.enqueue(&["t"]);
    let run = env.run(["batch", "show", &id]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("not a batch"), "{}", run.stderr);
    let run = env.run(["batch", "show", "no-such-batch"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let run = env.run(["batch", "--then", "t"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_batch_runs_its_on_failure_job_at_the_first_member_that_fails() {
    let env = Sandbox::new();
    let lines = [
        r#"{"v":1,"jobId":"img-1","jobType":"image.resize"}"#,
        r#"{"v":1,"jobId":"img-2","jobType":"image.resize","queue":"slow"}"#,
        r#"{"v":1,"jobId":"img-3","jobType":"image.resize","queue":"slower"}"#,
    ];
    let file = env.write("images.ndjson", lines.join("\n"));
    let made = env.json([
        "batch",
        "--file",
        file.to_str().unwrap(),
        "--then",
        "album.publish",
        "--on-failure",
        "album.alert",
        "--on-failure-payload",
        r#"{"album":7}"#,
        "--id",
        "album",
        "-o",
        "json",
    ]);
    assert_eq!(
        made["onFailure"],
        json!({"id": "album.on-failure", "outcome": "created"})
    );
    assert_eq!(env.job("album.on-failure")["payload"], json!({"album": 7}));
    env.settle("default", Transition::Succeeded { result: None }, UnixMillis::now());
    assert_eq!(env.status("album.on-failure"), "blocked");
    // The first member that fails lets it run, while another has not ended yet.
    env.kill("slow", "corrupt image");
    assert_eq!(env.status("album.on-failure"), "pending");
    assert_eq!(env.status("img-3"), "pending");
    let status = env.json(["batch", "show", "album", "-o", "json"]);
    assert_eq!(
        status["onFailure"],
        json!({"id": "album.on-failure", "jobType": "album.alert", "status": "pending"})
    );
    let shown = env.run(["batch", "show", "album"]);
    assert!(
        shown.stdout.contains("on failure album.alert is pending"),
        "{}",
        shown.stdout
    );
    // A member that fails after it changes nothing: it runs once.
    env.kill("slower", "corrupt image");
    assert_eq!(env.status("album.on-failure"), "pending");
    assert_eq!(env.status("album"), "pending");
}

#[test]
fn a_batch_whose_members_all_succeed_cancels_its_on_failure_job() {
    let env = Sandbox::new();
    let lines = [
        r#"{"v":1,"jobId":"a","jobType":"t","queue":"members"}"#,
        r#"{"v":1,"jobId":"b","jobType":"t","queue":"members"}"#,
    ];
    let file = env.write("jobs.ndjson", lines.join("\n"));
    let path = file.to_str().unwrap();
    let args = [
        "batch",
        "--file",
        path,
        "--then",
        "done",
        "--on-failure",
        "alert",
        "--id",
        "b1",
    ];
    let run = env.run(args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("its callback runs once every one has ended, and b1.on-failure at the first that fails"),
        "{}",
        run.stderr
    );
    env.settle("members", Transition::Succeeded { result: None }, UnixMillis::now());
    assert_eq!(env.status("b1"), "pending");
    let alert = env.job("b1.on-failure");
    assert_eq!(alert["status"], "cancelled");
    let errors = alert["errors"].to_string();
    assert!(
        errors.contains("no dependency ended the way this job waits for"),
        "{errors}"
    );
    // An on-failure payload needs an on-failure job.
    let run = env.run(["batch", "--file", path, "--then", "done", "--on-failure-payload", "{}"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn enqueue_with_join_any_runs_at_the_first_dependency_met() {
    let env = Sandbox::new();
    let a = env.enqueue(&["t", "--queue", "a"]);
    let b = env.enqueue(&["t", "--queue", "b"]);
    let either = env.enqueue(&["t", "--after", &a, "--after", &b, "--join", "any", "--id", "either"]);
    let both = env.enqueue(&["t", "--after", &a, "--after", &b, "--id", "both"]);
    assert_eq!((either.as_str(), both.as_str()), ("either", "both"));
    env.settle("a", Transition::Succeeded { result: None }, UnixMillis::now());
    assert_eq!(
        (env.status("either"), env.status("both")),
        ("pending".into(), "blocked".into())
    );
    let shown = env.json(["show", "either", "-o", "json"]);
    assert_eq!(shown["join"], "any");
    assert!(env.json(["show", "both", "-o", "json"]).get("join").is_none());
    let table = env.ok(["show", "either"]);
    assert!(table.contains("waits for any of (runs at the first met):"), "{table}");
    let run = env.run(["enqueue", "t", "--join", "some", "--after", &a]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("expected all or any"), "{}", run.stderr);
}
