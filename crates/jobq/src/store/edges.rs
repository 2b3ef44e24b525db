//! What [`super::Store::edges`] reads: the edges of jobs, both ways, for `jobq show`, the dashboard's
//! graph and the envelope of a job that waited for others.

use serde::Serialize;

pub use crate::job::{Edge, EdgeState};
use crate::job::{JobId, Join};

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

/// One job's edges.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobEdges {
    /// The jobs it waits (or waited) for, oldest first (by id).
    pub dependencies: Vec<Edge>,
    /// The jobs that wait (or waited) for it, oldest first (by id); empty unless asked for.
    pub dependents: Vec<Edge>,
    /// How its dependencies combine: read with its dependents (what a listing of both sides shows),
    /// [`Join::All`] when they were not asked for.
    #[serde(skip_serializing_if = "Join::is_all")]
    pub join: Join,
}
