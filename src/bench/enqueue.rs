//! The enqueue workload: jobs put in one at a time through [`crate::Client::enqueue`] (one store
//! transaction each, as a web request enqueues), then in bulk through
//! [`crate::Client::enqueue_validated`] in batches (as `jobq enqueue --file` does). Timed from the
//! first call to the return of the last; the bulk time includes validating each batch. No worker
//! runs meanwhile; the queue is emptied between the two parts, untimed.

use std::time::Instant;

use serde::Serialize;

use super::{Bench, BenchResult, Plan, Summary, rate};

/// Enqueue figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnqueueReport {
    /// One job per call.
    pub single: Option<SingleReport>,
    /// Batches.
    pub bulk: Option<BulkReport>,
}

/// One job per [`crate::Client::enqueue`] call, one call after another.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleReport {
    /// Jobs enqueued.
    pub jobs: u64,
    /// From the first call to the return of the last.
    pub seconds: f64,
    /// Jobs per second.
    pub jobs_per_second: f64,
    /// Time of one call, in milliseconds.
    pub call_ms: Option<Summary>,
}

/// Batches through [`crate::Client::enqueue_validated`].
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
        bulk: None,
    };
    if plan.single_jobs > 0 {
        report.single = Some(single(bench, plan.single_jobs).await?);
        bench.clear().await?;
    }
    if plan.bulk_jobs > 0 {
        report.bulk = Some(bulk(bench, plan.bulk_jobs, plan.batch_size).await?);
    }
    Ok(report)
}

async fn single(bench: &Bench, n: u64) -> BenchResult<SingleReport> {
    bench.progress.begin("enqueue, one at a time", n);
    let mut calls = Vec::with_capacity(n as usize);
    let started = Instant::now();
    for i in 0..n {
        let call = Instant::now();
        bench.client.enqueue(bench.spec(i)).await?;
        calls.push(call.elapsed().as_secs_f64() * 1000.0);
        if i % 64 == 0 {
            bench.progress.set(i + 1);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    bench.progress.end();
    Ok(SingleReport {
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
