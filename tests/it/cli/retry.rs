//! `jobq retry`: finished jobs of any outcome back to pending; a live job exits 2 naming its status, a
//! job whose unique key is taken exits 2 naming the holder, an unknown id exits 3.

use jobq::store::Transition;
use jobq::time::UnixMillis;

use super::Sandbox;

#[test]
fn retry_puts_finished_jobs_back_to_pending() {
    let env = Sandbox::new();
    let succeeded = env.enqueue(&["report.build", "--queue", "reports"]);
    env.settle("reports", Transition::Succeeded { result: None }, UnixMillis::now());
    let dead = env.enqueue(&["mail.send", "--queue", "mail"]);
    env.kill("mail", "smtp: refused");
    let cancelled = env.enqueue(&["mail.send"]);
    env.ok(["cancel", &cancelled]);
    snap!(env.run(["retry", &succeeded, &dead, &cancelled]));
    for id in [&succeeded, &dead, &cancelled] {
        let job = env.job(id);
        assert_eq!(
            (job["status"].as_str(), job["attempt"].as_u64()),
            (Some("pending"), Some(0)),
            "{id}"
        );
        assert!(job["finishedAt"].is_null());
    }
    assert_eq!(env.job(&dead)["errors"][0]["error"], "smtp: refused", "errors are kept");
}

#[test]
fn retry_refuses_live_jobs_and_taken_keys() {
    let env = Sandbox::new();
    let pending = env.enqueue(&["mail.send"]);
    snap!("live", env.run(["retry", &pending]));
    let old = env.enqueue(&["invoice.pdf", "--queue", "billing", "--unique-key", "invoice-42"]);
    env.kill("billing", "renderer crashed");
    let new = env.enqueue(&["invoice.pdf", "--queue", "billing", "--unique-key", "invoice-42"]);
    assert_ne!(old, new);
    snap!("key_taken", env.run(["retry", &old, "nope"]));
    assert_eq!(env.status(&old), "dead");
    snap!("json", env.run(["retry", &old, &pending, "nope", "-o", "json"]));
}

#[test]
fn retry_an_unknown_id_is_not_found() {
    let env = Sandbox::new();
    snap!(env.run(["retry", "no-such-job"]));
}
