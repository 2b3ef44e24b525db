//! Unique modes: what an enqueue does when a live job holds its key, decided by the store atomically
//! with the write. `replace` and `debounce` change a holder that has not started and leave one that
//! has; `keep-last` (and `debounce` with the running rule `queue-behind`) queues one job behind a
//! running holder instead; `throttle` holds a key for its window after its holder was created,
//! finished or not. Racing producers and workers never see two running jobs of one key, nor two
//! that have not started, and every answer names a job that took what the answer says.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jobq::job::{JobSpec, JobStatus, Limits, NewJob, UniqueMode};
use jobq::store::{DynStore, EnqueueOutcome, Enqueued, Lease, LeaseState, Transition};
use jobq::time::UnixMillis;
use serde_json::json;

use crate::support::jobs::*;

const DEBOUNCE: UniqueMode = UniqueMode::Debounce {
    window_ms: 30_000,
    max_wait_ms: Some(60_000),
    queue_behind: false,
};

const DEBOUNCE_BEHIND: UniqueMode = UniqueMode::Debounce {
    window_ms: 30_000,
    max_wait_ms: Some(60_000),
    queue_behind: true,
};

/// A century after `T0`: an expiry the store's clock never reaches.
fn far() -> UnixMillis {
    at(100 * 365 * 24 * 3_600_000)
}

/// Validated at `now` rather than `T0` (a debounce runs its window from then).
fn new_job_at(spec: JobSpec, now: UnixMillis) -> NewJob {
    NewJob::validate(spec, now, &Limits::default()).expect("a valid test job")
}

async fn enqueue_at(store: &DynStore, spec: JobSpec, now: UnixMillis) -> Enqueued {
    let answers = store.enqueue(&[new_job_at(spec, now)]).await.expect("enqueue");
    assert_eq!(answers.len(), 1);
    answers.into_iter().next().unwrap()
}

fn replacing(name: &str, payload: serde_json::Value) -> JobSpec {
    JobSpec::new(JOB_TYPE, payload)
        .id(name)
        .unique_key("k")
        .unique_mode(UniqueMode::Replace)
}

/// A pending holder (one that failed once and waits for its retry) takes the new job's payload,
/// meta, priority, run time, time-out and expiry, and keeps its id, attempt count and errors; so
/// does a blocked one. The new job is not created.
pub(super) async fn replace_changes_a_holder_that_has_not_started(store: &DynStore) {
    add(store, spec("h").unique_key("k").priority(5)).await;
    let first = claim_one(store, "default", WORKER, T0).await;
    assert!(finish(store, &Lease::of(&first), retry("flaky", at(1_000)), at(10)).await);

    let new = replacing("n", json!({"v": 2}))
        .priority(-1)
        .meta("tenantId", "t9")
        .run_at(at(5_000))
        .timeout(Duration::from_secs(7))
        .expires_at(far());
    assert_eq!(
        enqueue(store, [new]).await,
        vec![answered(EnqueueOutcome::Replaced, "h")]
    );
    assert!(store.get(&id("n")).await.expect("get").is_none());
    let h = get(store, &id("h")).await;
    assert_eq!(h.status, JobStatus::Pending);
    assert_eq!(value(&h.payload), json!({"v": 2}));
    assert_eq!((h.priority, h.run_at), (-1, at(5_000)));
    assert_eq!(h.meta.get("tenantId").map(String::as_str), Some("t9"));
    assert_eq!((h.timeout_ms, h.expires_at), (Some(7_000), Some(far())));
    assert_eq!((h.attempt, h.errors.len()), (1, 1), "its history is kept");
    assert_eq!(h.unique_mode, UniqueMode::Replace);
    // It is claimed at its new run time and priority, with the new payload.
    assert!(claim(store, "default", WORKER, 1, at(4_999)).await.is_empty());
    let claimed = claim_one(store, "default", WORKER, at(5_000)).await;
    assert_eq!((claimed.id.as_str(), value(&claimed.payload)), ("h", json!({"v": 2})));

    let blocked = make(store, spec("b").queue("other").unique_key("k"), JobStatus::Blocked, T0).await;
    let answer = enqueue(store, [replacing("n2", json!({"v": 3})).queue("other")]).await;
    assert_eq!(answer, vec![answered(EnqueueOutcome::Replaced, "b")]);
    let b = get(store, &blocked.id).await;
    assert_eq!((b.status, value(&b.payload)), (JobStatus::Blocked, json!({"v": 3})));
}

/// A holder that has started (running, or waiting on a third party) is left as it is: the new job
/// coalesces into it. Once the holder has ended, the next enqueue creates a job.
pub(super) async fn replace_leaves_a_started_holder_alone(store: &DynStore) {
    add(store, spec("h").unique_key("k")).await;
    let running = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(
        enqueue(store, [replacing("n1", json!({"v": 1}))]).await,
        vec![coalesced("h")]
    );
    assert_eq!(value(&get(store, &id("h")).await.payload), json!({"n": "h"}));

    assert!(finish(store, &Lease::of(&running), Transition::Waiting, at(10)).await);
    assert_eq!(
        enqueue(store, [replacing("n2", json!({"v": 2}))]).await,
        vec![coalesced("h")]
    );
    assert!(store.get(&id("n1")).await.expect("get").is_none());

    let resolve = jobq::store::Resolve {
        id: id("h"),
        attempt: None,
        action: jobq::store::Resolution::Succeed { result: None },
    };
    store.resolve(&[resolve], at(20)).await.expect("resolve");
    assert_eq!(
        enqueue(store, [replacing("n3", json!({"v": 3}))]).await,
        vec![created("n3")]
    );
    assert_eq!(get(store, &id("n3")).await.unique_mode, UniqueMode::Replace);
}

/// Each debounced enqueue puts the holder's run off to its window from then, and takes its fields,
/// but never past the holder's first enqueue plus the longest wait.
pub(super) async fn debounce_puts_the_holder_off_but_never_past_its_longest_wait(store: &DynStore) {
    let debounced = |name: &str, v: i64| {
        JobSpec::new(JOB_TYPE, json!({"v": v}))
            .id(name)
            .unique_key("k")
            .unique_mode(DEBOUNCE)
    };
    assert_eq!(enqueue_at(store, debounced("d", 1), T0).await, created("d"));
    assert_eq!(get(store, &id("d")).await.run_at, at(30_000));

    let second = enqueue_at(store, debounced("d2", 2), at(20_000)).await;
    assert_eq!(second, answered(EnqueueOutcome::Debounced, "d"));
    let d = get(store, &id("d")).await;
    assert_eq!((d.run_at, value(&d.payload)), (at(50_000), json!({"v": 2})));

    // 45 s in, a window from now would end at 75 s: the longest wait ends it at 60 s.
    let third = enqueue_at(store, debounced("d3", 3), at(45_000)).await;
    assert_eq!(third, answered(EnqueueOutcome::Debounced, "d"));
    let d = get(store, &id("d")).await;
    assert_eq!((d.run_at, value(&d.payload)), (at(60_000), json!({"v": 3})));
    assert_eq!(d.unique_mode, DEBOUNCE);

    // Started, it is left alone: the next one coalesces.
    assert!(claim(store, "default", WORKER, 1, at(59_999)).await.is_empty());
    claim_one(store, "default", WORKER, at(60_000)).await;
    assert_eq!(enqueue_at(store, debounced("d4", 4), at(61_000)).await, coalesced("d"));
}

/// A throttled key is held for its window from its holder's creation, whether or not the holder
/// has finished: an enqueue in the window is dropped, naming the holder. Other keys and queues are
/// free. Once the window is over, the next enqueue creates a job (or coalesces into a holder that is
/// still live, which then holds the key for a new window).
pub(super) async fn throttle_holds_the_key_for_its_window_finished_or_not(store: &DynStore) {
    let hour = UniqueMode::Throttle { window_ms: 3_600_000 };
    let throttled = |name: &str, key: &str, mode: UniqueMode| spec(name).unique_key(key).unique_mode(mode);
    assert_eq!(enqueue(store, [throttled("t1", "k", hour)]).await, vec![created("t1")]);
    assert_eq!(
        enqueue(store, [throttled("t2", "k", hour)]).await,
        vec![answered(EnqueueOutcome::Throttled, "t1")]
    );
    let job = claim_one(store, "default", WORKER, T0).await;
    assert!(finish(store, &Lease::of(&job), Transition::Succeeded { result: None }, at(10)).await);
    assert_eq!(
        enqueue(store, [throttled("t3", "k", hour)]).await,
        vec![answered(EnqueueOutcome::Throttled, "t1")],
        "finished, it still holds its window"
    );
    assert_eq!(
        enqueue(
            store,
            [throttled("o1", "other", hour), throttled("q1", "k", hour).queue("q2")]
        )
        .await,
        vec![created("o1"), created("q1")]
    );
    for name in ["t2", "t3"] {
        assert!(store.get(&id(name)).await.expect("get").is_none());
    }

    // A short window, by the store's clock: wait until it is over.
    let short = UniqueMode::Throttle { window_ms: 200 };
    assert_eq!(
        enqueue(store, [throttled("s1", "short", short)]).await,
        vec![created("s1")]
    );
    let mut n = 0;
    let after_window = loop {
        n += 1;
        let answer = enqueue(store, [throttled(&format!("s-{n}"), "short", short)]).await;
        if answer[0].outcome != EnqueueOutcome::Throttled {
            break answer;
        }
        assert_eq!(answer[0], answered(EnqueueOutcome::Throttled, "s1"));
        assert!(n < 500, "a 200 ms throttle window still held after {n} tries");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // `s1` never ran: still live after its window, it takes the key's next window.
    assert_eq!(after_window, vec![coalesced("s1")]);
    assert_eq!(
        enqueue(
            store,
            [throttled(
                "s-next",
                "short",
                UniqueMode::Throttle { window_ms: 3_600_000 }
            )]
        )
        .await,
        vec![answered(EnqueueOutcome::Throttled, "s1")]
    );
}

fn keeping_last(name: &str, v: i64) -> JobSpec {
    JobSpec::new(JOB_TYPE, json!({"v": v}))
        .id(name)
        .unique_key("k")
        .unique_mode(UniqueMode::KeepLast)
}

/// `keep-last`: a holder that has not started is replaced; while one runs, the next job waits
/// behind it (`queued-behind`, blocked, holding the key) and later ones replace that follower,
/// which starts only once the running job has ended, however it ended: succeeded, failed for good,
/// or cancelled. A running holder that fails and waits for its retry keeps the follower waiting.
pub(super) async fn keep_last_queues_one_job_behind_a_running_holder(store: &DynStore) {
    assert_eq!(enqueue(store, [keeping_last("h", 0)]).await, vec![created("h")]);
    assert_eq!(
        enqueue(store, [keeping_last("x", 1)]).await,
        vec![answered(EnqueueOutcome::Replaced, "h")]
    );
    let h = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(value(&h.payload), json!({"v": 1}));

    assert_eq!(
        enqueue(store, [keeping_last("f", 2)]).await,
        vec![answered(EnqueueOutcome::QueuedBehind, "f")]
    );
    assert_eq!(
        enqueue(store, [keeping_last("g", 3)]).await,
        vec![answered(EnqueueOutcome::Replaced, "f")]
    );
    assert!(store.get(&id("g")).await.expect("get").is_none());
    let f = get(store, &id("f")).await;
    assert_eq!((f.status, value(&f.payload)), (JobStatus::Blocked, json!({"v": 3})));
    assert_eq!(f.unique_mode, UniqueMode::KeepLast);
    // The running job still shows the key it was enqueued with.
    assert_eq!(get(store, &id("h")).await.unique_key.as_deref(), Some("k"));
    assert!(
        claim(store, "default", WORKER, 1, at(1)).await.is_empty(),
        "the follower waits"
    );

    // A failed attempt that will be retried has not ended the holder: the follower waits on.
    assert!(finish(store, &Lease::of(&h), retry("flaky", at(2)), at(2)).await);
    let h = claim_one(store, "default", WORKER, at(3)).await;
    assert_eq!(h.id.as_str(), "h");
    assert_eq!(get(store, &id("f")).await.status, JobStatus::Blocked);
    let ok = Transition::Succeeded { result: None };
    assert!(finish(store, &Lease::of(&h), ok, at(4)).await);

    let f = claim_one(store, "default", WORKER, at(5)).await;
    assert_eq!((f.id.as_str(), value(&f.payload)), ("f", json!({"v": 3})));
    assert_eq!(
        enqueue(store, [keeping_last("i", 4)]).await,
        vec![answered(EnqueueOutcome::QueuedBehind, "i")]
    );
    let dead = Transition::Dead { error: "broken".into() };
    assert!(finish(store, &Lease::of(&f), dead, at(6)).await);
    let i = claim_one(store, "default", WORKER, at(7)).await;
    assert_eq!(i.id.as_str(), "i");

    assert_eq!(
        enqueue(store, [keeping_last("j", 5)]).await,
        vec![answered(EnqueueOutcome::QueuedBehind, "j")]
    );
    let cancel = jobq::store::Cancel {
        target: jobq::store::CancelTarget::Ids(vec![id("i")]),
        now: at(8),
    };
    store.cancel(&cancel).await.expect("cancel");
    assert_eq!(get(store, &id("j")).await.status, JobStatus::Pending);
    // The key is the follower's now: with nothing running, the next enqueue replaces it.
    assert_eq!(
        enqueue(store, [keeping_last("l", 6)]).await,
        vec![answered(EnqueueOutcome::Replaced, "j")]
    );
}

/// `cancel-running`: as keep-last, and the running holder it queues behind is asked to stop: its
/// heartbeat says so (`CancelRequested`, the lease still held) for as long as a job waits behind
/// it, also at the next attempt of a holder whose worker was lost; the worker's `cancelled` outcome
/// ends it and releases the job behind.
pub(super) async fn cancel_running_asks_the_running_holder_to_stop_and_runs_after_it(store: &DynStore) {
    let cancelling = |name: &str, v: i64| {
        JobSpec::new(JOB_TYPE, json!({"v": v}))
            .id(name)
            .unique_key("k")
            .unique_mode(UniqueMode::CancelRunning)
    };
    assert_eq!(enqueue(store, [cancelling("h", 1)]).await, vec![created("h")]);
    let h = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(beat(store, &Lease::of(&h), at(1)).await, LeaseState::Held);
    assert_eq!(
        enqueue(store, [cancelling("n", 2)]).await,
        vec![answered(EnqueueOutcome::CancelledPrevious, "n")]
    );
    assert_eq!(get(store, &id("n")).await.status, JobStatus::Blocked);
    assert_eq!(beat(store, &Lease::of(&h), at(2)).await, LeaseState::CancelRequested);
    assert_eq!(
        enqueue(store, [cancelling("m", 3)]).await,
        vec![answered(EnqueueOutcome::Replaced, "n")]
    );
    assert!(
        claim(store, "default", WORKER, 1, at(3)).await.is_empty(),
        "the new job waits"
    );
    let stopped = Transition::Cancelled {
        reason: "cancelled by a newer job of its unique key".into(),
    };
    assert!(finish(store, &Lease::of(&h), stopped, at(4)).await);
    let h = get(store, &id("h")).await;
    assert_eq!(h.status, JobStatus::Cancelled);
    assert!(
        h.errors.last().is_some_and(|e| e.error.contains("newer job")),
        "{:?}",
        h.errors
    );
    let n = claim_one(store, "default", WORKER, at(5)).await;
    assert_eq!((n.id.as_str(), value(&n.payload)), ("n", json!({"v": 3})));
    assert_eq!(
        beat(store, &Lease::of(&n), at(6)).await,
        LeaseState::Held,
        "nobody asked it"
    );

    // Its worker lost: the next attempt is asked again, while a job still waits behind it.
    assert_eq!(
        enqueue(store, [cancelling("o", 4)]).await,
        vec![answered(EnqueueOutcome::CancelledPrevious, "o")]
    );
    assert_eq!(rescue_stale(store, at(1_000), at(1_000), 10).await.len(), 1);
    let n = claim_one(store, "default", WORKER, at(1_001)).await;
    assert_eq!((n.id.as_str(), n.attempt), ("n", 2));
    assert_eq!(
        beat(store, &Lease::of(&n), at(1_002)).await,
        LeaseState::CancelRequested
    );
    let ok = Transition::Succeeded { result: None };
    assert!(
        finish(store, &Lease::of(&n), ok, at(1_003)).await,
        "a handler that finished anyway"
    );
    assert_eq!(claim_one(store, "default", WORKER, at(1_004)).await.id.as_str(), "o");
}

/// `debounce` with the running rule `queue-behind`: while the holder runs, the next job waits
/// behind it with its run a window from its enqueue; later ones debounce that follower.
pub(super) async fn debounce_with_queue_behind_debounces_the_job_behind_a_running_holder(store: &DynStore) {
    let debounced = |name: &str, v: i64| {
        JobSpec::new(JOB_TYPE, json!({"v": v}))
            .id(name)
            .unique_key("k")
            .unique_mode(DEBOUNCE_BEHIND)
    };
    assert_eq!(enqueue_at(store, debounced("h", 1), T0).await, created("h"));
    let h = claim_one(store, "default", WORKER, at(30_000)).await;
    let behind = enqueue_at(store, debounced("f", 2), at(31_000)).await;
    assert_eq!(behind, answered(EnqueueOutcome::QueuedBehind, "f"));
    let again = enqueue_at(store, debounced("g", 3), at(32_000)).await;
    assert_eq!(again, answered(EnqueueOutcome::Debounced, "f"));
    let f = get(store, &id("f")).await;
    assert_eq!(
        (f.status, f.run_at, value(&f.payload)),
        (JobStatus::Blocked, at(62_000), json!({"v": 3}))
    );
    assert_eq!(f.unique_mode, DEBOUNCE_BEHIND);
    let ok = Transition::Succeeded { result: None };
    assert!(finish(store, &Lease::of(&h), ok, at(33_000)).await);
    assert!(claim(store, "default", WORKER, 1, at(61_999)).await.is_empty());
    assert_eq!(claim_one(store, "default", WORKER, at(62_000)).await.id.as_str(), "f");
}

/// Every mode answers `duplicate` for a job whose id exists, and changes nothing.
pub(super) async fn every_mode_answers_duplicate_for_an_id_that_exists(store: &DynStore) {
    add(store, spec("x").unique_key("k")).await;
    for mode in [
        UniqueMode::Replace,
        UniqueMode::KeepLast,
        UniqueMode::CancelRunning,
        DEBOUNCE,
        DEBOUNCE_BEHIND,
        UniqueMode::Throttle { window_ms: 60_000 },
    ] {
        let again = JobSpec::new(JOB_TYPE, json!({"v": 9}))
            .id("x")
            .unique_key("k")
            .unique_mode(mode);
        assert_eq!(enqueue(store, [again]).await, vec![duplicate("x")], "{mode}");
    }
    assert_eq!(value(&get(store, &id("x")).await.payload), json!({"n": "x"}));
}

/// Jobs with and without modes in one batch are answered in order, each seeing the ones before.
pub(super) async fn a_batch_mixing_modes_is_answered_in_order(store: &DynStore) {
    let answers = enqueue(
        store,
        [
            spec("a").unique_key("k"),
            replacing("b", json!({"v": "b"})),
            spec("c"),
            replacing("d", json!({"v": "d"})),
            spec("e").unique_key("k"),
        ],
    )
    .await;
    assert_eq!(
        answers,
        vec![
            created("a"),
            answered(EnqueueOutcome::Replaced, "a"),
            created("c"),
            answered(EnqueueOutcome::Replaced, "a"),
            coalesced("a"),
        ]
    );
    assert_eq!(value(&get(store, &id("a")).await.payload), json!({"v": "d"}));
}

const PRODUCERS: usize = 8;
const WORKERS: usize = 3;
const EACH: usize = 25;

/// 8 producers enqueue one key in `mode` while 3 workers claim and finish its jobs. Whatever the
/// interleaving: the key never has two jobs running, nor two that have not started (and, unless the
/// mode queues behind a running job, never two live jobs), every job runs once, every answer names
/// a job that exists, and a job runs with the payload of an enqueue answered with its id (a replace
/// never writes into a job a claim has taken: its payload would then be no enqueue's of that
/// id's).
async fn race(store: &DynStore, mode: UniqueMode) -> Vec<Enqueued> {
    let store = Arc::new(store.clone());
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for n in 0..EACH {
                    let job = JobSpec::new(JOB_TYPE, json!({"p": p, "n": n}))
                        .id(format!("p{p}-{n}"))
                        .unique_key("k")
                        .unique_mode(mode);
                    let answer = store.enqueue(&[new_job(job)]).await.expect("enqueue");
                    answers.push((format!("p{p}-{n}"), json!({"p": p, "n": n}), answer[0].clone()));
                }
                answers
            })
        })
        .collect();
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let store = store.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let worker = format!("w{w}");
                let mut ran = Vec::new();
                loop {
                    let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                    // Far in the future: a debounced job is due at once.
                    let jobs = claim(&store, "default", &worker, 1, at(10_000_000)).await;
                    if jobs.is_empty() {
                        if finished {
                            return ran;
                        }
                        tokio::task::yield_now().await;
                        continue;
                    }
                    for job in jobs {
                        let (running, unstarted) = live_jobs_of_key(&store).await;
                        assert!(running <= 1, "{running} running jobs hold the key");
                        assert!(unstarted <= 1, "{unstarted} jobs not started hold the key");
                        if !mode.queues_behind() {
                            assert!(running + unstarted <= 1, "two live jobs hold the key");
                        }
                        ran.push((job.id.to_string(), value(&job.payload)));
                        let ok = Transition::Succeeded { result: None };
                        assert!(finish(&store, &Lease::of(&job), ok, at(10_000_001)).await);
                    }
                }
            })
        })
        .collect();
    let mut answers = Vec::new();
    for producer in producers {
        answers.extend(producer.await.expect("producer"));
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut ran = Vec::new();
    for worker in workers {
        ran.extend(worker.await.expect("worker"));
    }

    let ran_ids: Vec<&String> = ran.iter().map(|(id, _)| id).collect();
    let distinct: HashSet<&String> = ran_ids.iter().copied().collect();
    assert_eq!(distinct.len(), ran_ids.len(), "a job ran twice");
    let mut written: HashMap<String, Vec<serde_json::Value>> = HashMap::new();
    for (own, payload, answer) in &answers {
        match answer.outcome {
            EnqueueOutcome::Created | EnqueueOutcome::QueuedBehind | EnqueueOutcome::CancelledPrevious => {
                assert_eq!(&answer.id.to_string(), own)
            }
            EnqueueOutcome::Replaced
            | EnqueueOutcome::Debounced
            | EnqueueOutcome::Coalesced
            | EnqueueOutcome::Throttled => {
                assert!(
                    store.get(&answer.id).await.expect("get").is_some(),
                    "{answer:?} names no job"
                )
            }
            EnqueueOutcome::Duplicate => panic!("{own}: duplicate of a fresh id"),
        }
        if matches!(
            answer.outcome,
            EnqueueOutcome::Created
                | EnqueueOutcome::QueuedBehind
                | EnqueueOutcome::CancelledPrevious
                | EnqueueOutcome::Replaced
                | EnqueueOutcome::Debounced
        ) {
            written.entry(answer.id.to_string()).or_default().push(payload.clone());
        }
    }
    for (id, payload) in &ran {
        let writes = written
            .get(id)
            .unwrap_or_else(|| panic!("{id} ran but no enqueue created it"));
        assert!(
            writes.contains(payload),
            "{id} ran with {payload}, written by none of {writes:?}"
        );
        let kept = value(&get(&store, &self::id(id)).await.payload);
        assert_eq!(&kept, payload, "{id} was changed after it was claimed");
    }
    // Every job created ran (the workers drained the queue) and succeeded once.
    for id in written.keys() {
        let job = get(&store, &self::id(id)).await;
        assert_eq!((job.status, job.attempt), (JobStatus::Succeeded, 1), "{id}");
    }
    answers.into_iter().map(|(_, _, answer)| answer).collect()
}

/// How many jobs of the default queue with the key "k" are running (or waiting), and how many have
/// not started (blocked or pending).
async fn live_jobs_of_key(store: &DynStore) -> (usize, usize) {
    let list = jobq::store::List {
        filter: jobq::store::JobFilter {
            statuses: vec![
                JobStatus::Blocked,
                JobStatus::Pending,
                JobStatus::Running,
                JobStatus::Waiting,
            ],
            ..Default::default()
        },
        limit: 100,
        offset: 0,
        after: None,
    };
    let jobs = store.list(&list).await.expect("list");
    let of_key = jobs.iter().filter(|j| j.unique_key.as_deref() == Some("k"));
    let (started, unstarted): (Vec<&jobq::job::Job>, Vec<&jobq::job::Job>) =
        of_key.partition(|j| matches!(j.status, JobStatus::Running | JobStatus::Waiting));
    (started.len(), unstarted.len())
}

pub(super) async fn racing_producers_and_workers_never_replace_a_started_job(store: &DynStore) {
    let answers = race(store, UniqueMode::Replace).await;
    assert!(answers.iter().any(|a| a.outcome == EnqueueOutcome::Created));
}

pub(super) async fn racing_producers_and_workers_never_debounce_a_started_job(store: &DynStore) {
    race(store, DEBOUNCE).await;
}

pub(super) async fn racing_producers_and_workers_never_run_two_keep_last_jobs_at_once(store: &DynStore) {
    let answers = race(store, UniqueMode::KeepLast).await;
    // The workers hold each job while they count the key's jobs: enqueues meet running holders.
    assert!(answers.iter().any(|a| a.outcome == EnqueueOutcome::QueuedBehind));
}

pub(super) async fn racing_producers_and_workers_never_run_two_cancel_running_jobs_at_once(store: &DynStore) {
    let answers = race(store, UniqueMode::CancelRunning).await;
    assert!(answers.iter().any(|a| a.outcome == EnqueueOutcome::CancelledPrevious));
}

pub(super) async fn racing_producers_and_workers_never_run_two_queued_behind_debounces_at_once(store: &DynStore) {
    race(store, DEBOUNCE_BEHIND).await;
}

/// With a window longer than the race, exactly one job is created; every other enqueue is
/// throttled by it (or coalesces into it while it is live and before its window was taken).
pub(super) async fn racing_producers_take_one_throttle_window_once(store: &DynStore) {
    let answers = race(store, UniqueMode::Throttle { window_ms: 3_600_000 }).await;
    let created: Vec<&Enqueued> = answers
        .iter()
        .filter(|a| a.outcome == EnqueueOutcome::Created)
        .collect();
    assert_eq!(created.len(), 1, "{answers:?}");
    let holder = &created[0].id;
    assert!(answers.iter().all(|a| &a.id == holder), "{answers:?}");
}
