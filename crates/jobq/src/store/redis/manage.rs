//! Cleanup, resolve, delete and retry on Redis (see the contracts of [`crate::store::Store::cleanup`],
//! [`crate::store::Store::resolve`],
//! [`crate::store::Store::delete`], [`crate::store::Store::delete_matching`] and
//! [`crate::store::Store::retry`]): `cleanup.lua`, `resolve.lua`, `delete.lua` and `retry.lua`, one call
//! per queue.
//!
//! These calls name jobs by id alone, so each job's queue is looked for first, as `cancel` does (see
//! [`RedisStore::locate`]); the jobs of one queue then go to one script, in input order, which applies
//! them one after another, each atomically. A job that moves between the look-up and the script is
//! judged by the script as it finds it.

use futures_util::future::try_join_all;
use redis::Cmd;

use super::calls::{opt_millis, push_list};
use super::codec::{job_from_pairs, packed_pairs, run_key};
use super::scripts::{Lua, SCRIPTS};
use super::{KIND, RedisStore};
use crate::job::{JobId, JobStatus};
use crate::store::{
    Cleanup, Delete, DeleteAnswer, DeleteMatching, DeletedCount, Expire, Resolution, Resolve, ResolveAnswer, Retry,
    RetryAnswer, StoreError,
};
use crate::time::UnixMillis;

impl RedisStore {
    /// [`crate::store::Store::cleanup`]: `cleanup.lua` queue by queue; on a cluster, a queue's jobs
    /// kept only for dependents in other slots are freed by a second call once those have ended.
    pub(super) async fn cleanup_jobs(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let wanted: Vec<&str> = cleanup
            .filter
            .statuses
            .iter()
            .filter(|s| s.is_terminal())
            .map(|s| s.as_str())
            .collect();
        if !cleanup.filter.statuses.is_empty() && wanted.is_empty() {
            return Ok(0);
        }
        let mut count = 0u64;
        for q in self.queues_or_all(&cleanup.filter.queues).await? {
            let left = u64::from(cleanup.limit).saturating_sub(count);
            if left == 0 {
                break;
            }
            let (mut removed, mut emptied, holds) = self.cleanup_queue(cleanup, &wanted, &q, left, &[]).await?;
            // Jobs kept for dependents in other slots of a cluster: freed when those have ended.
            let free = self.ended_remote_dependents(&holds).await?;
            if !free.is_empty() {
                let again = left.saturating_sub(if cleanup.dry_run { 0 } else { removed });
                let (more, now_empty, _) = self.cleanup_queue(cleanup, &wanted, &q, again, &free).await?;
                // A dry run counted the same jobs again, and the others.
                removed = if cleanup.dry_run { more } else { removed + more };
                emptied = now_empty;
            }
            count += removed;
            if emptied {
                self.forget_queue(&q).await?;
            }
        }
        Ok(count)
    }

    /// Ends expired jobs (see [`crate::store::Store::expire`]): `expire.lua` per queue, until the
    /// limit is reached or a queue has no more due.
    pub(super) async fn expire_jobs(&self, expire: &Expire) -> Result<u64, StoreError> {
        let mut count = 0u64;
        for q in self.queues_or_all(&expire.queues).await? {
            loop {
                let left = u64::from(expire.limit).saturating_sub(count);
                if left == 0 {
                    return Ok(count);
                }
                let mut cmd = self.queue_script(&SCRIPTS.expire, &q);
                cmd.arg(left);
                let (ended, read): (u64, u64) = self.eval(&SCRIPTS.expire, &cmd, "expire", true).await?;
                count += ended;
                if read < left {
                    break;
                }
            }
        }
        Ok(count)
    }

    /// One `cleanup.lua` call over `queue`, with the edges to other slots found `free`: (how many,
    /// whether it emptied the queue, the edges to other slots for which it kept a job).
    pub(super) async fn cleanup_queue(
        &self,
        cleanup: &Cleanup,
        statuses: &[&str],
        queue: &str,
        limit: u64,
        free: &[String],
    ) -> Result<(u64, bool, Vec<String>), StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.cleanup, queue);
        cmd.arg(opt_millis(cleanup.finished_before))
            .arg(limit)
            .arg(if cleanup.dry_run { "1" } else { "0" })
            .arg(cleanup.keep_last.map(|n| n.to_string()).unwrap_or_default());
        push_list(&mut cmd, statuses);
        push_list(&mut cmd, &cleanup.filter.job_types);
        push_list(&mut cmd, &cleanup.exclude_types);
        cmd.arg(free);
        self.eval(&SCRIPTS.cleanup, &cmd, "cleanup", true).await
    }

    /// Resolves waiting jobs, one `resolve.lua` call per queue.
    pub(super) async fn resolve_jobs(
        &self,
        resolves: &[Resolve],
        now: UnixMillis,
    ) -> Result<Vec<ResolveAnswer>, StoreError> {
        let ids: Vec<JobId> = resolves.iter().map(|r| r.id.clone()).collect();
        let replies: Vec<(Vec<usize>, Vec<String>)> = self
            .per_located_queue(&ids, "resolve", &SCRIPTS.resolve, |cmd, positions| {
                cmd.arg(now.0).arg(positions.len());
                for &n in positions {
                    let r = &resolves[n];
                    let attempt = r.attempt.map(|a| a.to_string()).unwrap_or_default();
                    let (kind, value) = match &r.action {
                        Resolution::Succeed { result } => ("S", result.as_ref().map(|r| r.get().to_string())),
                        Resolution::Fail { .. } => ("F", None),
                        Resolution::Retry { run_at, .. } => ("R", Some(run_key(*run_at))),
                        Resolution::Discard { .. } => ("X", None),
                    };
                    cmd.arg(r.id.as_str())
                        .arg(attempt)
                        .arg(kind)
                        .arg(value.unwrap_or_default())
                        .arg(r.action.error().unwrap_or(""));
                }
            })
            .await?;
        let mut answers = vec![ResolveAnswer::NotFound; resolves.len()];
        for (positions, reply) in replies {
            for (n, answer) in positions.into_iter().zip(reply) {
                answers[n] = match answer.split_at_checked(1) {
                    Some(("r", status)) => ResolveAnswer::Resolved {
                        status: status_word(status)?,
                    },
                    Some(("w", status)) => ResolveAnswer::NotWaiting {
                        status: status_word(status)?,
                    },
                    _ => ResolveAnswer::NotFound,
                };
            }
        }
        Ok(answers)
    }

    /// Deletes jobs by id, one `delete.lua` call per queue.
    pub(super) async fn delete_jobs(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, StoreError> {
        let force = if delete.force { "1" } else { "" };
        let now = deleted_at();
        let replies: Vec<(Vec<usize>, Vec<String>)> = self
            .per_located_queue(&delete.ids, "delete", &SCRIPTS.delete, |cmd, positions| {
                cmd.arg(now.0).arg(force).arg("I").arg(positions.len());
                for &n in positions {
                    cmd.arg(delete.ids[n].as_str());
                }
            })
            .await?;
        let mut answers = vec![DeleteAnswer::NotFound; delete.ids.len()];
        for (positions, reply) in replies {
            for (n, answer) in positions.into_iter().zip(reply) {
                answers[n] = match answer.split_at_checked(1) {
                    Some(("d", status)) => DeleteAnswer::Deleted {
                        previous: status_word(status)?,
                    },
                    Some(("r", status)) => DeleteAnswer::Refused {
                        status: status_word(status)?,
                    },
                    _ => DeleteAnswer::NotFound,
                };
            }
        }
        Ok(answers)
    }

    /// Deletes up to `limit` jobs a filter selects, queue by queue; every queue is still asked for its
    /// count of held jobs once the limit is reached.
    pub(super) async fn delete_filtered(&self, delete: &DeleteMatching) -> Result<DeletedCount, StoreError> {
        let f = &delete.filter;
        let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
        let mut total = DeletedCount::default();
        let now = deleted_at();
        for q in self.queues_or_all(&f.queues).await? {
            let left = u64::from(delete.limit).saturating_sub(total.deleted);
            let mut cmd = self.queue_script(&SCRIPTS.delete, &q);
            cmd.arg(now.0).arg(if delete.force { "1" } else { "" }).arg("F");
            super::calls::push_list(&mut cmd, &f.job_types);
            super::calls::push_list(&mut cmd, &statuses);
            cmd.arg(super::calls::opt_millis(f.created_since))
                .arg(super::calls::opt_millis(f.created_until))
                .arg(left);
            let (deleted, refused): (u64, u64) = self.eval(&SCRIPTS.delete, &cmd, "delete", false).await?;
            total.deleted += deleted;
            total.refused += refused;
        }
        Ok(total)
    }

    /// Puts finished jobs back to pending, one `retry.lua` call per queue.
    pub(super) async fn retry_jobs(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, StoreError> {
        let replies: Vec<(Vec<usize>, Vec<Vec<u8>>)> = self
            .per_located_queue(&retry.ids, "retry", &SCRIPTS.retry, |cmd, positions| {
                cmd.arg(run_key(retry.now)).arg(positions.len());
                for &n in positions {
                    cmd.arg(retry.ids[n].as_str());
                }
            })
            .await?;
        let mut answers: Vec<RetryAnswer> = (0..retry.ids.len()).map(|_| RetryAnswer::NotFound).collect();
        let bad = || StoreError::query(KIND, "retry", "a reply that does not parse");
        for (positions, reply) in replies {
            for (n, pair) in positions.into_iter().zip(reply.chunks_exact(2)) {
                let text = || std::str::from_utf8(&pair[1]).map_err(|_| bad());
                answers[n] = match pair[0].as_slice() {
                    b"p" => {
                        let pairs = packed_pairs(&pair[1]).ok_or_else(bad)?;
                        RetryAnswer::Retried(Box::new(job_from_pairs(&pairs)?))
                    }
                    b"x" => RetryAnswer::NotTerminal {
                        status: status_word(text()?)?,
                    },
                    b"k" => RetryAnswer::KeyTaken {
                        holder: JobId::from_stored(text()?.to_string()),
                    },
                    _ => RetryAnswer::NotFound,
                };
            }
        }
        Ok(answers)
    }

    /// Runs `lua` once per queue over the jobs of `ids` found in it (positions in input order; `args`
    /// adds each call's arguments), all calls at once. Returns each call's positions with its reply;
    /// ids no queue has are in none.
    async fn per_located_queue<R: redis::FromRedisValue>(
        &self,
        ids: &[JobId],
        operation: &'static str,
        lua: &Lua,
        args: impl Fn(&mut Cmd, &[usize]),
    ) -> Result<Vec<(Vec<usize>, Vec<R>)>, StoreError> {
        let located = self.locate(ids, operation).await?;
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (n, queue) in located.into_iter().enumerate() {
            let Some(queue) = queue else { continue };
            match groups.iter_mut().find(|(q, _)| *q == queue) {
                Some((_, positions)) => positions.push(n),
                None => groups.push((queue, vec![n])),
            }
        }
        let calls = groups.into_iter().map(|(queue, positions)| {
            let mut cmd = self.queue_script(lua, &queue);
            args(&mut cmd, &positions);
            async move {
                let reply: Vec<R> = self.eval(lua, &cmd, operation, false).await?;
                Ok::<_, StoreError>((positions, reply))
            }
        });
        try_join_all(calls).await
    }
}

/// When a delete cancels, for the jobs that wait for them, the jobs it deletes before they ended: now,
/// read here because [`crate::store::Store::delete`] and [`crate::store::Store::delete_matching`] take
/// no time of their caller's (as the SQL stores do; `delete.lua` writes it as the cancelled
/// dependents' finish time).
fn deleted_at() -> UnixMillis {
    UnixMillis::now()
}

/// A status a script answered with.
fn status_word(text: &str) -> Result<JobStatus, StoreError> {
    text.parse()
        .map_err(|e: String| StoreError::query(KIND, "reading a script's answer", e))
}
