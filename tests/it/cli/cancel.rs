//! `jobq cancel`: by id, and by filter (refused off a terminal without `--yes`).

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

#[test]
fn cancel_by_id_cancels_a_pending_job() {
    let env = Sandbox::new();
    let id = env.enqueue(&["mail.send"]);
    snap!(env.run(["cancel", &id]));
    assert_eq!(env.status(&id), "cancelled");
    assert!(env.job(&id)["finishedAt"].is_i64());
}

#[test]
fn cancel_by_id_tells_how_a_running_job_stops() {
    let env = Sandbox::new();
    let id = env.enqueue(&["video.encode", "--queue", "media"]);
    env.claim("media");
    snap!(env.run(["cancel", &id]));
    assert_eq!(env.status(&id), "cancelled");
}

#[test]
fn cancel_by_id_cancels_a_waiting_job() {
    let env = Sandbox::new();
    let id = env.enqueue(&["payment.capture", "--queue", "payments"]);
    env.settle("payments", Transition::Waiting, UnixMillis::now());
    snap!(env.run(["cancel", &id]));
    assert_eq!(env.status(&id), "cancelled");
}

#[test]
fn cancel_leaves_a_finished_job_alone_with_a_note() {
    let env = Sandbox::new();
    let done = env.enqueue(&["mail.send", "--queue", "mail"]);
    env.settle("mail", Transition::Succeeded { result: None }, UnixMillis::now());
    snap!("succeeded", env.run(["cancel", &done]));
    assert_eq!(env.status(&done), "succeeded");
    let cancelled = env.enqueue(&["mail.send"]);
    env.ok(["cancel", &cancelled]);
    snap!("twice", env.run(["cancel", &cancelled]));
    snap!("json", env.run(["cancel", &done, &cancelled, "-o", "json"]));
}

#[test]
fn cancel_an_unknown_id_is_not_found() {
    let env = Sandbox::new();
    snap!("one", env.run(["cancel", "no-such-job"]));
    // Known ids are still cancelled; the exit code reports the missing ones.
    let id = env.enqueue(&["mail.send"]);
    snap!("mixed", env.run(["cancel", &id, "nope-1", "nope-2"]));
    assert_eq!(env.status(&id), "cancelled");
    snap!("json", env.run(["cancel", "nope-3", "-o", "json"]));
}

#[test]
fn cancel_by_filter_off_a_terminal_needs_yes() {
    let env = Sandbox::new();
    let a = env.enqueue(&["mail.send", "--queue", "mail"]);
    let b = env.enqueue(&["mail.digest", "--queue", "mail"]);
    let c = env.enqueue(&["report.build", "--queue", "reports"]);
    snap!("refused", env.run(["cancel", "--queue", "mail"]));
    snap!("refused_status", env.run(["cancel", "--status", "pending"]));
    for id in [&a, &b, &c] {
        assert_eq!(env.status(id), "pending", "nothing was cancelled");
    }
    snap!(
        "yes",
        env.run(["cancel", "--queue", "mail", "--type", "mail.send", "--yes"])
    );
    assert_eq!(env.status(&a), "cancelled");
    assert_eq!(env.status(&b), "pending");
    snap!("yes_json", env.run(["cancel", "--queue", "mail", "-y", "-o", "json"]));
    assert_eq!(env.status(&b), "cancelled");
    assert_eq!(env.status(&c), "pending");
    snap!("nothing_left", env.run(["cancel", "--queue", "mail", "--yes"]));
}

#[test]
fn cancel_by_filter_counts_running_jobs() {
    let env = Sandbox::new();
    env.enqueue(&["video.encode", "--queue", "media"]);
    env.enqueue(&["video.encode", "--queue", "media"]);
    env.claim("media");
    env.enqueue(&["video.encode", "--queue", "media"]);
    snap!(env.run(["cancel", "--type", "video.encode", "--yes"]));
    assert!(env.statuses().iter().all(|(_, s)| s == "cancelled"));
}

#[test]
fn cancel_refuses_bad_arguments() {
    let env = Sandbox::new();
    let id = env.enqueue(&["mail.send"]);
    snap!("nothing", env.run(["cancel"]));
    snap!("ids_and_filter", env.run(["cancel", &id, "--queue", "mail"]));
    snap!("terminal_status", env.run(["cancel", "--status", "succeeded", "--yes"]));
    snap!("unknown_status", env.run(["cancel", "--status", "paused", "--yes"]));
    snap!("bad_queue", env.run(["cancel", "--queue", "a b", "--yes"]));
    assert_eq!(env.status(&id), "pending");
}

#[test]
fn cancel_cascade_cancels_every_descendant_whatever_its_rule() {
    let env = Sandbox::new();
    // Two copies of a graph: a ← b (success) ← c (finish), and a ← d (failure); e stands apart.
    for g in ["x", "y"] {
        env.enqueue(&["step", "{}", "--id", &format!("{g}a")]);
        env.enqueue(&["step", "{}", "--id", &format!("{g}b"), "--after", &format!("{g}a")]);
        env.enqueue(&[
            "step",
            "{}",
            "--id",
            &format!("{g}c"),
            "--after",
            &format!("{g}b:finish"),
        ]);
        env.enqueue(&[
            "step",
            "{}",
            "--id",
            &format!("{g}d"),
            "--after",
            &format!("{g}a:failure"),
        ]);
    }
    env.enqueue(&["step", "{}", "--id", "e"]);
    // Without the cascade, a dependent by `finish` runs once what it waits for is cancelled.
    let plain = env.run(["cancel", "xa"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let statuses = |g: &str| -> Vec<String> {
        ["a", "b", "c", "d"]
            .iter()
            .map(|n| env.status(&format!("{g}{n}")))
            .collect()
    };
    assert_eq!(statuses("x"), ["cancelled", "cancelled", "pending", "cancelled"]);
    // With it, every descendant that has not ended goes with it.
    snap!(env.run(["cancel", "ya", "--cascade"]));
    assert_eq!(statuses("y"), ["cancelled"; 4]);
    assert_eq!(env.status("e"), "pending");
    let json = env.json(["cancel", "xc", "--cascade", "-o", "json"]);
    assert_eq!(json["cancelled"][0]["id"], "xc");
    assert_eq!(json["descendants"], serde_json::json!([]));
    let refused = env.run(["cancel", "--queue", "default", "--cascade", "--yes"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
}
