//! The whole graph a job belongs to: every job joined to it by edges, either way, as far as they
//! go (its dependencies, theirs, its dependents, theirs, and their other dependencies…), read a
//! round of edges at a time from the store. What the dashboard draws on a job's page, and what
//! `GET /api/v1/jobs/{id}/graph` answers.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::Client;
use crate::error::Result;
use crate::job::{DependOn, EdgeState, JobId, JobStatus};
use crate::store::ReadEdges;

/// The most jobs a graph is read to by default: enough for any flow a person reads as a picture.
pub const GRAPH_LIMIT: usize = 200;

/// A job's graph ([`Client::graph`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobGraph {
    /// The job asked about.
    pub id: JobId,
    /// Every job of the graph read, by id; a job deleted since is not among them (its edges are).
    pub jobs: Vec<GraphJob>,
    /// Every edge between them, by dependency then dependent.
    pub edges: Vec<GraphEdge>,
    /// Whether the graph goes on past the limit: jobs beyond it were not read.
    pub truncated: bool,
}

/// One job of a graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphJob {
    /// Its id.
    pub id: JobId,
    /// Its type.
    pub job_type: String,
    /// Its queue.
    pub queue: String,
    /// Its status.
    pub status: JobStatus,
}

/// One edge of a graph: `dependent` waits (or waited) for `dependency`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphEdge {
    /// The job waited for.
    pub dependency: JobId,
    /// The job that waits.
    pub dependent: JobId,
    /// The rule it waits by.
    pub on: DependOn,
    /// Where the edge stands.
    pub state: EdgeState,
}

impl Client {
    /// The graph the job `id` belongs to, read breadth first from it to at most `limit` jobs (at
    /// least the job itself). `NotFound` for no job; a job without edges is a graph of one.
    pub async fn graph(&self, id: &str, limit: usize) -> Result<JobGraph> {
        let job = self.get(id).await?;
        let id = job.id.clone();
        let mut jobs = BTreeMap::from([(
            job.id.clone(),
            GraphJob {
                id: job.id.clone(),
                job_type: job.job_type,
                queue: job.queue,
                status: job.status,
            },
        )]);
        let mut edges = BTreeMap::new();
        let mut read = BTreeSet::new();
        let mut frontier = vec![id.clone()];
        let mut truncated = false;
        while !frontier.is_empty() {
            read.extend(frontier.iter().cloned());
            let ask = ReadEdges {
                ids: std::mem::take(&mut frontier),
                queue: None,
                dependents: true,
                results: false,
            };
            let answers = self.store.edges(&ask).await?;
            for (at, both) in ask.ids.iter().zip(answers) {
                let sides = [(true, both.dependencies), (false, both.dependents)];
                for (is_dependency, side) in sides {
                    for edge in side {
                        let other = edge.job_id.clone();
                        let (dependency, dependent) = match is_dependency {
                            true => (other.clone(), at.clone()),
                            false => (at.clone(), other.clone()),
                        };
                        if !jobs.contains_key(&other) {
                            // A job deleted since has no node, nor its edges; one past the limit
                            // neither.
                            let (Some(job_type), Some(queue), Some(status)) = (edge.job_type, edge.queue, edge.status)
                            else {
                                continue;
                            };
                            if jobs.len() >= limit.max(1) {
                                truncated = true;
                                continue;
                            }
                            let job = GraphJob {
                                id: other.clone(),
                                job_type,
                                queue,
                                status,
                            };
                            jobs.insert(other.clone(), job);
                        }
                        let edge = GraphEdge {
                            dependency: dependency.clone(),
                            dependent: dependent.clone(),
                            on: edge.on,
                            state: edge.state,
                        };
                        edges.insert((dependency, dependent), edge);
                        if !read.contains(&other) && !frontier.contains(&other) {
                            frontier.push(other);
                        }
                    }
                }
            }
        }
        let edges = edges.into_values().collect();
        Ok(JobGraph {
            id,
            jobs: jobs.into_values().collect(),
            edges,
            truncated,
        })
    }
}
