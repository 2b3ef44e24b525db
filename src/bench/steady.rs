//! The steady workload: workers run while a producer inside the bench enqueues at a target rate for
//! a set duration, as a busy application would. Every 10 ms the producer enqueues, in one call, the
//! jobs due by then (rate × elapsed time), so a slow call is caught up rather than lost. Every 100 ms
//! a sampler reads the queue's pending count (its depth). Reported: the enqueue rate achieved, the
//! rate at which jobs finished within the window, the depth, and each job's wait from `createdAt` to
//! `startedAt` (stored times). After the window the workers finish the backlog and stop.

use std::time::{Duration, Instant};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::fleet::Fleet;
use super::{Bench, BenchResult, Plan, Summary, WorkerSetup, rate};
use jobq::job::JobStatus;

/// How often the producer enqueues what is due.
const TICK: Duration = Duration::from_millis(10);
/// How often the queue depth is sampled.
const SAMPLE: Duration = Duration::from_millis(100);

/// Steady-rate figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SteadyReport {
    /// The workers.
    pub workers: WorkerSetup,
    /// Jobs per second asked for.
    pub target_rate: u32,
    /// How long the producer ran, in seconds.
    pub seconds: f64,
    /// Jobs enqueued.
    pub enqueued: u64,
    /// Jobs enqueued per second.
    pub enqueue_rate: f64,
    /// Jobs finished within the window.
    pub finished: u64,
    /// Jobs finished per second within the window.
    pub finish_rate: f64,
    /// Pending jobs, sampled every 100 ms.
    pub depth: Depth,
    /// Time from `createdAt` to `startedAt` of every job, in milliseconds (stored times).
    pub wait_ms: Option<Summary>,
    /// Seconds the workers took after the window to finish the backlog.
    pub backlog_seconds: f64,
}

/// Queue depth over the window.
#[derive(Debug, Clone, Serialize)]
pub struct Depth {
    /// Samples taken.
    pub samples: usize,
    /// Fewest pending jobs seen.
    pub min: u64,
    /// Mean of the samples.
    pub avg: f64,
    /// Most pending jobs seen.
    pub max: u64,
}

/// Runs the steady workload.
pub(crate) async fn run(bench: &Bench, plan: &Plan) -> BenchResult<SteadyReport> {
    let workers = if plan.processes == 0 {
        1
    } else {
        plan.processes as usize
    };
    let fleet = Fleet::start(bench, plan, false)?;
    bench.wait_registered(workers).await?;
    let total = (f64::from(plan.rate) * plan.duration.as_secs_f64()).round() as u64;
    bench.progress.begin("steady", total);
    let done = CancellationToken::new();
    let (produced, samples) = tokio::join!(produce(bench, plan.rate, total, &done), sample(bench, &done));
    let (enqueued, seconds) = produced?;
    let samples = samples?;
    let finished = bench
        .counts()
        .await?
        .map(|q| q.count(JobStatus::Succeeded))
        .unwrap_or(0);
    bench.progress.end();
    let after = Instant::now();
    let limit = Duration::from_secs(60).max(plan.duration * 2);
    bench.wait_worked_off(&fleet, limit, "the steady backlog").await?;
    let backlog_seconds = after.elapsed().as_secs_f64();
    fleet.stop();
    fleet.wait().await?;
    let depth = Depth {
        samples: samples.len(),
        min: samples.iter().copied().min().unwrap_or(0),
        avg: if samples.is_empty() {
            0.0
        } else {
            samples.iter().sum::<u64>() as f64 / samples.len() as f64
        },
        max: samples.iter().copied().max().unwrap_or(0),
    };
    Ok(SteadyReport {
        workers: bench.setup_of(plan),
        target_rate: plan.rate,
        seconds,
        enqueued,
        enqueue_rate: rate(enqueued, seconds),
        finished,
        finish_rate: rate(finished, seconds),
        depth,
        wait_ms: waits(bench, enqueued).await?,
        backlog_seconds,
    })
}

/// Enqueues `total` jobs at `rate` per second; returns how many and over how many seconds. Cancels
/// `done` when it stops.
async fn produce(bench: &Bench, rate: u32, total: u64, done: &CancellationToken) -> BenchResult<(u64, f64)> {
    let _stop_sampling = done.clone().drop_guard();
    let started = Instant::now();
    let mut sent = 0u64;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while sent < total {
        tick.tick().await;
        let due = ((f64::from(rate) * started.elapsed().as_secs_f64()) as u64).min(total);
        if due <= sent {
            continue;
        }
        let jobs = (sent..due)
            .map(|i| bench.client.validate(bench.spec(i)))
            .collect::<jobq::Result<Vec<_>>>()?;
        bench.client.enqueue_validated(&jobs).await?;
        sent = due;
        bench.progress.set(sent);
    }
    Ok((sent, started.elapsed().as_secs_f64()))
}

/// Samples the pending count every [`SAMPLE`] until `done`.
async fn sample(bench: &Bench, done: &CancellationToken) -> BenchResult<Vec<u64>> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(SAMPLE);
    loop {
        tokio::select! {
            _ = done.cancelled() => return Ok(samples),
            _ = tick.tick() => {
                let pending = bench.counts().await?.map(|q| q.count(JobStatus::Pending)).unwrap_or(0);
                samples.push(pending);
            }
        }
    }
}

/// `startedAt - createdAt` of the queue's jobs, in milliseconds.
async fn waits(bench: &Bench, n: u64) -> BenchResult<Option<Summary>> {
    let jobs = bench.jobs(n).await?;
    let waits = jobs
        .iter()
        .filter_map(|j| j.started_at.map(|s| (s.0 - j.created_at.0) as f64))
        .collect();
    Ok(Summary::of(waits))
}
