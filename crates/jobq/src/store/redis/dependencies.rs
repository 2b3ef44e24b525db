//! Jobs that wait for others on Redis (see the contract of [`crate::store::Store::enqueue`]): the
//! enqueue of a batch in which jobs name dependencies, `enqueue_after.lua`; the release of a job's
//! dependents when it ends is `release_dependents` (or `release_all`) in `lua/common.lua`, in the
//! script that ends it: `finish.lua` (and so `finish_and_claim.lua`), `cancel.lua`, `resolve.lua`,
//! `rescue.lua` (a job rescued dead), `delete.lua` (a job deleted before it ended counts as
//! cancelled) and `import.lua` (a job replaced by an ended one). An outcome that spawns children or
//! awaits them is `finish_spawning.lua`.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{q}:blocked` | sorted set | blocked jobs by creation time |
//! | `{q}:after:<id>` | hash | the job's dependencies: id → `<state> <rule> <queue>`, state `open`, `met` or `broken` |
//! | `{q}:dependents:<id>` | hash | the jobs whose edge to it is open: `<queue>\n<id>` → rule (deleted once it ends) |
//!
//! and in a job's hash `ao`, how many of its edges are open, `dn`, how many jobs wait for it (only
//! while any does, so that a finish reads one field more for a job without dependents), `d1`, the
//! `dependents:` member of the one job that waits for it while only one does (so that the end of a
//! flow's child reads no `dependents:` hash; `count_dependent` in `lua/common.lua` keeps it true),
//! and `aj` for a job that waits for any of its dependencies rather than all
//! ([`crate::job::Join::Any`]).
//!
//! A dependency is a job of the batch or of the store, found here in every queue before the script
//! runs, which checks again and writes nothing when one names no job. On a single server one script
//! takes the whole batch, whatever its queues and size (not cut into `ENQUEUE_CHUNK` calls: a job may
//! name any other of the batch), and builds the keys of other queues from its own; on a cluster a
//! script keeps to one hash slot, so each queue's jobs go to a script of their own, and a batch with
//! edges between queues is written in stages, each edge linked on its dependency's side first
//! (`outbox.rs`). An enqueue has no clock of its own: an edge to a dependency
//! that has already ended is resolved at the dependent's `created_at`. Batches without dependencies
//! never come here: `enqueue.lua` keeps its paths as they are.

use std::collections::HashMap;

use futures_util::future::try_join_all;
use redis::{Cmd, Value};
use serde_json::value::RawValue;

use super::calls::{by_queue, finish_args, in_input_order};
use super::codec::run_key;
use super::scripts::{SCRIPTS, enqueued, every_field};
use super::{KIND, RedisStore};
use crate::job::{DependOn, Dependency, JobId, JobStatus, Join, NewJob};
use crate::store::{Edge, EdgeState, Enqueued, Finish, JobEdges, ReadEdges, StoreError};
use crate::time::UnixMillis;

impl RedisStore {
    /// Enqueues a batch in which some jobs name dependencies: one `enqueue_after.lua` call on a single
    /// server, one per queue on a cluster.
    pub(super) async fn enqueue_after(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        let places = self.dependency_places(jobs).await?;
        let registry = self.key("queues");
        if !self.is_cluster() {
            let members: Vec<&NewJob> = jobs.iter().collect();
            let mut cmd = self.script(&SCRIPTS.enqueue_after, &[self.queue_prefix(&jobs[0].queue), registry]);
            after_args(&mut cmd, &members, |job, dependency| places.named(job, dependency));
            let reply: Value = self.eval(&SCRIPTS.enqueue_after, &cmd, "enqueue", false).await?;
            return enqueued_after(&members, reply).map(|(answers, _)| answers);
        }
        let mut unknown = Vec::new();
        let mut across = false;
        for job in jobs {
            for dependency in &job.after {
                match places.of(job, &dependency.id) {
                    Some(queue) => across |= queue != job.queue,
                    None => unknown.push(dependency.id.to_string()),
                }
            }
        }
        let groups = by_queue(jobs, |j| j.queue.as_str());
        // Each queue's script refuses its own unknown dependencies and writes nothing then, but the
        // others' may have written: with several queues, an unknown one is refused before any runs.
        // (Such a refusal may name a dependency of a job that would have been a duplicate.)
        if (groups.len() > 1 || across) && !unknown.is_empty() {
            let mut seen = std::collections::HashSet::new();
            unknown.retain(|id| seen.insert(id.clone()));
            return Err(StoreError::UnknownDependency { ids: unknown });
        }
        if across {
            return self.enqueue_across_slots(jobs, &places).await;
        }
        let calls = groups.iter().map(|(queue, positions)| {
            let members: Vec<&NewJob> = positions.iter().map(|&n| &jobs[n]).collect();
            let mut cmd = self.queue_script(&SCRIPTS.enqueue_after, queue);
            after_args(&mut cmd, &members, |job, dependency| places.named(job, dependency));
            async move {
                let reply: Value = self.eval(&SCRIPTS.enqueue_after, &cmd, "enqueue", false).await?;
                enqueued_after(&members, reply)
            }
        });
        let replies = try_join_all(calls).await?;
        // Registered after its jobs are written, as `enqueue` does.
        self.register_written(
            groups
                .iter()
                .zip(&replies)
                .map(|((q, _), (_, register))| (*q, *register)),
            "enqueue",
        )
        .await?;
        let answers = replies.into_iter().map(|(answers, _)| answers).collect();
        Ok(in_input_order(jobs.len(), &groups, answers))
    }

    /// One outcome that spawns children or awaits them ([`Finish::spawns`]), in one
    /// `finish_spawning.lua` call: whether it applied.
    pub(super) async fn finish_spawning(&self, finish: &Finish, now: UnixMillis) -> Result<bool, StoreError> {
        let queue = finish.lease.queue.as_str();
        let mut cmd = if self.is_cluster() {
            self.queue_script(&SCRIPTS.finish_spawning, queue)
        } else {
            self.script(
                &SCRIPTS.finish_spawning,
                &[self.queue_prefix(queue), self.key("queues")],
            )
        };
        cmd.arg(now.0).arg(run_key(now));
        finish_args(&mut cmd, finish, now);
        let children: Vec<&NewJob> = finish.spawn.iter().collect();
        // A child waits only for its siblings (`job::children`), all written by this script; on a
        // cluster they are of its parent's queue.
        let queues: HashMap<&str, &str> = children.iter().map(|c| (c.id.as_str(), c.queue.as_str())).collect();
        after_args(&mut cmd, &children, |_, dependency| Named {
            id: dependency.id.to_string(),
            queue: queues
                .get(dependency.id.as_str())
                .copied()
                .unwrap_or_default()
                .to_string(),
            ended: String::new(),
        });
        let (applied, register): (u8, bool) = self.eval(&SCRIPTS.finish_spawning, &cmd, "finish", true).await?;
        self.register_written(std::iter::once((queue, register)), "finish")
            .await?;
        Ok(applied == 1)
    }

    /// [`crate::store::Store::edges`]: each job found in its queue (the first in name order that holds
    /// its id, as `get` does), then its `after:` hash (and its `dependents:` hash) and, at once, the
    /// jobs at their other ends. Reads, not a script: a cluster's jobs and their edges share a slot,
    /// but a single server's may be in any queue.
    pub(super) async fn edges(&self, read: &ReadEdges) -> Result<Vec<JobEdges>, StoreError> {
        let located = match &read.queue {
            Some(queue) => vec![vec![queue.clone()]; read.ids.len()],
            None => self.locate_all(&read.ids, "edges").await?,
        };
        let mut answers = Vec::with_capacity(read.ids.len());
        for (id, queues) in read.ids.iter().zip(located) {
            let Some(queue) = queues.first() else {
                answers.push(JobEdges::default());
                continue;
            };
            answers.push(self.edges_of(id, queue, read).await?);
        }
        Ok(answers)
    }

    async fn edges_of(&self, id: &JobId, queue: &str, read: &ReadEdges) -> Result<JobEdges, StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.edges, queue);
        cmd.arg(id.as_str())
            .arg(if read.dependents { "1" } else { "" })
            .arg(if read.results { "1" } else { "" });
        let (shape, dependencies, dependents, join): (String, Vec<Vec<u8>>, Vec<Vec<u8>>, String) =
            self.eval(&SCRIPTS.edges, &cmd, "edges", true).await?;
        // Rows the script filled in, but for the ends in another slot of a cluster (queue
        // `~<queue>`); or, for a job after many others, its `after:` hash, every end to be read.
        let mut dependencies = if shape == "after" {
            dependencies
                .chunks_exact(2)
                .map(|pair| after_row(id, &utf8(id, &pair[0])?, &utf8(id, &pair[1])?))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            dependencies
                .iter()
                .map(|row| unpacked(id, row))
                .collect::<Result<Vec<_>, _>>()?
        };
        let unread: Vec<usize> = if shape == "after" {
            (0..dependencies.len()).collect()
        } else {
            let mut far = Vec::new();
            for (n, row) in dependencies.iter_mut().enumerate() {
                if let Some(queue) = row[3].strip_prefix('~') {
                    row[3] = queue.to_string();
                    far.push(n);
                }
            }
            far
        };
        self.read_dependencies(&mut dependencies, &unread, read.results).await?;
        let mut dependents = dependents
            .iter()
            .map(|row| unpacked(id, row))
            .collect::<Result<Vec<_>, _>>()?;
        if self.is_cluster() {
            self.read_remote_dependents(id, &mut dependents).await?;
        }
        let read_side = |rows: Vec<Vec<String>>| -> Result<Vec<Edge>, StoreError> {
            let mut edges = rows
                .into_iter()
                .map(|row| edge_from(id, row))
                .collect::<Result<Vec<_>, _>>()?;
            edges.sort_by(|a, b| a.job_id.cmp(&b.job_id));
            Ok(edges)
        };
        Ok(JobEdges {
            dependencies: read_side(dependencies)?,
            dependents: read_side(dependents)?,
            join: if join == "any" { Join::Any } else { Join::All },
        })
    }

    /// Fills in the type, status and (with `results`) result of the dependencies of rows `unread`
    /// (their queues unmarked): one pipeline of `HMGET`s per queue (its hash slot on a cluster), the
    /// queues at once. Ten thousand dependencies read this way cost the server about half what one
    /// script reading them took, and hold no other client up while they are read.
    async fn read_dependencies(
        &self,
        rows: &mut [Vec<String>],
        unread: &[usize],
        results: bool,
    ) -> Result<(), StoreError> {
        let mut by_queue: HashMap<&str, Vec<usize>> = HashMap::new();
        for &n in unread {
            let row = &rows[n];
            if !row[3].is_empty() {
                by_queue.entry(row[3].as_str()).or_default().push(n);
            }
        }
        let groups: Vec<(&str, Vec<usize>)> = by_queue.into_iter().collect();
        let reads = groups.iter().map(|(queue, members)| {
            let mut pipe = redis::pipe();
            for &n in members {
                let read = pipe
                    .cmd("HMGET")
                    .arg(self.job_key(queue, &rows[n][0]))
                    .arg("t")
                    .arg("s");
                if results {
                    read.arg("res");
                }
            }
            async move { self.query_pipe::<Vec<Vec<Option<String>>>>(&pipe, "edges").await }
        });
        let answers = try_join_all(reads).await?;
        let filled: Vec<(usize, Vec<Option<String>>)> = groups
            .into_iter()
            .zip(answers)
            .flat_map(|((_, members), fields)| members.into_iter().zip(fields))
            .collect();
        for (n, fields) in filled {
            let mut fields = fields.into_iter();
            let (job_type, status, result) = (
                fields.next().flatten(),
                fields.next().flatten(),
                fields.next().flatten(),
            );
            let row = &mut rows[n];
            // (A job enqueued and not touched since has no status field: it is pending.)
            row[5] = match &job_type {
                Some(_) => status.unwrap_or_else(|| "pending".into()),
                None => String::new(),
            };
            row[4] = job_type.unwrap_or_default();
            row[6] = result.unwrap_or_default();
        }
        Ok(())
    }

    /// Where the batch's dependencies are: the queues of the batch's jobs by id, and the queues of the
    /// store that hold the others.
    async fn dependency_places<'a>(&self, jobs: &'a [NewJob]) -> Result<Places<'a>, StoreError> {
        let mut batch: HashMap<&str, Vec<&str>> = HashMap::new();
        for job in jobs {
            batch.entry(job.id.as_str()).or_default().push(job.queue.as_str());
        }
        let mut outside: Vec<JobId> = Vec::new();
        for dependency in jobs.iter().flat_map(|j| &j.after) {
            if !batch.contains_key(dependency.id.as_str()) && !outside.contains(&dependency.id) {
                outside.push(dependency.id.clone());
            }
        }
        let found = self.locate_all(&outside, "enqueue").await?;
        let store = outside.into_iter().map(|id| id.to_string()).zip(found).collect();
        Ok(Places { batch, store })
    }
}

/// The queues that hold a batch's dependencies.
#[derive(Default)]
pub(super) struct Places<'a> {
    /// The queues of the batch's jobs of each id.
    batch: HashMap<&'a str, Vec<&'a str>>,
    /// The queues of the store that hold each dependency the batch does not.
    store: HashMap<String, Vec<String>>,
}

/// A dependency as `enqueue_after.lua` takes it: the id of the job it stands for, its queue ('' for
/// none, `~<queue>` for one in another slot of a cluster, see `outbox.rs`) and, for such one, the
/// status it had ended in when it was linked ('' for a live one).
pub(super) struct Named {
    pub(super) id: String,
    pub(super) queue: String,
    pub(super) ended: String,
}

impl Places<'_> {
    /// A dependency named by its own id and where it is.
    pub(super) fn named(&self, job: &NewJob, dependency: &Dependency) -> Named {
        Named {
            id: dependency.id.to_string(),
            queue: self.of(job, &dependency.id).unwrap_or("").to_string(),
            ended: String::new(),
        }
    }

    /// The queue of a job's dependency: of the batch before the store (an id is unique within its
    /// queue only), the job's own queue before others, and `None` when no queue holds it.
    pub(super) fn of(&self, job: &NewJob, dependency: &JobId) -> Option<&str> {
        let queues: Vec<&str> = match self.batch.get(dependency.as_str()) {
            Some(queues) => queues.clone(),
            None => self
                .store
                .get(dependency.as_str())
                .map(|queues| queues.iter().map(String::as_str).collect())
                .unwrap_or_default(),
        };
        queues.iter().find(|&&q| q == job.queue).or(queues.first()).copied()
    }
}

/// One row of `edges.lua` as its seven fields, split at byte 0xFF.
fn unpacked(asked: &JobId, row: &[u8]) -> Result<Vec<String>, StoreError> {
    row.split(|&b| b == 0xFF).map(|field| utf8(asked, field)).collect()
}

/// A field of an edge as text.
fn utf8(asked: &JobId, field: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(field.to_vec()).map_err(|e| StoreError::Corrupt {
        kind: KIND,
        id: asked.to_string(),
        reason: format!("an edge that is not UTF-8: {e}"),
    })
}

/// A dependency's row, (id, state, rule, queue), from its field and value in the job's `after:`
/// hash (`<state> <rule> <queue>`, the queue marked `~` when in another slot of a cluster; unmarked
/// here, since the dependency is read where it is); its type, status and result '' until read.
fn after_row(asked: &JobId, dependency: &str, edge: &str) -> Result<Vec<String>, StoreError> {
    let mut parts = edge.splitn(3, ' ');
    let (Some(state), Some(rule), Some(queue)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(StoreError::Corrupt {
            kind: KIND,
            id: asked.to_string(),
            reason: format!("an edge {edge:?}"),
        });
    };
    let queue = queue.strip_prefix('~').unwrap_or(queue);
    Ok([dependency, state, rule, queue, "", "", ""]
        .map(str::to_string)
        .to_vec())
}

/// One row of an edge, `edges.lua`'s for a dependent: (id, state, rule, queue, type, status,
/// result), '' where absent.
fn edge_from(asked: &JobId, row: Vec<String>) -> Result<Edge, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        kind: KIND,
        id: asked.to_string(),
        reason,
    };
    let [id, state, rule, queue, job_type, status, result]: [String; 7] = row
        .try_into()
        .map_err(|row: Vec<String>| corrupt(format!("an edge of {} fields", row.len())))?;
    let state = match state.as_str() {
        "open" => EdgeState::Open,
        "met" => EdgeState::Met,
        "broken" => EdgeState::Broken,
        other => return Err(corrupt(format!("an edge in state {other:?}"))),
    };
    let on: DependOn = rule.parse().map_err(corrupt)?;
    let gone = job_type.is_empty();
    let status = if gone {
        None
    } else {
        Some(status.parse::<JobStatus>().map_err(|e| corrupt(format!("{id}: {e}")))?)
    };
    let result = if result.is_empty() {
        None
    } else {
        Some(RawValue::from_string(result).map_err(|e| corrupt(format!("{id}'s result: {e}")))?)
    };
    Ok(Edge {
        job_id: JobId::from_stored(id),
        job_type: (!gone).then_some(job_type),
        queue: (!gone).then_some(queue),
        status,
        on,
        state,
        result,
    })
}

/// The arguments of `enqueue_after.lua`: the count, then per job its queue, the fields of shape 'E'
/// of `enqueue.lua`, the number of its dependencies, how they combine (`all` or `any`, see
/// [`crate::job::Join`]) and the dependencies, each as `name` gives it.
pub(super) fn after_args(cmd: &mut Cmd, jobs: &[&NewJob], name: impl Fn(&NewJob, &Dependency) -> Named) {
    cmd.arg(jobs.len());
    for job in jobs {
        cmd.arg(&job.queue);
        every_field(cmd, job);
        cmd.arg(job.after.len()).arg(job.join.as_str());
        for dependency in &job.after {
            let named = name(job, dependency);
            cmd.arg(named.id)
                .arg(named.queue)
                .arg(dependency.on.as_str())
                .arg(named.ended);
        }
    }
}

/// The reply of `enqueue_after.lua`: `enqueue.lua`'s, or `{ 'U', ids }` for dependencies that name no
/// job.
pub(super) fn enqueued_after(jobs: &[&NewJob], reply: Value) -> Result<(Vec<Enqueued>, bool), StoreError> {
    match reply {
        Value::Array(pair) if matches!(pair.first(), Some(Value::BulkString(u)) if u == b"U") => {
            let ids: Vec<String> = pair
                .into_iter()
                .nth(1)
                .map(redis::from_redis_value)
                .transpose()
                .map_err(|e| StoreError::query(KIND, "enqueue", e.to_string()))?
                .unwrap_or_default();
            Err(StoreError::UnknownDependency { ids })
        }
        reply => enqueued(jobs, reply),
    }
}
