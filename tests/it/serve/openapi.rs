//! `/api/v1/openapi.json` kept true: schemathesis (from PyPI) generates requests for every operation
//! from the document, sends them to a running server, and checks each answer against the document
//! (documented status, content type and schema) and that nothing answers with a server error.
//!
//! The test installs schemathesis itself, once, in a virtualenv under the target directory (so a
//! plain `cargo test` on a fresh clone runs it); `JOBQ_TEST_SCHEMATHESIS` points at another copy. An
//! install that fails fails the test with the command to run by hand: it never passes silently.

use std::path::PathBuf;
use std::time::Duration;

use super::Api;
use crate::support::{sqlite_store, within};

/// A schedule, so that the schedule operations have one to act on.
const CONFIG: &str = r#"
[schedules.nightly]
every = "1h"
type = "report.build"
"#;

/// The schemathesis release the test installs.
const SCHEMATHESIS: &str = "schemathesis==4.32.5";

/// `JOBQ_TEST_SCHEMATHESIS`, or the copy in `<target dir>/schemathesis`, installed there first when
/// missing.
fn schemathesis() -> PathBuf {
    if let Some(path) = std::env::var_os("JOBQ_TEST_SCHEMATHESIS") {
        return PathBuf::from(path);
    }
    // The jobq binary is <target dir>/<profile>/jobq.
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_jobq"));
    let target = binary.parent().and_then(|p| p.parent()).expect("the target directory");
    let venv = target.join("schemathesis");
    let program = venv.join("bin/schemathesis");
    if program.is_file() {
        return program;
    }
    let by_hand = format!(
        "python3 -m venv {dir} && {dir}/bin/pip install '{SCHEMATHESIS}'",
        dir = venv.display()
    );
    let run = |cmd: &mut std::process::Command| {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("installing schemathesis: {e}; run `{by_hand}`"));
        assert!(
            out.status.success(),
            "installing schemathesis failed ({}); run `{by_hand}`, or point JOBQ_TEST_SCHEMATHESIS at a copy:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let _ = std::fs::remove_dir_all(&venv);
    run(std::process::Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(std::process::Command::new(venv.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        SCHEMATHESIS,
    ]));
    program
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_server_keeps_to_its_openapi_document() {
    let program = schemathesis();
    let store = sqlite_store().await;
    let api = Api::start_with(&store, CONFIG, &[]).await;
    let (status, document) = api.get("/api/v1/openapi.json").await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(document["openapi"], "3.1.0");
    let paths: Vec<&String> = document["paths"]
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    assert!(paths.len() >= 20, "every route is described: {paths:?}");

    assert!(
        program.is_file(),
        "schemathesis is not at {}: point JOBQ_TEST_SCHEMATHESIS at its executable",
        program.display()
    );
    let work = tempfile::tempdir().unwrap();
    let mut report = String::new();
    // CPython 3.11 before 3.11.8 (this machine's) can fail to parse a source file when hypothesis
    // describes a filter (python/cpython#106905, "AST constructor recursion depth mismatch"): a crash
    // of the generator, not an answer of ours, so such a run is tried again.
    for _ in 0..3 {
        let mut cmd = tokio::process::Command::new(&program);
        cmd.arg("run")
            .arg(format!("http://{}/api/v1/openapi.json", api.addr()))
            .args(["--url", &format!("http://{}", api.addr())])
            .args([
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection",
            ])
            .args(["--phases", "examples,coverage,fuzzing"])
            .args(["--max-examples", "25", "--seed", "17", "--workers", "1"])
            .args(["--request-timeout", "30"])
            .env("NO_COLOR", "1")
            .env("HOME", work.path())
            .current_dir(work.path())
            .kill_on_drop(true);
        let out = within("schemathesis", Duration::from_secs(600), cmd.output())
            .await
            .expect("running schemathesis");
        // Its tracebacks quote whole source files on one line: keep the lines a person reads.
        report = [out.stdout, out.stderr]
            .iter()
            .flat_map(|o| {
                String::from_utf8_lossy(o)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|l| l.len() < 400)
            .collect::<Vec<_>>()
            .join("\n");
        if out.status.success() {
            return;
        }
        if !report.contains("AST constructor recursion depth mismatch") {
            break;
        }
    }
    panic!("schemathesis found answers that break the document:\n{report}");
}
