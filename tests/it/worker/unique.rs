//! Unique modes that meet a running job, through real `jobq worker` processes: `cancel-running`
//! stops the running job (its exec handler's process is killed at the next heartbeat and the job
//! ends `cancelled`) and runs the new job once it has; `keep-last` lets the running job finish and
//! runs the last job enqueued meanwhile, once.

use jobq::job::UniqueMode;
use jobq::store::EnqueueOutcome;

use super::*;

/// A job of `calsync` for account 7 in `mode`, with `v` in its payload.
fn sync(v: i64, mode: UniqueMode) -> JobSpec {
    JobSpec::new("calsync", json!({"v": v}))
        .unique_key("acct-7")
        .unique_mode(mode)
}

async fn cancel_running_stops_the_running_job_and_starts_the_new_one_after_it(store: TestStore) {
    let world = World::new(store, FAST).await;
    // The first run sleeps until it is stopped; every run notes its job's id as it starts.
    let body = "echo $JOBQ_JOB_ID >> $D/started\n\
                if [ ! -e $D/first.pid ]; then echo $$ > $D/first.pid; exec sleep 300; fi";
    world.exec_handler("calsync", body, "");
    let first = world.enqueue(sync(1, UniqueMode::CancelRunning)).await;
    let worker = world.worker("w", &[]);
    let pid = read_pid(&world.path("first.pid"), secs(20)).await;
    world.wait_status(&first, JobStatus::Running, secs(20)).await;
    let answer = world.client.enqueue(sync(2, UniqueMode::CancelRunning)).await.unwrap();
    assert_eq!(answer.outcome, EnqueueOutcome::CancelledPrevious);
    wait_dead(&[pid], secs(20)).await;
    let stopped = world.wait_status(&first, JobStatus::Cancelled, secs(20)).await;
    assert!(last_error(&stopped).contains("newer job"), "{}", last_error(&stopped));
    let next = world.wait_status(&answer.id, JobStatus::Succeeded, secs(20)).await;
    assert!(
        next.started_at >= stopped.finished_at,
        "the new job started before the running one had stopped"
    );
    let started = std::fs::read_to_string(world.path("started")).unwrap();
    assert_eq!(
        started.lines().collect::<Vec<_>>(),
        [first.as_str(), answer.id.as_str()]
    );
    worker.assert_running();
}

async fn keep_last_runs_the_last_job_enqueued_while_one_ran_once_it_has_ended(store: TestStore) {
    let world = World::new(store, FAST).await;
    // The first run waits for a file the test writes once every other job is enqueued.
    let body = "echo $JOBQ_JOB_ID >> $D/started\n\
                if [ ! -e $D/first.pid ]; then echo $$ > $D/first.pid; \
                while [ ! -e $D/go ]; do sleep 0.05; done; fi";
    world.exec_handler("calsync", body, "");
    let first = world.enqueue(sync(1, UniqueMode::KeepLast)).await;
    let worker = world.worker("w", &[]);
    read_pid(&world.path("first.pid"), secs(20)).await;
    world.wait_status(&first, JobStatus::Running, secs(20)).await;
    let behind = world.client.enqueue(sync(2, UniqueMode::KeepLast)).await.unwrap();
    assert_eq!(behind.outcome, EnqueueOutcome::QueuedBehind);
    for v in 3..6 {
        let again = world.client.enqueue(sync(v, UniqueMode::KeepLast)).await.unwrap();
        assert_eq!((again.outcome, &again.id), (EnqueueOutcome::Replaced, &behind.id));
    }
    std::fs::write(world.path("go"), "").unwrap();
    world.wait_status(&first, JobStatus::Succeeded, secs(20)).await;
    let last = world.wait_status(&behind.id, JobStatus::Succeeded, secs(20)).await;
    assert_eq!(last.payload.get(), r#"{"v":5}"#);
    let started = std::fs::read_to_string(world.path("started")).unwrap();
    assert_eq!(
        started.lines().collect::<Vec<_>>(),
        [first.as_str(), behind.id.as_str()]
    );
    worker.assert_running();
}

crate::support::store_tests! {
    run |case, fixture| case(fixture().await).await;
    stores every_store
    cases {
        cancel_running_stops_the_running_job_and_starts_the_new_one_after_it,
        keep_last_runs_the_last_job_enqueued_while_one_ran_once_it_has_ended,
    }
}
