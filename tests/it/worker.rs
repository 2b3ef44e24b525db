//! The worker end to end on every store: real `jobq worker` processes with temp dirs of their own, exec
//! handlers as small shell scripts, http handlers against a server inside the test, and the library
//! runtime with Rust handlers. Every wait is for a condition (`support::eventually`); none is a fixed
//! sleep, and none asserts how fast anything happened (`cargo bench --bench timings` measures that).

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobq::Client;
use jobq::handler::{Outcome, handler_fn};
use jobq::job::{DependOn, Job, JobId, JobSpec, JobStatus, Spawn};
use jobq::worker::{HandlerOptions, Reload, StopCause, Worker};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod dag;
mod flags;
mod flow;
mod persistent;
mod unique;

use crate::support::process::{self, FAST, Process};
use crate::support::{TestStore, eventually, lazy, stop_worker, store_tests};

/// `secs` seconds, for the bounds of waits.
fn secs(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

/// One test's world: a fresh store of its own, a temp dir with a config file, scripts and logs, and a
/// client on the store.
struct World {
    dir: TempDir,
    config: PathBuf,
    client: Client,
    store: TestStore,
}

impl World {
    /// A world on `store` with a config made of `config` (TOML after the `url` line).
    async fn new(store: TestStore, config: &str) -> World {
        let dir = tempfile::Builder::new().prefix("jobq-worker-").tempdir().unwrap();
        let config_path = dir.path().join("jobq.toml");
        let client = Client::new(store.store().clone());
        let world = World {
            dir,
            config: config_path,
            client,
            store,
        };
        world.write_config(config);
        world
    }

    /// Replaces the config file with the store's `url` line followed by `config`, writing it in place.
    fn write_config(&self, config: &str) {
        std::fs::write(&self.config, self.config_text(config)).unwrap();
    }

    /// Replaces the config file as most editors save one: a new file renamed over the old.
    fn replace_config(&self, config: &str) {
        let new = self.path("jobq.toml.new");
        std::fs::write(&new, self.config_text(config)).unwrap();
        std::fs::rename(&new, &self.config).unwrap();
    }

    fn config_text(&self, config: &str) -> String {
        let url = toml::Value::String(self.store.url().to_string());
        format!("url = {url}\n{config}")
    }

    /// Adds to the config file an exec handler for `job_type`, a script `JOB_TYPE.sh` of `body` (see
    /// [`World::script`]), with `extra` settings.
    fn exec_handler(&self, job_type: &str, body: &str, extra: &str) {
        let script = self.script(&format!("{job_type}.sh"), body);
        let config = std::fs::read_to_string(&self.config).unwrap();
        let handler = format!("[handlers.{job_type}]\nexec = [\"{}\"]\n{extra}", script.display());
        std::fs::write(&self.config, format!("{config}\n{handler}")).unwrap();
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes an executable shell script and returns its path. The script finds this world's folder
    /// (for the files it leaves for the test) in `$D`.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path(name);
        let dir = self.dir.path().display();
        std::fs::write(&path, format!("#!/bin/sh\nD='{dir}'\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A `jobq` command on this world's database and config, logging at debug level.
    fn jobq(&self, args: &[&str]) -> Command {
        let mut cmd = process::jobq();
        cmd.arg("--url")
            .arg(self.store.url())
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .current_dir(self.dir.path())
            .env("JOBQ_LOG", "jobq=debug")
            .stdout(Stdio::piped());
        cmd
    }

    /// Starts `jobq worker ARGS…`, its log in `NAME.log`.
    fn worker(&self, name: &str, args: &[&str]) -> Process {
        let mut all = vec!["worker", "--name", name];
        all.extend_from_slice(args);
        Process::spawn(self.jobq(&all), &self.path(&format!("{name}.log")))
    }

    /// Runs a `jobq` command to its end: exit code, stdout, stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let log = self.path("cmd.log");
        let out = self
            .jobq(args)
            .stderr(std::fs::File::create(&log).unwrap())
            .output()
            .unwrap();
        let err = std::fs::read_to_string(&log).unwrap_or_default();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            err,
        )
    }

    async fn enqueue(&self, spec: JobSpec) -> JobId {
        self.client.enqueue(spec).await.unwrap().id
    }

    async fn job(&self, id: &JobId) -> Job {
        self.client.get(id.as_str()).await.unwrap()
    }

    /// Waits until the job satisfies `done`, failing with the job and the worker logs after `timeout`.
    async fn wait_job(&self, id: &JobId, timeout: Duration, what: &str, done: impl Fn(&Job) -> bool) -> Job {
        eventually(what, timeout, async || {
            let job = self.job(id).await;
            if done(&job) {
                Ok(job)
            } else {
                Err(lazy(move || format!("job is {}\n{}", json!(job), self.logs())))
            }
        })
        .await
    }

    async fn wait_status(&self, id: &JobId, status: JobStatus, timeout: Duration) -> Job {
        self.wait_job(id, timeout, &format!("status {status}"), |j| j.status == status)
            .await
    }

    /// Every log file of this world, for failure messages.
    fn logs(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.dir.path()).unwrap().flatten() {
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "log") {
                out.push_str(&format!(
                    "--- {}\n{}\n",
                    p.display(),
                    std::fs::read_to_string(&p).unwrap_or_default()
                ));
            }
        }
        out
    }
}

/// True while a process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// Reads a pid a script wrote, waiting for the file to appear.
async fn read_pid(path: &Path, timeout: Duration) -> i32 {
    eventually(format!("{} to appear", path.display()), timeout, async || {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    })
    .await
}

/// Waits until none of `pids` is alive.
async fn wait_dead(pids: &[i32], timeout: Duration) {
    eventually("the processes to end", timeout, async || {
        let living: Vec<&i32> = pids.iter().filter(|p| alive(**p)).collect();
        if living.is_empty() {
            Ok(())
        } else {
            Err(format!("still alive: {living:?}"))
        }
    })
    .await
}

fn last_error(job: &Job) -> &str {
    job.errors.last().map(|e| e.error.as_str()).unwrap_or("")
}

/// When the worker recorded the job's last failure (Unix ms): a retry's delay counts from there.
fn failed_at(job: &Job) -> i64 {
    job.errors.last().expect("a failed attempt").at.0
}

async fn every_exec_outcome_follows_the_protocol(store: TestStore) {
    let world = World::new(store, FAST).await;
    let script = world.script(
        "outcome.sh",
        r#"input=$(cat)
case "$JOBQ_JOB_TYPE" in
  o.success) echo "working"; echo "::progress 50 halfway"; echo "::result {\"attempt\":$JOBQ_ATTEMPT,\"max\":$JOBQ_MAX_ATTEMPTS,\"queue\":\"$JOBQ_QUEUE\"}"; exit 0 ;;
  o.stdin) case "$input" in *"\"jobId\":\"$JOBQ_JOB_ID\""*"\"attempt\":1"*) exit 0 ;; *) echo "bad stdin: $input"; exit 65 ;; esac ;;
  o.retry) echo "temporary trouble"; echo "::retry-after 1h"; exit 75 ;;
  o.fail) echo "bad data" >&2; exit 65 ;;
  o.discard) echo "::discard obsolete order"; exit 0 ;;
  o.wait) echo "::wait"; exit 0 ;;
  o.crash) echo "something broke"; exit 3 ;;
  o.signal) kill -9 $$ ;;
esac"#,
    );
    world.write_config(&format!(
        "{FAST}\n[handlers.\"*\"]\nexec = [\"{}\"]\n",
        script.display()
    ));
    let mut ids = BTreeMap::new();
    for t in [
        "o.success",
        "o.stdin",
        "o.retry",
        "o.fail",
        "o.discard",
        "o.wait",
        "o.crash",
        "o.signal",
    ] {
        ids.insert(
            t,
            world.enqueue(JobSpec::new(t, json!({"n": 1})).queue("default")).await,
        );
    }
    let worker = world.worker("w", &["--burst"]);
    let status = worker.exit(secs(20)).await;
    assert!(status.success(), "{status:?}\n{}", worker.log());

    let success = world.job(&ids["o.success"]).await;
    assert_eq!(success.status, JobStatus::Succeeded, "{}", json!(success));
    assert_eq!(
        success.result.as_ref().map(|r| r.get()),
        Some(r#"{"attempt":1,"max":5,"queue":"default"}"#)
    );
    assert_eq!(
        success.progress.as_ref().map(|p| p.percent),
        Some(50),
        "progress reached the store"
    );

    assert_eq!(
        world.job(&ids["o.stdin"]).await.status,
        JobStatus::Succeeded,
        "{}",
        world.logs()
    );

    let retry = world.job(&ids["o.retry"]).await;
    assert_eq!(
        (retry.status, retry.attempt, last_error(&retry)),
        (JobStatus::Pending, 1, "temporary trouble")
    );
    // From the failure the worker recorded, not from whenever this test looks.
    let delay = retry.run_at.0 - failed_at(&retry);
    assert!(
        (3_590_000..=3_600_000).contains(&delay),
        "::retry-after 1h honoured: {delay}ms"
    );

    let fail = world.job(&ids["o.fail"]).await;
    assert_eq!((fail.status, last_error(&fail)), (JobStatus::Dead, "bad data"));

    let discard = world.job(&ids["o.discard"]).await;
    assert_eq!(
        (discard.status, last_error(&discard)),
        (JobStatus::Discarded, "obsolete order")
    );

    assert_eq!(world.job(&ids["o.wait"]).await.status, JobStatus::Waiting);

    let crash = world.job(&ids["o.crash"]).await;
    assert_eq!(
        (crash.status, last_error(&crash)),
        (JobStatus::Pending, "exited with code 3: something broke")
    );

    let signal = world.job(&ids["o.signal"]).await;
    assert_eq!(signal.status, JobStatus::Pending);
    assert!(
        last_error(&signal).starts_with("killed by signal 9 (SIGKILL)"),
        "{}",
        last_error(&signal)
    );

    let log = worker.log();
    for (t, id) in [("o.retry", &ids["o.retry"]), ("o.fail", &ids["o.fail"])] {
        assert!(
            log.lines().any(|l| l.contains(id.as_str()) && l.contains(t)),
            "one log line names {t}:\n{log}"
        );
    }
}

async fn retries_back_off_exponentially_then_die(store: TestStore) {
    let world = World::new(store, &format!("{FAST}\nmultiplier = 3.0\n")).await;
    // The type's max_attempts wins over the default the job was enqueued with.
    let flaky = "echo \"attempt $JOBQ_ATTEMPT failed\"; exit 75";
    world.exec_handler("flaky", flaky, "max_attempts = 3\n");
    let id = world.enqueue(JobSpec::new("flaky", json!({}))).await;
    let _worker = world.worker("w", &[]);
    let job = world.wait_status(&id, JobStatus::Dead, secs(20)).await;
    assert_eq!(job.attempt, 3);
    let errors: Vec<&str> = job.errors.iter().map(|e| e.error.as_str()).collect();
    assert_eq!(errors, vec!["attempt 1 failed", "attempt 2 failed", "attempt 3 failed"]);
    // Delays of 100 ms then 300 ms (base 100 ms × 3^(attempt-1), no jitter): an attempt never comes
    // before its delay is over. How much later it comes (a poll interval and a process start, which a
    // loaded machine stretches) is measured by `cargo bench --bench timings`, not asserted here.
    let gaps: Vec<i64> = job.errors.windows(2).map(|w| w[1].at.0 - w[0].at.0).collect();
    assert!(gaps[0] >= 100, "first back-off {gaps:?}");
    assert!(gaps[1] >= 300, "second back-off {gaps:?}");
}

async fn a_job_of_an_unknown_type_goes_dead_at_once(store: TestStore) {
    let world = World::new(store, &format!("{FAST}\n[handlers.known]\nbuiltin = \"noop\"\n")).await;
    let unknown = world.enqueue(JobSpec::new("nobody.serves.this", json!({}))).await;
    let known = world.enqueue(JobSpec::new("known", json!({}))).await;
    let worker = world.worker("w", &["--burst"]);
    assert!(worker.exit(secs(20)).await.success(), "{}", worker.log());
    let job = world.job(&unknown).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Dead, 1));
    assert_eq!(last_error(&job), "unregistered job type: nobody.serves.this");
    assert_eq!(world.job(&known).await.status, JobStatus::Succeeded);

    // A worker with no handlers at all refuses to start rather than kill every job.
    world.write_config(FAST);
    let (code, _, err) = world.run(&["worker", "--burst"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no handlers are configured"), "{err}");
}

async fn cancelling_a_running_exec_job_kills_its_process_group(store: TestStore) {
    let world = World::new(store, FAST).await;
    let long = "sleep 300 &\necho $! > $D/child.pid\necho $$ > $D/parent.pid\nwait";
    world.exec_handler("long", long, "");
    let id = world.enqueue(JobSpec::new("long", json!({}))).await;
    let worker = world.worker("w", &[]);
    let parent = read_pid(&world.path("parent.pid"), secs(20)).await;
    let child = read_pid(&world.path("child.pid"), secs(20)).await;
    assert!(alive(parent) && alive(child));
    let report = world.client.cancel(&[id.to_string()]).await.unwrap();
    assert_eq!(report.cancelled.len(), 1);
    wait_dead(&[parent, child], secs(10)).await;
    worker.wait_log("job cancelled", secs(10)).await;
    let job = world.job(&id).await;
    assert_eq!(job.status, JobStatus::Cancelled, "the job stays cancelled");
}

async fn a_forced_delete_of_a_running_exec_job_stops_it_and_drops_its_outcome(store: TestStore) {
    let world = World::new(store, FAST).await;
    let long = "sleep 300 &\necho $! > $D/child.pid\necho $$ > $D/parent.pid\nwait";
    world.exec_handler("long", long, "");
    let id = world.enqueue(JobSpec::new("long", json!({}))).await;
    let worker = world.worker("w", &[]);
    let parent = read_pid(&world.path("parent.pid"), secs(20)).await;
    let child = read_pid(&world.path("child.pid"), secs(20)).await;
    world.wait_status(&id, JobStatus::Running, secs(20)).await;
    let (code, _, err) = world.run(&["delete", id.as_str()]);
    assert_eq!(code, 2, "refused without --force: {err}");
    assert!(alive(parent) && alive(child));
    let (code, out, err) = world.run(&["delete", id.as_str(), "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(was running)"), "{out}");
    wait_dead(&[parent, child], secs(10)).await;
    worker.wait_log("lease lost", secs(10)).await;
    assert!(
        world.client.get(id.as_str()).await.is_err(),
        "the dropped outcome did not bring it back"
    );
}

async fn a_time_out_kills_the_group_even_when_it_ignores_sigterm(store: TestStore) {
    let world = World::new(store, FAST).await;
    // `trap '' TERM` is inherited by the background sleep: only SIGKILL ends them.
    let stubborn =
        "trap '' TERM\nsleep 300 &\necho $! > $D/$JOBQ_JOB_ID.child\necho $$ > $D/$JOBQ_JOB_ID.parent\nwait\nwait";
    world.exec_handler("stubborn", stubborn, "timeout = \"1s\"\nmax_attempts = 1\n");
    let by_type = world.enqueue(JobSpec::new("stubborn", json!({})).id("by-type")).await;
    // A job's own time-out wins over its type's.
    let by_job = world
        .enqueue(
            JobSpec::new("stubborn", json!({}))
                .id("by-job")
                .timeout(Duration::from_millis(300)),
        )
        .await;
    let _worker = world.worker("w", &["--kill-grace", "300ms"]);
    let mut pids = Vec::new();
    for id in ["by-type", "by-job"] {
        pids.push(read_pid(&world.path(&format!("{id}.parent")), secs(20)).await);
        pids.push(read_pid(&world.path(&format!("{id}.child")), secs(20)).await);
    }
    let job = world.wait_status(&by_type, JobStatus::Dead, secs(20)).await;
    assert!(
        last_error(&job).starts_with("timed out after 1s"),
        "{}",
        last_error(&job)
    );
    let job = world.wait_status(&by_job, JobStatus::Dead, secs(20)).await;
    assert!(
        last_error(&job).starts_with("timed out after 300ms"),
        "{}",
        last_error(&job)
    );
    wait_dead(&pids, secs(10)).await;
}

async fn sigterm_releases_running_jobs_without_using_an_attempt(store: TestStore) {
    let world = World::new(store, FAST).await;
    world.exec_handler("slow", "echo $$ > $D/$JOBQ_JOB_ID.pid\nexec sleep 300", "");
    let a = world.enqueue(JobSpec::new("slow", json!({})).id("a")).await;
    let b = world.enqueue(JobSpec::new("slow", json!({})).id("b")).await;
    let worker = world.worker("w", &[]);
    let pids = [
        read_pid(&world.path("a.pid"), secs(20)).await,
        read_pid(&world.path("b.pid"), secs(20)).await,
    ];
    worker.signal(libc::SIGTERM);
    let status = worker.exit(secs(15)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log());
    wait_dead(&pids, secs(5)).await;
    for id in [&a, &b] {
        let job = world.job(id).await;
        assert_eq!(
            (job.status, job.attempt, job.errors.len()),
            (JobStatus::Pending, 0, 0),
            "{}",
            json!(job)
        );
        assert_eq!(job.worker_id, None);
    }
    assert!(worker.log().contains("released to pending"), "{}", worker.log());
    let workers = world.client.workers(Duration::from_secs(3600)).await.unwrap();
    assert!(workers.is_empty(), "the worker left the registry: {workers:?}");
}

async fn a_killed_workers_job_is_rescued_and_completed_by_another(store: TestStore) {
    let world = World::new(store,
        "[worker]\nheartbeat = \"200ms\"\nstale_after = \"1s\"\npoll_interval = \"50ms\"\nshutdown_timeout = \"500ms\"\n",
    )
    .await;
    let once = "if [ \"$JOBQ_ATTEMPT\" = 1 ]; then echo $$ > $D/first.pid; exec sleep 300; fi\n\
                echo \"::result {\\\"attempt\\\":$JOBQ_ATTEMPT}\"";
    world.exec_handler("once", once, "");
    let id = world.enqueue(JobSpec::new("once", json!({}))).await;
    let first = world.worker("first", &[]);
    let orphan = read_pid(&world.path("first.pid"), secs(20)).await;
    first.signal(libc::SIGKILL);
    first.exit(secs(5)).await;
    // kill -9 gives the worker no chance to stop its program (a supervisor's cgroup would); this
    // test stands in for it.
    unsafe {
        libc::kill(orphan, libc::SIGKILL);
    }
    let second = world.worker("second", &[]);
    let job = world.wait_status(&id, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(job.attempt, 2);
    assert_eq!(job.result.as_ref().map(|r| r.get()), Some(r#"{"attempt":2}"#));
    assert_eq!(last_error(&job), "worker lost");
    second.wait_log("rescued a job from a lost worker", secs(10)).await;
    assert!(
        second
            .log()
            .lines()
            .any(|l| l.contains("rescued") && l.contains(id.as_str()) && l.contains("once"))
    );
}

async fn three_workers_run_each_of_a_thousand_jobs_exactly_once(store: TestStore) {
    let world = World::new(store, FAST).await;
    let runs = world.path("runs.txt");
    world.exec_handler("rec", "echo \"$JOBQ_JOB_ID\" >> $D/runs.txt", "");
    let specs: Vec<JobSpec> = (0..1000).map(|i| JobSpec::new("rec", json!({ "i": i }))).collect();
    let ids: HashSet<String> = world
        .client
        .enqueue_many(specs)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id.to_string())
        .collect();
    let workers: Vec<Process> = (0..3)
        .map(|i| world.worker(&format!("w{i}"), &["--burst", "--concurrency", "8"]))
        .collect();
    for w in &workers {
        let status = w.exit(secs(120)).await;
        assert!(status.success(), "{}", w.log());
    }
    let text = std::fs::read_to_string(&runs).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let ran: HashSet<String> = lines.iter().map(|l| l.to_string()).collect();
    assert_eq!(lines.len(), 1000, "runs recorded");
    assert_eq!(ran, ids, "every job ran, none twice");
    let stats = world.client.stats(&[]).await.unwrap();
    assert_eq!(stats.queues[0].succeeded, 1000, "{stats:?}");
}

/// Every job of the world's store (up to 10,000), newest first.
async fn all_jobs(world: &World) -> Vec<Job> {
    let list = jobq::store::List {
        filter: Default::default(),
        limit: 10_000,
        offset: 0,
        after: None,
    };
    world.client.list(&list).await.unwrap()
}

/// The `scheduledFor` of every job the schedule `beat` enqueued, oldest first.
async fn beat_ticks(world: &World) -> Vec<i64> {
    ticks_of(world, "beat").await
}

/// The `scheduledFor` of every job the schedule `name` enqueued, oldest first.
async fn ticks_of(world: &World, name: &str) -> Vec<i64> {
    let jobs = all_jobs(world).await;
    let mut ticks: Vec<i64> = jobs
        .iter()
        .filter(|j| j.meta.get("schedule").map(String::as_str) == Some(name))
        .map(|j| jobq::time::parse_instant_str(&j.meta["scheduledFor"]).unwrap().0)
        .collect();
    ticks.sort();
    ticks
}

async fn three_workers_enqueue_every_tick_once_through_a_kill_and_a_restart(store: TestStore) {
    let world = World::new(store,
        "[worker]\nheartbeat = \"200ms\"\nstale_after = \"1s\"\npoll_interval = \"50ms\"\nshutdown_timeout = \"500ms\"\n\
         [handlers.tick]\nbuiltin = \"noop\"\n[schedules.beat]\nevery = \"1s\"\ntype = \"tick\"\n",
    )
    .await;
    let a = world.worker("a", &[]);
    let b = world.worker("b", &[]);
    let c = world.worker("c", &[]);
    let ticks_reach = async |n: usize| {
        eventually(format!("{n} ticks enqueued"), secs(90), async || {
            let got = beat_ticks(&world).await.len();
            if got >= n { Ok(()) } else { Err(format!("{got} ticks")) }
        })
        .await
    };
    ticks_reach(8).await;
    a.signal(libc::SIGKILL);
    a.exit(secs(5)).await;
    ticks_reach(16).await;
    b.signal(libc::SIGTERM);
    assert!(b.exit(secs(10)).await.success(), "{}", b.log());
    let b2 = world.worker("b2", &[]);
    ticks_reach(32).await;
    for w in [&c, &b2] {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
    let ticks = beat_ticks(&world).await;
    assert!(ticks.len() >= 32, "{} ticks", ticks.len());
    // Every second from the first tick to the last, once: no tick skipped, none twice, through a
    // kill -9 and a restart.
    let expected: Vec<i64> = (0..ticks.len() as i64).map(|n| ticks[0] + n * 1_000).collect();
    assert_eq!(ticks, expected, "one job per tick, every tick");
}

/// Waits until the wall clock has passed `until` (the scenario is elapsed time itself: workers that
/// stay down, a pause that lasts).
async fn wall_clock_passes(until: jobq::time::UnixMillis) {
    eventually(format!("the clock to pass {until}"), secs(60), async || {
        jobq::time::UnixMillis::now() > until
    })
    .await;
}

const EVERY_SECOND: &str = "[handlers.tick]\nbuiltin = \"noop\"\n\
    [schedules.latest]\nevery = \"1s\"\ntype = \"tick\"\n\
    [schedules.window]\nevery = \"1s\"\ntype = \"tick\"\ncatch_up = \"5s\"\n\
    [schedules.none]\nevery = \"1s\"\ntype = \"tick\"\ncatch_up = \"0s\"\n";

async fn missed_ticks_follow_catch_up_after_every_worker_was_down(store: TestStore) {
    let world = World::new(store, &format!("{FAST}{EVERY_SECOND}")).await;
    let first = world.worker("first", &[]);
    for name in ["latest", "window", "none"] {
        eventually(format!("two ticks of {name}"), secs(60), async || {
            ticks_of(&world, name).await.len() >= 2
        })
        .await;
    }
    first.signal(libc::SIGTERM);
    assert!(first.exit(secs(10)).await.success(), "{}", first.log());
    let stopped = jobq::time::UnixMillis::now();
    let last_before: Vec<i64> = {
        let mut out = Vec::new();
        for name in ["latest", "window", "none"] {
            out.push(*ticks_of(&world, name).await.last().unwrap());
        }
        out
    };
    // Every worker down for ten seconds.
    wall_clock_passes(stopped.plus(secs(10))).await;
    let restarted = jobq::time::UnixMillis::now();
    let second = world.worker("second", &[]);
    for name in ["latest", "window", "none"] {
        eventually(format!("a tick of {name} after the restart"), secs(60), async || {
            ticks_of(&world, name).await.last().is_some_and(|&t| t > restarted.0)
        })
        .await;
    }
    second.signal(libc::SIGTERM);
    assert!(second.exit(secs(10)).await.success(), "{}", second.log());
    // What each catch-up rule enqueued of the gap, as the worker reports it and as the store holds it.
    let log = second.log();
    let reported = |name: &str| -> usize {
        let line = log
            .lines()
            .find(|l| l.contains("ticks were missed") && l.contains(&format!("schedule={name} ")))
            .unwrap_or_else(|| panic!("no catch-up line for {name} in {log}"));
        let field = line.split("enqueued=").nth(1).unwrap();
        field
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Ticks from the gap that can only have been missed ones: at least a second before the restart.
    let from_gap = async |n: usize, name: &str| -> usize {
        ticks_of(&world, name)
            .await
            .into_iter()
            .filter(|&t| t > last_before[n] && t <= restarted.0 - 1_000)
            .count()
    };
    assert_eq!(reported("latest"), 1, "{log}");
    assert_eq!(
        from_gap(0, "latest").await,
        0,
        "only the newest missed tick, which is within the last second"
    );
    let window = reported("window");
    assert!((4..=6).contains(&window), "catch_up = 5s enqueued {window}: {log}");
    let window_in_store = from_gap(1, "window").await;
    assert!(
        (3..=6).contains(&window_in_store),
        "{window_in_store} ticks of the 5 s window"
    );
    assert_eq!(reported("none"), 0, "{log}");
    assert_eq!(from_gap(2, "none").await, 0);
    // Whatever was caught up, no tick twice.
    for name in ["latest", "window", "none"] {
        let ticks = ticks_of(&world, name).await;
        let mut unique = ticks.clone();
        unique.dedup();
        assert_eq!(ticks, unique, "{name}");
    }
}

async fn overlap_skip_never_lets_two_ticks_jobs_live_at_once(store: TestStore) {
    let world = World::new(
        store,
        &format!("{FAST}[schedules.slow]\nevery = \"1s\"\ntype = \"slow\"\noverlap = \"skip\"\n"),
    )
    .await;
    world.exec_handler("slow", "sleep 2.5", "");
    let worker = world.worker("w", &[]);
    eventually("three of its jobs to finish", secs(90), async || {
        let jobs = all_jobs(&world).await;
        jobs.iter().filter(|j| j.status == JobStatus::Succeeded).count() >= 3
    })
    .await;
    worker.signal(libc::SIGTERM);
    assert!(worker.exit(secs(20)).await.success(), "{}", worker.log());
    let mut jobs = all_jobs(&world).await;
    jobs.sort_by_key(|j| j.created_at);
    // Each tick's job was created only once the one before it had finished.
    for pair in jobs.windows(2) {
        let finished = pair[0]
            .finished_at
            .unwrap_or_else(|| panic!("{:?} still alive when {:?} was enqueued", pair[0], pair[1]));
        assert!(pair[1].created_at >= finished, "{:?} overlaps {:?}", pair[0], pair[1]);
    }
    let first = jobq::time::parse_instant_str(&jobs[0].meta["scheduledFor"]).unwrap();
    let last = jobq::time::parse_instant_str(&jobs[jobs.len() - 1].meta["scheduledFor"]).unwrap();
    let ticks = (last.0 - first.0) / 1_000 + 1;
    assert!(
        (jobs.len() as i64) < ticks,
        "ticks were skipped: {} jobs for {ticks} ticks",
        jobs.len()
    );
}

async fn a_schedule_paused_through_the_cli_stops_within_a_second_and_resumes(store: TestStore) {
    let world = World::new(
        store,
        &format!("{FAST}[handlers.tick]\nbuiltin = \"noop\"\n[schedules.beat]\nevery = \"1s\"\ntype = \"tick\"\n"),
    )
    .await;
    let worker = world.worker("w", &[]);
    eventually("two ticks", secs(60), async || beat_ticks(&world).await.len() >= 2).await;
    let (code, _, err) = world.run(&["schedules", "pause", "beat"]);
    assert_eq!(code, 0, "{err}");
    let paused = jobq::time::UnixMillis::now();
    wall_clock_passes(paused.plus(secs(3))).await;
    let late: Vec<i64> = beat_ticks(&world)
        .await
        .into_iter()
        .filter(|&t| t > paused.0 + 1_000)
        .collect();
    assert!(
        late.is_empty(),
        "ticks enqueued more than a second after the pause: {late:?}"
    );
    let (code, _, err) = world.run(&["schedules", "resume", "beat"]);
    assert_eq!(code, 0, "{err}");
    let resumed = jobq::time::UnixMillis::now();
    eventually("a tick after the resume", secs(30), async || {
        beat_ticks(&world).await.last().is_some_and(|&t| t > resumed.0)
    })
    .await;
    // The ticks of the pause were skipped, not caught up.
    let during: Vec<i64> = beat_ticks(&world)
        .await
        .into_iter()
        .filter(|&t| t > paused.0 + 1_000 && t <= resumed.0)
        .collect();
    assert!(during.is_empty(), "ticks of the pause were enqueued: {during:?}");
    worker.signal(libc::SIGTERM);
    assert!(worker.exit(secs(10)).await.success(), "{}", worker.log());
}

async fn an_emitted_event_runs_every_subscribed_job_once(store: TestStore) {
    let world = World::new(store, &format!(
        "{FAST}[events.\"user.registered\"]\njobs = [{{ type = \"welcome\" }}, {{ type = \"crm\", queue = \"crm\" }}]\n"
    ))
    .await;
    let record = "echo \"$JOBQ_JOB_TYPE $JOBQ_JOB_ID\" >> $D/runs.txt";
    world.exec_handler("welcome", record, "");
    world.exec_handler("crm", record, "");
    let (code, out, err) = world.run(&["emit", "user.registered", r#"{"userId":7}"#, "--id", "signup-7"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["evt:signup-7#1", "evt:signup-7#2"]);
    let (code, out, _) = world.run(&["emit", "user.registered", r#"{"userId":7}"#, "--id", "signup-7"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 2, "the same ids again, nothing new");
    let (code, _, err) = world.run(&["emit", "user.registerd", "{}"]);
    assert_eq!(code, 2, "an event nobody subscribes to: {err}");
    let worker = world.worker("w", &["--burst", "--queue", "default,crm"]);
    assert!(worker.exit(secs(60)).await.success(), "{}", worker.log());
    let runs = std::fs::read_to_string(world.path("runs.txt")).unwrap();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort();
    assert_eq!(lines, ["crm evt:signup-7#2", "welcome evt:signup-7#1"]);
}

async fn a_per_type_limit_is_never_exceeded(store: TestStore) {
    let world = World::new(store, FAST).await;
    let running = world.path("running");
    std::fs::create_dir(&running).unwrap();
    let seen = world.path("seen.txt");
    let limited = "touch $D/running/$JOBQ_JOB_ID\nls $D/running | wc -l >> $D/seen.txt\nsleep 0.2\n\
                   ls $D/running | wc -l >> $D/seen.txt\nrm $D/running/$JOBQ_JOB_ID";
    let other = "[handlers.other]\nbuiltin = \"noop\"\n";
    world.exec_handler("limited", limited, &format!("concurrency = 2\n{other}"));
    let mut specs: Vec<JobSpec> = (0..12).map(|i| JobSpec::new("limited", json!({ "i": i }))).collect();
    specs.extend((0..20).map(|i| JobSpec::new("other", json!({ "i": i }))));
    world.client.enqueue_many(specs).await.unwrap();
    let worker = world.worker("w", &["--burst", "--concurrency", "8"]);
    assert!(worker.exit(secs(60)).await.success(), "{}", worker.log());
    let counts: Vec<u32> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 24);
    assert_eq!(
        counts.iter().max(),
        Some(&2),
        "at most 2 at once, and 2 did run together: {counts:?}"
    );
    let stats = world.client.stats(&[]).await.unwrap();
    assert_eq!(stats.queues[0].succeeded, 32, "{stats:?}");
    let done = world.client.list(&Default::default()).await.unwrap();
    assert!(
        done.iter().all(|j| j.attempt == 1),
        "releases over the limit used no attempt"
    );
}

async fn jobs_after_others_run_in_order_and_a_failure_runs_only_its_compensation(store: TestStore) {
    let world = World::new(store, FAST).await;
    // Each step keeps its envelope and returns a result naming itself.
    world.exec_handler(
        "step",
        r#"cat > $D/$JOBQ_JOB_ID.json; echo "$JOBQ_JOB_ID" >> $D/runs.txt; echo "::result {\"from\":\"$JOBQ_JOB_ID\"}""#,
        "",
    );
    world.exec_handler("broken", "exit 1", "");
    let step = |id: &str| JobSpec::new("step", json!({})).id(id);
    let worker = world.worker("w", &[]);
    // A chain, and a failure with a job on each of its sides, enqueued while the worker waits.
    let a = world.enqueue(step("a")).await;
    let b = world.enqueue(step("b").after(a)).await;
    let c = world.enqueue(step("c").after_on(b, DependOn::Finish)).await;
    let f = world
        .enqueue(JobSpec::new("broken", json!({})).id("f").max_attempts(1))
        .await;
    let g = world.enqueue(step("g").after(f.clone())).await;
    let h = world.enqueue(step("h").after_on(f, DependOn::Failure)).await;
    world.wait_status(&c, JobStatus::Succeeded, secs(30)).await;
    world.wait_status(&h, JobStatus::Succeeded, secs(30)).await;
    let g = world.wait_status(&g, JobStatus::Cancelled, secs(30)).await;
    assert!(last_error(&g).contains("dependency f ended dead"), "{}", last_error(&g));
    let runs = std::fs::read_to_string(world.path("runs.txt")).unwrap();
    let order: Vec<&str> = runs.lines().filter(|l| ["a", "b", "c"].contains(l)).collect();
    assert_eq!(order, ["a", "b", "c"], "{}", worker.log());
    assert!(
        runs.lines().any(|l| l == "h") && !runs.lines().any(|l| l == "g"),
        "{runs}"
    );
    // A dependent's envelope carries how its dependencies ended, with their results.
    let envelope = |id: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(world.path(&format!("{id}.json"))).unwrap()).unwrap()
    };
    assert_eq!(
        envelope("c")["deps"],
        json!([{"jobId": "b", "jobType": "step", "queue": "default", "status": "succeeded",
                "on": "finish", "state": "met", "result": {"from": "b"}}])
    );
    let h = &envelope("h")["deps"][0];
    assert_eq!(
        (&h["jobId"], &h["status"], &h["on"], &h["result"]),
        (&json!("f"), &json!("dead"), &json!("failure"), &json!(null))
    );
    assert!(
        envelope("a").get("deps").is_none(),
        "a job without dependencies has no deps"
    );
}

/// `::spawn` and `::await-children` from an exec script: the children are written with the outcome,
/// never with a failed attempt; the parent runs again with their outcomes in `deps`, and a run that
/// spawns the same children again writes none twice.
async fn a_handler_spawns_children_awaits_them_and_runs_again_with_their_outcomes(store: TestStore) {
    let world = World::new(store, FAST).await;
    // First run: two children (the second after the first) and an await. The run after: the same
    // spawn lines again (as a handler that does not look at its envelope would print them), its
    // envelope kept, and a success.
    world.exec_handler(
        "fanout",
        r#"env=$(cat)
echo '::spawn {"type":"leaf","key":"a","payload":{"n":1}}'
echo '::spawn {"type":"leaf","payload":{"n":2},"after":["a"]}'
case "$env" in
  *'"deps"'*) printf '%s' "$env" > $D/fanout-again.json ;;
  *) echo '::await-children' ;;
esac"#,
        "",
    );
    world.exec_handler(
        "leaf",
        r#"echo "$JOBQ_JOB_ID" >> $D/leaves.txt; echo "::result \"$JOBQ_JOB_ID\"""#,
        "",
    );
    // Its first attempt spawns x1 and fails; its second spawns x2 and succeeds.
    world.exec_handler(
        "flaky",
        r#"echo "::spawn {\"type\":\"leaf\",\"key\":\"x$JOBQ_ATTEMPT\"}"; [ "$JOBQ_ATTEMPT" -ge 2 ] || exit 1"#,
        "",
    );
    let worker = world.worker("w", &[]);
    let fan = world.enqueue(JobSpec::new("fanout", json!({})).id("fan")).await;
    let flaky = world
        .enqueue(JobSpec::new("flaky", json!({})).id("flaky").max_attempts(3))
        .await;
    let job = world.wait_status(&fan, JobStatus::Succeeded, secs(30)).await;
    assert_eq!(job.attempt, 1, "the await spent no attempt");
    let a = world.client.get("fan.a").await.unwrap();
    assert_eq!(a.result.as_ref().map(|r| r.get()), Some(r#""fan.a""#), "{}", json!(a));
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(world.path("fanout-again.json")).unwrap()).unwrap();
    let mut deps: Vec<(String, String, String)> = again["deps"]
        .as_array()
        .expect("deps")
        .iter()
        .map(|d| {
            (
                d["jobId"].as_str().unwrap().to_string(),
                d["status"].as_str().unwrap().to_string(),
                d["result"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    deps.sort();
    assert_eq!(
        deps,
        [
            ("fan.2".into(), "succeeded".into(), "fan.2".into()),
            // (see the envelope below when this fails)
            ("fan.a".into(), "succeeded".into(), "fan.a".into()),
        ],
        "{again}"
    );
    world.wait_status(&flaky, JobStatus::Succeeded, secs(30)).await;
    let x2 = JobId::parse("flaky.x2").unwrap();
    world.wait_status(&x2, JobStatus::Succeeded, secs(30)).await;
    assert!(
        world.client.get("flaky.x1").await.is_err(),
        "a failed attempt's child was written\n{}",
        worker.log()
    );
    let leaves = std::fs::read_to_string(world.path("leaves.txt")).unwrap();
    let at = |id: &str| leaves.lines().position(|l| l == id);
    assert!(
        at("fan.a") < at("fan.2"),
        "a child ran before the sibling it waits for:\n{leaves}"
    );
    let mut ran: Vec<&str> = leaves.lines().collect();
    ran.sort();
    assert_eq!(ran, ["fan.2", "fan.a", "flaky.x2"], "each child runs once");
}

/// An await with nothing new to wait for, and a child that cannot be read, fail the attempt for
/// good, naming why.
async fn a_child_that_cannot_be_written_fails_the_attempt(store: TestStore) {
    let world = World::new(store, FAST).await;
    world.exec_handler("lonely", "echo '::await-children'", "");
    world.exec_handler("garbled", "echo '::spawn {\"type\":'", "");
    let worker = world.worker("w", &[]);
    let lonely = world.enqueue(JobSpec::new("lonely", json!({}))).await;
    let garbled = world.enqueue(JobSpec::new("garbled", json!({}))).await;
    let lonely = world.wait_status(&lonely, JobStatus::Dead, secs(30)).await;
    assert_eq!(
        last_error(&lonely),
        "awaits its children but spawned none",
        "{}",
        worker.log()
    );
    let garbled = world.wait_status(&garbled, JobStatus::Dead, secs(30)).await;
    assert!(
        last_error(&garbled).starts_with("cannot spawn: a ::spawn line that is not JSON"),
        "{}",
        last_error(&garbled)
    );
}

async fn max_jobs_stops_the_worker_after_that_many(store: TestStore) {
    let world = World::new(store, &format!("{FAST}\n[handlers.n]\nbuiltin = \"noop\"\n")).await;
    let specs: Vec<JobSpec> = (0..10).map(|i| JobSpec::new("n", json!(i))).collect();
    world.client.enqueue_many(specs).await.unwrap();
    let worker = world.worker("w", &["--max-jobs", "4", "--concurrency", "2"]);
    assert!(worker.exit(secs(20)).await.success(), "{}", worker.log());
    let stats = world.client.stats(&[]).await.unwrap();
    assert_eq!((stats.queues[0].succeeded, stats.queues[0].ready), (4, 6), "{stats:?}");
}

/// A config with `[worker] retention = "1s"`, `also` after it, and the handler `n` (noop).
fn retention_config(also: &str) -> String {
    format!(
        "{}\n{also}\n[handlers.n]\nbuiltin = \"noop\"\n",
        FAST.replace("[retry]", "retention = \"1s\"\n\n[retry]")
    )
}

/// Waits for retention to delete job `id`.
async fn deleted(world: &World, id: &JobId) {
    eventually("the job to be deleted", secs(20), async || {
        match world.client.get(id.as_str()).await {
            Ok(job) => Err(lazy(move || format!("job is {}\n{}", json!(job), world.logs()))),
            Err(_) => Ok(()),
        }
    })
    .await;
}

async fn retention_deletes_finished_jobs_older_than_it(store: TestStore) {
    let world = World::new(store, &retention_config("")).await;
    let id = world.enqueue(JobSpec::new("n", json!({}))).await;
    let _worker = world.worker("w", &[]);
    world.wait_status(&id, JobStatus::Succeeded, secs(20)).await;
    deleted(&world, &id).await;
}

/// A job not started by its expiry ends `expired` without running: the worker's claim refuses it
/// and its sweep ends it; the job that waits for it by `finish` runs, the one that needs it to
/// succeed is cancelled, and `jobq wait` exits 7. Its expiry came from its type's `expires_in`, which
/// `jobq enqueue` gives a job that names none.
async fn a_job_past_its_expiry_ends_expired_without_running(store: TestStore) {
    let config = format!(
        "{FAST}\n[handlers.n]\nbuiltin = \"noop\"\n\n[handlers.code]\nbuiltin = \"noop\"\nexpires_in = \"1s\"\n"
    );
    let world = World::new(store, &config).await;
    let (code, out, err) = world.run(&["enqueue", "code", "{}"]);
    assert_eq!(code, 0, "{err}");
    let late = JobId::parse(out.trim()).unwrap();
    let job = world.job(&late).await;
    let expires_at = job.expires_at.expect("its type's expiry");
    assert_eq!(expires_at.0 - job.created_at.0, 1_000);
    let on_finish = world
        .enqueue(JobSpec::new("n", json!({})).after_on(late.clone(), DependOn::Finish))
        .await;
    let on_success = world.enqueue(JobSpec::new("n", json!({})).after(late.clone())).await;
    eventually("the expiry to pass", secs(10), async || {
        (world.client.now() > expires_at).then_some(())
    })
    .await;

    let _worker = world.worker("w", &[]);
    world.wait_status(&on_finish, JobStatus::Succeeded, secs(20)).await;
    let job = world.wait_status(&late, JobStatus::Expired, secs(20)).await;
    assert_eq!((job.attempt, job.started_at), (0, None), "it never ran");
    assert_eq!(world.job(&on_success).await.status, JobStatus::Cancelled);
    let (code, _, err) = world.run(&["wait", late.as_str()]);
    assert_eq!(code, 7, "{err}");
}

/// A type with `expires_per_attempt` gives each retry an expiry of its own, `expires_in` after the
/// retry's run time; a type without it keeps the expiry the job was enqueued with.
async fn a_retry_gets_its_own_expiry_with_expires_per_attempt(store: TestStore) {
    // `false` exits 1: a failure that is retried.
    let retry = "exec = [\"false\"]\nbase_delay = \"1h\"\njitter = 0.0\nexpires_in = \"10m\"\n";
    let config = format!("{FAST}\n[handlers.renewed]\n{retry}expires_per_attempt = true\n\n[handlers.kept]\n{retry}");
    let world = World::new(store, &config).await;
    let mut ids = Vec::new();
    for job_type in ["renewed", "kept"] {
        let (code, out, err) = world.run(&["enqueue", job_type, "{}"]);
        assert_eq!(code, 0, "{err}");
        ids.push(JobId::parse(out.trim()).unwrap());
    }
    let _worker = world.worker("w", &[]);
    for id in &ids {
        eventually("the first attempt's retry", secs(20), async || {
            let job = world.job(id).await;
            (job.attempt == 1 && job.status == JobStatus::Pending).then_some(())
        })
        .await;
    }
    let renewed = world.job(&ids[0]).await;
    assert_eq!(
        renewed.expires_at.map(|x| x.0 - renewed.run_at.0),
        Some(600_000),
        "{renewed:?}"
    );
    let kept = world.job(&ids[1]).await;
    assert_eq!(
        kept.expires_at.map(|x| x.0 - kept.created_at.0),
        Some(600_000),
        "{kept:?}"
    );
}

/// `[retention] keep_last` keeps the newest finished jobs of each queue and status, and a type's own
/// `[handlers."TYPE".retention]` keeps its jobs by its own count, apart from the others.
async fn retention_keeps_the_newest_and_a_types_own_count(store: TestStore) {
    let handlers = "[handlers.n]\nbuiltin = \"noop\"\n\n[handlers.audit]\nbuiltin = \"noop\"\n";
    let world = World::new(store, &format!("{FAST}\n{handlers}")).await;
    let mut ns = Vec::new();
    let mut audits = Vec::new();
    {
        // One after another, so that they finish in the order they were enqueued.
        let first = world.worker("w1", &[]);
        for _ in 0..3 {
            for (job_type, ids) in [("n", &mut ns), ("audit", &mut audits)] {
                let id = world.enqueue(JobSpec::new(job_type, json!({}))).await;
                world.wait_status(&id, JobStatus::Succeeded, secs(20)).await;
                ids.push(id);
            }
        }
        first.terminate(secs(20)).await;
    }
    // A worker with retention by count deletes, at its start, all but the newest of each.
    world.write_config(&format!(
        "{FAST}\n[retention]\nkeep_last = 1\n\n{handlers}\n[handlers.audit.retention]\nkeep_last = 2\n"
    ));
    let _second = world.worker("w2", &[]);
    for gone in [&ns[0], &ns[1], &audits[0]] {
        deleted(&world, gone).await;
    }
    for kept in [&ns[2], &audits[1], &audits[2]] {
        world.client.get(kept.as_str()).await.expect("the newest are kept");
    }
}

/// `[retention]` keeps dead letters for a month while `[worker] retention` deletes the other
/// finished jobs after a second.
async fn retention_by_status_keeps_each_status_for_its_own_time(store: TestStore) {
    let world = World::new(
        store,
        &retention_config("[retention]\ndead = \"30d\"\n\n[handlers.bad]\nbuiltin = \"fail\""),
    )
    .await;
    let _worker = world.worker("w", &[]);
    let dead = world.enqueue(JobSpec::new("bad", json!({})).max_attempts(1)).await;
    world.wait_status(&dead, JobStatus::Dead, secs(20)).await;
    let done = world.enqueue(JobSpec::new("n", json!({}))).await;
    world.wait_status(&done, JobStatus::Succeeded, secs(20)).await;
    deleted(&world, &done).await;
    // The dead job finished before the one that retention deleted, and is still there.
    let kept = world.client.get(dead.as_str()).await.expect("the dead job is kept");
    assert_eq!(kept.status, JobStatus::Dead);
    assert!(
        world
            .logs()
            .contains("retention: deleted 1 finished jobs (succeeded, cancelled, discarded, expired) older than 1s"),
        "{}",
        world.logs()
    );
    // From Rust, a retention for a status that is not an end is refused when the worker is built.
    let refused = Worker::builder(world.client.store().clone())
        .retention_for(JobStatus::Running, Duration::from_secs(60))
        .build();
    let error = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("retention for running"), "{error}");
}

async fn wait_exits_with_the_outcome_and_workers_lists_the_worker(store: TestStore) {
    let world = World::new(store, &format!(
        "{FAST}\n[handlers.ok]\nbuiltin = \"echo\"\n[handlers.bad]\nbuiltin = \"fail\"\n[handlers.nap]\nbuiltin = \"sleep\"\n"
    ))
    .await;
    let ok = world.enqueue(JobSpec::new("ok", json!({"x": 1}))).await;
    let bad = world.enqueue(JobSpec::new("bad", json!({}))).await;
    let nap = world.enqueue(JobSpec::new("nap", json!({"ms": 60000}))).await;
    let worker = world.worker("lister", &[]);
    let (code, out, err) = world.run(&["wait", ok.as_str()]);
    assert_eq!((code, out.trim()), (0, r#"{"x":1}"#), "{err}");
    assert_eq!(world.run(&["wait", bad.as_str()]).0, 4);
    world.wait_status(&nap, JobStatus::Running, secs(20)).await;
    world.client.cancel(&[nap.to_string()]).await.unwrap();
    assert_eq!(world.run(&["wait", nap.as_str()]).0, 5);
    assert_eq!(world.run(&["wait", "no-such-job"]).0, 3);
    let pending = world
        .enqueue(JobSpec::new("nap", json!({})).delay(Duration::from_secs(3600)))
        .await;
    let (code, _, err) = world.run(&["wait", pending.as_str(), "--timeout", "200ms"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("still pending"), "{err}");

    // The registry entry is refreshed every heartbeat with the count of jobs done.
    eventually("jobs done to reach 2 in `jobq workers`", secs(10), async || {
        let (code, out, err) = world.run(&["workers", "--output", "json"]);
        assert_eq!(code, 0, "{err}");
        let listed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(listed[0]["name"], json!("lister"), "{listed}");
        assert_eq!(listed[0]["pid"], json!(worker.pid()), "{listed}");
        if listed[0]["jobsDone"].as_u64().unwrap() >= 2 {
            Ok(())
        } else {
            Err(listed)
        }
    })
    .await;
}

async fn http_handlers_map_statuses_sign_bodies_and_honour_retry_after(store: TestStore) {
    let server = HttpServer::start().await;
    let secret = "s3cret-key";
    let mut config = String::from(FAST);
    let slow = "timeout = \"300ms\"\nmax_attempts = 1\n";
    for (t, path, extra) in [
        ("h.ok", "ok", ""),
        ("h.busy", "busy", ""),
        ("h.limited", "limited", ""),
        ("h.gone", "gone", ""),
        ("h.slow", "slow", slow),
    ] {
        config.push_str(&format!(
            "[handlers.\"{t}\"]\nhttp = \"http://{}/{path}\"\nsecret_env = \"JOBQ_TEST_HMAC\"\n{extra}",
            server.addr
        ));
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    config.push_str(&format!("[handlers.\"h.down\"]\nhttp = \"http://{closed}/x\"\n"));
    let world = World::new(store, &config).await;
    let ok = world
        .enqueue(JobSpec::new("h.ok", json!({"order": 7})).meta("idempotencyKey", "order-7"))
        .await;
    let busy = world.enqueue(JobSpec::new("h.busy", json!({}))).await;
    let limited = world.enqueue(JobSpec::new("h.limited", json!({}))).await;
    let gone = world.enqueue(JobSpec::new("h.gone", json!({}))).await;
    let slow = world.enqueue(JobSpec::new("h.slow", json!({}))).await;
    let down = world.enqueue(JobSpec::new("h.down", json!({}))).await;
    let mut cmd = world.jobq(&["worker", "--burst"]);
    cmd.env("JOBQ_TEST_HMAC", secret);
    let worker = Process::spawn(cmd, &world.path("w.log"));
    assert!(worker.exit(secs(30)).await.success(), "{}", worker.log());

    let job = world.job(&ok).await;
    assert_eq!(job.status, JobStatus::Succeeded, "{}", json!(job));
    assert_eq!(job.result.as_ref().map(|r| r.get()), Some(r#"{"done":true}"#));
    let requests = server.requests.lock().unwrap().clone();
    let req = requests
        .iter()
        .find(|r| r.path == "/ok")
        .expect("the ok endpoint was called");
    assert_eq!(req.header("idempotency-key"), Some("order-7"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        (body["jobId"].as_str(), body["attempt"].as_u64()),
        (Some(ok.as_str()), Some(1))
    );
    assert_eq!(body["payload"], json!({"order": 7}));
    assert_eq!(
        req.header("x-jobq-signature").map(str::to_string),
        Some(hmac_hex(secret.as_bytes(), &req.body))
    );

    let job = world.job(&busy).await;
    assert_eq!(job.status, JobStatus::Pending);
    assert!(last_error(&job).starts_with("HTTP 503"), "{}", last_error(&job));
    assert!(
        (115_000..=120_000).contains(&(job.run_at.0 - failed_at(&job))),
        "Retry-After: 120 honoured"
    );

    // 429 is back-pressure: the job snoozes (no attempt spent, no error) and its type is blocked on
    // every worker, both for the Retry-After delay.
    let job = world.job(&limited).await;
    assert_eq!(
        (job.status, job.attempt, job.snoozes, job.errors.len()),
        (JobStatus::Pending, 0, 1, 0),
        "{}",
        json!(job)
    );
    let wait = job.run_at.0 - job.started_at.unwrap().0;
    assert!(
        (50_000..=61_000).contains(&wait),
        "Retry-After as an HTTP date honoured: {wait}"
    );
    let (code, out, err) = world.run(&["queues", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let blocked = report["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["jobType"] == "h.limited")
        .unwrap_or_else(|| panic!("h.limited is blocked: {report}"));
    assert!(
        blocked["blocks"][0]["until"].as_i64().unwrap() >= job.run_at.0 - 1_000,
        "{report}"
    );

    let job = world.job(&gone).await;
    assert_eq!(
        (job.status, last_error(&job)),
        (JobStatus::Dead, "HTTP 410 Gone: no such user")
    );

    let job = world.job(&slow).await;
    assert_eq!(job.status, JobStatus::Dead);
    assert!(
        last_error(&job).starts_with("timed out after 300ms"),
        "{}",
        last_error(&job)
    );

    let job = world.job(&down).await;
    assert_eq!(job.status, JobStatus::Pending);
    assert!(
        last_error(&job).contains(&format!("POST http://{closed}/x")),
        "{}",
        last_error(&job)
    );
}

async fn a_job_waiting_past_its_wait_timeout_is_retried_then_dead(store: TestStore) {
    // The sweep runs after each rescue sweep: every second with a two-second stale_after.
    let config = FAST.replace("stale_after = \"10s\"", "stale_after = \"2s\"");
    let world = World::new(store, &config).await;
    let wait = "echo \"attempt $JOBQ_ATTEMPT\" >> \"$D/$JOBQ_JOB_ID.ran\"; echo ::wait";
    world.exec_handler("waits_timed", wait, "wait_timeout = \"200ms\"\nmax_attempts = 2\n");
    world.exec_handler("waits_free", wait, "");
    let timed = world.enqueue(JobSpec::new("waits_timed", json!({}))).await;
    let free = world.enqueue(JobSpec::new("waits_free", json!({}))).await;
    let _worker = world.worker("w", &[]);
    let job = world.wait_status(&timed, JobStatus::Dead, secs(30)).await;
    let errors: Vec<&str> = job.errors.iter().map(|e| e.error.as_str()).collect();
    assert_eq!(
        errors,
        ["wait timed out after 200ms", "wait timed out after 200ms"],
        "retried once, then dead: {}",
        world.logs()
    );
    assert_eq!(job.attempt, 2);
    assert_eq!(ran(&world, &timed), "attempt 1\nattempt 2");
    // A type without a wait time-out waits for as long as it takes.
    let job = world.job(&free).await;
    assert_eq!((job.status, job.attempt, job.errors.len()), (JobStatus::Waiting, 1, 0));
    let log = world.logs();
    assert!(
        log.lines()
            .any(|l| l.contains(timed.as_str()) && l.contains("wait timed out after 200ms: now pending")),
        "the give-up is logged:\n{log}"
    );
}

async fn an_http_202_parks_the_job_until_jobq_resolve_finishes_it(store: TestStore) {
    let server = HttpServer::start().await;
    let config = format!(
        "{FAST}\n[handlers.\"h.later\"]\nhttp = \"http://{}/accepted\"\n",
        server.addr
    );
    let world = World::new(store, &config).await;
    let id = world.enqueue(JobSpec::new("h.later", json!({"order": 9}))).await;
    let worker = world.worker("w", &["--burst"]);
    assert!(worker.exit(secs(30)).await.success(), "{}", worker.log());
    let job = world.job(&id).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Waiting, 1), "{}", json!(job));
    assert!(job.result.is_none(), "a 202's body is not a result");

    let (code, out, err) = world.run(&["resolve", id.as_str(), "--succeed", "--result", r#"{"paid":true}"#]);
    assert_eq!(
        (code, out.trim()),
        (0, format!("resolved {id}: succeeded").as_str()),
        "{err}"
    );
    let job = world.job(&id).await;
    assert_eq!(job.status, JobStatus::Succeeded);
    assert_eq!(job.result.as_ref().map(|r| r.get()), Some(r#"{"paid":true}"#));
    // The callback delivered twice: harmless.
    let (code, _, err) = world.run(&["resolve", id.as_str(), "--succeed"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("already succeeded; nothing changed"), "{err}");
}

fn hmac_hex(secret: &[u8], body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(secret).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// One request the test server received.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A small HTTP/1.1 server answering by path: `/ok` 200 JSON, `/busy` 503 + `Retry-After: 120`,
/// `/limited` 429 + a `Retry-After` date a minute ahead, `/gone` 410, `/accepted` 202 JSON, `/slow`
/// answers after 10 s.
struct HttpServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpServer {
    async fn start() -> HttpServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, log.clone()));
            }
        });
        HttpServer { addr, requests, task }
    }
}

async fn serve(mut socket: tokio::net::TcpStream, log: Arc<Mutex<Vec<Request>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.lines();
    let path = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = buf[head_end..head_end + length].to_vec();
    log.lock().unwrap().push(Request {
        path: path.clone(),
        headers,
        body: body.clone(),
    });
    let in_a_minute = (chrono::Utc::now() + chrono::Duration::seconds(60))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let (status, extra, body) = match path.as_str() {
        "/ok" => ("200 OK", String::new(), r#"{"done":true}"#),
        "/busy" => (
            "503 Service Unavailable",
            "Retry-After: 120\r\n".to_string(),
            "down for maintenance",
        ),
        "/limited" => (
            "429 Too Many Requests",
            format!("Retry-After: {in_a_minute}\r\n"),
            "slow down",
        ),
        "/gone" => ("410 Gone", String::new(), "no such user"),
        "/accepted" => ("202 Accepted", String::new(), r#"{"queued":true}"#),
        // A reply object: a child and an await on the first run; the run after it, a result.
        "/fanout" if body.windows(6).any(|w| w == br#""deps""#) => (
            "200 OK",
            "X-Jobq-Reply: 1
"
            .to_string(),
            r#"{"result":{"again":true}}"#,
        ),
        "/fanout" => (
            "200 OK",
            "X-Jobq-Reply: 1
"
            .to_string(),
            r#"{"spawn":[{"type":"h.ok","key":"one","payload":{"order":1}}],"awaitChildren":true}"#,
        ),
        "/slow" => {
            // Not a wait of the test's: the endpoint is slow, far past the handler's time-out (300 ms).
            tokio::time::sleep(Duration::from_secs(10)).await;
            ("200 OK", String::new(), "{}")
        }
        _ => ("404 Not Found", String::new(), ""),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// An http endpoint's reply object (`X-Jobq-Reply: 1`) spawns a child and awaits it; the job is
/// posted again once the child has ended, with its outcome in `deps`.
async fn an_http_reply_spawns_children_and_awaits_them(store: TestStore) {
    let server = HttpServer::start().await;
    let mut config = String::from(FAST);
    for (t, path) in [("h.fanout", "fanout"), ("h.ok", "ok")] {
        config.push_str(&format!(
            "[handlers.\"{t}\"]\nhttp = \"http://{}/{path}\"\n",
            server.addr
        ));
    }
    let world = World::new(store, &config).await;
    let fan = world.enqueue(JobSpec::new("h.fanout", json!({})).id("web")).await;
    let worker = world.worker("w", &[]);
    let job = world.wait_status(&fan, JobStatus::Succeeded, secs(30)).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"again":true}"#),
        "{}",
        worker.log()
    );
    let child = world.job(&JobId::parse("web.one").unwrap()).await;
    assert_eq!(child.result.as_ref().map(|r| r.get()), Some(r#"{"done":true}"#));
    let posts: Vec<Value> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.path == "/fanout")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(posts.len(), 2, "{posts:?}");
    assert_eq!(posts[1]["deps"][0]["jobId"], json!("web.one"));
    assert_eq!(posts[1]["deps"][0]["result"], json!({"done": true}));
}

async fn rust_handlers_run_in_the_library_runtime_and_panics_are_retries(store: TestStore) {
    let world = World::new(store, "").await;
    let store = world.client.store().clone();
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let worker = Worker::builder(store)
        .heartbeat(Duration::from_millis(100))
        .stale_after(Duration::from_secs(2))
        .poll_interval(Duration::from_millis(20))
        .retry_policy(jobq::retry::RetryPolicy {
            base_delay: Duration::from_millis(10),
            jitter: 0.0,
            ..Default::default()
        })
        .handler(
            "double",
            handler_fn(move |job, cx| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    cx.progress(50, Some("halfway"));
                    let n: u64 = job.payload_as().unwrap_or(0);
                    Outcome::success_with(json!(n * 2))
                }
            }),
        )
        .handler(
            "sum",
            // Spawns two doublings and awaits them, then adds up their results.
            handler_fn(|job, cx| async move {
                if job.deps.is_empty() {
                    for n in [1, 2] {
                        cx.spawn(Spawn::keyed(format!("n{n}"), JobSpec::new("double", json!(n))));
                    }
                    return Outcome::await_children();
                }
                let total: u64 = job
                    .deps
                    .iter()
                    .filter_map(|d| d.result.as_ref().and_then(|r| r.get().parse::<u64>().ok()))
                    .sum();
                Outcome::success_with(json!(total))
            }),
        )
        .handler_with(
            "panics",
            handler_fn(|job, _cx| async move {
                if job.attempt < 2 {
                    panic!("boom on attempt {}", job.attempt);
                }
                Outcome::success()
            }),
            HandlerOptions {
                timeout: Some(Duration::from_secs(5)),
                ..Default::default()
            },
        )
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    let double = world.enqueue(JobSpec::new("double", json!(21))).await;
    handle.wake();
    let panics = world.enqueue(JobSpec::new("panics", json!(null))).await;
    handle.wake();
    let job = world.wait_status(&double, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(job.result.as_ref().map(|r| r.get()), Some("42"));
    let job = world.wait_status(&panics, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(job.attempt, 2);
    assert_eq!(last_error(&job), "handler panicked: boom on attempt 1");
    let sum = world.enqueue(JobSpec::new("sum", json!(null)).id("sum")).await;
    handle.wake();
    let job = world.wait_status(&sum, JobStatus::Succeeded, secs(20)).await;
    assert_eq!((job.result.as_ref().map(|r| r.get()), job.attempt), (Some("6"), 1));
    let report = stop_worker(&handle, run).await;
    assert_eq!(report.cause, StopCause::Shutdown);
    // The doubling, the two panics' attempts, the sum's await, its two children and its end.
    assert_eq!(report.jobs_done, 7);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SendEmail {
    to: String,
    subject: String,
}

impl jobq::JobType for SendEmail {
    const NAME: &'static str = "mail.send";
}

async fn typed_jobs_arrive_decoded_and_a_payload_that_does_not_decode_fails_for_good(store: TestStore) {
    let world = World::new(store, "").await;
    let worker = Worker::builder(world.client.store().clone())
        .poll_interval(Duration::from_millis(20))
        .handle(|mail: SendEmail, _cx| async move {
            Outcome::success_with(json!(format!("{} <{}>", mail.subject, mail.to)))
        })
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    let typed = world
        .client
        .enqueue(SendEmail {
            to: "ana@example.com".into(),
            subject: "Welcome".into(),
        })
        .await
        .unwrap()
        .id;
    let stored = world.client.get(typed.as_str()).await.unwrap();
    assert_eq!(stored.job_type, "mail.send");
    assert_eq!(
        serde_json::from_str::<Value>(stored.payload.get()).unwrap(),
        json!({"to": "ana@example.com", "subject": "Welcome"}),
        "the payload is the type's serde JSON"
    );
    // Written by a producer that knows nothing of the Rust type: a field is missing.
    let bad = world
        .enqueue(JobSpec::new("mail.send", json!({"to": "bo@example.com"})).max_attempts(5))
        .await;
    handle.wake();
    let job = world.wait_status(&typed, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#""Welcome <ana@example.com>""#)
    );
    let job = world.wait_status(&bad, JobStatus::Dead, secs(20)).await;
    assert_eq!(job.attempt, 1, "a payload that does not decode is not retried");
    assert!(
        last_error(&job).starts_with("the payload of mail.send does not decode: missing field `subject`"),
        "{}",
        last_error(&job)
    );
    stop_worker(&handle, run).await;
}

async fn a_job_enqueued_by_another_process_wakes_the_idle_worker(store: TestStore) {
    // A poll interval of an hour: only the store's own wake-up (a watch on SQLite's files, PostgreSQL's
    // NOTIFY, MySQL's and Redis's subscriptions) can start these jobs within the waits below. How soon
    // it does is measured by `cargo bench --bench timings`.
    let config = FAST.replace("poll_interval = \"50ms\"", "poll_interval = \"1h\"");
    let world = World::new(store, &format!("{config}\n[handlers.n]\nbuiltin = \"noop\"\n")).await;
    let worker = world.worker("w", &[]);
    worker.wait_log("worker started", secs(20)).await;
    // Let the worker go idle, so each job below is started by a wake-up rather than a claim loop in
    // flight.
    let idle = world.enqueue(JobSpec::new("n", json!(0))).await;
    world.wait_status(&idle, JobStatus::Succeeded, secs(20)).await;
    for i in 0..20 {
        let id = world.enqueue(JobSpec::new("n", json!(i))).await;
        let job = world.wait_status(&id, JobStatus::Succeeded, secs(20)).await;
        assert_eq!(job.attempt, 1, "{}", json!(job));
    }
}

async fn fast_handlers_prefetch_and_every_job_still_runs_once_or_goes_back_unused(store: TestStore) {
    let world = World::new(store, "").await;
    let calls = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = calls.clone();
    // The first 300 jobs are instant, so the worker prefetches; after that the handler hangs until it
    // is stopped, leaving prefetched jobs waiting in the worker when it shuts down.
    let worker = Worker::builder(world.client.store().clone())
        .concurrency(2)
        .heartbeat(Duration::from_millis(100))
        .stale_after(Duration::from_secs(5))
        .shutdown_timeout(Duration::from_millis(200))
        .handler(
            "quick",
            handler_fn(move |job, cx| {
                let seen = seen.clone();
                async move {
                    let n = {
                        let mut calls = seen.lock().unwrap();
                        calls.push(job.id.to_string());
                        calls.len()
                    };
                    if n > 300 {
                        cx.cancelled().await;
                        return Outcome::retry("stopped");
                    }
                    Outcome::success()
                }
            }),
        )
        .build()
        .unwrap();
    let specs: Vec<JobSpec> = (0..2000).map(|i| JobSpec::new("quick", json!(i))).collect();
    world.client.enqueue_many(specs).await.unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    eventually("302 handler calls", secs(20), async || {
        let n = calls.lock().unwrap().len();
        if n >= 302 { Ok(()) } else { Err(format!("{n} calls")) }
    })
    .await;
    let report = stop_worker(&handle, run).await;
    assert_eq!(report.jobs_done, 300);
    let calls = calls.lock().unwrap().clone();
    let unique: HashSet<&String> = calls.iter().collect();
    assert_eq!(unique.len(), calls.len(), "no job ran twice");
    let stats = world.client.stats(&[]).await.unwrap();
    let q = &stats.queues[0];
    assert_eq!((q.succeeded, q.ready, q.running), (300, 1700, 0), "{stats:?}");
    let pending = world
        .client
        .list(&jobq::store::List {
            filter: jobq::store::JobFilter {
                statuses: vec![JobStatus::Pending],
                ..Default::default()
            },
            limit: 2000,
            offset: 0,
            after: None,
        })
        .await
        .unwrap();
    assert!(
        pending.iter().all(|j| j.attempt == 0 && j.errors.is_empty()),
        "released jobs used no attempt"
    );
}

/// An exec handler for `job_type` running `script`.
fn exec_config(job_type: &str, script: &Path) -> String {
    format!("[handlers.{job_type}]\nexec = [\"{}\"]\n", script.display())
}

/// A script that leaves `JOB_ID.ran` saying `version` ran the job.
fn versioned(world: &World, version: &str) -> PathBuf {
    world.script(
        &format!("{version}.sh"),
        &format!("echo {version} > \"$D/$JOBQ_JOB_ID.ran\""),
    )
}

/// Which version of the handler ran a job (see [`versioned`]).
fn ran(world: &World, id: &JobId) -> String {
    let path = world.path(&format!("{id}.ran"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), world.logs()))
        .trim()
        .to_string()
}

/// The lines of a log that contain `needle`.
fn lines_with(log: &str, needle: &str) -> Vec<String> {
    log.lines().filter(|l| l.contains(needle)).map(String::from).collect()
}

/// Waits until the log has at least `n` lines containing `needle`, and returns them.
async fn wait_lines(worker: &Process, needle: &str, n: usize) -> Vec<String> {
    eventually(format!("{n} log lines saying {needle:?}"), secs(20), async || {
        let log = worker.log();
        let lines = lines_with(&log, needle);
        if lines.len() >= n { Ok(lines) } else { Err(log) }
    })
    .await
}

async fn sighup_reloads_handlers_and_settings_for_jobs_claimed_after_it(store: TestStore) {
    let world = World::new(store, FAST).await;
    // v1 holds the job `held` until the test opens the gate, so that it runs across the reload.
    let v1 = world.script(
        "v1.sh",
        "if [ \"$JOBQ_JOB_ID\" = held ]; then\n  touch \"$D/held.started\"\n  \
         while [ ! -e \"$D/gate\" ]; do sleep 0.05; done\nfi\n\
         echo v1 > \"$D/$JOBQ_JOB_ID.ran\"",
    );
    let v2 = versioned(&world, "v2");
    world.write_config(&format!("{FAST}\n{}", exec_config("t", &v1)));
    let worker = world.worker("w", &[]);
    let first = world.enqueue(JobSpec::new("t", json!({})).id("first")).await;
    world.wait_status(&first, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(ran(&world, &first), "v1");
    let held = world.enqueue(JobSpec::new("t", json!({})).id("held")).await;
    // Started, not only claimed: a claim that returns while a reload is under way runs under the
    // reloaded setup, so the reload below must come after v1 has begun.
    let started = world.path("held.started");
    eventually("the held job's handler to start", secs(20), async || started.exists()).await;

    // A new script for `t`, a new type, a new concurrency, and new queues, which need a restart.
    let settings = "[worker]\nconcurrency = 4\nqueues = [\"default\", \"other\"]\n";
    world.write_config(&format!(
        "{}\n{}[handlers.u]\nbuiltin = \"noop\"\n",
        FAST.replace("[worker]\n", settings),
        exec_config("t", &v2)
    ));
    worker.signal(libc::SIGHUP);
    let reloaded = "config reloaded: handlers added u; changed t; concurrency 8 -> 4";
    worker.wait_log(reloaded, secs(20)).await;
    let log = worker.log();
    assert_eq!(lines_with(&log, "config reloaded").len(), 2, "{log}");
    assert!(
        log.contains("config reloaded without its changes to [worker] queues: it needs a restart"),
        "{log}"
    );

    let second = world.enqueue(JobSpec::new("t", json!({})).id("second")).await;
    world.wait_status(&second, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(
        ran(&world, &second),
        "v2",
        "a job claimed after the reload runs the new handler"
    );
    let added = world.enqueue(JobSpec::new("u", json!({}))).await;
    world.wait_status(&added, JobStatus::Succeeded, secs(20)).await;
    std::fs::write(world.path("gate"), "").unwrap();
    let job = world.wait_status(&held, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(
        (ran(&world, &held).as_str(), job.attempt),
        ("v1", 1),
        "the job running across the reload kept its handler and was not disturbed"
    );
    worker.assert_running();
}

async fn a_config_that_no_longer_loads_is_refused_on_reload_and_the_worker_keeps_its_own(store: TestStore) {
    let world = World::new(store, FAST).await;
    let v1 = versioned(&world, "v1");
    let good = format!("{FAST}\n{}", exec_config("t", &v1));
    world.write_config(&good);
    let worker = world.worker("w", &[]);
    worker.wait_log("worker started", secs(20)).await;
    let broken = [
        // Not TOML: named by file and line (below).
        format!("{good}\n[handlers.u\nbuiltin = \"noop\"\n"),
        // TOML, but a value out of range.
        format!("{good}\n[handlers.u]\nbuiltin = \"noop\"\nmax_attempts = 0\n"),
        // Valid, but its handler cannot be built: the program is not there.
        format!("{FAST}\n{}", exec_config("t", &world.path("gone.sh"))),
    ];
    for (n, config) in broken.iter().enumerate() {
        world.write_config(config);
        let problem = match n {
            0 => {
                let text = std::fs::read_to_string(&world.config).unwrap();
                let line = text.lines().position(|l| l == "[handlers.u").unwrap() + 1;
                format!("jobq.toml:{line}:")
            }
            1 => "[handlers.\"u\"]: max_attempts must be at least 1".to_string(),
            _ => format!("program {} does not exist", world.path("gone.sh").display()),
        };
        worker.signal(libc::SIGHUP);
        let refusals = wait_lines(&worker, "config not reloaded", n + 1).await;
        assert_eq!(refusals.len(), n + 1, "one refusal per SIGHUP: {refusals:#?}");
        assert!(refusals[n].contains(&problem), "{problem:?} in {:?}", refusals[n]);
        // The record's fields follow its message on the same line: the refusal is one line.
        assert!(refusals[n].ends_with("cause=\"SIGHUP\""), "{:?}", refusals[n]);
    }
    let log = worker.log();
    assert!(!log.contains("config reloaded"), "{log}");
    worker.assert_running();
    let job = world.enqueue(JobSpec::new("t", json!({}))).await;
    world.wait_status(&job, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(ran(&world, &job), "v1", "the worker kept the handler it had");
}

async fn reload_on_change_picks_up_an_edited_config_without_a_signal(store: TestStore) {
    let world = World::new(store, FAST).await;
    let scripts = ["v1", "v2", "v3"].map(|v| versioned(&world, v));
    world.write_config(&format!("{FAST}\n{}", exec_config("t", &scripts[0])));
    let worker = world.worker("w", &["--reload-on-change"]);
    worker.wait_log("worker started", secs(20)).await;
    let a = world.enqueue(JobSpec::new("t", json!({}))).await;
    world.wait_status(&a, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(ran(&world, &a), "v1");

    // Written in place, then replaced by a rename as most editors save: each edit is one reload.
    world.write_config(&format!("{FAST}\n{}", exec_config("t", &scripts[1])));
    wait_lines(&worker, "config reloaded: handlers changed t", 1).await;
    let b = world.enqueue(JobSpec::new("t", json!({}))).await;
    world.wait_status(&b, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(ran(&world, &b), "v2");
    world.replace_config(&format!("{FAST}\n{}", exec_config("t", &scripts[2])));
    wait_lines(&worker, "config reloaded: handlers changed t", 2).await;
    let c = world.enqueue(JobSpec::new("t", json!({}))).await;
    world.wait_status(&c, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(ran(&world, &c), "v3");
    let log = worker.log();
    assert!(
        !log.contains("nothing changed"),
        "reading the file for a reload must not count as a change to it:\n{log}"
    );
}

async fn a_reload_in_code_swaps_rust_handlers_and_refuses_a_zero_concurrency(store: TestStore) {
    let world = World::new(store, "").await;
    let answer =
        |version: &'static str| handler_fn(move |_job, _cx| async move { Outcome::success_with(json!(version)) });
    let worker = Worker::builder(world.client.store().clone())
        .poll_interval(Duration::from_millis(20))
        .handler("greet", answer("v1"))
        .build()
        .unwrap();
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    let result = async |world: &World| {
        let id = world.enqueue(JobSpec::new("greet", json!({}))).await;
        handle.wake();
        let job = world.wait_status(&id, JobStatus::Succeeded, secs(20)).await;
        job.result.map(|r| r.get().to_string())
    };
    assert_eq!(result(&world).await.as_deref(), Some("\"v1\""));

    let refused = handle.reload(Reload::new().handler("greet", answer("v2")).concurrency(0));
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        result(&world).await.as_deref(),
        Some("\"v1\""),
        "a refused reload changes nothing"
    );

    let report = handle
        .reload(Reload::new().handler("greet", answer("v2")).concurrency(2))
        .unwrap();
    assert_eq!(report.to_string(), "handlers changed greet; concurrency 8 -> 2");
    assert_eq!(result(&world).await.as_deref(), Some("\"v2\""));
    stop_worker(&handle, run).await;
}

// One module of tests per store, so `cargo test --test it worker::postgres::` runs the worker end to
// end on one backend; each test gets a fresh store of its own.
store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores every_store
    cases {
        every_exec_outcome_follows_the_protocol,
        http_handlers_map_statuses_sign_bodies_and_honour_retry_after,
        an_http_202_parks_the_job_until_jobq_resolve_finishes_it,
        an_http_reply_spawns_children_and_awaits_them,
        a_job_waiting_past_its_wait_timeout_is_retried_then_dead,
        retries_back_off_exponentially_then_die,
        a_job_of_an_unknown_type_goes_dead_at_once,
        cancelling_a_running_exec_job_kills_its_process_group,
        a_forced_delete_of_a_running_exec_job_stops_it_and_drops_its_outcome,
        a_time_out_kills_the_group_even_when_it_ignores_sigterm,
        sigterm_releases_running_jobs_without_using_an_attempt,
        a_killed_workers_job_is_rescued_and_completed_by_another,
        three_workers_run_each_of_a_thousand_jobs_exactly_once,
        three_workers_enqueue_every_tick_once_through_a_kill_and_a_restart,
        an_emitted_event_runs_every_subscribed_job_once,
        missed_ticks_follow_catch_up_after_every_worker_was_down,
        overlap_skip_never_lets_two_ticks_jobs_live_at_once,
        a_schedule_paused_through_the_cli_stops_within_a_second_and_resumes,
        a_per_type_limit_is_never_exceeded,
        max_jobs_stops_the_worker_after_that_many,
        jobs_after_others_run_in_order_and_a_failure_runs_only_its_compensation,
        dag::random_graphs_end_as_the_model_says_through_a_kill,
        dag::random_graphs_end_as_the_model_says_across_an_export_and_import,
        a_handler_spawns_children_awaits_them_and_runs_again_with_their_outcomes,
        a_child_that_cannot_be_written_fails_the_attempt,
        retention_deletes_finished_jobs_older_than_it,
        retention_by_status_keeps_each_status_for_its_own_time,
        a_job_past_its_expiry_ends_expired_without_running,
        a_retry_gets_its_own_expiry_with_expires_per_attempt,
        retention_keeps_the_newest_and_a_types_own_count,
        wait_exits_with_the_outcome_and_workers_lists_the_worker,
        rust_handlers_run_in_the_library_runtime_and_panics_are_retries,
        typed_jobs_arrive_decoded_and_a_payload_that_does_not_decode_fails_for_good,
        a_job_enqueued_by_another_process_wakes_the_idle_worker,
        fast_handlers_prefetch_and_every_job_still_runs_once_or_goes_back_unused,
        sighup_reloads_handlers_and_settings_for_jobs_claimed_after_it,
        a_config_that_no_longer_loads_is_refused_on_reload_and_the_worker_keeps_its_own,
        reload_on_change_picks_up_an_edited_config_without_a_signal,
        a_reload_in_code_swaps_rust_handlers_and_refuses_a_zero_concurrency,
        flow::global_concurrency_holds_across_three_workers_and_a_killed_ones_slots_come_back,
        flow::a_rate_holds_across_three_workers,
        flow::a_partition_is_a_lane_per_tenant,
        flow::a_pause_reaches_every_worker_within_a_poll_interval_and_resume_drains,
        flow::snooze_spends_no_attempt_and_rate_limited_holds_the_type_on_every_worker,
        persistent::the_python_kit_answers_every_outcome,
        persistent::the_python_kit_spawns_children_and_awaits_them,
    }
}
