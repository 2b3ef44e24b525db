//! `jobq autoscale` on every store, as the real binary against a queue set up through the library:
//! ten runs of two seconds finished half a minute ago and a backlog of a hundred ready jobs. With a
//! target latency of 30 s and two jobs per worker the formula asks for
//! ceil((110/300 s × 2 s + 100 × 2 s / 30 s) / 2) = ceil(3.7) = 4 workers; `--once --print` prints
//! that, and `--exec` hands it to a script, then 12 once 200 more jobs wait (ceil((310/300 × 2 +
//! 300 × 2 / 30) / 2) = ceil(11.03)), and nothing in between or after while the figure stays. The
//! script records what it got in a file the test waits on; nothing sleeps.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use jobq::job::{JobSpec, Limits, NewJob};
use jobq::store::{Claim, DynStore, Finish, Lease, Transition};
use jobq::time::UnixMillis;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::process::{Process, jobq};
use crate::support::{TestStore, eventually, lazy, store_tests};

store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores every_store
    cases {
        once_print_prints_the_workers_a_backlog_needs,
        exec_runs_the_program_whenever_the_figure_changes,
    }
}

/// The scaling flags every run shares.
const POLICY: [&str; 10] = [
    "--queue",
    "work",
    "--min",
    "1",
    "--max",
    "20",
    "--target-latency",
    "30s",
    "--concurrency",
    "2",
];

fn job(now: UnixMillis, run_at: UnixMillis) -> NewJob {
    let spec = JobSpec::new("x", Value::Null).queue("work").run_at(run_at);
    NewJob::validate(spec, now, &Limits::default()).expect("a valid job")
}

/// Ten runs of 2 s that finished 28 s ago, and `backlog` ready jobs.
async fn busy_queue(store: &DynStore, backlog: usize) {
    let now = UnixMillis::now();
    let ago = |secs: u64| now.minus(Duration::from_secs(secs));
    for _ in 0..10 {
        store.enqueue(&[job(now, ago(40))]).await.unwrap();
        let claim = Claim {
            queues: vec!["work".into()],
            exclude_types: Vec::new(),
            worker: "w".into(),
            limit: 1,
            now: ago(30),
            flow: Default::default(),
        };
        let ran = store.claim(&claim).await.unwrap();
        let finish = Finish {
            lease: Lease::of(&ran[0]),
            outcome: Transition::Succeeded { result: None },
            progress: None,
            spawn: Vec::new(),
        };
        assert_eq!(store.finish(&[finish], ago(28)).await.unwrap(), [true]);
    }
    add_backlog(store, backlog).await;
}

async fn add_backlog(store: &DynStore, n: usize) {
    let now = UnixMillis::now();
    let jobs: Vec<NewJob> = (0..n).map(|_| job(now, now.minus(Duration::from_secs(1)))).collect();
    store.enqueue(&jobs).await.unwrap();
}

fn autoscale(store: &TestStore, args: &[&str]) -> std::process::Output {
    jobq()
        .args(["--url", store.url(), "autoscale"])
        .args(POLICY)
        .args(args)
        .output()
        .expect("running jobq autoscale")
}

async fn once_print_prints_the_workers_a_backlog_needs(store: TestStore) {
    busy_queue(store.store(), 100).await;
    let out = autoscale(&store, &["--once", "--print"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "4\n", "{stderr}");

    let out = autoscale(&store, &["--once", "--print", "-o", "json"]);
    let estimate: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(estimate["workers"], 4, "{estimate}");
    assert_eq!(estimate["queue"], "work");
    let load = &estimate["load"];
    assert_eq!(
        (
            load["arrived"].as_u64(),
            load["finished"].as_u64(),
            load["ready"].as_u64()
        ),
        (Some(110), Some(10), Some(100)),
        "{estimate}"
    );
    assert_eq!(load["busyMs"], 20_000, "{estimate}");
    assert_eq!(estimate["demand"]["meanRunTime"], 2000, "{estimate}");
}

/// A script that appends `$1 $JOBQ_DESIRED_WORKERS $JOBQ_QUEUE` to `scaled.txt` beside it.
fn recording_script(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("scale.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"$1 $JOBQ_DESIRED_WORKERS $JOBQ_QUEUE\" >> \"$(dirname \"$0\")/scaled.txt\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn recorded(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("scaled.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn exec_runs_the_program_whenever_the_figure_changes(store: TestStore) {
    busy_queue(store.store(), 100).await;
    let dir = TempDir::new().unwrap();
    let script = recording_script(dir.path());
    let mut cmd = jobq();
    cmd.args(["--url", store.url(), "autoscale"])
        .args(POLICY)
        .arg("--exec")
        .arg(&script)
        .args(["--interval", "50ms", "--cool-down", "0s"]);
    let scaler = Process::spawn(cmd, &dir.path().join("autoscale.log"));
    let wait = |lines: usize| {
        let dir = dir.path().to_path_buf();
        let scaler = &scaler;
        async move {
            eventually(
                format!("{lines} runs of the script"),
                Duration::from_secs(30),
                async || {
                    let got = recorded(&dir);
                    (got.len() >= lines)
                        .then_some(got.clone())
                        .ok_or_else(|| lazy(move || format!("{got:?}\n{}", scaler.log())))
                },
            )
            .await
        }
    };
    assert_eq!(wait(1).await, ["4 4 work"]);
    add_backlog(store.store(), 200).await;
    assert_eq!(wait(2).await, ["4 4 work", "12 12 work"]);
    scaler.assert_running();
    scaler.signal(libc::SIGTERM);
    assert!(scaler.exit(Duration::from_secs(20)).await.success(), "{}", scaler.log());
    assert_eq!(recorded(dir.path()).len(), 2, "no run while the figure stayed at 12");

    // Once: one evaluation, one run, then exit.
    std::fs::remove_file(dir.path().join("scaled.txt")).unwrap();
    let out = jobq()
        .args(["--url", store.url(), "autoscale"])
        .args(POLICY)
        .args(["--once", "--exec"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(recorded(dir.path()), ["12 12 work"]);
}
