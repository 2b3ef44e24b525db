//! `jobq cleanup`: deletes terminal jobs only; `--older-than` is the routine form that never asks.

use std::time::Duration;

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

/// Finished eight days ago: [ID1] succeeded (queue old), [ID2] dead (queue old), [ID3] waiting (queue
/// parked; waiting records a finish time too, but is not terminal). Now: [ID4] cancelled, [ID5] pending,
/// [ID6] running (queue busy), [ID7] succeeded (queue fresh).
fn jobs_of_every_age(env: &Sandbox) -> Vec<String> {
    let eight_days_ago = UnixMillis::now().minus(Duration::from_secs(8 * 86_400));
    let mut ids = Vec::new();
    ids.push(env.enqueue(&["mail.send", "--queue", "old"]));
    env.settle("old", Transition::Succeeded { result: None }, eight_days_ago);
    ids.push(env.enqueue(&["mail.send", "--queue", "old"]));
    env.settle(
        "old",
        Transition::Dead {
            error: "gave up".into(),
        },
        eight_days_ago,
    );
    ids.push(env.enqueue(&["payment.capture", "--queue", "parked"]));
    env.settle("parked", Transition::Waiting, eight_days_ago);
    ids.push(env.enqueue(&["mail.send"]));
    env.ok(["cancel", &ids[3]]);
    ids.push(env.enqueue(&["mail.send"]));
    ids.push(env.enqueue(&["video.encode", "--queue", "busy"]));
    env.claim("busy");
    ids.push(env.enqueue(&["mail.send", "--queue", "fresh"]));
    env.settle("fresh", Transition::Succeeded { result: None }, UnixMillis::now());
    ids
}

/// The ids left in the store, oldest first.
fn remaining(env: &Sandbox) -> Vec<String> {
    env.statuses().into_iter().rev().map(|(id, _)| id).collect()
}

#[test]
fn cleanup_older_than_deletes_old_terminal_jobs_without_asking() {
    let env = Sandbox::new();
    let ids = jobs_of_every_age(&env);
    snap!("dry_run", env.run(["cleanup", "--older-than", "7d", "--dry-run"]));
    assert_eq!(remaining(&env), ids, "a dry run deletes nothing");
    snap!("delete", env.run(["cleanup", "--older-than", "7d"]));
    assert_eq!(remaining(&env), ids[2..].to_vec());
    snap!("again", env.run(["cleanup", "--older-than", "7d", "-o", "json"]));
}

#[test]
fn cleanup_filters_by_status_and_queue() {
    let env = Sandbox::new();
    let ids = jobs_of_every_age(&env);
    snap!("dead", env.run(["cleanup", "--older-than", "1d", "--status", "dead"]));
    let mut left = ids.clone();
    left.remove(1);
    assert_eq!(remaining(&env), left);
    snap!(
        "queue",
        env.run([
            "cleanup",
            "--status",
            "succeeded",
            "--queue",
            "fresh",
            "--yes",
            "-o",
            "json"
        ])
    );
    left.pop();
    assert_eq!(remaining(&env), left);
}

#[test]
fn cleanup_without_older_than_off_a_terminal_needs_yes() {
    let env = Sandbox::new();
    let ids = jobs_of_every_age(&env);
    snap!("refused", env.run(["cleanup"]));
    snap!(
        "refused_filtered",
        env.run(["cleanup", "--status", "cancelled", "--queue", "default"])
    );
    assert_eq!(remaining(&env), ids, "nothing was deleted");
    // Counting never asks.
    snap!("dry_run", env.run(["cleanup", "--dry-run"]));
    snap!("yes", env.run(["cleanup", "--yes"]));
    // Pending, waiting and running jobs are never deleted.
    assert_eq!(remaining(&env), vec![ids[2].clone(), ids[4].clone(), ids[5].clone()]);
    // With nothing left to delete there is nothing to ask about.
    snap!("nothing_left", env.run(["cleanup"]));
}

#[test]
fn cleanup_refuses_non_terminal_statuses_and_bad_durations() {
    let env = Sandbox::new();
    let ids = jobs_of_every_age(&env);
    snap!("pending", env.run(["cleanup", "--status", "pending", "--yes"]));
    snap!(
        "waiting",
        env.run(["cleanup", "--older-than", "1d", "--status", "dead,waiting"])
    );
    snap!(
        "running",
        env.run(["cleanup", "--older-than", "1d", "--status", "running"])
    );
    snap!(
        "unknown_status",
        env.run(["cleanup", "--older-than", "1d", "--status", "old"])
    );
    snap!("bad_duration", env.run(["cleanup", "--older-than", "a week"]));
    snap!(
        "bad_queue",
        env.run(["cleanup", "--older-than", "1d", "--queue", "a b"])
    );
    assert_eq!(remaining(&env), ids);
}

#[test]
fn cleanup_keep_last_and_type_keep_the_newest_of_the_types_asked_for() {
    let env = Sandbox::new();
    let now = UnixMillis::now();
    let mut mails = Vec::new();
    for n in 0..3 {
        mails.push(env.enqueue(&["mail.send", "--queue", "q"]));
        env.settle(
            "q",
            Transition::Succeeded { result: None },
            now.minus(Duration::from_secs(60 - n)),
        );
    }
    let report = env.enqueue(&["report.build", "--queue", "q"]);
    env.settle(
        "q",
        Transition::Succeeded { result: None },
        now.minus(Duration::from_secs(120)),
    );
    let run = env.run([
        "cleanup",
        "--keep-last",
        "1",
        "--type",
        "mail.send",
        "--yes",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer, serde_json::json!({"deleted": 2, "dryRun": false}));
    assert_eq!(remaining(&env), vec![mails[2].clone(), report]);
    for (bad, says) in [
        ("0", "keep_last must be at least 1"),
        ("-1", "'-1'"),
        ("some", "'some'"),
    ] {
        let run = env.run(["cleanup", "--yes", "--keep-last", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{bad}: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{bad}: {}", run.stderr);
    }
    assert_eq!(remaining(&env).len(), 2, "nothing deleted by a refused call");
}
