//! What [`super::Store::edges`] reads: the edges of jobs, both ways, for `jobq show`, the dashboard's
//! graph and the envelope of a job that waited for others.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::job::{DependOn, JobId, JobStatus};

/// Which jobs' edges to read, and which of their sides.
#[derive(Debug, Clone, Default)]
pub struct ReadEdges {
    /// The jobs whose edges are read.
    pub ids: Vec<JobId>,
    /// The queue that holds every one of them, when the caller knows it (a worker reading the job
    /// it claimed): a store that finds a job by its queue (Redis) then does not look for it.
    pub queue: Option<String>,
    /// Also the jobs that wait for them (a worker reading a job's dependencies for its envelope
    /// needs only those).
    pub dependents: bool,
    /// Also each dependency's result (for the envelope; a listing leaves the results where they are).
    pub results: bool,
}

/// Where an edge stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeState {
    /// Its dependency has not ended.
    Open,
    /// Its dependency ended the way the rule asks.
    Met,
    /// Its dependency ended against the rule: the dependent was cancelled.
    Broken,
}

impl EdgeState {
    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeState::Open => "open",
            EdgeState::Met => "met",
            EdgeState::Broken => "broken",
        }
    }

    /// The state the stores write (`NULL` or `open`, `met`, `broken`).
    pub(crate) fn from_stored(resolved: Option<&str>) -> EdgeState {
        match resolved {
            Some("met") => EdgeState::Met,
            Some("broken") => EdgeState::Broken,
            _ => EdgeState::Open,
        }
    }
}

/// One edge seen from one of its ends: the job at the other end, as it is now.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    /// The job at the other end.
    pub job_id: JobId,
    /// Its type, queue and status; `None` once it has been deleted (a dependency deleted before it
    /// ended broke the edge as a cancel would).
    pub job_type: Option<String>,
    /// Its queue.
    pub queue: Option<String>,
    /// Its status.
    pub status: Option<JobStatus>,
    /// The rule the dependent waits by.
    pub on: DependOn,
    /// Where the edge stands.
    pub state: EdgeState,
    /// A dependency's result, when [`ReadEdges::results`] asked for it.
    #[serde(skip)]
    pub result: Option<Box<RawValue>>,
}

/// One job's edges.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobEdges {
    /// The jobs it waits (or waited) for, oldest first (by id).
    pub dependencies: Vec<Edge>,
    /// The jobs that wait (or waited) for it, oldest first (by id); empty unless asked for.
    pub dependents: Vec<Edge>,
}
