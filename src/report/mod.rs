//! The JSON documents jobq answers with, built once: what `jobq … --output json` prints and what
//! `jobq serve` returns for the same call, so the two cannot drift. Also the refusal a partial answer
//! amounts to (some ids not found, some jobs in the way), which the CLI turns into its exit code and
//! the HTTP API into its status.
//!
//! Documents are `serde_json::Value`s built with `json!` (jobq's serde_json keeps insertion order), or
//! structs where a job must keep the job JSON's own field order. Nothing here prints, reads flags or
//! knows about HTTP.

mod prometheus;
mod schedules;
mod throughput;

use serde::Serialize;
use serde_json::{Value, json};

use jobq::client::{CancelReport, DeleteReport, RetryReport};
use jobq::error::Error;
use jobq::job::{Job, JobId, JobStatus, Join};
use jobq::store::{Cancelled, DeletedCount, Edge, JobEdges, Pause, QueueStats, ResolveAnswer, StatsReport};

pub use prometheus::{label, prometheus};
pub use schedules::{ScheduleRow, schedule_rows};
pub use throughput::throughput;

/// A job as `jobq show -o json` prints it and `GET /api/v1/jobs/{id}` returns it: the job JSON, then
/// its edges (`dependencies`, `dependents`: each the job at the other end with its type, queue and
/// status, null once deleted, the rule and the edge's state), and `"join": "any"` for a job that runs
/// at the first of its dependencies met.
#[derive(Serialize)]
pub struct ShownJob<'a> {
    #[serde(flatten)]
    pub job: &'a Job,
    pub dependencies: &'a [Edge],
    pub dependents: &'a [Edge],
    #[serde(skip_serializing_if = "Join::is_all")]
    pub join: Join,
}

impl<'a> ShownJob<'a> {
    /// `job` with `edges`.
    pub fn new(job: &'a Job, edges: &'a JobEdges) -> ShownJob<'a> {
        ShownJob {
            job,
            dependencies: &edges.dependencies,
            dependents: &edges.dependents,
            join: edges.join,
        }
    }
}

/// A call's answer as the JSON document `--output json` prints and `jobq serve` returns.
pub trait Document {
    /// The document.
    fn document(&self) -> Value;
}

/// The stats document: the store (its URL without password), each queue's counts, their totals and
/// the pauses in force.
pub fn stats(store: &str, stats: &StatsReport, pauses: &[Pause]) -> Value {
    json!({
        "store": store,
        "queues": stats.queues,
        "totals": totals(stats),
        "paused": pauses,
    })
}

/// Every queue's counts added up, as a queue named `total`; the oldest ready job of any.
pub fn totals(stats: &StatsReport) -> QueueStats {
    let mut t = QueueStats {
        queue: "total".into(),
        ..Default::default()
    };
    for q in &stats.queues {
        t.blocked += q.blocked;
        t.ready += q.ready;
        t.scheduled += q.scheduled;
        t.running += q.running;
        t.waiting += q.waiting;
        t.succeeded += q.succeeded;
        t.dead += q.dead;
        t.cancelled += q.cancelled;
        t.discarded += q.discarded;
        t.expired += q.expired;
        t.oldest_ready_at = match (t.oldest_ready_at, q.oldest_ready_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    t
}

/// The answer of a cancel by filter: the jobs cancelled, each with the status it had.
pub fn cancelled(cancelled: &[Cancelled]) -> Value {
    json!({ "cancelled": cancelled })
}

impl Document for CancelReport {
    /// The answer of a cancel by id.
    fn document(&self) -> Value {
        let terminal: Vec<_> = self
            .already_terminal
            .iter()
            .map(|(id, st)| json!({"id": id, "status": st}))
            .collect();
        json!({
            "cancelled": self.cancelled,
            "alreadyTerminal": terminal,
            "notFound": self.not_found,
            "descendants": self.descendants,
        })
    }
}

impl Document for DeleteReport {
    /// The answer of a delete by id.
    fn document(&self) -> Value {
        let deleted: Vec<_> = self
            .deleted
            .iter()
            .map(|(id, previous)| json!({"id": id, "previous": previous}))
            .collect();
        let refused: Vec<_> = self
            .refused
            .iter()
            .map(|(id, status)| json!({"id": id, "status": status}))
            .collect();
        json!({"deleted": deleted, "refused": refused, "notFound": self.not_found})
    }
}

/// A delete by filter that left running or waiting jobs (not forced) is a conflict.
pub fn delete_matching_refusal(count: &DeletedCount) -> Option<Error> {
    let n = count.refused;
    (n > 0).then(|| {
        Error::conflict(
            Vec::new(),
            format!(
                "{} matched and {} left: cancel {} first or use --force",
                jobs(n, "running or waiting"),
                if n == 1 { "was" } else { "were" },
                if n == 1 { "it" } else { "them" }
            ),
        )
    })
}

impl Document for RetryReport {
    /// The answer of a retry.
    fn document(&self) -> Value {
        let retried: Vec<&JobId> = self.retried.iter().map(|j| &j.id).collect();
        let not_terminal: Vec<_> = self
            .not_terminal
            .iter()
            .map(|(id, status)| json!({"id": id, "status": status}))
            .collect();
        let key_taken: Vec<_> = self
            .key_taken
            .iter()
            .map(|(id, holder)| json!({"id": id, "holder": holder}))
            .collect();
        json!({
            "retried": retried,
            "notTerminal": not_terminal,
            "keyTaken": key_taken,
            "notFound": self.not_found,
        })
    }
}

/// The answer of a replay's dry run: the jobs it would move, as job JSON. A struct rather than `json!`,
/// which would turn each job into a map with sorted keys instead of the job JSON's own field order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayDryRun<'a> {
    /// Always true: nothing was changed.
    pub dry_run: bool,
    /// The dead jobs the replay would move, oldest death first.
    pub would_replay: &'a [Job],
}

/// The jobs a replay moved: `replayed`, and `reopened`, the jobs its cascade brought back blocked.
pub fn replayed(jobs: &[Job]) -> Value {
    let ids = |blocked: bool| -> Vec<&JobId> {
        jobs.iter()
            .filter(|j| (j.status == JobStatus::Blocked) == blocked)
            .map(|j| &j.id)
            .collect()
    };
    json!({ "replayed": ids(false), "reopened": ids(true) })
}

/// The answer of a resolve: the job's id and what the store answered.
pub fn resolved(id: &JobId, answer: ResolveAnswer) -> Value {
    let mut doc = json!({ "id": id });
    if let (Some(doc), Ok(Value::Object(fields))) = (doc.as_object_mut(), serde_json::to_value(answer)) {
        doc.extend(fields);
    }
    doc
}

/// A resolve that found the job in another status than the one it would have led to is a conflict.
/// Resolving twice the same way is not: what the caller wanted is already the case.
pub fn resolve_refusal(id: &JobId, answer: ResolveAnswer, leads_to: JobStatus) -> Option<Error> {
    match answer {
        ResolveAnswer::Resolved { .. } => None,
        ResolveAnswer::NotWaiting { status } if status == leads_to => None,
        ResolveAnswer::NotWaiting { status } => Some(Error::conflict(
            vec![id.clone()],
            format!("job {id} is {status}, not waiting: only a waiting job can be resolved"),
        )),
        _ => Some(Error::not_found(id.as_str())),
    }
}

/// The answer of a cleanup: how many jobs were (or, on a dry run, would be) deleted.
pub fn cleanup(n: u64, dry_run: bool) -> Value {
    json!({ if dry_run { "wouldDelete" } else { "deleted" }: n, "dryRun": dry_run })
}

/// The answer of a pause or a resume: what it aimed at, and whether it changed anything.
pub fn paused(queue: &str, job_type: Option<&str>, paused: bool, changed: bool) -> Value {
    json!({
        "queue": queue,
        "jobType": job_type,
        "paused": paused,
        "changed": changed,
    })
}

/// `1 job`, `2 dead jobs`: a count with its noun in the right number.
pub fn jobs(n: impl Into<u64>, adjective: &str) -> String {
    let n = n.into();
    let sep = if adjective.is_empty() { "" } else { " " };
    format!("{n} {adjective}{sep}{}", if n == 1 { "job" } else { "jobs" })
}
