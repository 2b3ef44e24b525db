//! `jobq resolve`: a waiting job finished from outside; an unknown id exits 3, a job that is not
//! waiting exits 2 naming its status, and resolving twice the same way exits 0.

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

/// A job of queue `payments` parked as waiting; its id.
fn waiting(env: &Sandbox) -> String {
    let id = env.enqueue(&["payment.capture", "--queue", "payments"]);
    env.settle("payments", Transition::Waiting, UnixMillis::now());
    id
}

#[test]
fn resolve_succeed_records_the_result_and_twice_is_harmless() {
    let env = Sandbox::new();
    let id = waiting(&env);
    snap!(
        "succeed",
        env.run(["resolve", &id, "--succeed", "--result", r#"{"charge": "ch_1"}"#])
    );
    let job = env.job(&id);
    assert_eq!(job["status"], "succeeded");
    assert_eq!(job["result"], serde_json::json!({"charge": "ch_1"}));
    assert!(job["finishedAt"].is_i64());
    snap!("twice", env.run(["resolve", &id, "--succeed"]));
    snap!("twice_json", env.run(["resolve", &id, "--succeed", "-o", "json"]));
}

#[test]
fn resolve_fail_retry_and_discard() {
    let env = Sandbox::new();
    let failed = waiting(&env);
    snap!("fail", env.run(["resolve", &failed, "--fail", "card declined"]));
    let job = env.job(&failed);
    assert_eq!(
        (job["status"].as_str(), job["errors"][0]["error"].as_str()),
        (Some("dead"), Some("card declined"))
    );

    let retried = waiting(&env);
    snap!(
        "retry",
        env.run(["resolve", &retried, "--retry", "--delay", "10m", "-o", "json"])
    );
    let job = env.job(&retried);
    assert_eq!(
        (job["status"].as_str(), job["attempt"].as_u64()),
        (Some("pending"), Some(1))
    );
    let delay = job["runAt"].as_i64().unwrap() - UnixMillis::now().0;
    assert!((590_000..=600_000).contains(&delay), "runs in 10m: {delay}");

    let dropped = waiting(&env);
    snap!("discard", env.run(["resolve", &dropped, "--discard"]));
    assert_eq!(env.job(&dropped)["errors"][0]["error"], "discarded by an operator");
}

#[test]
fn resolve_an_unknown_id_is_not_found() {
    let env = Sandbox::new();
    snap!(env.run(["resolve", "no-such-job", "--succeed"]));
}

#[test]
fn resolve_a_job_that_is_not_waiting_names_its_status() {
    let env = Sandbox::new();
    let pending = env.enqueue(&["mail.send"]);
    snap!("pending", env.run(["resolve", &pending, "--fail", "too late"]));
    assert_eq!(env.status(&pending), "pending");
    let id = waiting(&env);
    env.ok(["resolve", &id, "--succeed"]);
    // Another way than the first: the caller learns that the job ended otherwise.
    snap!("resolved_otherwise", env.run(["resolve", &id, "--fail", "declined"]));
    assert_eq!(env.status(&id), "succeeded");
}

#[test]
fn resolve_refuses_bad_arguments() {
    let env = Sandbox::new();
    let id = waiting(&env);
    snap!("no_action", env.run(["resolve", &id]));
    snap!("two_actions", env.run(["resolve", &id, "--succeed", "--discard"]));
    snap!(
        "result_without_succeed",
        env.run(["resolve", &id, "--fail", "x", "--result", "1"])
    );
    snap!(
        "delay_without_retry",
        env.run(["resolve", &id, "--succeed", "--delay", "1m"])
    );
    snap!(
        "bad_result",
        env.run(["resolve", &id, "--succeed", "--result", "{nope"])
    );
    snap!("bad_delay", env.run(["resolve", &id, "--retry", "--delay", "soon"]));
    snap!("empty_error", env.run(["resolve", &id, "--fail", " "]));
    assert_eq!(env.status(&id), "waiting");
}
