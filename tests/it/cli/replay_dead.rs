//! `jobq replay-dead` (alias `replay`): dead jobs back to pending. Dead jobs are made through the
//! library (claim, then finish as dead), as a worker would.

use super::Sandbox;

/// Three dead jobs, in order of death: [ID1] mail.send/mail, [ID2] mail.send/mail, [ID3]
/// report.build/reports; and [ID4], pending in mail.
fn dead_jobs(env: &Sandbox) -> Vec<String> {
    let mut ids = Vec::new();
    ids.push(env.enqueue(&[
        "mail.send",
        r#"{"to":"a@example.com"}"#,
        "--queue",
        "mail",
        "--max-attempts",
        "1",
    ]));
    env.kill("mail", "smtp: 550 mailbox unavailable");
    ids.push(env.enqueue(&["mail.send", r#"{"to":"b@example.com"}"#, "--queue", "mail"]));
    env.kill("mail", "smtp: 554 rejected");
    ids.push(env.enqueue(&["report.build", "--queue", "reports"]));
    env.kill("reports", "template missing");
    ids.push(env.enqueue(&["mail.send", "--queue", "mail"]));
    ids
}

fn dead_count(env: &Sandbox) -> usize {
    env.statuses().iter().filter(|(_, s)| s == "dead").count()
}

#[test]
fn replay_dead_dry_run_changes_nothing() {
    let env = Sandbox::new();
    dead_jobs(&env);
    snap!("table", env.run(["replay-dead", "--dry-run"]));
    snap!(
        "print",
        env.run(["replay-dead", "--dry-run", "--print", "--queue", "reports"])
    );
    snap!(
        "json",
        env.run(["replay-dead", "--dry-run", "--type", "report.build", "-o", "json"])
    );
    snap!("limit", env.run(["replay", "--dry-run", "--limit", "1"]));
    assert_eq!(dead_count(&env), 3);
}

#[test]
fn replay_dead_unbounded_off_a_terminal_needs_yes() {
    let env = Sandbox::new();
    dead_jobs(&env);
    snap!("refused", env.run(["replay-dead"]));
    snap!("refused_filtered", env.run(["replay-dead", "--queue", "mail"]));
    assert_eq!(dead_count(&env), 3, "nothing was replayed");
    snap!("yes", env.run(["replay-dead", "--queue", "mail", "--yes"]));
    assert_eq!(dead_count(&env), 1);
}

#[test]
fn replay_dead_with_a_limit_or_ids_never_asks() {
    let env = Sandbox::new();
    let ids = dead_jobs(&env);
    snap!("limit", env.run(["replay", "--limit", "1"]));
    // The oldest death goes first, with its attempt reset and its errors kept.
    let first = env.job(&ids[0]);
    assert_eq!(first["status"], "pending");
    assert_eq!(first["attempt"], 0);
    assert_eq!(first["errors"].as_array().unwrap().len(), 1);
    assert_eq!(env.status(&ids[1]), "dead");
    snap!("id", env.run(["replay-dead", "--id", &ids[2], "--print"]));
    assert_eq!(env.status(&ids[2]), "pending");
    snap!("id_json", env.run(["replay-dead", "--id", &ids[1], "-o", "json"]));
    assert_eq!(dead_count(&env), 0);
}

#[test]
fn replay_dead_with_nothing_dead_says_so() {
    let env = Sandbox::new();
    let ids = dead_jobs(&env);
    snap!("pending_id", env.run(["replay-dead", "--id", &ids[3]]));
    snap!("unknown_id", env.run(["replay-dead", "--id", "no-such-job"]));
    snap!("other_queue", env.run(["replay-dead", "--queue", "nobody", "--yes"]));
    snap!("json", env.run(["replay-dead", "--queue", "nobody", "-o", "json"]));
    snap!("dry_run", env.run(["replay-dead", "--queue", "nobody", "--dry-run"]));
    assert_eq!(dead_count(&env), 3);
}

#[test]
fn replay_dead_refuses_bad_arguments() {
    let env = Sandbox::new();
    dead_jobs(&env);
    snap!("limit_zero", env.run(["replay-dead", "--limit", "0"]));
    snap!("bad_queue", env.run(["replay-dead", "--queue", "a b", "--yes"]));
    snap!("empty_id", env.run(["replay-dead", "--id", ""]));
    snap!("prometheus", env.run(["replay-dead", "--yes", "-o", "prometheus"]));
    assert_eq!(dead_count(&env), 3);
}

#[test]
fn replay_dead_cascade_brings_back_what_the_failure_cancelled() {
    let env = Sandbox::new();
    env.enqueue(&["report.build", "{}", "--id", "build", "--queue", "flows"]);
    env.enqueue(&[
        "report.mail",
        "{}",
        "--id",
        "mail",
        "--queue",
        "flows",
        "--after",
        "build",
    ]);
    env.enqueue(&[
        "report.archive",
        "{}",
        "--id",
        "archive",
        "--queue",
        "flows",
        "--after",
        "mail",
    ]);
    env.kill("flows", "template missing");
    assert_eq!(
        (env.status("mail"), env.status("archive")),
        ("cancelled".into(), "cancelled".into())
    );
    snap!(env.run(["replay-dead", "--id", "build", "--cascade"]));
    assert_eq!(env.status("build"), "pending");
    assert_eq!(
        (env.status("mail"), env.status("archive")),
        ("blocked".into(), "blocked".into())
    );
    let refused = env.run(["replay-dead", "--id", "build", "--cascade", "--dry-run"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
}
