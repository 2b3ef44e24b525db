//! The enqueue workload: jobs put in one at a time through [`jobq::Client::enqueue`] (one store
//! transaction each, as a web request enqueues), then in bulk through
//! [`jobq::Client::enqueue_validated`] in batches (as `jobq enqueue --file` does). Timed from the
//! first call to the return of the last; the bulk time includes validating each batch. No worker
//! runs meanwhile, unless `--processes N` asks for N `jobq worker` processes to work the
//! one-at-a-time jobs off while they are enqueued (as a web app's workers do); the queue is emptied
//! between the two parts, untimed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::fleet::Fleet;
use super::{Bench, BenchError, BenchResult, Plan, Summary, WorkerSetup, rate};

/// Enqueue figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnqueueReport {
    /// One job per call.
    pub single: Option<SingleReport>,
    /// Each of those jobs read back by id, one [`jobq::Client::get`] after another (as `jobq show`
    /// or an application polling a job does).
    pub get: Option<GetReport>,
    /// Batches.
    pub bulk: Option<BulkReport>,
}

/// One job per [`jobq::Client::enqueue`] call, each producer's calls one after another.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleReport {
    /// Jobs enqueued.
    pub jobs: u64,
    /// Producers enqueueing at once, each awaiting its own calls.
    pub producers: u32,
    /// From the first call to the return of the last.
    pub seconds: f64,
    /// Jobs per second.
    pub jobs_per_second: f64,
    /// Time of one call, in milliseconds.
    pub call_ms: Option<Summary>,
    /// The workers that worked the jobs off meanwhile (`--processes`), if any.
    pub beside: Option<BesideWorkers>,
    /// With `--unique-mode`: the mode, and the jobs the calls' answers name (those created: the
    /// others were coalesced, replaced, debounced or throttled into them).
    pub unique: Option<UniqueReport>,
}

/// What the one-at-a-time calls of a unique mode came to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UniqueReport {
    /// The mode, as `jobq show` prints it.
    pub mode: String,
    /// Keys the jobs shared.
    pub keys: u64,
    /// Distinct jobs the answers named.
    pub jobs: u64,
}

/// Worker processes that ran while the jobs were enqueued one at a time.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BesideWorkers {
    /// The workers.
    pub workers: WorkerSetup,
    /// From the first call to the end of the last job.
    pub seconds: f64,
    /// Jobs enqueued and worked off per second.
    pub jobs_per_second: f64,
}

/// One job read per [`jobq::Client::get`] call, one call after another.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetReport {
    /// Jobs read.
    pub jobs: u64,
    /// From the first call to the return of the last.
    pub seconds: f64,
    /// Reads per second.
    pub jobs_per_second: f64,
    /// Time of one call, in milliseconds.
    pub call_ms: Option<Summary>,
}

/// Batches through [`jobq::Client::enqueue_validated`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BulkReport {
    /// Jobs enqueued.
    pub jobs: u64,
    /// Jobs per call.
    pub batch_size: usize,
    /// From the first batch's validation to the return of the last call.
    pub seconds: f64,
    /// Jobs per second.
    pub jobs_per_second: f64,
}

/// Runs the enqueue workload.
pub(crate) async fn run(bench: &Bench, plan: &Plan) -> BenchResult<EnqueueReport> {
    let mut report = EnqueueReport {
        single: None,
        get: None,
        bulk: None,
    };
    if plan.single_jobs > 0 {
        let fleet = if plan.processes > 0 {
            let fleet = Fleet::start(bench, plan, false)?;
            bench.wait_registered(plan.processes as usize).await?;
            Some(fleet)
        } else {
            None
        };
        let started = Instant::now();
        let (mut enqueued, ids) = single(bench, plan).await?;
        if let Some(fleet) = fleet {
            enqueued.beside = Some(worked_off(bench, plan, fleet, started).await?);
        }
        report.single = Some(enqueued);
        report.get = Some(get(bench, &ids).await?);
        bench.clear().await?;
    }
    if plan.bulk_jobs > 0 {
        report.bulk = Some(bulk(bench, plan.bulk_jobs, plan.batch_size).await?);
    }
    Ok(report)
}

async fn single(bench: &Bench, plan: &Plan) -> BenchResult<(SingleReport, Vec<String>)> {
    let (n, producers) = (plan.single_jobs, plan.producers);
    let spec = |i: u64| {
        let spec = bench.spec(i);
        match plan.unique {
            Some((mode, keys)) => spec.unique_key(format!("k{}", i % keys)).unique_mode(mode),
            None => spec,
        }
    };
    bench.progress.begin("enqueue, one at a time", n);
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    // Each producer is a task of its own on the runtime's threads, as concurrent requests of a web
    // server are; producer p enqueues jobs p, p + producers, p + 2 × producers, …
    let tasks: Vec<_> = (0..u64::from(producers))
        .map(|p| {
            let (client, done) = (bench.client.clone(), done.clone());
            let specs: Vec<_> = (p..n).step_by(producers as usize).map(spec).collect();
            tokio::spawn(async move {
                let mut calls = Vec::with_capacity(specs.len());
                let mut ids = Vec::with_capacity(specs.len());
                for spec in specs {
                    let call = Instant::now();
                    let enqueued = client.enqueue(spec).await?;
                    calls.push(call.elapsed().as_secs_f64() * 1000.0);
                    ids.push(enqueued.id.to_string());
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, jobq::Error>((calls, ids))
            })
        })
        .collect();
    let all = futures_util::future::try_join_all(tasks);
    tokio::pin!(all);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let finished = loop {
        tokio::select! {
            finished = &mut all => break finished,
            _ = tick.tick() => bench.progress.set(done.load(Ordering::Relaxed)),
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut calls = Vec::with_capacity(n as usize);
    let mut ids = Vec::with_capacity(n as usize);
    for mine in finished.map_err(|e| BenchError::Incomplete(format!("a producer task failed: {e}")))? {
        let (their_calls, their_ids) = mine?;
        calls.extend(their_calls);
        ids.extend(their_ids);
    }
    bench.progress.end();
    let unique = plan.unique.map(|(mode, keys)| UniqueReport {
        mode: mode.to_string(),
        keys,
        jobs: ids.iter().collect::<std::collections::HashSet<_>>().len() as u64,
    });
    let report = SingleReport {
        jobs: n,
        producers,
        seconds,
        jobs_per_second: rate(n, seconds),
        call_ms: Summary::of(calls),
        beside: None,
        unique,
    };
    Ok((report, ids))
}

/// Waits for the workers to finish every job enqueued since `started`, then stops them.
async fn worked_off(bench: &Bench, plan: &Plan, fleet: Fleet, started: Instant) -> BenchResult<BesideWorkers> {
    bench
        .wait_worked_off(&fleet, Duration::from_secs(60), "the enqueued jobs")
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    fleet.stop();
    fleet.wait().await?;
    Ok(BesideWorkers {
        workers: bench.setup_of(plan),
        seconds,
        jobs_per_second: rate(plan.single_jobs, seconds),
    })
}

async fn get(bench: &Bench, ids: &[String]) -> BenchResult<GetReport> {
    let n = ids.len() as u64;
    bench.progress.begin("get, one at a time", n);
    let mut calls = Vec::with_capacity(ids.len());
    let started = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let call = Instant::now();
        bench.client.get(id).await?;
        calls.push(call.elapsed().as_secs_f64() * 1000.0);
        if i % 64 == 0 {
            bench.progress.set(i as u64 + 1);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    bench.progress.end();
    Ok(GetReport {
        jobs: n,
        seconds,
        jobs_per_second: rate(n, seconds),
        call_ms: Summary::of(calls),
    })
}

async fn bulk(bench: &Bench, n: u64, batch_size: usize) -> BenchResult<BulkReport> {
    bench.progress.begin("enqueue, in bulk", n);
    let started = Instant::now();
    bench.enqueue_batches(n, batch_size).await?;
    let seconds = started.elapsed().as_secs_f64();
    bench.progress.end();
    Ok(BulkReport {
        jobs: n,
        batch_size,
        seconds,
        jobs_per_second: rate(n, seconds),
    })
}
