//! Flow control end to end: real worker processes sharing one store and the limits of one config,
//! each handler leaving a trace the test reads (files in the world's folder, the jobs' own times).

use super::*;

/// Worker settings for these tests: quick heartbeats and polls, and a rescue threshold short enough
/// for a killed worker's slots to come back within the test.
const FLOW: &str =
    "[worker]\nheartbeat = \"200ms\"\nstale_after = \"1s\"\npoll_interval = \"50ms\"\nshutdown_timeout = \"500ms\"\n";

/// A handler that marks itself running in `$D/running/`, records how many were running then (and
/// just before it stops) in `$D/seen.txt`, and takes `secs` seconds.
fn overlap_recorder(secs: &str) -> String {
    format!(
        "mkdir -p $D/running\ntouch $D/running/$JOBQ_JOB_ID\nls $D/running | wc -l >> $D/seen.txt\nsleep {secs}\n\
         ls $D/running | wc -l >> $D/seen.txt\nrm $D/running/$JOBQ_JOB_ID"
    )
}

fn overlaps(world: &World) -> Vec<u32> {
    std::fs::read_to_string(world.path("seen.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

async fn count_status(world: &World, status: JobStatus) -> u64 {
    let stats = world.client.stats(&[]).await.unwrap();
    stats.queues.iter().map(|q| q.count(status)).sum()
}

pub(super) async fn global_concurrency_holds_across_three_workers_and_a_killed_ones_slots_come_back(store: TestStore) {
    let world = World::new(store, FLOW).await;
    world.exec_handler("crm_sync", &overlap_recorder("0.02"), "global_concurrency = 3\n");
    let specs: Vec<JobSpec> = (0..200).map(|i| JobSpec::new("crm_sync", json!({ "i": i }))).collect();
    world.client.enqueue_many(specs).await.unwrap();
    let workers: Vec<Process> = (0..3)
        .map(|n| world.worker(&format!("w{n}"), &["--concurrency", "8"]))
        .collect();
    eventually("some jobs done", secs(60), async || {
        count_status(&world, JobStatus::Succeeded).await >= 30
    })
    .await;
    // A worker killed outright holds its slots until its jobs are rescued; then the others go on.
    workers[0].signal(libc::SIGKILL);
    workers[0].exit(secs(5)).await;
    let w = &world;
    eventually("every job done", secs(120), async || {
        let done = count_status(w, JobStatus::Succeeded).await;
        if done == 200 {
            Ok(())
        } else {
            Err(lazy(move || format!("{done} of 200 succeeded\n{}", w.logs())))
        }
    })
    .await;
    let seen = overlaps(&world);
    assert!(seen.len() >= 400, "every run recorded twice: {}", seen.len());
    // A job killed with its worker leaves its mark in `running/` (its program was killed with it, so
    // it never removed it): at most those three stay counted on top of the limit.
    let max = seen.iter().max().copied().unwrap_or(0);
    assert!(
        max <= 3 + 3,
        "more than 3 at once (plus the killed worker's leftovers): {seen:?}"
    );
    let before_kill: Vec<u32> = seen.iter().take(60).copied().collect();
    assert!(
        before_kill.iter().all(|&n| n <= 3),
        "more than 3 at once: {before_kill:?}"
    );
    assert!(before_kill.contains(&3), "three did run together: {before_kill:?}");
    let queues = world.run(&["queues", "-o", "json"]);
    assert_eq!(queues.0, 0, "{}", queues.2);
    let report: Value = serde_json::from_str(&queues.1).unwrap();
    assert_eq!(report["types"][0]["jobType"], "crm_sync", "{report}");
    assert_eq!(report["types"][0]["limit"]["globalConcurrency"], 3, "{report}");
    for w in &workers[1..] {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
}

pub(super) async fn a_rate_holds_across_three_workers(store: TestStore) {
    let world = World::new(store, FLOW).await;
    world.exec_handler("mail_send", "true", "rate = \"20/1s\"\n");
    let specs: Vec<JobSpec> = (0..400).map(|i| JobSpec::new("mail_send", json!({ "i": i }))).collect();
    world.client.enqueue_many(specs).await.unwrap();
    let workers: Vec<Process> = (0..3)
        .map(|n| world.worker(&format!("w{n}"), &["--concurrency", "8"]))
        .collect();
    let first = eventually("the first start", secs(60), async || {
        let jobs = world
            .client
            .list(&jobq::store::List {
                filter: jobq::store::JobFilter {
                    statuses: vec![JobStatus::Succeeded],
                    ..Default::default()
                },
                limit: 1000,
                offset: 0,
                after: None,
            })
            .await
            .unwrap();
        jobs.iter()
            .filter_map(|j| j.started_at)
            .min()
            .ok_or("no job started yet")
    })
    .await;
    wall_clock_passes(first.plus(secs(6))).await;
    for w in &workers {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
    let jobs = world
        .client
        .list(&jobq::store::List {
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut starts: Vec<i64> = jobs.iter().filter_map(|j| j.started_at).map(|t| t.0).collect();
    starts.sort();
    let in_five: Vec<i64> = starts.iter().copied().filter(|&t| t < first.0 + 5_000).collect();
    // The bucket holds 20 and refills 20 a second: at most 20 + 5 × 20 in the first five seconds,
    // and no second with more than 2 × 20 (a full bucket, then its refill).
    assert!(in_five.len() <= 120, "{} started in 5 s", in_five.len());
    for (i, &t) in starts.iter().enumerate() {
        let window = starts[i..].iter().take_while(|&&u| u < t + 1_000).count();
        assert!(window <= 40, "{window} started within a second of {t}");
    }
    assert!(
        in_five.len() >= 60,
        "the limit held starts far below it: {} in 5 s",
        in_five.len()
    );
}

pub(super) async fn a_partition_is_a_lane_per_tenant(store: TestStore) {
    let world = World::new(store, FLOW).await;
    let lane = "echo \"start $(date +%s%N)\" >> $D/$JOBQ_TENANT.txt\nsleep 0.05\necho \"end $(date +%s%N)\" >> $D/$JOBQ_TENANT.txt";
    // The tenant comes from the envelope on stdin.
    let body = format!("JOBQ_TENANT=$(cat | sed -e 's/.*\"tenantId\":\"\\([a-z]*\\)\".*/\\1/')\n{lane}");
    world.exec_handler(
        "crm_sync",
        &body,
        "global_concurrency = 1\npartition = \"meta.tenantId\"\n",
    );
    let mut specs: Vec<JobSpec> = (0..15)
        .map(|i| JobSpec::new("crm_sync", json!({ "i": i })).meta("tenantId", "a"))
        .collect();
    specs.extend((0..3).map(|i| JobSpec::new("crm_sync", json!({ "i": i })).meta("tenantId", "b")));
    world.client.enqueue_many(specs).await.unwrap();
    let workers: Vec<Process> = (0..2)
        .map(|n| world.worker(&format!("w{n}"), &["--concurrency", "4"]))
        .collect();
    eventually("every job done", secs(60), async || {
        count_status(&world, JobStatus::Succeeded).await == 18
    })
    .await;
    let lane_of = |tenant: &str| -> Vec<(String, i64)> {
        std::fs::read_to_string(world.path(&format!("{tenant}.txt")))
            .unwrap()
            .lines()
            .map(|l| {
                let (what, at) = l.split_once(' ').unwrap();
                (what.to_string(), at.parse().unwrap())
            })
            .collect()
    };
    let a = lane_of("a");
    let b = lane_of("b");
    assert_eq!(a.len(), 30);
    assert_eq!(b.len(), 6);
    for pair in a.chunks(2) {
        assert!(
            pair[0].0 == "start" && pair[1].0 == "end",
            "tenant a's jobs overlapped: {a:?}"
        );
    }
    let a_last_end = a.last().unwrap().1;
    assert!(
        b[0].1 < a_last_end,
        "tenant b waited for tenant a's backlog: b started at {}, a ended at {a_last_end}",
        b[0].1
    );
    for w in &workers {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
}

pub(super) async fn a_pause_reaches_every_worker_within_a_poll_interval_and_resume_drains(store: TestStore) {
    let world = World::new(store, &format!("{FLOW}[handlers.n]\nbuiltin = \"noop\"\n")).await;
    let workers: Vec<Process> = (0..2).map(|n| world.worker(&format!("w{n}"), &[])).collect();
    for w in &workers {
        w.wait_log("worker started", secs(30)).await;
    }
    let (code, out, err) = world.run(&["pause", "default"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("paused queue default"), "{out}");
    let paused = jobq::time::UnixMillis::now();
    for w in &workers {
        w.wait_log("paused: queue default", secs(10)).await;
    }
    let specs: Vec<JobSpec> = (0..10).map(|i| JobSpec::new("n", json!(i))).collect();
    world.client.enqueue_many(specs).await.unwrap();
    // Several poll intervals pass with the jobs ready and nothing starts.
    wall_clock_passes(paused.plus(Duration::from_millis(500))).await;
    assert_eq!(count_status(&world, JobStatus::Pending).await, 10, "{}", world.logs());
    let (code, out, _) = world.run(&["queues"]);
    assert_eq!(code, 0);
    assert!(out.contains("paused"), "{out}");
    let (code, _, err) = world.run(&["resume", "default"]);
    assert_eq!(code, 0, "{err}");
    eventually("the paused jobs drain", secs(30), async || {
        count_status(&world, JobStatus::Succeeded).await == 10
    })
    .await;
    for w in &workers {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
}

pub(super) async fn snooze_spends_no_attempt_and_rate_limited_holds_the_type_on_every_worker(store: TestStore) {
    let world = World::new(store, FLOW).await;
    let snoozer = "if [ ! -e $D/snoozed-$JOBQ_JOB_ID ]; then touch $D/snoozed-$JOBQ_JOB_ID; echo '::snooze 200ms'; exit 0; fi\n\
                   echo \"::result {\\\"attempt\\\":$JOBQ_ATTEMPT}\"";
    world.exec_handler("nap", snoozer, "max_attempts = 1\n");
    let upstream = "if [ ! -e $D/limited ]; then touch $D/limited; echo '::rate-limited 2s'; exit 1; fi\n\
                    date +%s%3N > $D/started-$JOBQ_JOB_ID";
    world.exec_handler("crm_push", upstream, "");
    let workers: Vec<Process> = (0..2).map(|n| world.worker(&format!("w{n}"), &[])).collect();
    let nap = world.enqueue(JobSpec::new("nap", json!({}))).await;
    let job = world.wait_status(&nap, JobStatus::Succeeded, secs(30)).await;
    assert_eq!((job.attempt, job.snoozes), (1, 1), "{}", json!(job));
    assert_eq!(job.result.as_ref().map(|r| r.get()), Some(r#"{"attempt":1}"#));

    let first = world.enqueue(JobSpec::new("crm_push", json!({ "n": 1 }))).await;
    let limited = world
        .wait_job(&first, secs(30), "snoozed by the rate limit", |j| j.snoozes == 1)
        .await;
    let blocked_at = limited.started_at.unwrap();
    // Every worker learns of the block within a poll interval (the one whose handler reported it, at
    // once); jobs of the type enqueued after that wait for it, on whichever worker claims them.
    for w in &workers {
        w.wait_log("no crm_push job starts for", secs(10)).await;
    }
    let later: Vec<JobId> = {
        let specs: Vec<JobSpec> = (2..6).map(|n| JobSpec::new("crm_push", json!({ "n": n }))).collect();
        world
            .client
            .enqueue_many(specs)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect()
    };
    let (code, out, _) = world.run(&["queues", "-o", "json"]);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["types"][0]["jobType"], "crm_push", "{report}");
    assert!(
        report["types"][0]["blocks"][0]["until"].as_i64().unwrap() > blocked_at.0,
        "{report}"
    );
    for id in later.iter().chain([&first]) {
        let job = world.wait_status(id, JobStatus::Succeeded, secs(30)).await;
        assert_eq!(job.attempt, 1, "no attempt spent: {}", json!(job));
        let started: i64 = std::fs::read_to_string(world.path(&format!("started-{id}")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            started >= blocked_at.0 + 2_000,
            "{id} started {} ms after the block began",
            started - blocked_at.0
        );
    }
    for w in &workers {
        w.signal(libc::SIGTERM);
        assert!(w.exit(secs(10)).await.success(), "{}", w.log());
    }
}
