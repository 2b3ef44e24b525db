//! Import on Redis (see [`crate::store::Store::import`]): `import.lua` once per queue, each call
//! writing its jobs whole with their indexes; the queue registry as `enqueue` keeps it. Then the
//! imported jobs' edges (`import_edges.lua`, per queue of the dependents; on a cluster an edge to
//! another slot linked first on its dependency's side, `link.lua`, as an enqueue links it).

use futures_util::future::try_join_all;
use redis::Value;

use super::calls::{by_queue, in_input_order};
use super::codec::{job_fields, run_key};
use super::scripts::SCRIPTS;
use super::{KIND, RedisStore};
use std::collections::{BTreeMap, HashMap};

use crate::job::{EdgeState, Job, JobId, JobStatus};
use crate::store::{Import, ImportAnswer, ImportEdges, OnConflict, StoreError};
use crate::time::UnixMillis;

/// Jobs per script call: a call holds Redis for its whole run, and imported jobs may be large.
const IMPORT_CHUNK: usize = 200;

impl RedisStore {
    pub(super) async fn import_jobs(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        let jobs = &import.jobs;
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let groups = by_queue(jobs, |j| j.queue.as_str());
        let cluster = self.is_cluster();
        let registry = self.key("queues");
        // A queue's chunks run one after another, so that a later job of the same id sees the
        // earlier one; queues run side by side.
        let per_queue = groups.iter().map(|(queue, positions)| {
            let registry = &registry;
            async move {
                let mut answers = Vec::with_capacity(positions.len());
                let mut register = false;
                for chunk in positions.chunks(IMPORT_CHUNK) {
                    let mut cmd = if cluster {
                        self.queue_script(&SCRIPTS.import, queue)
                    } else {
                        self.script(&SCRIPTS.import, &[self.queue_prefix(queue), registry.clone()])
                    };
                    let mode = if import.on_conflict == OnConflict::Replace {
                        "R"
                    } else {
                        "S"
                    };
                    cmd.arg(mode)
                        .arg(if import.dry_run { "1" } else { "0" })
                        .arg(chunk.len());
                    for &n in chunk {
                        import_args(&mut cmd, &jobs[n], !import.dry_run);
                    }
                    let reply: Value = self.eval(&SCRIPTS.import, &cmd, "import", false).await?;
                    let (again, chunk_answers) = imported(reply, chunk.len())?;
                    register |= again;
                    answers.extend(chunk_answers);
                }
                Ok::<_, StoreError>((answers, register))
            }
        });
        let replies = try_join_all(per_queue).await?;
        // The queue is registered after its jobs are written, as `enqueue` does.
        self.register_written(
            groups
                .iter()
                .zip(&replies)
                .map(|((q, _), (_, register))| (*q, *register)),
            "import",
        )
        .await?;
        let answers = replies.into_iter().map(|(a, _)| a).collect();
        Ok(in_input_order(jobs.len(), &groups, answers))
    }
}

impl RedisStore {
    /// [`crate::store::Store::import_edges`]: the dependents' queues side by side, each in calls of
    /// [`IMPORT_CHUNK`] jobs.
    pub(super) async fn import_edges(&self, edges: &[ImportEdges], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if edges.is_empty() {
            return Ok(Vec::new());
        }
        let groups = by_queue(edges, |e| e.queue.as_str());
        let cluster = self.is_cluster();
        let per_queue = groups.iter().map(|(queue, positions)| async move {
            let mut written = Vec::with_capacity(positions.len());
            for chunk in positions.chunks(IMPORT_CHUNK) {
                let jobs: Vec<&ImportEdges> = chunk.iter().map(|&n| &edges[n]).collect();
                let far = if cluster {
                    self.link_far_edges(queue, &jobs).await?
                } else {
                    HashMap::new()
                };
                let mut cmd = self.queue_script(&SCRIPTS.import_edges, queue);
                cmd.arg(now.0).arg(jobs.len());
                for job in &jobs {
                    cmd.arg(job.job.as_str()).arg(job.join.as_str()).arg(job.after.len());
                    for edge in &job.after {
                        let (queue_arg, far_end) = match edge.queue.as_deref() {
                            Some(q) if cluster && q != *queue => {
                                let end = far.get(&(job.job.as_str(), edge.id.as_str())).cloned();
                                (format!("~{q}"), end.unwrap_or_default())
                            }
                            Some(q) => (q.to_string(), String::new()),
                            None => (String::new(), String::new()),
                        };
                        cmd.arg(edge.id.as_str())
                            .arg(queue_arg)
                            .arg(edge.on.as_str())
                            .arg(edge.state.as_str())
                            .arg(far_end);
                    }
                }
                let reply: Vec<String> = self.eval(&SCRIPTS.import_edges, &cmd, "import edges", false).await?;
                if reply.len() != jobs.len() {
                    return Err(StoreError::query(KIND, "import edges", "a reply that does not parse"));
                }
                written.extend(reply.iter().map(|w| w == "1"));
            }
            // Its workers read its sources afresh: it may have a new one.
            self.sources.forget(queue);
            Ok::<_, StoreError>(written)
        });
        let replies = try_join_all(per_queue).await?;
        Ok(in_input_order(edges.len(), &groups, replies))
    }

    /// On a cluster, the dependency's side of each open edge of `jobs` (of `queue`) to a job of
    /// another queue, written first (`link.lua`, per queue of the dependencies), as an enqueue
    /// writes it: per (dependent, dependency), '' when the dependency is live and now names the
    /// dependent, the status it has ended in, or '-' when that queue holds no such job.
    async fn link_far_edges<'a>(
        &self,
        queue: &str,
        jobs: &[&'a ImportEdges],
    ) -> Result<HashMap<(&'a str, &'a str), String>, StoreError> {
        let mut by_queue: BTreeMap<&str, Vec<(&'a str, &'a str, &'a str)>> = BTreeMap::new();
        for job in jobs {
            for edge in job.after.iter().filter(|e| e.state == EdgeState::Open) {
                if let Some(q) = edge.queue.as_deref().filter(|q| *q != queue) {
                    by_queue
                        .entry(q)
                        .or_default()
                        .push((edge.id.as_str(), job.job.as_str(), edge.on.as_str()));
                }
            }
        }
        let mut ends = HashMap::new();
        for (q, mut links) in by_queue {
            loop {
                let mut link = self.queue_script(&SCRIPTS.link, q);
                link.arg(queue);
                for (dependency, dependent, rule) in &links {
                    link.arg(*dependency).arg(*dependent).arg(*rule);
                }
                let (tag, reply): (String, Vec<String>) =
                    self.eval(&SCRIPTS.link, &link, "import edges", false).await?;
                if tag == "U" {
                    // It wrote nothing: those are left out, and the rest linked again.
                    links.retain(|(dependency, dependent, _)| {
                        let gone = reply.iter().any(|id| id == dependency);
                        if gone {
                            ends.insert((*dependent, *dependency), "-".to_string());
                        }
                        !gone
                    });
                    if links.is_empty() {
                        break;
                    }
                    continue;
                }
                for ((dependency, dependent, _), status) in links.iter().zip(reply) {
                    ends.insert((*dependent, *dependency), status);
                }
                break;
            }
        }
        Ok(ends)
    }
}

/// One job's arguments of `import.lua`; without its hash's fields for a dry run, which decides by id
/// and unique key alone (a copy's look at each batch sent every job whole for nothing).
fn import_args(cmd: &mut redis::Cmd, job: &Job, with_fields: bool) {
    let live_key = job.unique_key.as_deref().filter(|_| !job.status.is_terminal());
    let score = match job.status {
        JobStatus::Running => job.heartbeat_at.or(job.started_at),
        JobStatus::Pending => None,
        _ => job.finished_at,
    }
    .unwrap_or(job.created_at);
    let priority = if job.priority == 0 {
        String::new()
    } else {
        job.priority.to_string()
    };
    let fields = if with_fields { job_fields(job) } else { Vec::new() };
    cmd.arg(job.id.as_str())
        .arg(job.status.as_str())
        .arg(priority)
        .arg(run_key(job.run_at))
        .arg(live_key.unwrap_or(""))
        .arg(score.0)
        .arg(job.created_at.0)
        .arg(fields.len());
    for (field, value) in fields {
        cmd.arg(field).arg(value);
    }
}

/// The reply of `import.lua`: whether the queue needs registering, and the answers.
fn imported(reply: Value, expected: usize) -> Result<(bool, Vec<ImportAnswer>), StoreError> {
    let bad = || StoreError::query(KIND, "import", "a reply that does not parse");
    let (register, answers): (i64, Vec<String>) = redis::from_redis_value(reply).map_err(|_| bad())?;
    if answers.len() != expected {
        return Err(bad());
    }
    let answers = answers
        .into_iter()
        .map(|a| match a.as_str() {
            "I" => Ok(ImportAnswer::Imported),
            "S" => Ok(ImportAnswer::Skipped),
            "R" => Ok(ImportAnswer::Replaced),
            _ => match a.strip_prefix('K') {
                Some(holder) => Ok(ImportAnswer::KeyTaken {
                    holder: JobId::from_stored(holder.to_string()),
                }),
                None => Err(bad()),
            },
        })
        .collect::<Result<_, _>>()?;
    Ok((register == 1, answers))
}
