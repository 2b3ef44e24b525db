//! The latency workload: how long a job waits between its producer's enqueue call and the start of
//! its handler, when a worker sits idle waiting for work.
//!
//! The producer is a separate process (`jobq bench --producer`, started from the bench's own
//! executable once the worker has registered), so the worker learns of new jobs the way it would in
//! production: through the store's wake-up hints where it has them, by polling where it has not.
//! The producer enqueues M jobs one at a time, `spacing` apart, each carrying in its payload the
//! producer's clock (Unix microseconds) read just before the enqueue call, the same instant
//! `createdAt` records at millisecond resolution. The worker runs inside the bench with a Rust
//! handler that reads the clock as it starts. Both clocks are the same machine's, so the difference
//! is enqueue→start at microsecond resolution; process start-up is never counted.
//!
//! With `--persistent PROGRAM` the start is the program's: it answers each job with its own clock
//! as it read the job's line (`{"receivedUs": …}`, as `examples/handlers/python/stamp.py` does), so
//! the figure is enqueue → the persistent handler's first sight of the job.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::Serialize;
use tokio::time::Instant;

use super::fleet::Fleet;
use super::{BENCH_TYPE, Bench, BenchError, BenchHandler, BenchResult, Plan, Summary, WorkerSetup};
use jobq::Client;
use jobq::handler::{Handler, JobContext, Outcome};
use jobq::job::{Job, JobSpec};
use jobq::worker::Worker;

/// What the latency is measured from and to.
pub const MEASURED: &str =
    "producer clock just before Client::enqueue (a separate process) to the handler's start (µs resolution)";

/// Latency figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LatencyReport {
    /// Jobs measured.
    pub jobs: u32,
    /// Pause between two enqueues, in milliseconds.
    pub spacing_ms: f64,
    /// The worker waiting for them.
    pub workers: WorkerSetup,
    /// What is measured.
    pub measured: String,
    /// Enqueue→start, in milliseconds.
    pub ms: Option<Summary>,
}

/// Runs the latency workload.
pub(crate) async fn run(bench: &Bench, plan: &Plan) -> BenchResult<LatencyReport> {
    let m = plan.latency_jobs;
    let stamps = Arc::new(Mutex::new(Vec::with_capacity(m as usize)));
    let (handler, described): (Arc<dyn Handler>, String) = match &bench.handler {
        BenchHandler::Persistent { .. } => (
            Arc::new(StampedByProgram {
                program: jobq::handler::build(BENCH_TYPE, &bench.handler.config_kind())?,
                stamps: stamps.clone(),
            }),
            format!(
                "{} (answers with its clock as it read the job)",
                bench.handler.describe()
            ),
        ),
        _ => (
            Arc::new(Stamp { stamps: stamps.clone() }),
            "rust (records its start time)".into(),
        ),
    };
    let worker = Worker::builder(bench.client.store().clone())
        .settings(&bench.worker_settings(plan.concurrency))
        .handler(BENCH_TYPE, handler)
        .name(bench.worker_name())
        .build()?;
    let fleet = Fleet::of(bench.start_worker(worker));
    bench.wait_registered(1).await?;
    let args = vec![
        "bench".to_string(),
        "--producer".into(),
        "--queue".into(),
        bench.queue.clone(),
        "--latency-jobs".into(),
        m.to_string(),
        "--spacing".into(),
        format!("{}us", plan.spacing.as_micros()),
    ];
    bench.progress.begin("latency", u64::from(m));
    let seen = || stamps.lock().unwrap_or_else(|e| e.into_inner()).len();
    let producer = Fleet::of(bench.start_process("the latency producer (`jobq bench --producer`)", &args)?);
    let wait = producer.wait();
    tokio::pin!(wait);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            result = &mut wait => { result?; break; }
            _ = tick.tick() => bench.progress.set(seen() as u64),
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen() < m as usize {
        if Instant::now() >= deadline {
            fleet.stop();
            return Err(BenchError::Incomplete(format!(
                "only {} of {m} latency jobs started within 30s of the last enqueue",
                seen()
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    bench.progress.end();
    fleet.stop();
    fleet.wait().await?;
    let samples = std::mem::take(&mut *stamps.lock().unwrap_or_else(|e| e.into_inner()));
    let mut workers = bench.setup_of(plan);
    workers.mode = "in-process".into();
    workers.processes = 0;
    workers.handler = described;
    Ok(LatencyReport {
        jobs: m,
        spacing_ms: plan.spacing.as_secs_f64() * 1000.0,
        workers,
        measured: MEASURED.into(),
        ms: Summary::of(samples),
    })
}

/// The producer side (`jobq bench --producer`): enqueues `jobs` bench jobs into `queue`, one at a
/// time, `spacing` apart on a fixed schedule, each with the producer's clock in `sentUs`.
pub async fn produce(client: &Client, queue: &str, jobs: u32, spacing: Duration) -> jobq::Result<()> {
    let start = Instant::now();
    for i in 0..jobs {
        tokio::time::sleep_until(start + spacing * i).await;
        let spec = JobSpec::new(BENCH_TYPE, serde_json::json!({ "n": i, "sentUs": unix_micros() })).queue(queue);
        client.enqueue(spec).await?;
    }
    Ok(())
}

/// The handler of the latency workload: notes how long ago its job was sent, then succeeds.
struct Stamp {
    stamps: Arc<Mutex<Vec<f64>>>,
}

#[async_trait]
impl Handler for Stamp {
    async fn run(&self, job: &Job, _cx: &JobContext) -> Outcome {
        let now = unix_micros();
        let sent = job
            .payload_as::<serde_json::Value>()
            .ok()
            .and_then(|p| p.get("sentUs")?.as_i64());
        if let Some(sent) = sent {
            self.stamps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((now - sent) as f64 / 1000.0);
        }
        Outcome::success()
    }
}

/// The handler of the latency workload with `--persistent`: runs the program, whose result says when
/// it read the job (`receivedUs`), and notes how long after it was sent that was.
struct StampedByProgram {
    program: Arc<dyn Handler>,
    stamps: Arc<Mutex<Vec<f64>>>,
}

#[async_trait]
impl Handler for StampedByProgram {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        let outcome = self.program.run(job, cx).await;
        let Outcome::Success { result: Some(result) } = &outcome else {
            return Outcome::fail(format!(
                "the latency workload's program must answer success with {{\"receivedUs\": …}}, not {outcome:?}"
            ));
        };
        let sent = job
            .payload_as::<serde_json::Value>()
            .ok()
            .and_then(|p| p.get("sentUs")?.as_i64());
        if let (Some(sent), Some(received)) = (sent, result.get("receivedUs").and_then(|r| r.as_i64())) {
            self.stamps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((received - sent) as f64 / 1000.0);
        }
        outcome
    }

    async fn close(&self, grace: Duration) {
        self.program.close(grace).await
    }
}

/// The wall clock in Unix microseconds.
fn unix_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}
