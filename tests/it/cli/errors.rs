//! Failures every subcommand shares: store URL and configuration problems, bad usage, a closed pipe.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use super::Sandbox;

#[test]
fn an_unreachable_store_fails_quickly_on_one_line() {
    let env = Sandbox::new();
    // How long failing takes is measured by `cargo bench --bench timings`, not asserted here.
    let run = env.run(["--url", "sqlite:///proc/nope/jobs.db", "list"]);
    snap!("list", run);
    snap!(
        "enqueue",
        env.run(["--url", "sqlite:///proc/nope/jobs.db", "enqueue", "t"])
    );
    snap!("migrate", env.run(["--url", "sqlite:///proc/nope/jobs.db", "migrate"]));
    // A store file that is not a database.
    env.write("garbage.db", "this is not a SQLite file, not even close; ".repeat(100));
    snap!("not_a_database", env.run(["--url", "sqlite://garbage.db", "stats"]));
}

#[test]
fn a_bad_store_url_is_bad_usage_and_never_shows_the_password() {
    let env = Sandbox::new();
    for (name, url) in [
        ("unknown_scheme", "postgress://user:s3cret@db.example/jobs"),
        ("no_scheme", "jobs.db"),
        ("unparsable", "redis://:s3cret@[::1"),
        ("sqlite_without_path", "sqlite://"),
        ("sqlite_unknown_option", "sqlite://jobs.db?journal=wal"),
    ] {
        let run = env.run(["--url", url, "list"]);
        assert_eq!(run.code, 2, "{}", run.snapshot());
        assert!(
            !run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"),
            "{}",
            run.snapshot()
        );
        snap!(name, run);
    }
}

#[test]
fn a_url_without_slashes_never_shows_the_password() {
    let env = Sandbox::new();
    let run = env.run(["--url", "user:s3cret@db.example", "list"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(!run.stderr.contains("s3cret"), "{}", run.snapshot());
}

#[test]
fn a_missing_config_file_is_bad_usage() {
    let env = Sandbox::new();
    snap!("flag", env.run(["--config", "nope.toml", "list"]));
    let mut cmd = env.command(["list"]);
    cmd.env("JOBQ_CONFIG", "also-nope.toml");
    snap!("env", env.run_command(cmd));
}

#[test]
fn a_config_file_in_the_working_directory_is_read() {
    let env = Sandbox::new();
    env.write("jobq.toml", "url = \"sqlite://from-config.db\"\n");
    let mut cmd = env.command(["migrate"]);
    cmd.env_remove("JOBQ_URL");
    snap!("migrate", env.run_command(cmd));
    assert!(env.path().join("from-config.db").is_file());
    // Errors name the line they are on.
    env.write("jobq.toml", "url = \"sqlite://from-config.db\"\nurl_typo = 1\n");
    let mut cmd = env.command(["list"]);
    cmd.env_remove("JOBQ_URL");
    snap!("unknown_key", env.run_command(cmd));
    env.write(
        "jobq.toml",
        "url = \"sqlite://from-config.db\"\n\n[worker]\nconcurrency = \"eight\"\n",
    );
    let mut cmd = env.command(["list"]);
    cmd.env_remove("JOBQ_URL");
    snap!("bad_value", env.run_command(cmd));
}

#[test]
fn the_default_store_lives_in_the_data_directory() {
    let mut env = Sandbox::new();
    env.filter_ages();
    let mut cmd = env.command(["enqueue", "t"]);
    cmd.env_remove("JOBQ_URL");
    assert_eq!(env.run_command(cmd).code, 0);
    assert!(env.path().join("home/.local/share/jobq/jobs.db").is_file());
    let mut cmd = env.command(["stats"]);
    cmd.env_remove("JOBQ_URL");
    snap!("stats", env.run_command(cmd));
}

#[test]
fn bad_usage_is_one_line() {
    let env = Sandbox::new();
    snap!("unknown_flag", env.run(["list", "--bogus"]));
    snap!("unknown_subcommand", env.run(["lst"]));
    snap!("missing_value", env.run(["list", "--limit"]));
    snap!("quiet_and_verbose", env.run(["-q", "-v", "list"]));
    snap!("bad_output_env", {
        let mut cmd = env.command(["list"]);
        cmd.env("JOBQ_OUTPUT", "xml");
        env.run_command(cmd)
    });
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let env = Sandbox::new();
    // Enough output to fill any pipe buffer, so jobq is still writing when the reader goes away.
    let lines: String = (0..3000)
        .map(|i| format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "x".repeat(200)))
        .collect();
    env.write("many.ndjson", lines);
    env.ok(["enqueue", "--file", "many.ndjson", "--type", "bulk"]);
    for format in ["ndjson", "json", "table"] {
        let mut cmd = env.command(["list", "--limit", "3000", "-o", format]);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("running jobq");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        drop(stdout); // `| head -1`
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "-o {format}: {stderr}");
        assert!(stderr.is_empty(), "-o {format}: {stderr}");
    }
}
