//! What `jobq doctor` and `jobq autoscale` read of the jobs: the jobs workers keep losing
//! (`often_rescued`), a queue's load over a window (`queue_load`), the jobs finished per bucket
//! (`throughput`, which the dashboard charts), and the shape of a store's
//! findings about itself (`health`; what each store finds is checked against the real server in
//! that store's own tests).

use jobq::job::JobStatus;
use jobq::store::{
    Cancel, CancelTarget, DynStore, FinishedCount, Health, Lease, Load, OftenRescued, QueueLoad, ReplayDead, StoreKind,
    Throughput, Transition, rescues,
};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

/// Claims the next ready job of `queue` at `now` and lets its worker die: rescued at `now + 1`.
async fn lose(store: &DynStore, queue: &str, now: UnixMillis) {
    claim_one(store, queue, WORKER, now).await;
    let later = UnixMillis(now.0 + 1);
    let rescued = rescue_stale(store, later, later, 100).await;
    assert_eq!(rescued.len(), 1, "one job rescued at {now}");
}

async fn often_rescued(store: &DynStore, at_least: u32, limit: u32) -> Vec<String> {
    let jobs = store
        .often_rescued(&OftenRescued { at_least, limit })
        .await
        .expect("often rescued");
    ids(&jobs)
}

pub(super) async fn often_rescued_finds_jobs_lost_at_least_n_times(store: &DynStore) {
    // One queue each, so that each job is the one its claims take.
    add_all(
        store,
        [
            spec("thrice").queue("a"),
            spec("once").queue("b"),
            spec("dead-thrice").queue("c").max_attempts(3),
            spec("mentions").queue("d"),
        ],
    )
    .await;
    for n in 0..3 {
        lose(store, "a", at(n * 10)).await;
        lose(store, "c", at(n * 10)).await;
    }
    lose(store, "b", T0).await;
    // Errors that only mention the words are not rescues.
    for (n, text) in ["the worker lost its way", "\"worker lost\""].into_iter().enumerate() {
        let job = claim_one(store, "d", WORKER, at(n as i64 * 100)).await;
        assert!(finish(store, &Lease::of(&job), retry(text, T0), at(n as i64 * 100 + 50)).await);
    }
    assert_eq!(get(store, &id("dead-thrice")).await.status, JobStatus::Dead);

    assert_eq!(often_rescued(store, 3, 100).await, ["dead-thrice", "thrice"]);
    assert_eq!(often_rescued(store, 1, 100).await, ["dead-thrice", "once", "thrice"]);
    assert_eq!(
        often_rescued(store, 1, 2).await,
        ["dead-thrice", "once"],
        "at most the limit, by id"
    );
    assert!(often_rescued(store, 4, 100).await.is_empty());
    let found = store
        .often_rescued(&OftenRescued { at_least: 3, limit: 1 })
        .await
        .unwrap();
    assert_eq!(
        rescues(&found[0]),
        3,
        "the jobs come back whole, their history included"
    );
}

pub(super) async fn often_rescued_leaves_finished_jobs_out(store: &DynStore) {
    add(store, spec("done")).await;
    for n in 0..3 {
        lose(store, "default", at(n * 10)).await;
    }
    let job = claim_one(store, "default", WORKER, at(100)).await;
    assert!(finish(store, &Lease::of(&job), Transition::Succeeded { result: None }, at(110)).await);
    assert!(
        often_rescued(store, 1, 100).await.is_empty(),
        "succeeded jobs are history"
    );
}

/// Enqueues a job of queue `q` due at `due`, claims it at `start` and, with `outcome`, finishes it
/// at `end`.
async fn ran(store: &DynStore, name: &str, due: i64, start: i64, end: Option<(i64, Transition)>) {
    add(store, spec(name).queue("q").run_at(at(due))).await;
    let job = claim_one(store, "q", WORKER, at(start)).await;
    assert_eq!(job.id, id(name), "the job claimed at {start}");
    if let Some((end, outcome)) = end {
        assert!(finish(store, &Lease::of(&job), outcome, at(end)).await);
    }
}

async fn load(store: &DynStore, queue: &str, since: i64, now: i64) -> Load {
    store
        .queue_load(&QueueLoad {
            queue: queue.into(),
            since: at(since),
            now: at(now),
        })
        .await
        .expect("queue load")
}

pub(super) async fn queue_load_counts_arrivals_finished_runs_and_the_backlog_of_a_window(store: &DynStore) {
    let succeeded = || Transition::Succeeded { result: None };
    // The window is [0 s, 60 s] after T0.
    ran(store, "long-ago", -200_000, -200_000, Some((-150_000, succeeded()))).await;
    ran(
        store,
        "old-but-finished-now",
        -100_000,
        -90_000,
        Some((30_000, succeeded())),
    )
    .await;
    ran(store, "quick", 1_000, 2_000, Some((4_000, succeeded()))).await;
    let dead = Transition::Dead { error: "no".into() };
    ran(store, "died", 20_000, 21_000, Some((22_000, dead))).await;
    ran(store, "running", 5_000, 6_000, None).await;
    add(store, spec("cancelled").queue("q").run_at(at(25_000))).await;
    let cancel = Cancel {
        target: CancelTarget::Ids(vec![id("cancelled")]),
        now: at(26_000),
    };
    store.cancel(&cancel).await.expect("cancel");
    add(store, spec("backlog").queue("q").run_at(at(-10_000))).await;
    add(store, spec("due-in-window").queue("q").run_at(at(10_000))).await;
    add(store, spec("later").queue("q").run_at(at(120_000))).await;
    add(store, spec("elsewhere").queue("other").run_at(at(10_000))).await;

    assert_eq!(
        load(store, "q", 0, 60_000).await,
        Load {
            // quick, died, running, cancelled, due-in-window
            arrived: 5,
            // quick (2 s), old-but-finished-now (120 s), died (1 s)
            finished: 3,
            busy_ms: 123_000,
            // backlog, due-in-window
            ready: 2,
            running: 1,
        }
    );
    assert_eq!(
        load(store, "q", 50_000, 60_000).await,
        Load {
            arrived: 0,
            finished: 0,
            busy_ms: 0,
            ready: 2,
            running: 1,
        }
    );
    assert_eq!(load(store, "nothing-here", 0, 60_000).await, Load::default());
}

async fn throughput(store: &DynStore, queues: &[&str]) -> Vec<(String, u32, JobStatus, u64)> {
    // Six buckets of 10 s from T0.
    let counts = store
        .throughput(&Throughput {
            queues: queues.iter().map(|q| q.to_string()).collect(),
            since: T0,
            bucket_ms: 10_000,
            buckets: 6,
        })
        .await
        .expect("throughput");
    counts
        .into_iter()
        .map(
            |FinishedCount {
                 queue,
                 bucket,
                 status,
                 count,
             }| (queue, bucket, status, count),
        )
        .collect()
}

pub(super) async fn throughput_counts_finished_jobs_per_queue_bucket_and_status(store: &DynStore) {
    let succeeded = || Transition::Succeeded { result: None };
    ran(store, "before", -20_000, -20_000, Some((-1, succeeded()))).await;
    ran(store, "first", 0, 0, Some((0, succeeded()))).await;
    ran(store, "first-too", 1_000, 1_000, Some((9_999, succeeded()))).await;
    ran(store, "third", 1_000, 1_000, Some((25_000, succeeded()))).await;
    let dead = || Transition::Dead { error: "no".into() };
    ran(store, "died", 1_000, 1_000, Some((25_500, dead()))).await;
    ran(store, "replayed", 1_000, 1_000, Some((26_000, dead()))).await;
    ran(store, "after", 1_000, 1_000, Some((60_000, succeeded()))).await;
    ran(store, "still-running", 1_000, 1_000, None).await;
    add(store, spec("cancelled").queue("other")).await;
    let cancel = Cancel {
        target: CancelTarget::Ids(vec![id("cancelled")]),
        now: at(59_999),
    };
    store.cancel(&cancel).await.expect("cancel");
    let replay = ReplayDead {
        ids: vec![id("replayed")],
        now: at(30_000),
        ..Default::default()
    };
    assert_eq!(store.replay_dead(&replay).await.expect("replay").len(), 1);

    let q = |bucket, status, count| ("q".to_string(), bucket, status, count);
    let other = ("other".to_string(), 5, JobStatus::Cancelled, 1);
    assert_eq!(
        throughput(store, &[]).await,
        [
            other.clone(),
            q(0, JobStatus::Succeeded, 2),
            q(2, JobStatus::Succeeded, 1),
            q(2, JobStatus::Dead, 1),
        ],
        "by queue, bucket and status; the window's end, live jobs and replayed ones left out"
    );
    assert_eq!(throughput(store, &["other"]).await, [other]);
    assert_eq!(throughput(store, &["nothing-here"]).await, []);
}

pub(super) async fn health_findings_say_what_to_do(store: &DynStore) {
    add(store, spec("a")).await;
    let findings = store.health(&Health::default()).await.expect("health");
    let prefix = match store.kind() {
        StoreKind::Sqlite => "sqlite-",
        StoreKind::Postgres => "postgres-",
        StoreKind::Redis => "redis-",
        // MySQL has nothing of its own to report.
        _ => {
            assert_eq!(findings, []);
            return;
        }
    };
    for f in &findings {
        assert!(f.code.starts_with(prefix), "{f:?}");
        assert!(!f.message.is_empty() && !f.advice.is_empty(), "{f:?}");
    }
}
