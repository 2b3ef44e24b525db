//! A running `jobq worker` on PostgreSQL against the faults a server in production sees: every jobq
//! session terminated mid-run (`pg_terminate_backend`, as a failover or an operator does), and the server
//! itself restarting. In both the worker logs, retries with back-off and carries on; every job ends
//! `succeeded` and none is left running.
//!
//! Terminating sessions on the shared test server must not touch other tests, so the worker here names
//! its sessions with an `application_name` unique to the test and only those are terminated. A restart
//! cannot be done to the shared server at all: that test runs a private PostgreSQL cluster of its own
//! (`initdb` into a temp dir, on a free port), which it restarts at will.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use jobq::Client;
use jobq::job::JobSpec;
use jobq::store::{self, StoreUrl};
use serde_json::json;
use sqlx::{Connection, PgConnection};
use tempfile::TempDir;

use crate::support::{PostgresSandbox, connect_postgres, fresh_schema, postgres_url, private, with_schema};

/// Quick heartbeats, rescue and retries, so a lost acknowledgement is recovered within seconds.
const CONFIG: &str = r#"
[worker]
heartbeat = "200ms"
stale_after = "2s"
poll_interval = "50ms"
shutdown_timeout = "1s"

[retry]
base_delay = "100ms"
jitter = 0.0

[handlers.nap]
builtin = "sleep"
"#;

/// How many jobs each test runs: enough that the faults land while jobs are claimed, running and
/// being acknowledged.
const JOBS: usize = 400;

/// A `jobq worker` process on `url`, its log in `dir`; killed if the test ends while it runs.
struct WorkerProcess {
    child: Child,
    log: PathBuf,
}

impl WorkerProcess {
    fn start(dir: &Path, url: &str) -> WorkerProcess {
        let config = dir.join("jobq.toml");
        std::fs::write(&config, CONFIG).unwrap();
        let log = dir.join("worker.log");
        let child = Command::new(env!("CARGO_BIN_EXE_jobq"))
            .args(["--url", url, "--config"])
            .arg(&config)
            .args(["worker", "--concurrency", "16", "--name", "fault-test"])
            .env_remove("JOBQ_URL")
            .env("JOBQ_LOG", "jobq=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        WorkerProcess { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!(
                "the worker exited ({status}) instead of riding out the fault\n{}",
                self.log()
            );
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Enqueues the test's jobs: naps of 20–50 ms, so the worker is busy throughout (about a second at 16).
async fn enqueue_naps(client: &Client) {
    let specs = (0..JOBS)
        .map(|i| JobSpec::new("nap", json!({ "ms": 20 + (i % 4) * 10 })))
        .collect();
    client.enqueue_many(specs).await.unwrap();
}

/// Succeeded jobs so far, through a client that may itself be hit by the fault (errors count as 0).
async fn succeeded(client: &Client) -> u64 {
    match client.stats(&[]).await {
        Ok(stats) => stats.queues.iter().map(|q| q.succeeded).sum(),
        Err(_) => 0,
    }
}

/// Waits until at least `n` jobs have succeeded, checking that the worker is still up.
async fn wait_succeeded(client: &Client, worker: &mut WorkerProcess, n: u64, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        worker.assert_running();
        let done = succeeded(client).await;
        if done >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {done} of {n} jobs succeeded within {secs}s\n{}",
            worker.log()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Every job ended succeeded and none is left running or pending.
async fn assert_all_succeeded(client: &Client, worker: &WorkerProcess) {
    let stats = client.stats(&[]).await.unwrap();
    let q = &stats.queues[0];
    assert_eq!(
        (q.succeeded, q.ready, q.scheduled, q.running, q.dead),
        (JOBS as u64, 0, 0, 0, 0),
        "{stats:?}\n{}",
        worker.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_rides_out_its_sessions_being_terminated() {
    let schema = fresh_schema();
    let base = postgres_url();
    let _sandbox = PostgresSandbox::new(&base, &schema);
    // The worker's sessions (pool and listener) carry this name, and only they are terminated.
    let app = format!("jobq-fault-{schema}");
    let url = format!("{}&application_name={app}", with_schema(&base, &schema));
    let store = connect_postgres(&with_schema(&base, &schema)).await;
    store.migrate().await.unwrap();
    let client = Client::new(store);
    enqueue_naps(&client).await;

    let dir = tempfile::tempdir().unwrap();
    let mut worker = WorkerProcess::start(dir.path(), &url);
    let mut admin = PgConnection::connect(&base).await.unwrap();
    let mut terminated = 0;
    for round in 1..=3u64 {
        wait_succeeded(&client, &mut worker, round * JOBS as u64 / 5, 60).await;
        let killed: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name LIKE $1 || '%') AS t",
        )
        .bind(&app)
        .fetch_one(&mut admin)
        .await
        .unwrap();
        terminated += killed;
    }
    assert!(terminated >= 3, "no worker session was terminated ({terminated})");

    wait_succeeded(&client, &mut worker, JOBS as u64, 60).await;
    assert_all_succeeded(&client, &worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_rides_out_a_server_restart() {
    let server = PrivateServer::start();
    let url = server.url();
    let store = store::connect(&StoreUrl::parse(&url).unwrap()).await.unwrap();
    store.migrate().await.unwrap();
    let client = Client::new(store);
    enqueue_naps(&client).await;

    let dir = tempfile::tempdir().unwrap();
    let mut worker = WorkerProcess::start(dir.path(), &url);
    wait_succeeded(&client, &mut worker, JOBS as u64 / 4, 60).await;
    // Most of the run is still ahead (about 3/4 of a second of naps), so the stop lands mid-run.
    let before = succeeded(&client).await;
    assert!(
        before < JOBS as u64 * 3 / 4,
        "the run was nearly over ({before} done) before the stop"
    );
    server.stop();
    // Down long enough for claims, acknowledgements and heartbeats to fail and back off.
    tokio::time::sleep(Duration::from_secs(2)).await;
    worker.assert_running();
    server.start_again();

    wait_succeeded(&client, &mut worker, JOBS as u64, 90).await;
    assert_all_succeeded(&client, &worker).await;
}

/// A PostgreSQL cluster of the test's own in a temp dir, listening on 127.0.0.1 at a free port, with
/// trust authentication. Stopped (immediately) when dropped.
struct PrivateServer {
    dir: TempDir,
    port: u16,
}

impl PrivateServer {
    fn start() -> PrivateServer {
        let dir = private::server_dir("jobq-pg-", "postgres");
        let server = PrivateServer {
            dir,
            port: private::free_port(),
        };
        let data = server.data();
        server.pg(
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"],
        );
        server.start_again();
        server
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        self.pg(
            "pg_ctl",
            &["-D", &self.data(), "-l", &log, "-o", &options, "-w", "start"],
        );
    }

    fn stop(&self) {
        self.pg("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    /// One of PostgreSQL's own programs, run as `postgres` when we are root.
    fn pg_command(program: &str) -> Command {
        let bin = pg_bindir().join(program);
        if private::running_as_root() {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(&bin);
            cmd
        } else {
            Command::new(&bin)
        }
    }

    /// Runs one of PostgreSQL's own programs, failing the test with how to install them when they are
    /// missing.
    fn pg(&self, program: &str, args: &[&str]) {
        let out = Self::pg_command(program)
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "running {program} for a private PostgreSQL cluster: {e}; the restart test needs PostgreSQL's \
                     server programs (Debian: apt install postgresql)"
                )
            });
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = Self::pg_command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// Where PostgreSQL's server programs are: `pg_config --bindir`, else the newest Debian install.
fn pg_bindir() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        if out.status.success() {
            return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        }
    }
    PathBuf::from("/usr/lib/postgresql/15/bin")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_store_idle_for_a_while_rides_out_terminated_sessions() {
    let schema = fresh_schema();
    let base = postgres_url();
    let _sandbox = PostgresSandbox::new(&base, &schema);
    let app = format!("jobq-idle-{schema}");
    let url = format!("{}&application_name={app}", with_schema(&base, &schema));
    let store = connect_postgres(&url).await;
    store.migrate().await.unwrap();
    let client = Client::new(store);
    // Several pooled connections, all idle once these return.
    let specs = (0..4).map(|i| JobSpec::new("nap", json!({ "ms": i })));
    futures_util::future::join_all(specs.map(|s| client.enqueue(s))).await;

    let mut admin = PgConnection::connect(&base).await.unwrap();
    let killed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1) AS t",
    )
    .bind(&app)
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert!(killed >= 1, "no session was terminated");
    // An application calling again a while later never sees the dead connections: they are pinged
    // before use and replaced.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for _ in 0..4 {
        client
            .enqueue(JobSpec::new("nap", json!({})))
            .await
            .expect("enqueue after the sessions died");
    }
    assert_eq!(succeeded(&client).await, 0);
    assert_eq!(client.stats(&[]).await.unwrap().queues[0].ready, 8);
}
