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
