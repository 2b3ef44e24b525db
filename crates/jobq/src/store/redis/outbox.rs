//! Releases across hash slots on a Redis Cluster. A script there keeps to one slot, so an edge from a
//! job of queue B to a dependency of queue A in another slot is written in two steps (the dependency's
//! side first, `link.lua`, then the dependent, `enqueue_after.lua`, see `remote_queue` in
//! `lua/common.lua`), and the end of such a dependency cannot touch its dependent: the script that
//! ends it appends an entry to an outbox in its own slot, `{A}:outbox:B`. Workers of B apply those
//! entries before they claim (`apply_outboxes`): read, applied in B's slot (`outbox_apply.lua`), then
//! taken out (`outbox_done.lua`). Delivery is at least once (a worker may die between the apply and
//! the take-out, two may read one entry); the effect is once, as an edge leaves the state open once.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{A}:outbox:B` | list | ends of A's jobs that jobs of B wait for: `<dependent>\n<dependency>\n<status>\n<time>` |
//! | `{B}:sources` | set | the queues whose outboxes may hold entries for B |
//!
//! A replay's cascade crosses slots the same way (`reopen_across_slots`): the replayed job counts
//! its dependents of other slots at once, and each of their queues brings back its own
//! (`reopen_far.lua`).
//!
//! A worker reads its queues' sources at most once a `SOURCES_FRESH`, so a workload without such
//! edges pays one `SMEMBERS` per queue and second for them, and at once when its queue's wake-up
//! stream says an enqueue gave the queue a new source (`subscribe.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use redis::Value;

use super::calls::{in_input_order, jobs_from};
use super::dependencies::{Named, Places, after_args, enqueued_after};
use super::scripts::SCRIPTS;
use super::{KIND, RedisStore};
use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::store::{Enqueued, StoreError};
use crate::time::UnixMillis;

/// How long a worker trusts the sources it read for a queue.
const SOURCES_FRESH: Duration = Duration::from_secs(1);

/// Entries of one outbox applied in one call.
const READ_AT_ONCE: isize = 500;

/// How long an entry whose dependent is not written yet is kept: its enqueue linked the edge and may
/// still be on its way; past this it failed, and the entry is dropped.
const MISSING_DEPENDENT_GRACE: Duration = Duration::from_secs(60);

/// The sources of one queue, and when they were read.
type Read = (Instant, Arc<Vec<String>>);

/// The sources read per queue.
#[derive(Clone, Default)]
pub(super) struct Sources(Arc<Mutex<HashMap<String, Read>>>);

impl Sources {
    fn fresh(&self, queue: &str) -> Option<Arc<Vec<String>>> {
        let known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        known
            .get(queue)
            .filter(|(read, _)| read.elapsed() < SOURCES_FRESH)
            .map(|(_, sources)| sources.clone())
    }

    fn keep(&self, queue: &str, sources: Arc<Vec<String>>) {
        let mut known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        known.insert(queue.to_string(), (Instant::now(), sources));
    }

    /// Forgets what was read for `queue`: this process has just given it a source.
    pub(super) fn forget(&self, queue: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(queue);
    }
}

impl RedisStore {
    /// On a cluster, applies what other slots' outboxes hold for `queues`; elsewhere nothing.
    pub(super) async fn apply_outboxes(&self, queues: &[String], now: UnixMillis) -> Result<(), StoreError> {
        if !self.is_cluster() {
            return Ok(());
        }
        try_join_all(queues.iter().map(|queue| self.apply_outboxes_of(queue, now))).await?;
        Ok(())
    }

    async fn apply_outboxes_of(&self, queue: &str, now: UnixMillis) -> Result<(), StoreError> {
        let sources = match self.sources.fresh(queue) {
            Some(sources) => sources,
            None => {
                let read: Vec<String> = self
                    .query(
                        redis::cmd("SMEMBERS").arg(format!("{}sources", self.queue_prefix(queue))),
                        "claim",
                    )
                    .await?;
                let read = Arc::new(read);
                self.sources.keep(queue, read.clone());
                read
            }
        };
        try_join_all(sources.iter().map(|source| self.apply_outbox(source, queue, now))).await?;
        Ok(())
    }

    /// Applies the outbox of `source` addressed to `queue`, a page at a time until it is empty or
    /// holds only entries kept for later.
    async fn apply_outbox(&self, source: &str, queue: &str, now: UnixMillis) -> Result<(), StoreError> {
        let key = format!("{}outbox:{queue}", self.queue_prefix(source));
        let mut from = 0;
        loop {
            let entries: Vec<String> = self
                .query(
                    redis::cmd("LRANGE").arg(&key).arg(from).arg(from + READ_AT_ONCE - 1),
                    "claim",
                )
                .await?;
            if entries.is_empty() {
                return Ok(());
            }
            let mut apply = self.queue_script(&SCRIPTS.outbox_apply, queue);
            apply
                .arg(now.0)
                .arg(MISSING_DEPENDENT_GRACE.as_millis() as u64)
                .arg(&entries);
            let done: Vec<u8> = self.eval(&SCRIPTS.outbox_apply, &apply, "claim", true).await?;
            let taken: Vec<&String> = entries
                .iter()
                .zip(&done)
                .filter(|(_, d)| **d == 1)
                .map(|(e, _)| e)
                .collect();
            if !taken.is_empty() {
                let mut take_out = self.queue_script(&SCRIPTS.outbox_done, source);
                take_out.arg(queue).arg(&taken);
                let _: i64 = self.eval(&SCRIPTS.outbox_done, &take_out, "claim", true).await?;
            }
            if (entries.len() as isize) < READ_AT_ONCE {
                return Ok(());
            }
            // Past the entries kept, which stay at the head.
            from += (entries.len() - taken.len()) as isize;
        }
    }
}

/// What a cluster refuses: jobs of one batch that wait for each other in a circle.
const A_CIRCLE: &str = "a batch whose jobs wait for each other in a circle";

impl RedisStore {
    /// On a cluster, a batch in which jobs wait for jobs of other queues, in stages: a job is written
    /// in a stage after those of the batch it waits for in other queues (and not before those it
    /// waits for in its own), and each stage queue by queue, each queue's edges to other queues
    /// linked on their dependencies' side first (`link.lua`), then its jobs written
    /// (`enqueue_after.lua`). Each call's writes are whole or none, as any batch of several queues is
    /// written queue by queue on a cluster.
    pub(super) async fn enqueue_across_slots(
        &self,
        jobs: &[NewJob],
        places: &Places<'_>,
    ) -> Result<Vec<Enqueued>, StoreError> {
        let calls = in_stages(jobs, places)?;
        // The job each job of the batch written so far stands for (itself, or the holder it
        // coalesced into), by queue and id.
        let mut written: HashMap<(&str, &str), String> = HashMap::new();
        let mut answers: Vec<Vec<Enqueued>> = Vec::with_capacity(calls.len());
        for (queue, positions) in &calls {
            let members: Vec<&NewJob> = positions.iter().map(|&n| &jobs[n]).collect();
            let target = |q: &str, id: &str| written.get(&(q, id)).cloned().unwrap_or_else(|| id.to_string());
            // The edges to other queues, by their dependencies' queue: (dependency, dependent, rule).
            let mut far: BTreeMap<&str, Vec<(String, &str, &str)>> = BTreeMap::new();
            for job in &members {
                for dependency in &job.after {
                    if let Some(q) = places.of(job, &dependency.id).filter(|q| q != queue) {
                        let edge = (
                            target(q, dependency.id.as_str()),
                            job.id.as_str(),
                            dependency.on.as_str(),
                        );
                        far.entry(q).or_default().push(edge);
                    }
                }
            }
            let mut ended: HashMap<(&str, String), String> = HashMap::new();
            for (q, edges) in &far {
                let mut link = self.queue_script(&SCRIPTS.link, q);
                link.arg(*queue);
                for (dependency, dependent, rule) in edges {
                    link.arg(dependency).arg(*dependent).arg(*rule);
                }
                let (tag, reply): (String, Vec<String>) = self.eval(&SCRIPTS.link, &link, "enqueue", false).await?;
                if tag == "U" {
                    return Err(StoreError::UnknownDependency { ids: reply });
                }
                for ((dependency, _, _), status) in edges.iter().zip(reply) {
                    ended.insert((q, dependency.clone()), status);
                }
            }
            let mut cmd = self.queue_script(&SCRIPTS.enqueue_after, queue);
            after_args(&mut cmd, &members, |job, dependency| {
                match places.of(job, &dependency.id) {
                    Some(q) if q != job.queue => {
                        let id = target(q, dependency.id.as_str());
                        let ended = ended.get(&(q, id.clone())).cloned().unwrap_or_default();
                        Named {
                            id,
                            queue: format!("~{q}"),
                            ended,
                        }
                    }
                    _ => places.named(job, dependency),
                }
            });
            let reply: Value = self.eval(&SCRIPTS.enqueue_after, &cmd, "enqueue", false).await?;
            let (call_answers, register) = enqueued_after(&members, reply)?;
            self.register_written(std::iter::once((*queue, register)), "enqueue")
                .await?;
            // Its workers read its sources afresh: it may have a new one.
            self.sources.forget(queue);
            for (job, answer) in members.iter().zip(&call_answers) {
                written.insert((queue, job.id.as_str()), answer.id.to_string());
            }
            answers.push(call_answers);
        }
        Ok(in_input_order(jobs.len(), &calls, answers))
    }
}

/// The calls that write a batch on a cluster, in order: (queue, positions of its jobs), stage by
/// stage. A job's stage is past the stages of the batch's jobs it waits for in other queues and no
/// earlier than those it waits for in its own; a circle never settles, and is refused.
fn in_stages<'a>(jobs: &'a [NewJob], places: &Places<'_>) -> Result<Vec<(&'a str, Vec<usize>)>, StoreError> {
    let mut at: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (n, job) in jobs.iter().enumerate() {
        at.entry((job.queue.as_str(), job.id.as_str())).or_default().push(n);
    }
    let mut stage = vec![0usize; jobs.len()];
    let mut settled = false;
    for _ in 0..=jobs.len() {
        let mut changed = false;
        for (n, job) in jobs.iter().enumerate() {
            for dependency in &job.after {
                let Some(q) = places.of(job, &dependency.id) else {
                    continue;
                };
                for &m in at.get(&(q, dependency.id.as_str())).into_iter().flatten() {
                    let need = stage[m] + usize::from(q != job.queue);
                    if stage[n] < need {
                        stage[n] = need;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            settled = true;
            break;
        }
    }
    if !settled {
        return Err(StoreError::Unsupported {
            store: KIND,
            operation: A_CIRCLE,
        });
    }
    let mut calls: Vec<(usize, &str, Vec<usize>)> = Vec::new();
    for (n, job) in jobs.iter().enumerate() {
        match calls.iter_mut().find(|(s, q, _)| *s == stage[n] && *q == job.queue) {
            Some((_, _, positions)) => positions.push(n),
            None => calls.push((stage[n], job.queue.as_str(), vec![n])),
        }
    }
    calls.sort_by_key(|(s, _, _)| *s);
    Ok(calls.into_iter().map(|(_, q, positions)| (q, positions)).collect())
}

impl RedisStore {
    /// Of edges `<id>\n~<queue>\n<dependent>` for which cleanup kept a job, those whose dependent has
    /// ended or is gone.
    pub(super) async fn ended_remote_dependents(&self, holds: &[String]) -> Result<Vec<String>, StoreError> {
        let reads = holds.iter().map(|hold| async move {
            let mut parts = hold.splitn(3, '\n');
            let (_, queue, dependent) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let key = self.job_key(queue.trim_start_matches('~'), dependent);
            let (job_type, status): (Option<String>, Option<String>) = self
                .query(redis::cmd("HMGET").arg(key).arg("t").arg("s"), "cleanup")
                .await?;
            let ended =
                job_type.is_none() || status.is_some_and(|s| s.parse::<JobStatus>().is_ok_and(|s| s.is_terminal()));
            Ok::<_, StoreError>(ended.then(|| hold.clone()))
        });
        Ok(try_join_all(reads).await?.into_iter().flatten().collect())
    }
}

impl RedisStore {
    /// Fills in the rows of `edges.lua` for dependents in another slot of a cluster (queue
    /// `~<queue>`), which the script could not follow: their state, type and status, or the row
    /// taken out when the dependent is gone. The queue loses its mark.
    pub(super) async fn read_remote_dependents(
        &self,
        id: &JobId,
        dependents: &mut Vec<Vec<String>>,
    ) -> Result<(), StoreError> {
        let mut kept = Vec::with_capacity(dependents.len());
        for mut row in dependents.drain(..) {
            let Some(queue) = row[3].strip_prefix('~').map(str::to_string) else {
                kept.push(row);
                continue;
            };
            let prefix = self.queue_prefix(&queue);
            let edge: Option<String> = self
                .query(
                    redis::cmd("HGET")
                        .arg(format!("{prefix}after:{}", row[0]))
                        .arg(id.as_str()),
                    "edges",
                )
                .await?;
            let (job_type, status): (Option<String>, Option<String>) = self
                .query(
                    redis::cmd("HMGET")
                        .arg(format!("{prefix}job:{}", row[0]))
                        .arg("t")
                        .arg("s"),
                    "edges",
                )
                .await?;
            let (Some(edge), Some(job_type)) = (edge, job_type) else {
                continue;
            };
            row[1] = edge.split(' ').next().unwrap_or_default().to_string();
            row[3] = queue;
            row[4] = job_type;
            row[5] = status.unwrap_or_else(|| "pending".into());
            kept.push(row);
        }
        *dependents = kept;
        Ok(())
    }
}

impl RedisStore {
    /// The part of a replay's cascade beyond the slots its scripts ran in, on a cluster: `far` as
    /// `replay.lua` answers it (per dependent of another slot: dependency, its queue, the
    /// dependent's queue, the dependent), each dependent's queue in turn (`reopen_far.lua`), until no
    /// job brought back has a dependent elsewhere. The jobs brought back are appended to `jobs`.
    pub(super) async fn reopen_across_slots(
        &self,
        mut far: Vec<String>,
        jobs: &mut Vec<Job>,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        while !far.is_empty() {
            // By the dependents' queue and the job they wait for.
            let mut groups: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
            for row in far.chunks_exact(4) {
                let place = (row[2].clone(), row[0].clone(), row[1].clone());
                groups.entry(place).or_default().push(row[3].clone());
            }
            far = Vec::new();
            for ((queue, dependency, dependency_queue), dependents) in groups {
                let mut cmd = self.queue_script(&SCRIPTS.reopen_far, &queue);
                cmd.arg(&dependency).arg(&dependents);
                let (reply, more): (Vec<Value>, Vec<String>) =
                    self.eval(&SCRIPTS.reopen_far, &cmd, "replay dead jobs", false).await?;
                let back = jobs_from(reply, "replay dead jobs", self)?;
                let waiting: Vec<&str> = back
                    .iter()
                    .filter(|j| dependents.iter().any(|d| d == j.id.as_str()))
                    .map(|j| j.id.as_str())
                    .collect();
                self.deliver_an_end_that_came_first(&dependency, &dependency_queue, &queue, &waiting, now)
                    .await?;
                jobs.extend(back);
                far.extend(more);
            }
        }
        Ok(())
    }

    /// The dependency brought back may have ended again before the jobs of `queue` that wait for it
    /// were: its end then found their edges broken and changed nothing. Its end, read now, is
    /// applied to those edges (`outbox_apply.lua`), once, as a delivered end is; an end that comes
    /// later goes through the outbox.
    async fn deliver_an_end_that_came_first(
        &self,
        dependency: &str,
        dependency_queue: &str,
        queue: &str,
        waiting: &[&str],
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        if waiting.is_empty() {
            return Ok(());
        }
        let key = self.job_key(dependency_queue, dependency);
        let (job_type, status, finished): (Option<String>, Option<String>, Option<i64>) = self
            .query(
                redis::cmd("HMGET").arg(key).arg("t").arg("s").arg("f"),
                "replay dead jobs",
            )
            .await?;
        let ended = match (job_type, status.as_deref().map(str::parse::<JobStatus>)) {
            // Deleted meanwhile: as a deletion ends it.
            (None, _) => Some((JobStatus::Cancelled, now.0)),
            (Some(_), Some(Ok(s))) if s.is_terminal() => Some((s, finished.unwrap_or(now.0))),
            _ => None,
        };
        let Some((status, at)) = ended else {
            return Ok(());
        };
        let entries: Vec<String> = waiting
            .iter()
            .map(|dependent| format!("{dependent}\n{dependency}\n{status}\n{at}"))
            .collect();
        let mut apply = self.queue_script(&SCRIPTS.outbox_apply, queue);
        apply
            .arg(now.0)
            .arg(MISSING_DEPENDENT_GRACE.as_millis() as u64)
            .arg(&entries);
        let _: Vec<u8> = self
            .eval(&SCRIPTS.outbox_apply, &apply, "replay dead jobs", true)
            .await?;
        Ok(())
    }
}
