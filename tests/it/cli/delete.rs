//! `jobq delete`: by id (running and waiting jobs refused without `--force`) and by filter (refused off a
//! terminal without `--yes`).

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

#[test]
fn delete_by_id_removes_finished_and_pending_jobs() {
    let env = Sandbox::new();
    let pending = env.enqueue(&["mail.send"]);
    let dead = env.enqueue(&["mail.send", "--queue", "mail"]);
    env.kill("mail", "smtp: refused");
    snap!(env.run(["delete", &pending, &dead]));
    assert!(env.statuses().is_empty());
}

#[test]
fn delete_refuses_running_and_waiting_jobs_unless_forced() {
    let env = Sandbox::new();
    let running = env.enqueue(&["video.encode", "--queue", "media"]);
    env.claim("media");
    let waiting = env.enqueue(&["payment.capture", "--queue", "payments"]);
    env.settle("payments", Transition::Waiting, UnixMillis::now());
    let done = env.enqueue(&["mail.send"]);
    snap!("refused_one", env.run(["delete", &running]));
    snap!("refused_mixed", env.run(["delete", &running, &waiting, &done, "nope"]));
    assert_eq!(env.status(&running), "running");
    assert_eq!(env.status(&waiting), "waiting");
    snap!(
        "forced",
        env.run(["delete", &running, &waiting, "--force", "-o", "json"])
    );
    assert!(env.statuses().is_empty());
}

#[test]
fn delete_an_unknown_id_is_not_found() {
    let env = Sandbox::new();
    snap!("one", env.run(["delete", "no-such-job"]));
    let id = env.enqueue(&["mail.send"]);
    snap!("mixed", env.run(["delete", &id, "nope-1"]));
    assert!(env.statuses().is_empty());
}

#[test]
fn delete_by_filter_off_a_terminal_needs_yes() {
    let env = Sandbox::new();
    let a = env.enqueue(&["mail.send", "--queue", "mail"]);
    let b = env.enqueue(&["report.build", "--queue", "reports"]);
    snap!("refused", env.run(["delete", "--queue", "mail"]));
    assert_eq!(env.status(&a), "pending");
    snap!("yes", env.run(["delete", "--queue", "mail", "--yes"]));
    snap!("older_than", env.run(["delete", "--older-than", "1h", "--yes"]));
    assert_eq!(env.status(&b), "pending", "created just now");
    assert_eq!(env.statuses().len(), 1);
}

#[test]
fn delete_by_filter_leaves_held_jobs_unless_forced() {
    let env = Sandbox::new();
    env.enqueue(&["video.encode", "--queue", "media"]);
    env.claim("media");
    env.enqueue(&["video.encode", "--queue", "media"]);
    snap!("left", env.run(["delete", "--queue", "media", "--yes"]));
    assert_eq!(env.statuses().len(), 1);
    snap!(
        "forced",
        env.run(["delete", "--queue", "media", "--force", "--yes", "-o", "json"])
    );
    assert!(env.statuses().is_empty());
}

#[test]
fn delete_refuses_bad_arguments() {
    let env = Sandbox::new();
    let id = env.enqueue(&["mail.send"]);
    snap!("nothing", env.run(["delete"]));
    snap!("ids_and_filter", env.run(["delete", &id, "--queue", "mail"]));
    snap!("bad_duration", env.run(["delete", "--older-than", "ages", "--yes"]));
    snap!("unknown_status", env.run(["delete", "--status", "paused", "--yes"]));
    assert_eq!(env.status(&id), "pending");
}
