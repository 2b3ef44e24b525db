//! Schedules and events, timed on every store (issue 15's speed targets):
//! - `emit`: `Client::emit` of an event with 10 subscribers, one event (one transaction) after
//!   another from one process: events per second and the time of one call; then from 8 producers
//!   in the process at once (as concurrent web requests emit), each event still its own transaction;
//! - `ticks`: 1,000 schedules due every minute (`* * * * *`), three schedulers (as three workers run
//!   them, each on a store connection of its own), one minute's tick: how long after its tick each
//!   job was made (`createdAt - meta.scheduledFor`), p50, p99 and the slowest, and when all 1,000
//!   were committed and listed by a reader polling every 50 ms;
//! - `idle`: the store calls an idle scheduler makes while no tick is due, over 10 s (every call a
//!   scheduler makes goes through a store that counts them).
//!
//! `cargo bench --bench schedules_events` prints the median of JOBQ_BENCH_RUNS runs (default 3) of
//! `emit` and `idle`, and one `ticks` run per store (it waits for the next whole minute). The servers are
//! the tests' own (`JOBQ_TEST_POSTGRES_URL`, …, defaulting to the local ones), each run in a corner of
//! its own; a server that is not running is reported and left out. `JOBQ_BENCH_SKIP_TICKS=1` leaves
//! out the minute-long `ticks`.

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../tests/it/support/mod.rs"]
mod support;

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{median, reachable, runs, stores};
use jobq::Client;
use jobq::client::EventSpec;
use jobq::events::{Subscriber, Subscriptions};
use jobq::job::Limits;
use jobq::schedule::{CatchUp, Schedule, When, run_scheduler};
use jobq::store::{DynStore, List, Overlap, ScheduleKey, ScheduleState, Store, StoreError, Tick, TickOutcome};
use jobq::time::{SystemClock, UnixMillis};
use serde_json::json;
use support::TestStore;
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs = runs();
    println!("jobq schedules and events: medians of {runs} runs");
    let skip_ticks = std::env::var_os("JOBQ_BENCH_SKIP_TICKS").is_some();
    for (name, server, open) in stores() {
        if server.as_deref().is_some_and(|url| !reachable(url)) {
            println!("{name}: not measured, no server");
            continue;
        }
        let mut rates = Vec::new();
        let mut calls = Vec::new();
        for _ in 0..runs {
            let (rate, call_ms) = emit(open().await, 2_000).await;
            rates.push(rate);
            calls.push(call_ms);
        }
        println!(
            "{name} emit, 10 subscribers: {:.0} events/s ({:.0} jobs/s), {:.3} ms a call",
            median(rates.clone()),
            median(rates) * 10.0,
            median(calls)
        );
        let mut together = Vec::new();
        for _ in 0..runs {
            together.push(emit_concurrently(open().await, 4_000, 8).await);
        }
        println!(
            "{name} emit, 10 subscribers, 8 producers in the process at once: {:.0} events/s",
            median(together)
        );
        let mut idles = Vec::new();
        for _ in 0..runs {
            idles.push(idle(open().await).await);
        }
        println!(
            "{name} idle scheduler: {:.2} store calls a second (median of {runs} runs of 10 s)",
            median(idles)
        );
        if !skip_ticks {
            ticks(name, open().await).await;
        }
    }
}

/// Emits `n` events of 10 subscribers one after another; events per second and the mean call in ms.
async fn emit(store: TestStore, n: usize) -> (f64, f64) {
    let client = Client::new(store.store().clone());
    let subscribers = (0..10).map(|i| Subscriber::new(format!("sub.{i}"))).collect();
    let subs = Subscriptions(BTreeMap::from([("user.registered".to_string(), subscribers)]));
    let started = Instant::now();
    for i in 0..n {
        let event = EventSpec {
            name: "user.registered".into(),
            payload: json!({ "userId": i }),
            ..Default::default()
        };
        client.emit(&subs, event).await.expect("emit");
    }
    let seconds = started.elapsed().as_secs_f64();
    (n as f64 / seconds, seconds * 1000.0 / n as f64)
}

/// Emits `n` events of 10 subscribers from `producers` tasks at once (as a web server's concurrent
/// requests do), each event its own transaction; events per second.
async fn emit_concurrently(store: TestStore, n: usize, producers: usize) -> f64 {
    let client = Client::new(store.store().clone());
    let subscribers = (0..10).map(|i| Subscriber::new(format!("sub.{i}"))).collect();
    let subs = Arc::new(Subscriptions(BTreeMap::from([(
        "user.registered".to_string(),
        subscribers,
    )])));
    let started = Instant::now();
    let tasks: Vec<_> = (0..producers)
        .map(|p| {
            let (client, subs) = (client.clone(), subs.clone());
            tokio::spawn(async move {
                for i in 0..n / producers {
                    let event = EventSpec {
                        name: "user.registered".into(),
                        payload: json!({ "producer": p, "i": i }),
                        ..Default::default()
                    };
                    client.emit(&subs, event).await.expect("emit");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a producer");
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// A store that counts the calls made through it (each one store round trip or script).
#[derive(Debug)]
struct Counting {
    inner: DynStore,
    calls: AtomicU64,
}

#[async_trait::async_trait]
impl Store for Counting {
    fn kind(&self) -> jobq::store::StoreKind {
        self.inner.kind()
    }
    async fn info(&self) -> Result<jobq::store::StoreInfo, StoreError> {
        self.inner.info().await
    }
    async fn migrate(&self) -> Result<(), StoreError> {
        self.inner.migrate().await
    }
    async fn enqueue(&self, jobs: &[jobq::job::NewJob]) -> Result<Vec<jobq::store::Enqueued>, StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.enqueue(jobs).await
    }
    async fn claim(&self, claim: &jobq::store::Claim) -> Result<Vec<jobq::job::Job>, StoreError> {
        self.inner.claim(claim).await
    }
    async fn heartbeat(
        &self,
        beats: &[jobq::store::Heartbeat],
        now: UnixMillis,
    ) -> Result<Vec<jobq::store::LeaseState>, StoreError> {
        self.inner.heartbeat(beats, now).await
    }
    async fn finish(&self, finishes: &[jobq::store::Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        self.inner.finish(finishes, now).await
    }
    async fn release(&self, leases: &[jobq::store::Lease]) -> Result<Vec<bool>, StoreError> {
        self.inner.release(leases).await
    }
    async fn rescue(&self, rescue: &jobq::store::Rescue) -> Result<Vec<jobq::store::Rescued>, StoreError> {
        self.inner.rescue(rescue).await
    }
    async fn get(&self, id: &jobq::job::JobId) -> Result<Option<jobq::job::Job>, StoreError> {
        self.inner.get(id).await
    }
    async fn list(&self, list: &List) -> Result<Vec<jobq::job::Job>, StoreError> {
        self.inner.list(list).await
    }
    async fn stats(&self, stats: &jobq::store::Stats) -> Result<jobq::store::StatsReport, StoreError> {
        self.inner.stats(stats).await
    }
    async fn cancel(&self, cancel: &jobq::store::Cancel) -> Result<Vec<jobq::store::CancelAnswer>, StoreError> {
        self.inner.cancel(cancel).await
    }
    async fn replay_dead(&self, replay: &jobq::store::ReplayDead) -> Result<Vec<jobq::job::Job>, StoreError> {
        self.inner.replay_dead(replay).await
    }
    async fn cleanup(&self, cleanup: &jobq::store::Cleanup) -> Result<u64, StoreError> {
        self.inner.cleanup(cleanup).await
    }
    async fn expire(&self, expire: &jobq::store::Expire) -> Result<u64, StoreError> {
        self.inner.expire(expire).await
    }
    async fn resolve(
        &self,
        resolves: &[jobq::store::Resolve],
        now: jobq::UnixMillis,
    ) -> Result<Vec<jobq::store::ResolveAnswer>, StoreError> {
        self.inner.resolve(resolves, now).await
    }
    async fn delete(&self, delete: &jobq::store::Delete) -> Result<Vec<jobq::store::DeleteAnswer>, StoreError> {
        self.inner.delete(delete).await
    }
    async fn delete_matching(
        &self,
        delete: &jobq::store::DeleteMatching,
    ) -> Result<jobq::store::DeletedCount, StoreError> {
        self.inner.delete_matching(delete).await
    }
    async fn retry(&self, retry: &jobq::store::Retry) -> Result<Vec<jobq::store::RetryAnswer>, StoreError> {
        self.inner.retry(retry).await
    }
    async fn restore_schedules(
        &self,
        records: &[(jobq::store::ScheduleKey, jobq::store::ScheduleState)],
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        self.inner.restore_schedules(records, now).await
    }
    async fn import(&self, import: &jobq::store::Import) -> Result<Vec<jobq::store::ImportAnswer>, StoreError> {
        self.inner.import(import).await
    }
    async fn import_edges(&self, edges: &[jobq::store::ImportEdges], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        self.inner.import_edges(edges, now).await
    }
    async fn flow_state(&self, now: UnixMillis) -> Result<jobq::store::FlowState, StoreError> {
        self.inner.flow_state(now).await
    }
    async fn set_paused(&self, pause: &jobq::store::SetPaused<'_>) -> Result<bool, StoreError> {
        self.inner.set_paused(pause).await
    }
    async fn block(&self, block: &jobq::store::Block, now: UnixMillis) -> Result<(), StoreError> {
        self.inner.block(block, now).await
    }
    async fn record_limits(&self, record: &jobq::store::RecordLimits<'_>) -> Result<(), StoreError> {
        self.inner.record_limits(record).await
    }
    async fn health(&self, health: &jobq::store::Health) -> Result<Vec<jobq::store::Finding>, StoreError> {
        self.inner.health(health).await
    }
    async fn often_rescued(&self, params: &jobq::store::OftenRescued) -> Result<Vec<jobq::job::Job>, StoreError> {
        self.inner.often_rescued(params).await
    }
    async fn stranded(&self, limit: u32) -> Result<Vec<jobq::job::JobId>, StoreError> {
        self.inner.stranded(limit).await
    }
    async fn edges(&self, read: &jobq::store::ReadEdges) -> Result<Vec<jobq::store::JobEdges>, StoreError> {
        self.inner.edges(read).await
    }
    async fn queue_load(&self, load: &jobq::store::QueueLoad) -> Result<jobq::store::Load, StoreError> {
        self.inner.queue_load(load).await
    }
    async fn throughput(
        &self,
        throughput: &jobq::store::Throughput,
    ) -> Result<Vec<jobq::store::FinishedCount>, StoreError> {
        self.inner.throughput(throughput).await
    }
    async fn limits(&self) -> Result<Vec<jobq::store::RecordedLimit>, StoreError> {
        self.inner.limits().await
    }
    async fn register_worker(&self, worker: &jobq::store::WorkerInfo) -> Result<(), StoreError> {
        self.inner.register_worker(worker).await
    }
    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        self.inner.unregister_worker(id).await
    }
    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<jobq::store::WorkerInfo>, StoreError> {
        self.inner.workers(seen_since).await
    }
    async fn forget_workers(&self, seen_before: UnixMillis) -> Result<u64, StoreError> {
        self.inner.forget_workers(seen_before).await
    }
    async fn schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.schedules(keys).await
    }
    async fn register_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.register_schedules(keys, now).await
    }
    async fn fire_ticks(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.fire_ticks(ticks).await
    }
    async fn set_schedule_paused(&self, pause: &jobq::store::SetSchedulePaused<'_>) -> Result<(), StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.set_schedule_paused(pause).await
    }
    async fn emit(&self, events: &[jobq::store::Emit]) -> Result<Vec<jobq::store::EmitOutcome>, StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.emit(events).await
    }
    async fn expand_events(&self, expand: &jobq::store::ExpandEvents<'_>) -> Result<usize, StoreError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.expand_events(expand).await
    }
}

fn schedule(name: String, when: When) -> Schedule {
    Schedule {
        name,
        when,
        job_type: "bench.tick".into(),
        payload: serde_json::value::to_raw_value(&json!(null)).unwrap(),
        queue: "bench".into(),
        meta: BTreeMap::new(),
        priority: 0,
        max_attempts: None,
        timeout: None,
        jitter: None,
        catch_up: CatchUp::Latest,
        overlap: Overlap::Allow,
        paused: false,
    }
}

/// Store calls per second of a scheduler over 10 s while none of its 10 schedules is due.
async fn idle(store: TestStore) -> f64 {
    let counting = Arc::new(Counting {
        inner: store.store().clone(),
        calls: AtomicU64::new(0),
    });
    let schedules: Vec<Schedule> = (0..10)
        .map(|i| schedule(format!("yearly-{i}"), When::cron("0 0 1 1 *", "UTC").unwrap()))
        .collect();
    let (_tx, rx) = tokio::sync::watch::channel(Arc::new(schedules));
    let stop = CancellationToken::new();
    let task = tokio::spawn(run_scheduler(
        counting.clone(),
        Arc::new(SystemClock),
        Limits::default(),
        rx,
        stop.clone(),
    ));
    // The first round records the schedules; count from after it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let before = counting.calls.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let calls = counting.calls.load(Ordering::Relaxed) - before;
    stop.cancel();
    let _ = task.await;
    calls as f64 / 10.0
}

/// 1,000 schedules due every minute, three schedulers on connections of their own: how late after
/// its tick each job of the next minute's tick was enqueued.
async fn ticks(name: &str, store: TestStore) {
    let schedules: Vec<Schedule> = (0..1_000)
        .map(|i| schedule(format!("minutely-{i:04}"), When::cron("* * * * *", "UTC").unwrap()))
        .collect();
    let schedules = Arc::new(schedules);
    let stop = CancellationToken::new();
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let url = jobq::store::StoreUrl::parse(store.url()).expect("the test store's URL");
        let own = jobq::store::connect(&url).await.expect("a store connection of its own");
        let (tx, rx) = tokio::sync::watch::channel(schedules.clone());
        tasks.push((
            tx,
            tokio::spawn(run_scheduler(
                own,
                Arc::new(SystemClock),
                Limits::default(),
                rx,
                stop.clone(),
            )),
        ));
    }
    // The schedules are first seen now: the first tick they fire is the next whole minute's.
    let now = UnixMillis::now();
    let tick = When::cron("* * * * *", "UTC").unwrap().next_after(now).unwrap();
    let deadline = Instant::now() + tick.since(now) + Duration::from_secs(30);
    let list = List {
        filter: Default::default(),
        limit: 2_000,
        offset: 0,
        after: None,
    };
    let (jobs, visible) = loop {
        let jobs = store.list(&list).await.expect("list");
        let of_tick = jobs
            .iter()
            .filter(|j| j.meta.get("scheduledFor").map(String::as_str) == Some(tick.to_rfc3339().as_str()))
            .count();
        if of_tick == 1_000 || Instant::now() > deadline {
            break (jobs, UnixMillis::now());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    stop.cancel();
    for (_, task) in tasks {
        let _ = task.await;
    }
    let mut lags: Vec<f64> = jobs
        .iter()
        .filter(|j| j.meta.get("scheduledFor").map(String::as_str) == Some(tick.to_rfc3339().as_str()))
        .map(|j| (j.created_at.0 - tick.0) as f64)
        .collect();
    lags.sort_by(f64::total_cmp);
    if lags.is_empty() {
        println!("{name} ticks: no job of the tick at {tick} was enqueued");
        return;
    }
    let at = |q: f64| lags[((lags.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name} 1,000 schedules x 3 schedulers: {} jobs for the tick at {tick}; made after the tick p50 {:.0} ms, p99 {:.0} ms, slowest {:.0} ms; all committed and listed {} ms after the tick (polled every 50 ms)",
        lags.len(),
        at(0.5),
        at(0.99),
        lags[lags.len() - 1],
        visible.0 - tick.0
    );
}
