//! `jobq doctor` and `jobq autoscale` refusing bad input: one line, exit 2, nothing changed (the
//! store file is not even created). Their findings and figures on every store are in
//! `tests/it/doctor.rs` and `tests/it/autoscale.rs`.

use super::Sandbox;

#[test]
fn doctor_refuses_bad_thresholds() {
    let env = Sandbox::new();
    snap!("duration", env.run(["doctor", "--ready-late", "soon"]));
    snap!("size", env.run(["doctor", "--wal-size", "huge"]));
    snap!("dead_letters", env.run(["doctor", "--dead-letters", "lots"]));
    assert!(!env.path().join("jobs.db").exists(), "nothing was opened");
}

#[test]
fn doctor_on_a_fresh_sqlite_store_is_healthy() {
    let env = Sandbox::new();
    snap!(env.run(["doctor"]));
}

#[test]
fn autoscale_refuses_bad_input() {
    let env = Sandbox::new();
    let base = ["autoscale", "--queue", "work", "--target-latency", "30s", "--print"];
    let with = |more: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(more);
        env.run(args)
    };
    snap!("min_over_max", with(&["--min", "5", "--max", "2"]));
    snap!("max_zero", with(&["--min", "0", "--max", "0"]));
    snap!("concurrency_zero", with(&["--max", "3", "--concurrency", "0"]));
    snap!("bad_duration", with(&["--max", "3", "--cool-down", "a while"]));
    snap!(
        "zero_latency",
        env.run([
            "autoscale",
            "--queue",
            "work",
            "--max",
            "3",
            "--target-latency",
            "0s",
            "--print"
        ])
    );
    snap!(
        "bad_queue",
        env.run([
            "autoscale",
            "--queue",
            "no spaces",
            "--max",
            "3",
            "--target-latency",
            "30s",
            "--print"
        ])
    );
    snap!(
        "missing_program",
        env.run([
            "autoscale",
            "--queue",
            "work",
            "--max",
            "3",
            "--target-latency",
            "30s",
            "--exec",
            "./nowhere.sh"
        ])
    );
    snap!(
        "no_action",
        env.run(["autoscale", "--queue", "work", "--max", "3", "--target-latency", "30s"])
    );
    snap!(
        "both_actions",
        env.run([
            "autoscale",
            "--queue",
            "work",
            "--max",
            "3",
            "--target-latency",
            "30s",
            "--print",
            "--exec",
            "./x"
        ])
    );
    for run in [
        with(&["--min", "5", "--max", "2"]),
        env.run(["autoscale", "--queue", "work", "--max", "3", "--target-latency", "30s"]),
    ] {
        assert_eq!(run.code, 2);
        run.assert_one_line_error();
    }
    assert!(!env.path().join("jobs.db").exists(), "nothing was opened");
}

#[test]
fn autoscale_once_print_on_an_empty_queue_prints_the_minimum() {
    let env = Sandbox::new();
    let run = env.run([
        "autoscale",
        "--queue",
        "work",
        "--min",
        "2",
        "--max",
        "5",
        "--target-latency",
        "30s",
        "--print",
        "--once",
    ]);
    assert_eq!((run.code, run.stdout.as_str()), (0, "2\n"), "{}", run.stderr);
}
