//! The drain workload: N jobs enqueued first (untimed), then the workers start and run until no job
//! is ready (burst mode). The rate is N over the span from the first claim to the last
//! acknowledgement, read from the jobs' own stored times (earliest `startedAt` to latest
//! `finishedAt`, millisecond resolution), so process start-up and shutdown are not counted. The wall
//! time from starting the workers until all of them have exited is reported beside it.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::fleet::Fleet;
use super::{Bench, BenchError, BenchResult, Plan, WorkerSetup, rate};
use jobq::job::JobStatus;

/// What the drain rate is measured over.
pub const MEASURED: &str = "first startedAt to last finishedAt of the jobs (stored times)";

/// Drain figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainReport {
    /// Jobs worked off.
    pub jobs: u64,
    /// The workers.
    pub workers: WorkerSetup,
    /// What `seconds` spans.
    pub measured: String,
    /// From the first claim to the last acknowledgement.
    pub seconds: f64,
    /// Jobs per second over `seconds`.
    pub jobs_per_second: f64,
    /// From starting the workers until every one had exited (process start and exit included).
    pub wall_seconds: f64,
    /// Largest peak resident memory of a worker process, in MiB (`null` in process).
    pub worker_peak_rss_mib: Option<f64>,
}

/// Runs the drain workload.
pub(crate) async fn run(bench: &Bench, plan: &Plan) -> BenchResult<DrainReport> {
    let n = plan.drain_jobs;
    bench.fill(n, plan.batch_size).await?;
    bench.progress.begin("drain", n);
    let started = Instant::now();
    let fleet = Fleet::start(bench, plan, true)?;
    let wait = fleet.wait();
    tokio::pin!(wait);
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let peak = loop {
        tokio::select! {
            peak = &mut wait => break peak?,
            _ = tick.tick(), if bench.progress.visible() => {
                let live = bench.live_jobs().await?;
                bench.progress.set(n.saturating_sub(live));
            }
        }
    };
    let wall_seconds = started.elapsed().as_secs_f64();
    bench.progress.end();
    let counts = bench.counts().await?.unwrap_or_default();
    let succeeded = counts.count(JobStatus::Succeeded);
    if succeeded != n {
        return Err(BenchError::Incomplete(format!(
            "the drain ended with {succeeded} of {n} jobs succeeded ({} pending, {} running, {} dead): is the handler working?",
            counts.count(JobStatus::Pending),
            counts.running,
            counts.dead
        )));
    }
    let (first, last) = span(bench, n).await?;
    let seconds = (last - first).max(1) as f64 / 1000.0;
    Ok(DrainReport {
        jobs: n,
        workers: bench.setup_of(plan),
        measured: MEASURED.into(),
        seconds,
        jobs_per_second: rate(n, seconds),
        wall_seconds,
        worker_peak_rss_mib: peak.map(|b| b as f64 / (1024.0 * 1024.0)),
    })
}

/// The earliest `startedAt` and latest `finishedAt` (Unix ms) of the queue's `n` jobs.
async fn span(bench: &Bench, n: u64) -> BenchResult<(i64, i64)> {
    let jobs = bench.jobs(n).await?;
    let first = jobs.iter().filter_map(|j| j.started_at).map(|t| t.0).min();
    let last = jobs.iter().filter_map(|j| j.finished_at).map(|t| t.0).max();
    match (first, last) {
        (Some(first), Some(last)) => Ok((first, last)),
        _ => Err(BenchError::Incomplete(
            "the drained jobs have no start or finish times".into(),
        )),
    }
}
