//! What every server store (PostgreSQL, MySQL, Redis) must do beyond the `Store` contract, written
//! once and run on each: a server that cannot be reached fails at once and never shows the password;
//! a running worker whose connections are killed again and again carries on and loses no job. What the
//! SQL stores share besides (the documented table applications insert into, racing migrations, a
//! server restart) is in [`sql`].
//!
//! A case is `async fn case<S: ServerStore>(server: &S)`, given the store's description
//! (`support::postgres::Postgres`, …, see `support/server.rs`), and `store_tests!` expands it into
//! `server_stores::<store>::<case>`. Behaviour of one store alone (LISTEN/NOTIFY, MySQL's lock waits,
//! the Redis inbox, …) stays in that store's own file. Workers here are `jobq worker` processes, so
//! that a wait can watch their logs and a failure shows them.

mod sql;

use std::time::Duration;

use jobq::Client;
use jobq::job::{JobSpec, JobStatus};
use jobq::store::{self, JobFilter, List, StoreError, StoreUrl};
use serde_json::json;

use crate::support::counting::CountingRelay;
use crate::support::process::{self, FAST, Process};
use crate::support::server::{Killer, ServerStore, unreachable};
use crate::support::{eventually, lazy, store_tests, within};

/// How long a wait for a worker's progress may take on a loaded test machine.
const PROGRESS: Duration = Duration::from_secs(60);

/// How much of a worker's log a failure shows: its last lines.
const LOG_LINES: usize = 40;

/// How many jobs a worker runs through a fault: enough that the faults land while jobs are claimed,
/// running and being acknowledged.
const JOBS: u64 = 400;

/// Starts `jobq worker` on `url`, 16 jobs at once, its files in `dir`: quick (`process::FAST`), and
/// rescuing within seconds, so that a job whose acknowledgement was lost with its connection is soon
/// run again.
fn start_worker(dir: &tempfile::TempDir, url: &str, name: &str) -> Process {
    let config = format!(
        "{}\n[handlers.nap]\nbuiltin = \"sleep\"\n",
        FAST.replace("stale_after = \"10s\"", "stale_after = \"2s\"")
    );
    Process::worker(dir.path(), url, &config, &["--concurrency", "16", "--name", name])
}

/// Enqueues [`JOBS`] naps of 40–70 ms, so the worker is busy throughout (about two seconds at 16):
/// long enough for several rounds of kills on a loaded machine.
async fn enqueue_naps(client: &Client) {
    let specs = (0..JOBS)
        .map(|i| JobSpec::new("nap", json!({ "ms": 40 + (i % 4) * 10 })))
        .collect();
    client.enqueue_many(specs).await.unwrap();
}

/// Succeeded jobs so far, through a client that may itself be hit by the fault.
async fn succeeded(client: &Client) -> Result<u64, jobq::Error> {
    let stats = client.stats(&[]).await?;
    Ok(stats.queues.iter().map(|q| q.succeeded).sum())
}

/// Waits until at least `n` jobs have succeeded, checking that the worker is still up.
async fn wait_succeeded(client: &Client, worker: &Process, n: u64, timeout: Duration) {
    eventually(format!("{n} of {JOBS} jobs to succeed"), timeout, async || {
        worker.assert_running();
        match succeeded(client).await {
            Ok(done) if done >= n => Ok(()),
            answer => Err(lazy(move || format!("{answer:?}\n{}", worker.log_tail(LOG_LINES)))),
        }
    })
    .await
}

/// Every one of `n` jobs ended succeeded and none is left running, pending or dead. The client's
/// own connections may have been killed with the worker's (MySQL's killer ends every connection to
/// the test's database): a call that meets one is made again, as the worker makes its calls again.
async fn assert_all_succeeded(client: &Client, worker: &Process, n: u64) {
    let stats = eventually("the queue's counts", PROGRESS, async || client.stats(&[]).await).await;
    let q = &stats.queues[0];
    assert_eq!(
        (q.succeeded, q.ready, q.scheduled, q.running, q.dead),
        (n, 0, 0, 0, 0),
        "{stats:?}\n{}",
        worker.log_tail(LOG_LINES)
    );
}

/// Stops the worker with SIGTERM and checks that it exits cleanly, having done some jobs.
async fn stop(worker: &Process) {
    worker.signal(libc::SIGTERM);
    let status = worker.exit(Duration::from_secs(15)).await;
    let log = worker.log_tail(LOG_LINES);
    assert_eq!(status.code(), Some(0), "{log}");
    // The last line says how many jobs this worker did: `worker stopped: shutdown … jobs_done=N`.
    let done: u64 = log
        .lines()
        .filter(|l| l.contains("worker stopped"))
        .find_map(|l| l.split("jobs_done=").nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count of jobs done in the worker's last words\n{log}"));
    // A finish whose answer was cut off is sent again and then finds its own outcome already applied
    // (answered as stale), so the worker's own count may fall short; the store's is what counts.
    assert!(done > 0, "{log}");
}

async fn an_unreachable_server_fails_fast_without_the_password<S: ServerStore>(_server: &S) {
    for url in unreachable(S::KIND) {
        let parsed = url::Url::parse(url).expect("url");
        let password = parsed.password().expect("a URL with a password");
        // A bound on the wait that turns a hang into a failure; how long failing takes is measured by
        // `cargo bench --bench timings`.
        let url = StoreUrl::parse(url).expect("url");
        let err = within(
            format!("connecting to {}", url.redacted()),
            Duration::from_secs(30),
            store::connect(&url),
        )
        .await
        .expect_err("an unreachable server");
        assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
        assert!(err.is_unavailable(), "{err}");
        let shown = format!("{:#}", anyhow::Error::from(err));
        let redacted = format!("{}:***@", parsed.username());
        assert!(!shown.contains(password) && shown.contains(&redacted), "{shown}");
        let expected = format!("cannot reach the {} store at {}://{redacted}", S::KIND, parsed.scheme());
        assert!(shown.starts_with(&expected), "{shown}");
    }
}

/// Issue 14: what a cron script or a PHP app runs, one `jobq` command at a time, opens one connection
/// to the server, however many calls the command makes (the migration check, then its own).
async fn a_one_shot_command_opens_one_connection<S: ServerStore>(server: &S) {
    let (store, _corner) = server.store().await;
    let relay = CountingRelay::to(store.url()).await;
    let home = tempfile::tempdir().expect("temp dir");
    let run = async |args: &[&str]| {
        let out = within(
            format!("jobq {}", args.join(" ")),
            PROGRESS,
            tokio::process::Command::from(process::jobq())
                .arg("--url")
                .arg(relay.url())
                .args(args)
                .current_dir(home.path())
                .env("HOME", home.path())
                .env("XDG_CONFIG_HOME", home.path().join("config"))
                .output(),
        )
        .await
        .expect("running jobq");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "jobq {args:?}: {stderr}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let id = run(&["enqueue", "noop", "{}"]).await;
    assert_eq!(relay.take(), 1, "connections of jobq enqueue");
    for args in [
        &["show", id.as_str()][..],
        &["stats"],
        &["list"],
        &["cancel", id.as_str()],
    ] {
        run(args).await;
        assert_eq!(relay.take(), 1, "connections of jobq {}", args.join(" "));
    }
}

async fn a_running_worker_survives_kill_of_its_connections_and_loses_no_job<S: ServerStore>(server: &S) {
    let (store, corner) = server.store().await;
    let (url, mut connections) = server.killable(&store, &corner).await;
    let client = Client::new(store.store().clone());
    enqueue_naps(&client).await;
    let dir = tempfile::tempdir().unwrap();
    let worker = &start_worker(&dir, &url, "kill-test");
    // Kill the worker's connections again and again while it works through the queue: each time as
    // soon as it has connected again and got a job done since the last kill (counted once the kill is
    // over, so that a job done just before it does not count). A session seen open may be one the last
    // kill is still ending, gone by the time of this one: a kill that finds none waits for more.
    let mut rounds = 0;
    let mut done = 0;
    while done < JOBS {
        let progress = format!("the worker to connect again and get more than {done} of {JOBS} jobs done");
        let all_done = eventually(progress, PROGRESS, async || {
            worker.assert_running();
            match succeeded(&client).await {
                Ok(now) if now >= JOBS => Ok(true),
                Ok(now) if now > done && connections.kill().await > 0 => Ok(false),
                answer => Err(lazy(move || format!("{answer:?}\n{}", worker.log_tail(LOG_LINES)))),
            }
        })
        .await;
        if all_done {
            break;
        }
        rounds += 1;
        done = eventually("a count of jobs done after the kill", PROGRESS, async || {
            succeeded(&client).await
        })
        .await;
    }
    assert!(rounds >= 3, "killed the worker's connections only {rounds} times");
    // Once more while it idles; it is still alive: a job enqueued after the last kill runs too.
    connections.kill().await;
    // An enqueue with an id of its own: made again after a killed connection, it is not made twice.
    let after = eventually("the job after the kills to be enqueued", PROGRESS, async || {
        client
            .enqueue(JobSpec::new("nap", json!({ "ms": 0 })).id("after-the-kills"))
            .await
    })
    .await
    .id;
    eventually("the job after the kills to succeed", PROGRESS, async || {
        worker.assert_running();
        match client.get(after.as_str()).await {
            Ok(job) if job.status == JobStatus::Succeeded => Ok(()),
            answer => Err(lazy(move || format!("{answer:?}\n{}", worker.log_tail(LOG_LINES)))),
        }
    })
    .await;
    assert_all_succeeded(&client, worker, JOBS + 1).await;
    let all = List {
        filter: JobFilter::default(),
        limit: JOBS as u32 + 1,
        offset: 0,
        after: None,
    };
    for job in eventually("every job", PROGRESS, async || client.list(&all).await).await {
        assert_eq!(job.status, JobStatus::Succeeded, "{}", job.id);
    }
    stop(worker).await;
}

store_tests! {
    run |case, server| case(&server).await;
    stores {
        postgres => support::postgres::Postgres,
        mysql => support::mysql::Mysql,
        redis => support::redis::Redis,
    }
    cases {
        an_unreachable_server_fails_fast_without_the_password,
        a_one_shot_command_opens_one_connection,
        a_running_worker_survives_kill_of_its_connections_and_loses_no_job,
    }
}
