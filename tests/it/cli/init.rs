//! `jobq init`: a working, commented `jobq.toml` in the current folder; the two commands it prints
//! put a job through; an existing file is kept unless `--force`.

use crate::support::process::jobq;

#[test]
fn init_writes_a_config_whose_next_commands_run_a_job() {
    let dir = tempfile::tempdir().unwrap();
    let out = jobq().arg("init").current_dir(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("jobq enqueue hello '{\"name\":\"world\"}'"), "{said}");
    assert!(said.contains("  jobq worker"), "{said}");
    let written = std::fs::read_to_string(dir.path().join("jobq.toml")).unwrap();
    for kind in [
        "builtin = ",
        "# exec = ",
        "# http = ",
        "# publish = ",
        "[retry]",
        "[worker]",
    ] {
        assert!(written.contains(kind), "{kind} in\n{written}");
    }

    // The two commands it prints, as a newcomer runs them (the worker in burst mode, so it ends).
    let enqueued = jobq()
        .args(["enqueue", "hello", r#"{"name":"world"}"#])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        enqueued.status.success(),
        "{}",
        String::from_utf8_lossy(&enqueued.stderr)
    );
    let id = String::from_utf8_lossy(&enqueued.stdout).trim().to_string();
    let worked = jobq()
        .args(["worker", "--burst"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(worked.status.success(), "{}", String::from_utf8_lossy(&worked.stderr));
    let shown = jobq()
        .args(["show", &id, "-o", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let job: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(job["status"], "succeeded", "{job}");
    assert!(
        dir.path().join("jobs.db").is_file(),
        "the store is jobs.db beside the config"
    );
}

#[test]
fn init_keeps_an_existing_file_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobq.toml");
    std::fs::write(&path, "url = \"sqlite://mine.db\"\n").unwrap();
    let out = jobq().arg("init").current_dir(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "url = \"sqlite://mine.db\"\n");

    let forced = jobq()
        .args(["init", "--force"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert!(std::fs::read_to_string(&path).unwrap().contains("[handlers.\"hello\"]"));
}
