//! Persistent handlers end to end: real `jobq worker` processes keeping real programs running — the
//! Python, Node.js and PHP kits of `examples/handlers/`, and a small Python program of the test's own
//! that misbehaves on request (crashes, writes garbage, answers for a stranger, sleeps through a drop,
//! grows) — each leaving its pid where the test can see which copy ran what.

use super::*;

/// The kits and their examples, as shipped.
const KITS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/handlers");

/// A program speaking the protocol without a kit, so that it can break it on request. Its payload's
/// `op` says what to do; it writes `started-PID` when it starts and `closed-PID` when its stdin ends.
const PROBE: &str = r#"
import json, os, sys, time
D = sys.argv[1]
open(os.path.join(D, "started-%d" % os.getpid()), "w").close()
hog = []
out = sys.stdout
def reply(job_id, **fields):
    out.write(json.dumps(dict(jobId=job_id, **fields)) + "\n")
    out.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "drop" in m:
        continue
    job_id, p = m["jobId"], m["payload"]
    op = p["op"]
    if op == "crash":
        sys.stderr.write("about to crash\n")
        sys.stderr.flush()
        os._exit(3)
    if op == "garbage":
        out.write("this is not a reply\n")
        out.flush()
        continue
    if op == "stranger":
        reply("nobody", outcome="success")
        continue
    if op == "sleep":
        time.sleep(p["secs"])
    if op == "hog":
        hog.append(b"x" * (p["mb"] << 20))
    reply(job_id, progress=50, message="half way")
    reply(job_id, outcome="success", result={"pid": os.getpid()})
open(os.path.join(D, "closed-%d" % os.getpid()), "w").close()
"#;

/// A config with FAST settings and a persistent handler of `job_type` running `argv`, with `extra`.
fn persistent(job_type: &str, argv: &[&str], extra: &str) -> String {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "\n[handlers.{job_type:?}]\nexec = [{}]\npersistent = true\n{extra}\n",
        argv.join(", ")
    )
}

impl World {
    /// Writes the probe program into this world's folder; its argv for a handler.
    fn probe(&self) -> [String; 3] {
        let path = self.path("probe.py");
        std::fs::write(&path, PROBE).unwrap();
        [
            "python3".into(),
            path.display().to_string(),
            self.dir.path().display().to_string(),
        ]
    }

    /// The pids of the probe copies that started, and of those whose stdin was closed.
    fn probe_pids(&self, what: &str) -> Vec<i32> {
        let mut pids: Vec<i32> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix(&format!("{what}-"))?.parse().ok())
            .collect();
        pids.sort();
        pids
    }
}

fn probe_config(world: &World, extra: &str) -> String {
    let argv = world.probe();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    format!("{FAST}{}", persistent("probe", &argv, extra))
}

fn op(op: &str) -> JobSpec {
    JobSpec::new("probe", json!({ "op": op }))
}

fn pid_of(job: &Job) -> i64 {
    let result: Value = serde_json::from_str(job.result.as_ref().expect("a result").get()).unwrap();
    result["pid"].as_i64().expect("a pid")
}

/// A kit's example handler answers each outcome as the protocol says, from two copies at once.
async fn a_kit_answers_every_outcome(store: TestStore, interpreter: &str, example: &str) {
    let example = format!("{KITS}/{example}");
    let config = format!(
        "{FAST}{}",
        persistent("hello", &[interpreter, &example], "in_flight = 4\nprocesses = 2\n")
    );
    let world = World::new(store, &config).await;
    let hello = |payload: Value| JobSpec::new("hello", payload);
    let ada = world.enqueue(hello(json!({"name": "Ada"}))).await;
    let progress = world.enqueue(hello(json!({"progress": true}))).await;
    let retry = world
        .enqueue(hello(json!({"retry": "mail server busy"})).max_attempts(1))
        .await;
    let fail = world.enqueue(hello(json!({"fail": "no such user"}))).await;
    let discard = world.enqueue(hello(json!("Ada"))).await;
    let many: Vec<JobId> =
        futures_util::future::join_all((0..40).map(|i| world.enqueue(hello(json!({"name": i}))))).await;
    let worker = world.worker("w", &["--burst"]);
    let status = worker.exit(secs(30)).await;
    assert!(status.success(), "{status:?}\n{}", worker.log());

    let job = world.job(&ada).await;
    assert_eq!(job.status, JobStatus::Succeeded, "{}", json!(job));
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"greeting":"hello Ada"}"#)
    );
    let job = world.job(&progress).await;
    assert_eq!(job.status, JobStatus::Succeeded, "{}", json!(job));
    let reported = job.progress.as_ref().map(|p| (p.percent, p.message.as_deref()));
    assert_eq!(reported, Some((75, Some("step 3 of 3"))), "{}", json!(job));
    let job = world.job(&retry).await;
    assert_eq!((job.status, last_error(&job)), (JobStatus::Dead, "mail server busy"));
    let job = world.job(&fail).await;
    assert_eq!((job.status, job.attempt), (JobStatus::Dead, 1));
    assert_eq!(last_error(&job), "no such user");
    let job = world.job(&discard).await;
    assert_eq!(job.status, JobStatus::Discarded, "{}", json!(job));
    assert_eq!(last_error(&job), "payload must be a JSON object");
    for (i, id) in many.iter().enumerate() {
        let job = world.job(id).await;
        let greeting = format!(r#"{{"greeting":"hello {i}"}}"#);
        assert_eq!(
            job.result.as_ref().map(|r| r.get()),
            Some(greeting.as_str()),
            "{}",
            json!(job)
        );
    }
}

pub(super) async fn the_python_kit_answers_every_outcome(store: TestStore) {
    a_kit_answers_every_outcome(store, "python3", "python/example.py").await;
}

pub(super) async fn the_python_kit_spawns_children_and_awaits_them(store: TestStore) {
    a_kit_spawns_children_and_awaits_them(store, "python3", "python/example.py").await;
}

async fn the_node_kit_spawns_children_and_awaits_them(store: TestStore) {
    a_kit_spawns_children_and_awaits_them(store, "node", "node/example.js").await;
}

async fn the_php_kit_spawns_children_and_awaits_them(store: TestStore) {
    a_kit_spawns_children_and_awaits_them(store, "php", "php/example.php").await;
}

/// A kit's `spawn` and `AwaitChildren`: a child per name, each after the one before (`after`),
/// awaited, and the parent run again with their results in `deps`; each child runs once, in turn.
async fn a_kit_spawns_children_and_awaits_them(store: TestStore, interpreter: &str, example: &str) {
    let example = format!("{KITS}/{example}");
    let config = format!(
        "{FAST}{}",
        persistent("hello", &[interpreter, &example], "in_flight = 4\n")
    );
    let world = World::new(store, &config).await;
    let parent = world
        .enqueue(JobSpec::new("hello", json!({"fanout": ["Ada", "Grace"]})).id("greet"))
        .await;
    let worker = world.worker("w", &[]);
    let job = world.wait_status(&parent, JobStatus::Succeeded, secs(30)).await;
    assert_eq!(
        job.result.as_ref().map(|r| r.get()),
        Some(r#"{"greetings":["hello Ada","hello Grace"]}"#),
        "{}",
        worker.log()
    );
    // The await spent no attempt: the run after it is the first attempt again.
    assert_eq!(job.attempt, 1);
    let mut children = Vec::new();
    for name in ["Ada", "Grace"] {
        let child = world.job(&JobId::parse(&format!("greet.{name}")).unwrap()).await;
        assert_eq!(
            (child.status, child.attempt),
            (JobStatus::Succeeded, 1),
            "{}",
            json!(child)
        );
        children.push(child);
    }
    assert!(
        children[1].started_at >= children[0].finished_at,
        "Grace started before Ada, which it waits for: {} {}",
        json!(children[0]),
        json!(children[1])
    );
}

async fn the_node_kit_answers_every_outcome(store: TestStore) {
    a_kit_answers_every_outcome(store, "node", "node/example.js").await;
}

async fn the_php_kit_answers_every_outcome(store: TestStore) {
    // CI installs php-cli (.ci/run); a machine without it says how to get it rather than pass.
    assert!(
        Command::new("php")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "php is not installed: apt-get install -y php-cli (the PHP kit's test needs it)"
    );
    a_kit_answers_every_outcome(store, "php", "php/example.php").await;
}

/// One program serves many jobs, progress reaches the job, and the program ends when its stdin
/// closes at the worker's stop.
async fn one_program_serves_many_jobs_and_ends_when_the_worker_stops(store: TestStore) {
    let world = World::new(store, "").await;
    world.write_config(&probe_config(&world, "in_flight = 8\n"));
    let ids: Vec<JobId> = futures_util::future::join_all((0..50).map(|_| world.enqueue(op("ok")))).await;
    let worker = world.worker("w", &[]);
    let mut pids = HashSet::new();
    for id in &ids {
        let job = world.wait_status(id, JobStatus::Succeeded, secs(30)).await;
        pids.insert(pid_of(&job));
        assert_eq!(job.progress.as_ref().map(|p| p.percent), Some(50), "{}", json!(job));
    }
    assert_eq!(pids.len(), 1, "one copy ran them all: {pids:?}");
    worker.terminate(secs(15)).await;
    assert_eq!(
        world.probe_pids("closed"),
        world.probe_pids("started"),
        "{}",
        world.logs()
    );
    wait_dead(&world.probe_pids("started"), secs(5)).await;
}

/// A program that crashes, writes a line that is not a reply, or answers for a job it was not given
/// has its job retried with the reason (and what it wrote on stderr), and the next job runs on a
/// fresh copy in the same worker.
async fn a_broken_program_has_its_jobs_retried_and_a_fresh_copy_takes_the_next(store: TestStore) {
    let world = World::new(store, "").await;
    world.write_config(&probe_config(&world, ""));
    let worker = world.worker("w", &[]);
    for (what, says) in [
        ("crash", vec!["exited with code 3", "about to crash"]),
        ("garbage", vec!["not a JSON reply", "this is not a reply"]),
        ("stranger", vec!["answered for job nobody, which it does not hold"]),
    ] {
        let id = world.enqueue(op(what).max_attempts(2)).await;
        let job = world.wait_status(&id, JobStatus::Dead, secs(30)).await;
        assert_eq!(job.errors.len(), 2, "retried, then dead: {}", json!(job));
        for needle in says {
            assert!(last_error(&job).contains(needle), "{what}: {}", last_error(&job));
        }
    }
    let ok = world.enqueue(op("ok")).await;
    world.wait_status(&ok, JobStatus::Succeeded, secs(30)).await;
    assert_eq!(
        lines_with(&worker.log(), "retried; next start in").len(),
        6,
        "{}",
        worker.log()
    );
    // Every broken copy is gone; only the last one lives.
    let started = world.probe_pids("started");
    assert_eq!(started.len(), 7, "{}", world.logs());
    let last = pid_of(&world.job(&ok).await) as i32;
    wait_dead(
        &started.iter().copied().filter(|p| *p != last).collect::<Vec<_>>(),
        secs(5),
    )
    .await;
    worker.terminate(secs(15)).await;
}

/// A program that exits as it starts: each job it was given is retried, the worker keeps running
/// and backs off between starts, and the job ends dead with the program's own words.
async fn a_program_that_exits_at_once_costs_retries_not_the_worker(store: TestStore) {
    let config = format!(
        "{FAST}{}",
        persistent(
            "doomed",
            &["sh", "-c", "echo cannot load the framework >&2; exit 1"],
            ""
        )
    );
    let world = World::new(store, &config).await;
    let id = world.enqueue(JobSpec::new("doomed", json!({})).max_attempts(3)).await;
    let worker = world.worker("w", &[]);
    let job = world.wait_status(&id, JobStatus::Dead, secs(30)).await;
    assert_eq!(job.errors.len(), 3, "{}", json!(job));
    assert!(
        last_error(&job).contains("exited with code 1: cannot load the framework"),
        "{}",
        last_error(&job)
    );
    assert!(alive(worker.pid()), "the worker keeps running");
    assert_eq!(lines_with(&worker.log(), "next start in").len(), 3, "{}", worker.log());
    worker.terminate(secs(15)).await;
}

/// A job that outlives its time-out is dropped; a program that does not answer within the kill
/// grace is restarted, and the job is retried as timed out.
async fn a_program_that_keeps_a_timed_out_job_is_restarted(store: TestStore) {
    let world = World::new(store, "").await;
    world.write_config(&probe_config(&world, "timeout = \"1s\"\n"));
    let stuck = world
        .enqueue(JobSpec::new("probe", json!({"op": "sleep", "secs": 300})).max_attempts(1))
        .await;
    let worker = world.worker("w", &["--kill-grace", "300ms"]);
    let job = world.wait_status(&stuck, JobStatus::Dead, secs(30)).await;
    assert!(
        last_error(&job).starts_with("timed out after 1s"),
        "{}",
        last_error(&job)
    );
    let first = world.probe_pids("started");
    assert_eq!(first.len(), 1, "{}", world.logs());
    wait_dead(&first, secs(10)).await;
    worker.wait_log("past the grace after it was dropped", secs(10)).await;
    let ok = world.enqueue(op("ok")).await;
    let job = world.wait_status(&ok, JobStatus::Succeeded, secs(30)).await;
    assert_ne!(pid_of(&job) as i32, first[0], "a fresh copy ran it");
    worker.terminate(secs(15)).await;
}

/// Cancelling a job a program holds drops it there: a program that honours the drop (the Node kit's
/// example stops its sleep) answers, keeps running, and the job stays cancelled.
async fn a_cancelled_job_is_dropped_by_the_program_that_holds_it(store: TestStore) {
    let example = format!("{KITS}/node/example.js");
    let config = format!("{FAST}{}", persistent("hello", &["node", &example], "in_flight = 4\n"));
    let world = World::new(store, &config).await;
    let long = world.enqueue(JobSpec::new("hello", json!({"sleepMs": 600_000}))).await;
    let worker = world.worker("w", &[]);
    world.wait_status(&long, JobStatus::Running, secs(30)).await;
    let report = world.client.cancel(&[long.to_string()]).await.unwrap();
    assert_eq!(report.cancelled.len(), 1);
    worker.wait_log("job cancelled", secs(10)).await;
    let next = world.enqueue(JobSpec::new("hello", json!({"name": "Bo"}))).await;
    world.wait_status(&next, JobStatus::Succeeded, secs(30)).await;
    assert_eq!(world.job(&long).await.status, JobStatus::Cancelled);
    assert!(!worker.log().contains("next start in"), "no restart: {}", worker.log());
    worker.terminate(secs(15)).await;
}

/// At shutdown a job still running past `shutdown_timeout` is dropped and released without using an
/// attempt; its program, which ignores the drop, is killed, and the worker exits 0.
async fn shutdown_releases_a_held_job_and_stops_the_program(store: TestStore) {
    let world = World::new(store, "").await;
    world.write_config(&probe_config(&world, ""));
    let slow = world
        .enqueue(JobSpec::new("probe", json!({"op": "sleep", "secs": 300})))
        .await;
    let worker = world.worker("w", &["--kill-grace", "300ms"]);
    world.wait_status(&slow, JobStatus::Running, secs(30)).await;
    let started = eventually("the probe to start", secs(10), async || {
        let pids = world.probe_pids("started");
        if pids.is_empty() { Err("none yet") } else { Ok(pids) }
    })
    .await;
    worker.terminate(secs(15)).await;
    wait_dead(&started, secs(5)).await;
    let job = world.job(&slow).await;
    assert_eq!(
        (job.status, job.attempt, job.errors.len()),
        (JobStatus::Pending, 0, 0),
        "{}",
        json!(job)
    );
}

/// A copy is replaced after `max_jobs_per_process` jobs, and once it grows past
/// `max_memory_per_process`; the replaced copy finishes its jobs and sees its stdin close.
async fn a_copy_is_replaced_after_max_jobs_and_past_max_memory(store: TestStore) {
    let world = World::new(store, "").await;
    let argv = world.probe();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    world.write_config(&format!(
        "{FAST}{}{}",
        persistent("probe", &argv, "max_jobs_per_process = 3\n"),
        persistent("hog", &argv, "max_memory_per_process = \"40MiB\"\n")
    ));
    let worker = world.worker("w", &[]);
    let mut pids = Vec::new();
    for _ in 0..7 {
        let id = world.enqueue(op("ok")).await;
        pids.push(pid_of(&world.wait_status(&id, JobStatus::Succeeded, secs(30)).await));
    }
    assert!(
        pids[0..3].iter().all(|p| *p == pids[0])
            && pids[3..6].iter().all(|p| *p == pids[3])
            && pids[6] != pids[3]
            && pids[3] != pids[0],
        "three jobs a copy: {pids:?}"
    );
    let retired: Vec<i32> = [pids[0], pids[3]].iter().map(|p| *p as i32).collect();
    eventually("the retired copies to see their stdin close", secs(10), async || {
        let closed = world.probe_pids("closed");
        if retired.iter().all(|p| closed.contains(p)) {
            Ok(())
        } else {
            Err(format!("closed: {closed:?}"))
        }
    })
    .await;

    let big = world.enqueue(JobSpec::new("hog", json!({"op": "hog", "mb": 80}))).await;
    let grown = pid_of(&world.wait_status(&big, JobStatus::Succeeded, secs(30)).await);
    worker.wait_log("over max_memory_per_process", secs(10)).await;
    let after = world.enqueue(JobSpec::new("hog", json!({"op": "ok"}))).await;
    let fresh = pid_of(&world.wait_status(&after, JobStatus::Succeeded, secs(30)).await);
    assert_ne!(fresh, grown, "a fresh copy took the job after the grown one");
    wait_dead(&[grown as i32], secs(10)).await;
    worker.terminate(secs(15)).await;
}

/// Keys of a persistent handler in the wrong place, or out of range: exit 2, one line naming it.
async fn persistent_keys_out_of_place_are_refused_at_start(store: TestStore) {
    let world = World::new(store, "").await;
    for (extra, says) in [
        ("exec = [\"sh\"]\nin_flight = 4\n", "need persistent = true"),
        (
            "exec = [\"sh\"]\npersistent = true\nprocesses = 0\n",
            "processes must be at least 1",
        ),
        (
            "exec = [\"sh\"]\npersistent = true\nmax_memory_per_process = \"lots\"\n",
            "max_memory_per_process",
        ),
        ("builtin = \"noop\"\npersistent = true\n", "apply to exec handlers only"),
    ] {
        world.write_config(&format!("[handlers.x]\n{extra}"));
        let (code, _, err) = world.run(&["worker", "--burst"]);
        assert_eq!(code, 2, "{extra}: {err}");
        assert!(err.contains(says), "{extra}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

crate::support::store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores {
        sqlite => support::sqlite_store,
        postgres => support::postgres_store,
    }
    cases {
        the_node_kit_answers_every_outcome,
        the_php_kit_answers_every_outcome,
        the_node_kit_spawns_children_and_awaits_them,
        the_php_kit_spawns_children_and_awaits_them,
        one_program_serves_many_jobs_and_ends_when_the_worker_stops,
        a_broken_program_has_its_jobs_retried_and_a_fresh_copy_takes_the_next,
        a_program_that_exits_at_once_costs_retries_not_the_worker,
        a_program_that_keeps_a_timed_out_job_is_restarted,
        a_cancelled_job_is_dropped_by_the_program_that_holds_it,
        shutdown_releases_a_held_job_and_stops_the_program,
        a_copy_is_replaced_after_max_jobs_and_past_max_memory,
        persistent_keys_out_of_place_are_refused_at_start,
    }
}
