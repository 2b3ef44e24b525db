//! Batches: a group of jobs, and a callback job that runs once every one of them has ended, however
//! it ended, with their outcomes in its envelope (`deps`). A batch is a flow (its members, and the
//! callback after each of them by `finish`) and goes in with one call of the store; it is named by
//! its callback's id, whose edges are what [`Client::batch_status`] counts. A batch may have an
//! on-failure job too ([`Client::batch_on_failure`]): after each member by `failure`, waiting for any
//! of them ([`Join::Any`]), so that it runs once, at the first member that ends dead or discarded,
//! and is cancelled once every member ended otherwise. Its id is the batch's with
//! [`ON_FAILURE_SUFFIX`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::Client;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::job::{DependOn, JobId, JobSpec, JobStatus, Join, NewJob};
use crate::store::{Enqueued, ReadEdges};

/// What [`Client::batch`] enqueued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchEnqueued {
    /// The batch's id: its callback's.
    pub batch: JobId,
    /// Each member's answer, in order (one that coalesced into a live job stands for it).
    pub members: Vec<Enqueued>,
    /// The callback's answer.
    pub then: Enqueued,
    /// The on-failure job's answer, when the batch has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<Enqueued>,
}

/// What the id of a batch's on-failure job adds to the batch's: `<batch>.on-failure`.
pub const ON_FAILURE_SUFFIX: &str = ".on-failure";

/// Where a batch stands ([`Client::batch_status`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchStatus {
    /// The batch's id: its callback's.
    pub batch: JobId,
    /// The callback's type.
    pub then_type: String,
    /// The callback's status: `blocked` while members run.
    pub then_status: JobStatus,
    /// How many members it has.
    pub members: u64,
    /// How many of them are in each status (every status, zero included), by status.
    pub counts: BTreeMap<JobStatus, u64>,
    /// Members deleted since (they ended, for the batch, cancelled).
    pub deleted: u64,
    /// How many members have ended (deleted ones included).
    pub ended: u64,
    /// The on-failure job's type and status, when the batch has one (`pending` or past it once a
    /// member ended dead or discarded; `cancelled` once every member ended otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<OnFailureStatus>,
}

/// Where a batch's on-failure job stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnFailureStatus {
    /// Its id: the batch's with [`ON_FAILURE_SUFFIX`].
    pub id: JobId,
    /// Its type.
    pub job_type: String,
    /// Its status: `blocked` until a member fails or all have ended.
    pub status: JobStatus,
}

impl Client {
    /// Enqueues a batch: `members`, then `then`, which waits for every one of them by `finish` (it
    /// runs once all have ended, whatever their ends, and gets them in its envelope). All of it in
    /// one call of the store, or nothing. The batch's id is the callback's (give `then` an id to
    /// choose it).
    pub async fn batch(&self, members: Vec<JobSpec>, then: JobSpec) -> Result<BatchEnqueued> {
        self.enqueue_batch(members, then, None).await
    }

    /// Enqueues a batch as [`Client::batch`] does, and `on_failure`, which runs once, at the first
    /// member that ends dead or discarded (it waits for any member by `failure`, with their ends so
    /// far in its envelope), and is cancelled once every member ended otherwise. Its id is the
    /// batch's with [`ON_FAILURE_SUFFIX`] (an id it names is refused: it would be lost to
    /// [`Client::batch_status`]); its queue is its own, or the callback's when it names none.
    pub async fn batch_on_failure(
        &self,
        members: Vec<JobSpec>,
        then: JobSpec,
        on_failure: JobSpec,
    ) -> Result<BatchEnqueued> {
        if on_failure.id.is_some() {
            return Err(Error::invalid(
                Input::JobId,
                "a batch's on-failure job takes its id from the batch's",
            ));
        }
        self.enqueue_batch(members, then, Some(on_failure)).await
    }

    async fn enqueue_batch(
        &self,
        members: Vec<JobSpec>,
        then: JobSpec,
        on_failure: Option<JobSpec>,
    ) -> Result<BatchEnqueued> {
        if members.is_empty() {
            return Err(Error::invalid(Input::JobsFile, "a batch needs at least one job"));
        }
        let now = self.now();
        let mut jobs = members
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                NewJob::check(spec, now, &self.limits).map_err(|e| Error::from(e.at(format_args!("job {}", i + 1))))
            })
            .collect::<Result<Vec<_>>>()?;
        // (A member id given twice is named once: the check keeps each dependency once.)
        let then = jobs
            .iter()
            .fold(then, |then, job| then.after_on(job.id.clone(), DependOn::Finish));
        let then = NewJob::check(then, now, &self.limits).map_err(|e| Error::from(e.at("the callback")))?;
        let on_failure = match on_failure {
            Some(mut spec) => {
                spec.id = Some(format!("{}{ON_FAILURE_SUFFIX}", then.id));
                spec.queue = spec.queue.or_else(|| Some(then.queue.clone()));
                let spec = jobs.iter().fold(spec.join(Join::Any), |spec, job| {
                    spec.after_on(job.id.clone(), DependOn::Failure)
                });
                Some(NewJob::check(spec, now, &self.limits).map_err(|e| Error::from(e.at("the on-failure job")))?)
            }
            None => None,
        };
        let members = jobs.len();
        jobs.push(then);
        jobs.extend(on_failure);
        let mut answers = self.enqueue_validated(&jobs).await?;
        let on_failure = answers.split_off(members + 1).pop();
        let then = answers.pop().expect("the callback's answer");
        Ok(BatchEnqueued {
            batch: then.id.clone(),
            members: answers,
            then,
            on_failure,
        })
    }

    /// How the batch `id` stands: its callback's status, and its members counted by status (read
    /// through the callback's edges). `NotFound` for no job; a job that waits for no job is no
    /// batch.
    pub async fn batch_status(&self, id: &str) -> Result<BatchStatus> {
        let then = self.get(id).await?;
        let id = then.id.clone();
        let read = ReadEdges {
            ids: vec![id.clone()],
            queue: Some(then.queue.clone()),
            ..Default::default()
        };
        let edges = self.store.edges(&read).await?.pop().unwrap_or_default();
        if edges.dependencies.is_empty() {
            return Err(Error::invalid(
                Input::JobId,
                format!("job {id} waits for no job: it is not a batch's callback"),
            ));
        }
        let mut counts: BTreeMap<JobStatus, u64> = JobStatus::ALL.into_iter().map(|s| (s, 0)).collect();
        let mut deleted = 0;
        for edge in &edges.dependencies {
            match edge.status {
                Some(s) => *counts.entry(s).or_default() += 1,
                None => deleted += 1,
            }
        }
        let ended = deleted
            + counts
                .iter()
                .filter(|(s, _)| s.is_terminal())
                .map(|(_, n)| n)
                .sum::<u64>();
        let on_failure_id = JobId::parse(&format!("{id}{ON_FAILURE_SUFFIX}"))?;
        let on_failure = self.store.get(&on_failure_id).await?.map(|job| OnFailureStatus {
            id: job.id,
            job_type: job.job_type,
            status: job.status,
        });
        Ok(BatchStatus {
            batch: id,
            then_type: then.job_type,
            then_status: then.status,
            members: edges.dependencies.len() as u64,
            counts,
            deleted,
            ended,
            on_failure,
        })
    }
}
