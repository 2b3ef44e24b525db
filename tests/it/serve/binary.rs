//! The `jobq serve` process itself: it starts on the configured store, serves with tokens from the
//! environment, writes an audit line naming the token (never its value) for each action and at `-v`
//! a line per request, and stops cleanly on SIGTERM; starts that would expose the store or lack a token's value exit 2 with one
//! line.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use super::send;
use crate::support::process::{Process, jobq};
use crate::support::{eventually, sqlite_store};

/// How long a `jobq serve` process may take to start or stop on a loaded machine.
const START: Duration = Duration::from_secs(60);

const CONFIG: &str = r#"
[serve]
tokens = [{ name = "ops", token_env = "TEST_SERVE_OPS", role = "admin" }]
"#;
const SECRET: &str = "binary-test-secret-4f2a9c";

/// `jobq --url URL --config DIR/jobq.toml serve ARGS…` with `CONFIG` and the token in its environment.
fn serve(dir: &Path, url: &str, args: &[&str], token: Option<&str>) -> std::process::Command {
    let file = dir.join("jobq.toml");
    std::fs::write(&file, CONFIG).unwrap();
    let mut cmd = jobq();
    cmd.args(["--url", url, "--config"]).arg(&file).arg("serve").args(args);
    cmd.env_remove("TEST_SERVE_OPS")
        .env_remove("JOBQ_LOG")
        .stdout(Stdio::null());
    if let Some(t) = token {
        cmd.env("TEST_SERVE_OPS", t);
    }
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobq_serve_serves_audits_and_stops_on_sigterm() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let process = Process::spawn(
        serve(
            dir.path(),
            store.url(),
            &["-v", "--listen", "127.0.0.1:0"],
            Some(SECRET),
        ),
        &dir.path().join("serve.log"),
    );
    let base = eventually("jobq serve to say where it listens", START, async || {
        let log = process.log();
        let at = log.find("serving http://").ok_or_else(|| log.clone())?;
        let rest = &log[at + "serving ".len()..];
        Ok::<_, String>(rest[..rest.find("/api/v1").ok_or_else(|| log.clone())?].to_string())
    })
    .await;
    let http = reqwest::Client::new();
    let (status, body) = send(http.get(format!("{base}/api/v1/jobs"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let enqueue = http
        .post(format!("{base}/api/v1/jobs"))
        .bearer_auth(SECRET)
        .json(&json!({"jobType": "mail.send", "payload": {"to": "a"}}));
    let (status, body) = send(enqueue).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["id"].as_str().unwrap().to_string();
    let (status, job) = send(http.get(format!("{base}/api/v1/jobs/{id}")).bearer_auth(SECRET)).await;
    assert_eq!((status, job["jobType"].as_str()), (StatusCode::OK, Some("mail.send")));

    process.wait_log(&format!("ops jobs.enqueue: 1 job: {id}"), START).await;
    // -v: one line per request, the path without its query.
    process
        .wait_log(r#"request method=GET path="/api/v1/jobs" status=401"#, START)
        .await;
    process.signal(libc::SIGTERM);
    let exit = process.exit(START).await;
    assert!(exit.success(), "{exit}\n{}", process.log());
    assert!(
        !process.log().contains(SECRET),
        "a token was logged:\n{}",
        process.log()
    );
}

/// Runs `jobq serve` that must refuse to start: its exit code and its stderr.
fn refused(args: &[&str], token: Option<&str>) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("jobs.db").display());
    let mut cmd = serve(dir.path(), &url, args, token);
    // No tokens configured for the loopback case: an empty config.
    if token.is_none() && args.contains(&"0.0.0.0:0") {
        std::fs::write(dir.path().join("jobq.toml"), "").unwrap();
    }
    let out = cmd.stderr(Stdio::piped()).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_start_that_would_expose_the_store_or_lacks_a_token_exits_2_with_one_line() {
    let (code, stderr) = refused(&["--listen", "0.0.0.0:0"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: refusing to listen on 0.0.0.0:0 without tokens"),
        "{stderr}"
    );

    let (code, stderr) = refused(&["--listen", "127.0.0.1:0"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("TEST_SERVE_OPS is not set"), "{stderr}");

    let (code, stderr) = refused(&["--listen", "here"], Some(SECRET));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.starts_with("error: --listen: "), "{stderr}");
    assert!(!stderr.contains(SECRET));
}
