//! What the SQL stores (PostgreSQL, MySQL) share beyond the `Store` contract, written once and run on
//! each: the documented table that applications insert into inside their own transactions (rolled
//! back: no job; committed: a job with defaults in every other column, run by an idle worker woken by
//! the store), the table's refusal of rows jobq could not read, migrations racing each other, and a
//! running worker whose private server restarts under it.
//!
//! A case is `async fn case<S: SqlStore>(server: &S)`; `store_tests!` expands it into
//! `server_stores::sql::<store>::<case>`. Applications speak plain SQL here, through a connection of
//! their own ([`AppConnection`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobq::Client;
use jobq::handler::{Outcome, handler_fn};
use jobq::job::{JobSpec, JobStatus, UniqueMode};
use jobq::store::{JobFilter, Lease, List, Transition, migrate};
use jobq::time::UnixMillis;
use jobq::worker::Worker;
use serde_json::json;

use super::{JOBS, assert_all_succeeded, enqueue_naps, start_worker, stop, succeeded, wait_succeeded};
use crate::support::jobs::*;
use crate::support::process::{self, FAST, Process};
use crate::support::server::{AppConnection, Killer, PrivateServer, SqlStore};
use crate::support::{connect, eventually, stop_worker, store_tests};

/// How long anything that should happen at once may take on a loaded test machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// The documented insert an application runs inside its own transaction.
const ORDER_INSERT: &str =
    "INSERT INTO jobq_jobs (id, queue, job_type, payload) VALUES ('order-1', 'default', 'order.paid', '{\"order\":1}')";

async fn a_rolled_back_plain_insert_leaves_no_job<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    app.run("BEGIN").await.expect("begin");
    app.run(ORDER_INSERT).await.expect("the documented insert");
    app.run("ROLLBACK").await.expect("rollback");
    assert!(store.get(&id("order-1")).await.expect("get").is_none());
    let now = UnixMillis::now().plus(Duration::from_secs(1));
    assert!(claim(&store, "default", WORKER, 10, now).await.is_empty());
}

/// Commits, in one transaction of the application's own, its own `writes`, the documented insert and an
/// insert with the type alone; returns the id the database generated for the last where the dialect
/// hands it back.
async fn commit_plain_inserts<S: SqlStore>(app: &mut S::App, writes: &[&str]) -> Option<String> {
    app.run("BEGIN").await.expect("begin");
    for write in writes {
        app.run(write)
            .await
            .unwrap_or_else(|e| panic!("the application's own {write}: {e}"));
    }
    app.run(ORDER_INSERT).await.expect("the documented insert");
    // Even the id and the queue may be left out.
    let returned = S::insert_type_only(app).await;
    app.run("COMMIT").await.expect("commit");
    returned
}

async fn a_committed_plain_insert_is_claimable_with_defaults_in_every_other_column<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    let before = UnixMillis::now();
    // The application's own write and the job commit together (a transactional outbox).
    let returned = commit_plain_inserts::<S>(&mut app, &[S::ORDERS_TABLE, "INSERT INTO orders VALUES (1)"]).await;
    let after = UnixMillis::now();

    let job = get(&store, &id("order-1")).await;
    assert_eq!(
        (job.queue.as_str(), job.job_type.as_str(), job.payload.get()),
        ("default", "order.paid", r#"{"order":1}"#)
    );
    assert_eq!(
        (job.status, job.attempt, job.max_attempts, job.priority),
        (JobStatus::Pending, 0, 5, 0)
    );
    assert!(job.meta.is_empty() && job.errors.is_empty() && job.unique_key.is_none() && job.timeout_ms.is_none());
    assert!(job.progress.is_none() && job.result.is_none() && job.worker_id.is_none());
    assert!(job.started_at.is_none() && job.finished_at.is_none() && job.heartbeat_at.is_none());
    // The server's clock fills the times: the same clock as ours on this machine.
    for t in [job.created_at, job.run_at] {
        assert!(
            before.0 - 5 <= t.0 && t.0 <= after.0 + 5,
            "{t:?} not within {before:?}..{after:?}"
        );
    }

    let audit = store
        .list(&List {
            filter: JobFilter {
                job_types: vec!["order.audit".into()],
                ..Default::default()
            },
            limit: 10,
            offset: 0,
            after: None,
        })
        .await
        .expect("list");
    assert_eq!(audit.len(), 1);
    let generated = audit[0].id.to_string();
    if let Some(returned) = returned {
        assert_eq!(returned, generated, "the id the insert returned");
    }
    // The generated id is a time-ordered UUIDv7, like the ids jobq makes.
    let uuid = uuid::Uuid::parse_str(&generated).expect("a UUID");
    assert_eq!(uuid.get_version_num(), 7, "{generated}");
    let (secs, nanos) = uuid.get_timestamp().expect("a v7 timestamp").to_unix();
    let millis = secs as i64 * 1000 + i64::from(nanos / 1_000_000);
    assert!(before.0 - 5 <= millis && millis <= after.0 + 5, "{generated}");
    assert_eq!((audit[0].queue.as_str(), audit[0].payload.get()), ("default", "null"));

    let claimed = claim(&store, "default", WORKER, 10, after.plus(Duration::from_secs(1))).await;
    assert_eq!(sorted(ids(&claimed)), sorted(vec![generated, "order-1".to_string()]));
    assert!(claimed.iter().all(|j| j.status == JobStatus::Running && j.attempt == 1));
}

async fn a_committed_plain_insert_is_run_by_an_idle_worker<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let ran = Arc::new(Mutex::new(Vec::new()));
    let record = {
        let ran = ran.clone();
        move |job: jobq::job::Job, _cx| {
            let ran = ran.clone();
            async move {
                ran.lock().unwrap().push(job.id.to_string());
                Outcome::success()
            }
        }
    };
    // A poll far longer than any wait here: only the store's own wake-up (PostgreSQL's insert trigger,
    // MySQL's subscription) can start the inserted jobs.
    let worker = Worker::builder(store.store().clone())
        .poll_interval(Duration::from_secs(600))
        .handler(JOB_TYPE, handler_fn(|_job, _cx| async { Outcome::success() }))
        .handler("order.paid", handler_fn(record))
        .handler("order.audit", handler_fn(|_job, _cx| async { Outcome::success() }))
        .build()
        .expect("a worker");
    let handle = worker.handle();
    let run = tokio::spawn(worker.run());
    // Let the worker reach its idle wait before the application commits: once a job enqueued through
    // jobq has run, the worker has claimed, found nothing more, and waits.
    add(&store, spec("warm-up")).await;
    eventually("the warm-up job to succeed", DEADLINE, async || {
        let job = get(&store, &id("warm-up")).await;
        if job.status == JobStatus::Succeeded {
            Ok(())
        } else {
            Err(format!("{job:?}"))
        }
    })
    .await;

    let mut app = S::App::open(&corner).await;
    commit_plain_inserts::<S>(&mut app, &[]).await;
    eventually("both committed jobs to run", DEADLINE, async || {
        let done = count(&store, JobStatus::Succeeded, UnixMillis::now()).await;
        if done == 3 {
            Ok(())
        } else {
            Err(format!("{done} of 3 jobs succeeded"))
        }
    })
    .await;
    assert_eq!(get(&store, &id("order-1")).await.attempt, 1);
    let report = stop_worker(&handle, run).await;
    assert_eq!(report.jobs_done, 3, "the warm-up job and the two inserted ones");
    assert_eq!(*ran.lock().unwrap(), ["order-1"]);
}

async fn events_an_application_commits_are_expanded_once_by_racing_workers<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    app.run("BEGIN").await.expect("begin");
    app.run("INSERT INTO jobq_events (id, name, payload) VALUES ('rolled', 'user.registered', '{\"userId\":1}')")
        .await
        .expect("the documented event insert");
    app.run("ROLLBACK").await.expect("rollback");
    app.run("BEGIN").await.expect("begin");
    app.run("INSERT INTO jobq_events (id, name, payload) VALUES ('ev-1', 'user.registered', '{\"userId\":7}')")
        .await
        .expect("the documented event insert");
    // Even the id may be left out.
    app.run("INSERT INTO jobq_events (name) VALUES ('user.deleted')")
        .await
        .expect("an event with its name alone");
    app.run("COMMIT").await.expect("commit");
    let now = UnixMillis::now();
    let expand = jobq::store::ExpandEvents {
        expander: &two_jobs,
        limit: 100,
        now,
    };
    let racers = (0..4).map(|_| store.expand_events(&expand));
    let expanded: usize = futures_util::future::join_all(racers)
        .await
        .into_iter()
        .map(|n| n.expect("expand"))
        .sum();
    assert_eq!(expanded, 2, "the two committed events, each by one worker");
    assert_eq!(
        store
            .expand_events(&jobq::store::ExpandEvents {
                expander: &two_jobs,
                limit: 100,
                now
            })
            .await
            .expect("expand"),
        0
    );
    let jobs = store
        .list(&List {
            filter: JobFilter::default(),
            limit: 100,
            offset: 0,
            after: None,
        })
        .await
        .expect("list");
    assert_eq!(jobs.len(), 4, "{jobs:?}");
    assert!(jobs.iter().all(|j| !j.id.as_str().contains("rolled")));
    let first = get(&store, &id("evt:ev-1#1")).await;
    assert_eq!(first.payload.get(), r#"{"userId":7}"#);
    assert_eq!(first.meta["event"], "user.registered");
}

async fn an_emit_that_fails_partway_leaves_nothing<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    // The server refuses the second job of the event (a trigger of the test's own).
    let postgres = store.kind() == jobq::store::StoreKind::Postgres;
    let refuse = match store.kind() {
        jobq::store::StoreKind::Postgres => vec![
            "CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
             IF NEW.job_type = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$",
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON jobq_jobs FOR EACH ROW EXECUTE FUNCTION refuse_boom()",
        ],
        _ => vec![
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON jobq_jobs FOR EACH ROW BEGIN \
             IF NEW.job_type = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom refused'; END IF; END",
        ],
    };
    for sql in refuse {
        app.run(sql).await.expect("the refusing trigger");
    }
    let event = jobq::store::Event {
        id: "partway".into(),
        name: "order.paid".into(),
        payload: raw("{}"),
        meta: Default::default(),
    };
    let mut jobs = two_jobs(&event, T0);
    jobs[1].job_type = "boom".into();
    let emit = jobq::store::Emit { event, jobs, now: T0 };
    let failed = store.emit(std::slice::from_ref(&emit)).await;
    assert!(failed.is_err(), "{failed:?}");
    assert!(
        store.get(&id("evt:partway#1")).await.expect("get").is_none(),
        "no job of the event"
    );
    // Nor was the event recorded: once the server accepts its jobs, the same id emits.
    let drop = if postgres {
        "DROP TRIGGER refuse_boom ON jobq_jobs"
    } else {
        "DROP TRIGGER refuse_boom"
    };
    app.run(drop).await.expect("drop the trigger");
    let mut emit = emit;
    emit.jobs[1].job_type = JOB_TYPE.into();
    let answers = store.emit(std::slice::from_ref(&emit)).await.expect("emit");
    assert_eq!(answers, [jobq::store::EmitOutcome::Emitted]);
    assert!(store.get(&id("evt:partway#2")).await.expect("get").is_some());
}

async fn the_table_refuses_rows_jobq_could_not_read<S: SqlStore>(server: &S) {
    let (_store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    for bad in [
        "INSERT INTO jobq_jobs (job_type, payload) VALUES ('t', '{not json')",
        "INSERT INTO jobq_jobs (job_type, meta) VALUES ('t', '[1, 2]')",
        // Even PHP's empty array: the guide says to write an object.
        "INSERT INTO jobq_jobs (job_type, meta) VALUES ('t', '[]')",
        "INSERT INTO jobq_jobs (job_type, status) VALUES ('t', 'later')",
        "INSERT INTO jobq_jobs (job_type, max_attempts) VALUES ('t', 0)",
        "INSERT INTO jobq_jobs (queue, payload) VALUES ('default', '{}')",
    ] {
        assert!(app.run(bad).await.is_err(), "accepted: {bad}");
    }
}

async fn concurrent_migrations_apply_each_version_once<S: SqlStore>(server: &S) {
    let (url, corner, _sandbox) = server.empty_corner().await;
    // Separate stores, as separate processes would be: six pools racing on a corner no migration has
    // touched yet.
    let mut stores = Vec::new();
    for _ in 0..6 {
        stores.push(connect(&url).await);
    }
    migrate_concurrently(stores.iter().cloned()).await;
    let mut app = S::App::open(&corner).await;
    let versions = app.ints("SELECT version FROM jobq_migrations ORDER BY version").await;
    let expected: Vec<i32> = (1..=migrate::latest(S::KIND) as i32).collect();
    assert_eq!(versions, expected);
    add(&stores[0], spec("after")).await;
    assert_eq!(get(&stores[5], &id("after")).await.status, JobStatus::Pending);
}

/// Issue 43: eight processes (two burst workers, six enqueues) started at the same moment on a corner
/// no process has migrated yet, round after round: each waits for the others' migration, none fails,
/// and every job is there.
async fn processes_started_together_on_a_fresh_corner_all_succeed<S: SqlStore>(server: &S) {
    for round in 0..10 {
        let (url, _corner, _sandbox) = server.empty_corner().await;
        process::started_together(&url, round).await;
        let store = connect(&url).await;
        assert_eq!(newest_jobs(&store).await.len(), process::TOGETHER_JOBS, "round {round}");
    }
}

/// Issue 43: one-shot commands and workers end their connections with the server's goodbye, so that
/// the server logs none of them as aborted ("Aborted connection … Got an error reading communication
/// packets", "unexpected EOF on client connection"). On a server of the test's own, whose count of
/// such sessions is this test's alone.
async fn every_command_ends_its_connections_with_a_goodbye<S: SqlStore>(_server: &S) {
    let private = S::Private::start().await;
    let url = private.url();
    let before = S::sessions_without_goodbye(&url).await;
    let home = tempfile::tempdir().expect("a temporary folder");
    for args in [
        &["migrate"][..],
        &["enqueue", "bye", "{}"],
        &["stats"],
        &["list"],
        &["worker", "--burst", "--handler", "bye=builtin:noop"],
    ] {
        let out = process::output(&url, args);
        assert!(
            out.status.success(),
            "jobq {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A worker that waits for work (listening or polling) until it is told to stop.
    let worker = Process::worker(home.path(), &url, FAST, &["--handler", "bye=builtin:noop"]);
    worker.wait_log("worker started", DEADLINE).await;
    worker.terminate(DEADLINE).await;
    // Every command has exited, its connections with it. A session the test drops itself is counted
    // once the server notices; the commands' sessions ended before it began.
    S::drop_a_session_without_goodbye(&url).await;
    eventually(
        "the server to count the test's own dropped session",
        DEADLINE,
        async || {
            let now = S::sessions_without_goodbye(&url).await;
            if now > before { Ok(()) } else { Err(now) }
        },
    )
    .await;
    assert_eq!(
        S::sessions_without_goodbye(&url).await,
        before + 1,
        "sessions that ended without a goodbye, besides the test's own"
    );
}

async fn a_running_worker_rides_out_a_server_restart<S: SqlStore>(_server: &S) {
    // A server of the test's own: the shared one must stay up for every other test.
    let mut private = S::Private::start().await;
    let url = private.url();
    let store = connect(&url).await;
    store.migrate().await.expect("migrate");
    let client = Client::new(store);
    enqueue_naps(&client).await;
    let dir = tempfile::tempdir().unwrap();
    let worker = start_worker(&dir, &url, "restart-test");
    wait_succeeded(&client, &worker, JOBS / 4, super::PROGRESS).await;
    // Most of the run is still ahead (about 3/4 of a second of naps), so the stop lands mid-run.
    let before = succeeded(&client).await.expect("stats");
    assert!(
        before < JOBS * 3 / 4,
        "the run was nearly over ({before} done) before the stop"
    );
    let warnings = |log: &str| log.lines().filter(|l| l.contains(" WARN ")).count();
    let warned = warnings(&worker.log());
    let lines_before = worker.log().lines().count();
    private.stop().await;
    // Down until the worker has met the outage: a call of its failed, and it said so and carries on.
    // (Which call fails first differs: a claim on PostgreSQL; on MySQL the wake-up poll, while claims and
    // acknowledgements wait for a connection, failing only when that wait times out, seconds later.)
    eventually("the worker to warn of the outage", super::PROGRESS, async || {
        let log = worker.log();
        if warnings(&log) > warned { Ok(()) } else { Err(log) }
    })
    .await;
    worker.assert_running();
    private.start_again().await;

    wait_succeeded(&client, &worker, JOBS, Duration::from_secs(90)).await;
    assert_all_succeeded(&client, &worker, JOBS).await;
    // Issue 43: the outage reads as a handful of lines (when it began and that every call is being
    // retried, when it ended), not as every task's every failure and the database pool's own.
    worker.wait_log("answers again", super::PROGRESS).await;
    let log = worker.log();
    let lines: Vec<&str> = log.lines().skip(lines_before).collect();
    let end = lines
        .iter()
        .rposition(|l| l.contains("answers again"))
        .expect("the end of the outage");
    let outage = &lines[..=end];
    assert!(
        outage.len() <= 6 && outage.iter().any(|l| l.contains("retrying every store call")),
        "the outage took {} lines:\n{}",
        outage.len(),
        outage.join("\n")
    );
    stop(&worker).await;
}

/// An application's calls about one job run on connections the store keeps apart from its pool
/// (`src/store/sql/kept.rs`). Killed by the server moments after their last use (too soon for the
/// ping an idle connection gets), they cost the application no failed call: the call that meets a
/// dead one runs again on a connection that answers, and the dead ones are never used again.
async fn calls_about_one_job_ride_out_killed_connections<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let (url, mut connections) = server.killable(&store, &corner).await;
    let killable = connect(&url).await;
    let client = Client::new(killable.clone());
    for round in 0..3 {
        let id = format!("before-kill-{round}");
        client
            .enqueue(JobSpec::new("nap", json!({})).id(&id))
            .await
            .expect("enqueue");
        assert!(client.get(id.as_str()).await.is_ok(), "get");
        assert!(connections.kill().await > 0, "no connection to kill");
        let id = format!("after-kill-{round}");
        client
            .enqueue(JobSpec::new("nap", json!({})).id(&id))
            .await
            .unwrap_or_else(|e| panic!("an enqueue right after the kill (round {round}): {e:#}"));
        let job = client
            .get(id.as_str())
            .await
            .unwrap_or_else(|e| panic!("a get after the kill (round {round}): {e:#}"));
        assert_eq!(job.status, JobStatus::Pending);
        assert!(connections.kill().await > 0, "no connection to kill");
        client
            .get(id.as_str())
            .await
            .unwrap_or_else(|e| panic!("a get right after the kill (round {round}): {e:#}"));
    }
    assert_eq!(newest_jobs(&killable).await.len(), 6);
}

/// A call about one job whose caller gives up half-way (here: its insert waits for an application's
/// transaction that holds the same id) leaves its connection in an unknown state, which the store
/// closes instead of keeping: the calls after it work, also many at once (more than the kept
/// connections, the rest going through the pool).
async fn an_abandoned_call_about_one_job_leaves_the_next_ones_working<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let client = Client::new(store.store().clone());
    client
        .enqueue(JobSpec::new("nap", json!({})).id("first"))
        .await
        .expect("enqueue");
    let mut app = S::App::open(&corner).await;
    app.run("BEGIN").await.expect("begin");
    app.run(ORDER_INSERT).await.expect("the documented insert");
    let blocked = client.enqueue(JobSpec::new("order.paid", json!({})).id("order-1"));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), blocked).await.is_err(),
        "an insert of an id another transaction holds went through"
    );
    app.run("ROLLBACK").await.expect("rollback");
    let ids: Vec<String> = (0..16).map(|i| format!("after-{i}")).collect();
    let enqueues = ids
        .iter()
        .map(|id| client.enqueue(JobSpec::new("nap", json!({})).id(id)));
    for enqueued in futures_util::future::join_all(enqueues).await {
        enqueued.expect("an enqueue after the abandoned one");
    }
    let gets = ids.iter().map(|id| client.get(id.as_str()));
    for got in futures_util::future::join_all(gets).await {
        assert_eq!(
            got.expect("a get after the abandoned enqueue").status,
            JobStatus::Pending
        );
    }
    assert!(client.get("first").await.is_ok());
}

/// The statements of the guide's "Unique modes from SQL" for store `S`: its first `sql` block after
/// that heading, comment lines dropped, split where a line ends with `;`.
fn guide_unique_mode_statements<S: SqlStore>() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/src")
        .join(S::GUIDE);
    let page = std::fs::read_to_string(&path).expect("the guide's page");
    let section = page
        .split_once("## Unique modes from SQL")
        .unwrap_or_else(|| panic!("{} has no section Unique modes from SQL", path.display()))
        .1;
    let block = section.split_once("```sql\n").expect("a sql block").1;
    let block = block.split_once("```").expect("the block's end").0;
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim_start().starts_with("--")).collect();
    lines
        .join("\n")
        .split(";\n")
        .map(|s| s.trim().trim_end_matches(';').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Runs `statements` one by one on the application's connection.
async fn run_all<A: AppConnection>(app: &mut A, statements: &[String]) {
    for statement in statements {
        app.run(statement).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
}

/// The guide's plain SQL for each unique mode does what jobq's own enqueue does: run twice, it
/// creates one job per key and then replaces, debounces and throttles into them; once the jobs are
/// claimed, running it again changes none of them, and the keep-last job gets one job behind it.
async fn the_guides_unique_mode_statements_work_as_documented<S: SqlStore>(server: &S) {
    let (store, corner) = server.store().await;
    let mut app = S::App::open(&corner).await;
    let statements = guide_unique_mode_statements::<S>();
    assert!(statements.len() >= 8, "{statements:?}");
    run_all(&mut app, &statements).await;
    run_all(&mut app, &statements).await;
    let everything = List {
        filter: JobFilter::default(),
        limit: 100,
        offset: 0,
        after: None,
    };
    let jobs = store.list(&everything).await.expect("list");
    let by_type = |t: &str| {
        jobs.iter()
            .find(|j| j.job_type == t)
            .unwrap_or_else(|| panic!("no {t} job"))
    };
    assert_eq!(jobs.len(), 4, "one job per key: {jobs:?}");
    assert_eq!(by_type("calendar.sync").unique_mode, UniqueMode::KeepLast);
    assert_eq!(by_type("search.index").unique_mode, UniqueMode::Replace);
    let digest = by_type("digest.send");
    assert_eq!(
        digest.unique_mode,
        UniqueMode::Debounce {
            window_ms: 30_000,
            max_wait_ms: Some(300_000),
            queue_behind: false,
        }
    );
    let put_off = digest.run_at.0 - digest.created_at.0;
    assert!(
        (30_000..=300_000).contains(&put_off),
        "run {put_off} ms after its first enqueue"
    );
    let report = by_type("report.mail");
    assert_eq!(
        (report.id.as_str(), report.unique_mode),
        ("report-7-a1", UniqueMode::Throttle { window_ms: 60_000 })
    );

    // Claimed, they are left alone: nothing of theirs changes, and only the keep-last job gets a
    // job beside it, blocked behind it, holding its key; run again, the statements replace that one.
    let later = UnixMillis::now().plus(Duration::from_secs(600));
    assert_eq!(claim(&store, "default", WORKER, 10, later).await.len(), 4);
    run_all(&mut app, &statements).await;
    run_all(&mut app, &statements).await;
    let after = store.list(&everything).await.expect("list");
    assert_eq!(after.len(), 5, "{after:?}");
    for job in &after {
        match jobs.iter().find(|j| j.id == job.id) {
            Some(before) => assert_eq!(
                (job.status, job.run_at, job.payload.get(), &job.unique_key),
                (
                    JobStatus::Running,
                    before.run_at,
                    before.payload.get(),
                    &before.unique_key
                )
            ),
            None => assert_eq!(
                (job.job_type.as_str(), job.status, job.unique_key.as_deref()),
                ("calendar.sync", JobStatus::Blocked, Some("cal:7"))
            ),
        }
    }
    let running = by_type("calendar.sync");
    let ok = Transition::Succeeded { result: None };
    assert!(finish(&store, &Lease::of(&get(&store, &running.id).await), ok, later).await);
    let released = claim(&store, "default", WORKER, 10, later).await;
    assert_eq!(released.len(), 1, "the job behind is released by the running one's end");
    assert_eq!(released[0].job_type, "calendar.sync");
}

store_tests! {
    run |case, server| case(&server).await;
    stores {
        postgres => support::postgres::Postgres,
        mysql => support::mysql::Mysql,
    }
    cases {
        the_guides_unique_mode_statements_work_as_documented,
        calls_about_one_job_ride_out_killed_connections,
        an_abandoned_call_about_one_job_leaves_the_next_ones_working,
        a_rolled_back_plain_insert_leaves_no_job,
        a_committed_plain_insert_is_claimable_with_defaults_in_every_other_column,
        a_committed_plain_insert_is_run_by_an_idle_worker,
        the_table_refuses_rows_jobq_could_not_read,
        events_an_application_commits_are_expanded_once_by_racing_workers,
        an_emit_that_fails_partway_leaves_nothing,
        concurrent_migrations_apply_each_version_once,
        processes_started_together_on_a_fresh_corner_all_succeed,
        every_command_ends_its_connections_with_a_goodbye,
        a_running_worker_rides_out_a_server_restart,
    }
}
