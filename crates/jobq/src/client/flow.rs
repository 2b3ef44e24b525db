//! `Client`'s flow-control calls: pausing and resuming queues and types, and the queues report that
//! `jobq queues` prints (counts, pauses, limits in force, blocks).

use serde::Serialize;

use super::Client;
use crate::error::Result;
use crate::job::{validate_queue, validate_type};
use crate::store::{Block, FlowState, Limit, Pause, QueueStats, RecordedLimit, Scope, SetPaused, Stats, StatsReport};
use crate::time::UnixMillis;

/// One queue in [`QueuesReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueReport {
    /// Its name and counts (zero for a queue with no jobs yet).
    #[serde(flatten)]
    pub counts: QueueStats,
    /// When the whole queue was paused, if it is.
    pub paused_since: Option<UnixMillis>,
    /// The types paused in it.
    pub paused_types: Vec<String>,
    /// Its recorded limit, if any.
    pub limit: Option<LimitReport>,
}

/// A recorded limit as `jobq queues` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitReport {
    /// At most this many running at once across every worker.
    pub global_concurrency: Option<u32>,
    /// At most this many started per window, as written (`100/1m`).
    pub rate: Option<String>,
    /// The field the limits are counted per.
    pub partition: Option<String>,
    /// The worker that recorded it last.
    pub recorded_by: String,
    /// When.
    pub recorded_at: UnixMillis,
}

impl From<&RecordedLimit> for LimitReport {
    fn from(r: &RecordedLimit) -> LimitReport {
        let Limit {
            global_concurrency,
            rate,
            partition,
            ..
        } = &r.limit;
        LimitReport {
            global_concurrency: *global_concurrency,
            rate: rate.map(|r| r.to_string()),
            partition: partition.as_ref().map(|p| p.to_string()),
            recorded_by: r.recorded_by.clone(),
            recorded_at: r.recorded_at,
        }
    }
}

/// One job type with a recorded limit or a block, in [`QueuesReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeReport {
    /// The type.
    pub job_type: String,
    /// Its recorded limit, if any.
    pub limit: Option<LimitReport>,
    /// Its blocks in force (upstream back-pressure): the whole type, or partitions.
    pub blocks: Vec<Block>,
}

/// What `jobq queues` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueuesReport {
    /// Every queue that has jobs, is paused or has a limit, by name.
    pub queues: Vec<QueueReport>,
    /// Every type that has a limit or a block, by name.
    pub types: Vec<TypeReport>,
}

impl Client {
    /// Pauses a queue, or one type in it: no worker starts its jobs until [`Client::resume`].
    /// Enqueueing goes on, and running jobs finish. Returns false when it was paused already.
    pub async fn pause(&self, queue: &str, job_type: Option<&str>) -> Result<bool> {
        validate_target(queue, job_type)?;
        Ok(self
            .store
            .set_paused(&SetPaused {
                queue,
                job_type,
                paused: true,
                now: self.now(),
            })
            .await?)
    }

    /// Resumes what [`Client::pause`] paused. Returns false when it was not paused.
    pub async fn resume(&self, queue: &str, job_type: Option<&str>) -> Result<bool> {
        validate_target(queue, job_type)?;
        Ok(self
            .store
            .set_paused(&SetPaused {
                queue,
                job_type,
                paused: false,
                now: self.now(),
            })
            .await?)
    }

    /// The pauses and blocks in force.
    pub async fn flow_state(&self) -> Result<crate::store::FlowState> {
        Ok(self.store.flow_state(self.now()).await?)
    }

    /// Each queue with its counts, pauses and limit, and each type with a limit or a block.
    pub async fn queues(&self) -> Result<QueuesReport> {
        let now = self.now();
        let every_queue = Stats {
            queues: Vec::new(),
            now,
        };
        let (stats, state, limits) = tokio::try_join!(
            self.store.stats(&every_queue),
            self.store.flow_state(now),
            self.store.limits(),
        )?;
        Ok(QueuesReport::new(stats, &state, &limits))
    }

    /// The limits recorded in the store, by scope.
    pub async fn limits(&self) -> Result<Vec<RecordedLimit>> {
        Ok(self.store.limits().await?)
    }
}

impl QueuesReport {
    /// The report of every queue's `stats` with the pauses and blocks of `state` and the recorded
    /// `limits` (see [`Client::queues`]).
    pub fn new(stats: StatsReport, state: &FlowState, limits: &[RecordedLimit]) -> QueuesReport {
        let mut names: Vec<String> = stats.queues.iter().map(|q| q.queue.clone()).collect();
        names.extend(state.pauses.iter().map(|p| p.queue.clone()));
        names.extend(limits.iter().filter_map(|r| match &r.limit.scope {
            Scope::Queue(q) => Some(q.clone()),
            Scope::Type(_) => None,
        }));
        names.sort();
        names.dedup();
        let queues = names
            .into_iter()
            .map(|name| {
                let counts = stats
                    .queues
                    .iter()
                    .find(|q| q.queue == name)
                    .cloned()
                    .unwrap_or_else(|| QueueStats {
                        queue: name.clone(),
                        ..Default::default()
                    });
                let pauses: Vec<&Pause> = state.pauses.iter().filter(|p| p.queue == name).collect();
                QueueReport {
                    paused_since: pauses.iter().find(|p| p.job_type.is_none()).map(|p| p.since),
                    paused_types: pauses.iter().filter_map(|p| p.job_type.clone()).collect(),
                    limit: limits
                        .iter()
                        .find(|r| r.limit.scope == Scope::Queue(name.clone()))
                        .map(LimitReport::from),
                    counts,
                }
            })
            .collect();
        let mut types: Vec<String> = state.blocks.iter().map(|b| b.job_type.clone()).collect();
        types.extend(limits.iter().filter_map(|r| match &r.limit.scope {
            Scope::Type(t) => Some(t.clone()),
            Scope::Queue(_) => None,
        }));
        types.sort();
        types.dedup();
        let types = types
            .into_iter()
            .map(|t| TypeReport {
                limit: limits
                    .iter()
                    .find(|r| r.limit.scope == Scope::Type(t.clone()))
                    .map(LimitReport::from),
                blocks: state.blocks.iter().filter(|b| b.job_type == t).cloned().collect(),
                job_type: t,
            })
            .collect();
        QueuesReport { queues, types }
    }
}

fn validate_target(queue: &str, job_type: Option<&str>) -> Result<()> {
    validate_queue(queue)?;
    if let Some(t) = job_type {
        validate_type(t)?;
    }
    Ok(())
}
