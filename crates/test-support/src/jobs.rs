//! Building jobs and bringing them into a given state through the `Store` contract alone, for tests that
//! talk to a store directly.
//!
//! Time is a fixed instant [`T0`] and offsets from it ([`at`]); nothing here reads a clock, so every
//! run, back-off and cut-off in a test is exact. Jobs are validated exactly as `Client` validates them
//! (with `T0` as the present), because stores only ever see validated jobs.

use jobq::job::{Job, JobId, JobSpec, JobStatus, Limits, NewJob};
use jobq::store::{
    Cancel, CancelTarget, Claim, Cleanup, DynStore, EnqueueOutcome, Enqueued, Expire, Finish, Heartbeat, JobFilter,
    Lease, LeaseState, List, QueueStats, Rescue, Rescued, Stats, Transition,
};
use jobq::time::UnixMillis;
use serde_json::Value;
use serde_json::value::RawValue;

/// The present of every test: 2023-11-14T22:13:20Z.
pub const T0: UnixMillis = UnixMillis(1_700_000_000_000);

/// The worker id tests claim with when only one worker is involved.
pub const WORKER: &str = "worker-1";

/// The type of the jobs [`spec`] builds.
pub const JOB_TYPE: &str = "test.job";

/// `ms` milliseconds after [`T0`] (before it when negative).
pub fn at(ms: i64) -> UnixMillis {
    UnixMillis(T0.0 + ms)
}

/// A job of type [`JOB_TYPE`] with the given id in the default queue, its id as payload.
pub fn spec(id: &str) -> JobSpec {
    JobSpec::new(JOB_TYPE, serde_json::json!({ "n": id })).id(id)
}

/// A job spec created at `created_at` (the producer's time) instead of `T0`.
pub fn created_at(spec: JobSpec, created_at: UnixMillis) -> JobSpec {
    JobSpec {
        created_at: Some(created_at),
        ..spec
    }
}

/// Validates a spec as `Client` would at `T0` (so `run_at` and `created_at` default to `T0`).
pub fn new_job(spec: JobSpec) -> NewJob {
    NewJob::validate(spec.clone(), T0, &Limits::default()).unwrap_or_else(|e| panic!("invalid test job {spec:?}: {e}"))
}

/// A job id known to be valid.
pub fn id(id: &str) -> JobId {
    JobId::parse(id).expect("a valid test job id")
}

/// The ids of some jobs, in their order.
pub fn ids(jobs: &[Job]) -> Vec<String> {
    jobs.iter().map(|j| j.id.to_string()).collect()
}

/// `v` sorted, for answers whose order the contract leaves open.
pub fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// JSON text as a raw value, the way handlers' results reach a store.
pub fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).expect("valid test JSON")
}

/// A raw JSON value parsed, so that stores that normalise JSON (key order, spaces) compare equal.
pub fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("a store hands back valid JSON")
}

/// The answer for a newly created job.
pub fn created(id: &str) -> Enqueued {
    Enqueued {
        id: self::id(id),
        outcome: EnqueueOutcome::Created,
    }
}

/// The answer for a job that coalesced into the live job `into`.
pub fn coalesced(into: &str) -> Enqueued {
    Enqueued {
        id: self::id(into),
        outcome: EnqueueOutcome::Coalesced,
    }
}

/// The answer for a job whose id existed already.
pub fn duplicate(id: &str) -> Enqueued {
    Enqueued {
        id: self::id(id),
        outcome: EnqueueOutcome::Duplicate,
    }
}

/// An answer naming the job `id` with `outcome` (a holder's id for the unique modes' answers).
pub fn answered(outcome: EnqueueOutcome, id: &str) -> Enqueued {
    Enqueued {
        id: self::id(id),
        outcome,
    }
}

/// Enqueues specs in one batch and returns the store's answers.
pub async fn enqueue(store: &DynStore, specs: impl IntoIterator<Item = JobSpec>) -> Vec<Enqueued> {
    let jobs: Vec<NewJob> = specs.into_iter().map(new_job).collect();
    store.enqueue(&jobs).await.expect("enqueue")
}

/// Enqueues one job that must be created; returns its id.
pub async fn add(store: &DynStore, spec: JobSpec) -> JobId {
    let job = new_job(spec);
    let answer = store.enqueue(std::slice::from_ref(&job)).await.expect("enqueue");
    assert_eq!(
        answer,
        vec![Enqueued {
            id: job.id.clone(),
            outcome: EnqueueOutcome::Created
        }]
    );
    job.id
}

/// Enqueues jobs in one batch that must all be created.
pub async fn add_all(store: &DynStore, specs: impl IntoIterator<Item = JobSpec>) {
    let jobs: Vec<NewJob> = specs.into_iter().map(new_job).collect();
    let answers = store.enqueue(&jobs).await.expect("enqueue");
    let expected: Vec<Enqueued> = jobs
        .iter()
        .map(|j| Enqueued {
            id: j.id.clone(),
            outcome: EnqueueOutcome::Created,
        })
        .collect();
    assert_eq!(answers, expected);
}

/// Claim parameters with no excluded types.
pub fn claim_params(queues: &[&str], worker: &str, limit: u32, now: UnixMillis) -> Claim {
    Claim {
        queues: queues.iter().map(|q| q.to_string()).collect(),
        exclude_types: Vec::new(),
        worker: worker.to_string(),
        limit,
        now,
        flow: Default::default(),
    }
}

/// Claims up to `limit` jobs from one queue.
pub async fn claim(store: &DynStore, queue: &str, worker: &str, limit: u32, now: UnixMillis) -> Vec<Job> {
    store
        .claim(&claim_params(&[queue], worker, limit, now))
        .await
        .expect("claim")
}

/// Claims the next job of a queue, which must exist.
pub async fn claim_one(store: &DynStore, queue: &str, worker: &str, now: UnixMillis) -> Job {
    let mut jobs = claim(store, queue, worker, 1, now).await;
    assert_eq!(jobs.len(), 1, "expected a ready job in queue {queue} at {now:?}");
    jobs.remove(0)
}

/// A job that must exist.
pub async fn get(store: &DynStore, id: &JobId) -> Job {
    store
        .get(id)
        .await
        .expect("get")
        .unwrap_or_else(|| panic!("job {id} should exist"))
}

/// What cleanup deletes, or counts on a dry run, of every finished job (up to 1,000).
pub async fn clean_finished(store: &DynStore, dry_run: bool) -> u64 {
    let cleanup = Cleanup {
        limit: 1_000,
        dry_run,
        ..Default::default()
    };
    store.cleanup(&cleanup).await.expect("cleanup")
}

/// The store's newest jobs, up to 10.
pub async fn newest_jobs(store: &DynStore) -> Vec<Job> {
    let list = List {
        filter: JobFilter::default(),
        limit: 10,
        offset: 0,
        after: None,
    };
    store.list(&list).await.expect("list")
}

/// The stats of `queues` (of every queue when empty) at `now`.
pub async fn stats(store: &DynStore, queues: &[&str], now: UnixMillis) -> Vec<QueueStats> {
    let params = Stats {
        queues: queues.iter().map(|q| q.to_string()).collect(),
        now,
    };
    store.stats(&params).await.expect("stats").queues
}

/// How many of the store's jobs have `status` at `now`.
pub async fn count(store: &DynStore, status: JobStatus, now: UnixMillis) -> u64 {
    stats(store, &[], now).await.iter().map(|q| q.count(status)).sum()
}

/// Applies one outcome under one lease; returns whether it applied.
pub async fn finish(store: &DynStore, lease: &Lease, outcome: Transition, now: UnixMillis) -> bool {
    let answers = store
        .finish(
            &[Finish {
                progress: None,
                lease: lease.clone(),
                outcome,
                spawn: Vec::new(),
            }],
            now,
        )
        .await
        .expect("finish");
    assert_eq!(answers.len(), 1);
    answers[0]
}

/// Releases one lease (back to pending without using an attempt); returns whether it applied.
pub async fn release(store: &DynStore, lease: &Lease) -> bool {
    let answers = store.release(std::slice::from_ref(lease)).await.expect("release");
    assert_eq!(answers.len(), 1);
    answers[0]
}

/// Sends one heartbeat without progress; returns the answer.
pub async fn beat(store: &DynStore, lease: &Lease, now: UnixMillis) -> LeaseState {
    let answers = store
        .heartbeat(
            &[Heartbeat {
                lease: lease.clone(),
                progress: None,
            }],
            now,
        )
        .await
        .expect("heartbeat");
    assert_eq!(answers.len(), 1);
    answers[0]
}

/// Migrates each of `stores` at the same time, as separate processes would; each must succeed.
pub async fn migrate_concurrently(stores: impl IntoIterator<Item = DynStore>) {
    let racers: Vec<_> = stores
        .into_iter()
        .map(|store| tokio::spawn(async move { store.migrate().await }))
        .collect();
    for racer in racers {
        racer.await.expect("migrate task").expect("a concurrent migrate");
    }
}

/// Rescues up to `limit` running jobs whose heartbeat is older than `stale_before`, at `now`.
pub async fn rescue_stale(store: &DynStore, stale_before: UnixMillis, now: UnixMillis, limit: u32) -> Vec<Rescued> {
    let rescue = Rescue {
        stale_before,
        now,
        limit,
    };
    store.rescue(&rescue).await.expect("rescue")
}

/// A retry outcome.
pub fn retry(error: &str, run_at: UnixMillis) -> Transition {
    Transition::Retry {
        error: error.to_string(),
        run_at,
        expires_at: None,
    }
}

/// Enqueues `spec` and brings it to `status` at `now` the way production code would: claims it (as
/// [`WORKER`]) and finishes it, or cancels it. Its `run_at` defaults to `now`. The job must be the next
/// ready job of its queue at `now`, so make the non-pending jobs of a queue before enqueueing its
/// pending ones.
pub async fn make(store: &DynStore, spec: JobSpec, status: JobStatus, now: UnixMillis) -> Job {
    let spec = match spec.run_at {
        Some(_) => spec,
        None => spec.run_at(now),
    };
    let queue = spec
        .queue
        .clone()
        .unwrap_or_else(|| jobq::job::DEFAULT_QUEUE.to_string());
    if status == JobStatus::Blocked {
        // Blocked by a job of its own queue (a Redis Cluster keeps a job's dependencies in its slot)
        // that is not due for a century, so that nothing here claims it.
        let dependency = match &spec.id {
            Some(id) => JobId::parse(&format!("{id}.dependency")).expect("a valid dependency id"),
            None => JobId::generate(),
        };
        let waited_for = JobSpec::new(JOB_TYPE, serde_json::json!({}))
            .id(dependency.to_string())
            .queue(queue.clone())
            .run_at(at(100 * 365 * 24 * 3_600_000));
        add(store, waited_for).await;
        let id = add(store, spec.after(dependency)).await;
        let job = get(store, &id).await;
        assert_eq!(job.status, JobStatus::Blocked);
        return job;
    }
    if status == JobStatus::Expired {
        // Expiring a millisecond after its run time or `T0` (long past by the store's clock), it is
        // ended by the sweep, as a worker's would end it.
        let run_at = spec.run_at.expect("set above");
        let id = add(store, spec.expires_at(UnixMillis(run_at.0.max(T0.0) + 1))).await;
        let expire = Expire {
            queues: vec![queue.clone()],
            limit: 10_000,
        };
        // Near `T0` its expiry has long passed; made at the present, it passes a millisecond on.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            store.expire(&expire).await.expect("expire");
            let job = get(store, &id).await;
            if job.status == JobStatus::Expired {
                return job;
            }
            assert!(std::time::Instant::now() < deadline, "{id} never expired: {job:?}");
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }
    let id = add(store, spec).await;
    let outcome = match status {
        JobStatus::Pending => return get(store, &id).await,
        JobStatus::Blocked | JobStatus::Expired => unreachable!("made above"),
        JobStatus::Cancelled => {
            let target = CancelTarget::Ids(vec![id.clone()]);
            let cancelled = store.cancel(&Cancel { target, now }).await.expect("cancel");
            assert_eq!(cancelled.len(), 1, "cancelling {id}");
            return get(store, &id).await;
        }
        JobStatus::Running => None,
        JobStatus::Waiting => Some(Transition::Waiting),
        JobStatus::Succeeded => Some(Transition::Succeeded { result: None }),
        JobStatus::Dead => Some(Transition::Dead {
            error: "failed for good".into(),
        }),
        JobStatus::Discarded => Some(Transition::Discarded {
            reason: "not needed".into(),
        }),
    };
    let job = claim_one(store, &queue, WORKER, now).await;
    assert_eq!(
        job.id, id,
        "make({status}): another job was ready first in queue {queue}"
    );
    if let Some(outcome) = outcome {
        assert!(
            finish(store, &Lease::of(&job), outcome, now).await,
            "finishing {id} as {status}"
        );
    }
    let job = get(store, &id).await;
    assert_eq!(job.status, status);
    job
}

/// What an event becomes in the event tests: two jobs, `evt:<id>#1` and `#2`, carrying its payload
/// and its name as `meta.event` (an [`jobq::store::Expander`]).
pub fn two_jobs(event: &jobq::store::Event, now: UnixMillis) -> Vec<NewJob> {
    (1..=2)
        .map(|n| {
            let spec = JobSpec::new(JOB_TYPE, serde_json::from_str(event.payload.get()).unwrap())
                .id(format!("evt:{}#{n}", event.id))
                .meta("event", event.name.clone());
            NewJob::validate(spec, now, &Limits::default()).unwrap()
        })
        .collect()
}
