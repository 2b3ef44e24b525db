//! The calls the Redis store's transitions are made of: script and command round trips (a script is
//! sent in full only when the server lacks it; a call cut off by a dropped connection is sent again
//! where a repeat is harmless), the per-queue and per-slot grouping of batches, and the arguments and
//! replies of the scripts.

use std::collections::HashMap;
use std::future::Future;

use futures_util::future::try_join_all;
use redis::{Cmd, FromRedisValue, Pipeline, Value};

use super::codec::{error_entry, job_from_pairs, packed_pairs, run_key};
use super::scripts::{Lua, SCRIPTS};
use super::{CANCEL_CHUNK, KIND, RedisStore};
use crate::job::{Job, JobId, JobStatus};
use crate::store::batch::sort_in_claim_order;
use crate::store::error::DriverError;
use crate::store::{CancelAnswer, Cancelled, Claim, Finish, Lease, QueueStats, ReplayDead, StoreError, Transition};
use crate::time::UnixMillis;

/// True for driver errors that mean the server cannot be reached rather than refusing a request.
pub(super) fn is_unreachable(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_refusal() || e.is_connection_dropped() || e.is_timeout()
}

pub(super) fn is_noscript(e: &redis::RedisError) -> bool {
    e.code() == Some("NOSCRIPT")
}

/// The positions of `items` grouped by queue, queues in order of first appearance.
pub(super) fn by_queue<'a, T>(items: &'a [T], queue: impl Fn(&'a T) -> &'a str) -> Vec<(&'a str, Vec<usize>)> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (n, item) in items.iter().enumerate() {
        let q = queue(item);
        let g = *index.entry(q).or_insert_with(|| {
            groups.push((q, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(n);
    }
    groups
}

/// Puts per-group answers back in the order of the items they answer.
pub(super) fn in_input_order<R>(len: usize, groups: &[(&str, Vec<usize>)], answers: Vec<Vec<R>>) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..len).map(|_| None).collect();
    for ((_, positions), answers) in groups.iter().zip(answers) {
        for (&n, answer) in positions.iter().zip(answers) {
            out[n] = Some(answer);
        }
    }
    out.into_iter().flatten().collect()
}

impl RedisStore {
    pub(super) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.settings.prefix)
    }

    /// The start of every key of a queue: the prefix and the queue as hash tag.
    pub(super) fn queue_prefix(&self, queue: &str) -> String {
        format!("{}{{{queue}}}:", self.settings.prefix)
    }

    /// The hash of job `id` of `queue` (`jkey` in the scripts).
    pub(super) fn job_key(&self, queue: &str, id: &str) -> String {
        format!("{}job:{id}", self.queue_prefix(queue))
    }

    pub(super) fn fail(&self, operation: &'static str) -> impl Fn(redis::RedisError) -> StoreError + '_ {
        move |e| {
            if is_unreachable(&e) {
                StoreError::unavailable(KIND, &self.url.redacted(), &e)
            } else {
                StoreError::query(KIND, operation, DriverError::deepest(&e))
            }
        }
    }

    /// An `EVALSHA` of `lua` over `keys` (which route it to its node); the caller adds the arguments.
    pub(super) fn script(&self, lua: &Lua, keys: &[String]) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(lua.sha()).arg(keys.len()).arg(keys);
        cmd
    }

    /// An `EVALSHA` of `lua` over one queue's keys.
    pub(super) fn queue_script(&self, lua: &Lua, queue: &str) -> Cmd {
        self.script(lua, &[self.queue_prefix(queue)])
    }

    /// Runs a script command, sending the script's text when the server does not have it. With
    /// `retry`, a call cut off by a dropped connection is sent once more on the new one: for calls
    /// whose repeat is harmless (reads, and fenced writes that a repeat finds already done).
    pub(super) async fn eval<T: FromRedisValue>(
        &self,
        lua: &Lua,
        cmd: &Cmd,
        operation: &'static str,
        retry: bool,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        let mut full_text: Option<Cmd> = None;
        let mut tries = 0;
        loop {
            tries += 1;
            let sent = full_text.as_ref().unwrap_or(cmd);
            match sent.query_async::<T>(&mut conn).await {
                Ok(v) => return Ok(v),
                Err(e) if is_noscript(&e) && full_text.is_none() => full_text = Some(lua.as_eval(cmd)),
                Err(e) if retry && tries <= 2 && (e.is_connection_dropped() || e.is_io_error()) => {}
                Err(e) => return Err(self.fail(operation)(e)),
            }
        }
    }

    /// A plain command, retried once over a new connection when the old one dropped.
    pub(super) async fn query<T: FromRedisValue>(&self, cmd: &Cmd, operation: &'static str) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        match cmd.query_async::<T>(&mut conn).await {
            Err(e) if e.is_connection_dropped() || e.is_io_error() => {
                cmd.query_async::<T>(&mut conn).await.map_err(self.fail(operation))
            }
            other => other.map_err(self.fail(operation)),
        }
    }

    /// A pipeline of plain commands (each of one hash slot on a cluster), sent again whole over a new
    /// connection when the old one dropped: fit for reads only.
    pub(super) async fn query_pipe<T: FromRedisValue>(
        &self,
        pipe: &Pipeline,
        operation: &'static str,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        match pipe.query_async::<T>(&mut conn).await {
            Err(e) if e.is_connection_dropped() || e.is_io_error() => {
                pipe.query_async::<T>(&mut conn).await.map_err(self.fail(operation))
            }
            other => other.map_err(self.fail(operation)),
        }
    }

    /// One section of `INFO`: the server's, or on a cluster the first node's (a cluster client asks
    /// every node and answers with a map from node to text).
    pub(super) async fn info_section(&self, section: &str) -> Result<String, StoreError> {
        let reply: Value = self.query(redis::cmd("INFO").arg(section), "info").await?;
        let reply = match reply {
            Value::Map(mut nodes) if !nodes.is_empty() => {
                nodes.sort_by(|a, b| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)));
                nodes.swap_remove(0).1
            }
            other => other,
        };
        redis::from_redis_value(reply).map_err(|e| self.fail("info")(e.into()))
    }

    /// Every queue that has had a job, sorted.
    pub(super) async fn known_queues(&self) -> Result<Vec<String>, StoreError> {
        let mut queues: Vec<String> = self
            .query(redis::cmd("SMEMBERS").arg(self.key("queues")), "list queues")
            .await?;
        queues.sort();
        Ok(queues)
    }

    /// Takes a queue that cleanup left without jobs out of the registry, and puts it back if a job
    /// arrived meanwhile. An enqueue registers its queue in its script, or on a cluster after its
    /// script has run when the script found the queue's marker gone, which cleanup's script deletes
    /// (see `enqueue.lua`); so whichever order the calls meet in, a queue with jobs ends up registered.
    pub(super) async fn forget_queue(&self, queue: &str) -> Result<(), StoreError> {
        let registry = self.key("queues");
        let _: () = self
            .query(redis::cmd("SREM").arg(&registry).arg(queue), "cleanup")
            .await?;
        if self.queue_stats(queue, UnixMillis::now(), "cleanup").await?.total() > 0 {
            let _: () = self
                .query(redis::cmd("SADD").arg(&registry).arg(queue), "cleanup")
                .await?;
        }
        Ok(())
    }

    /// Registers the queues whose writes answered that they still need it, after their jobs are
    /// written, never before (see [`RedisStore::forget_queue`]).
    pub(super) async fn register_written<'a>(
        &self,
        written: impl Iterator<Item = (&'a str, bool)>,
        operation: &'static str,
    ) -> Result<(), StoreError> {
        let unlisted: Vec<&str> = written.filter(|(_, register)| *register).map(|(q, _)| q).collect();
        if !unlisted.is_empty() {
            let _: () = self
                .query(redis::cmd("SADD").arg(self.key("queues")).arg(&unlisted), operation)
                .await?;
        }
        Ok(())
    }

    /// What one queue holds, by status, as of `now` (which splits pending into ready and scheduled):
    /// one `stats.lua` call, for `stats` itself and for the calls that need a queue's size.
    pub(super) async fn queue_stats(
        &self,
        queue: &str,
        now: UnixMillis,
        operation: &'static str,
    ) -> Result<QueueStats, StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.stats, queue);
        cmd.arg(run_key(now));
        let (blocked, ready, scheduled, running, waiting, succeeded, dead, cancelled, discarded, expired, oldest): (
            u64,
            u64,
            u64,
            u64,
            u64,
            u64,
            u64,
            u64,
            u64,
            u64,
            String,
        ) = self.eval(&SCRIPTS.stats, &cmd, operation, true).await?;
        Ok(QueueStats {
            queue: queue.to_string(),
            blocked,
            ready,
            scheduled,
            running,
            waiting,
            succeeded,
            dead,
            cancelled,
            discarded,
            expired,
            oldest_ready_at: super::codec::from_run_key(&oldest),
        })
    }

    /// The queues a call names, or every queue when it names none.
    pub(super) async fn queues_or_all(&self, queues: &[String]) -> Result<Vec<String>, StoreError> {
        if queues.is_empty() {
            self.known_queues().await
        } else {
            Ok(queues.to_vec())
        }
    }

    /// The queue of each job id, `None` for an id no queue has: the job is looked for in every queue.
    pub(super) async fn locate(
        &self,
        ids: &[JobId],
        operation: &'static str,
    ) -> Result<Vec<Option<String>>, StoreError> {
        let found = self.locate_all(ids, operation).await?;
        Ok(found.into_iter().map(|queues| queues.into_iter().next()).collect())
    }

    /// The queues that hold each job id, in name order (an id is unique within its queue only).
    pub(super) async fn locate_all(
        &self,
        ids: &[JobId],
        operation: &'static str,
    ) -> Result<Vec<Vec<String>>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let queues = self.known_queues().await?;
        let probes = ids.iter().flat_map(|id| {
            queues.iter().map(move |q| {
                let mut cmd = redis::cmd("EXISTS");
                cmd.arg(self.job_key(q, id.as_str()));
                async move { self.query::<bool>(&cmd, operation).await }
            })
        });
        let found = try_join_all(probes).await?;
        Ok(ids
            .iter()
            .enumerate()
            .map(|(n, _)| {
                let row = &found[n * queues.len()..(n + 1) * queues.len()];
                row.iter()
                    .zip(&queues)
                    .filter(|(hit, _)| **hit)
                    .map(|(_, q)| q.clone())
                    .collect()
            })
            .collect())
    }

    /// Groups queues that one script may serve together: all of them on a single server, those that
    /// share a hash slot on a cluster.
    pub(super) fn slot_groups<'a>(&self, queues: &'a [String]) -> Vec<Vec<&'a String>> {
        if !self.is_cluster() {
            return vec![queues.iter().collect()];
        }
        let mut groups: Vec<(u16, Vec<&String>)> = Vec::new();
        for q in queues {
            let s = super::connection::slot(q);
            match groups.iter_mut().find(|(slot, _)| *slot == s) {
                Some((_, group)) => group.push(q),
                None => groups.push((s, vec![q])),
            }
        }
        groups.into_iter().map(|(_, group)| group).collect()
    }

    pub(super) fn claim_cmd(&self, queues: &[&String], claim: &Claim, limit: u32, peek: bool) -> Cmd {
        let keys: Vec<String> = queues.iter().map(|q| self.queue_prefix(q)).collect();
        let mut cmd = self.script(&SCRIPTS.claim, &keys);
        cmd.arg(run_key(claim.now))
            .arg(claim.now.0)
            .arg(&claim.worker)
            .arg(limit)
            .arg(if peek { "1" } else { "0" })
            .arg(claim.exclude_types.len())
            .arg(&claim.exclude_types);
        cmd
    }

    /// Leases up to `limit` jobs from queues that share a slot, in one script.
    pub(super) async fn claim_from(
        &self,
        queues: &[&String],
        claim: &Claim,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        let reply: Vec<Value> = self
            .eval(
                &SCRIPTS.claim,
                &self.claim_cmd(queues, claim, limit, false),
                "claim",
                false,
            )
            .await?;
        // The script returns each job as it was before the lease; apply the lease as it did.
        let mut jobs = jobs_from(reply, "claim", self)?;
        for job in &mut jobs {
            claim.lease(job);
        }
        Ok(jobs)
    }

    /// Leases up to `limit` jobs, best (priority, run_at, id) first across all the claim's queues.
    pub(super) async fn claim_jobs(&self, claim: &Claim, limit: u32) -> Result<Vec<Job>, StoreError> {
        let groups = self.slot_groups(&claim.queues);
        if let [group] = groups.as_slice() {
            return self.claim_from(group, claim, limit).await;
        }
        // Slots on a cluster: ask each what it would hand out, keep the best `limit` overall, and claim
        // from each slot its share (a claim racing in between only makes a share come out smaller).
        let peeks = try_join_all(groups.iter().map(|group| async move {
            let cmd = self.claim_cmd(group, claim, limit, true);
            self.eval::<Vec<(i64, String)>>(&SCRIPTS.claim, &cmd, "claim", true)
                .await
        }))
        .await?;
        let mut best: Vec<(i64, &str, usize)> = peeks
            .iter()
            .enumerate()
            .flat_map(|(g, cands)| cands.iter().map(move |(pr, member)| (*pr, member.as_str(), g)))
            .collect();
        best.sort();
        best.truncate(limit as usize);
        let mut shares = vec![0u32; groups.len()];
        for (_, _, g) in best {
            shares[g] += 1;
        }
        let claimed = try_join_all(
            groups
                .iter()
                .zip(shares)
                .filter(|(_, share)| *share > 0)
                .map(|(group, share)| self.claim_from(group, claim, share)),
        )
        .await?;
        let mut jobs: Vec<Job> = claimed.into_iter().flatten().collect();
        sort_in_claim_order(&mut jobs);
        Ok(jobs)
    }

    /// How many inbox items wait in the queues' inboxes, or sit in processing lists (perhaps of an
    /// ingester that died, which an ingest takes over).
    pub(super) async fn inbox_waiting(&self, queues: &[String]) -> Result<u64, StoreError> {
        let counts = try_join_all(queues.iter().flat_map(|q| {
            let mut items = redis::cmd("LLEN");
            items.arg(self.inbox_key(q));
            let mut taken = redis::cmd("HLEN");
            taken.arg(self.inbox_registry_key(q));
            [items, taken].map(|cmd| async move { self.query::<u64>(&cmd, "claim").await })
        }))
        .await?;
        Ok(counts.iter().sum())
    }

    /// A claim of up to `claim.limit` jobs by `take` (which leases up to the number it is given), with
    /// the inbox looked at beside it rather than before, which would cost every claim a round trip
    /// for an inbox that is almost always empty. When items waited, they become jobs and `take`
    /// runs again for what the claim still wants; the jobs in claim order.
    pub(super) async fn beside_the_inbox<F, Fut>(&self, claim: &Claim, take: F) -> Result<Vec<Job>, StoreError>
    where
        F: Fn(u32) -> Fut,
        Fut: Future<Output = Result<Vec<Job>, StoreError>>,
    {
        let (mut jobs, waiting) = tokio::try_join!(take(claim.limit), self.inbox_waiting(&claim.queues))?;
        if waiting > 0 {
            match self.ingest(&claim.queues, &claim.worker, claim.now).await {
                Ok(0) => {}
                Ok(_) if (jobs.len() as u32) < claim.limit => {
                    jobs.extend(take(claim.limit - jobs.len() as u32).await?);
                    sort_in_claim_order(&mut jobs);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("ingesting the inbox failed: {e}"),
            }
        }
        Ok(jobs)
    }

    /// Runs one call per queue of a batch, all sent at once, and answers in the batch's order.
    pub(super) async fn per_queue<'a, T, R>(
        &self,
        items: &'a [T],
        queue: impl Fn(&'a T) -> &'a str,
        lua: &Lua,
        operation: &'static str,
        retry: bool,
        args: impl Fn(&mut Cmd, &[&'a T]),
    ) -> Result<Vec<R>, StoreError>
    where
        R: FromRedisValue,
    {
        let groups = by_queue(items, queue);
        let calls = groups.iter().map(|(q, positions)| {
            let members: Vec<&T> = positions.iter().map(|&n| &items[n]).collect();
            let mut cmd = self.queue_script(lua, q);
            args(&mut cmd, &members);
            async move { self.eval::<Vec<R>>(lua, &cmd, operation, retry).await }
        });
        let answers = try_join_all(calls).await?;
        Ok(in_input_order(items.len(), &groups, answers))
    }

    /// Cancels the live jobs of one queue that a filter matches. Without a type or time filter every
    /// job the script reads matches, so it reads [`CANCEL_CHUNK`] at a time and is called again
    /// while it finds that many, up to the number of live jobs there were at the start (so producers
    /// that keep adding cannot keep it going).
    pub(super) async fn cancel_in_queue(
        &self,
        queue: &str,
        f: &crate::store::JobFilter,
        now: UnixMillis,
    ) -> Result<Vec<Cancelled>, StoreError> {
        let chunked = f.job_types.is_empty() && f.created_since.is_none() && f.created_until.is_none();
        let mut calls_left = if chunked {
            let s = self.queue_stats(queue, now, "cancel").await?;
            let live = s.blocked + s.ready + s.scheduled + s.running + s.waiting;
            live / CANCEL_CHUNK as u64 + 1
        } else {
            1
        };
        let mut out = Vec::new();
        while calls_left > 0 {
            calls_left -= 1;
            let mut cmd = self.queue_script(&SCRIPTS.cancel, queue);
            cmd.arg(now.0).arg("F");
            push_list(&mut cmd, &f.job_types);
            push_list(&mut cmd, &statuses(&f.statuses));
            cmd.arg(opt_millis(f.created_since))
                .arg(opt_millis(f.created_until))
                .arg(if chunked {
                    CANCEL_CHUNK.to_string()
                } else {
                    String::new()
                });
            let reply: Vec<String> = self.eval(&SCRIPTS.cancel, &cmd, "cancel", false).await?;
            let found = reply.len() / 2;
            out.extend(cancelled_from(&reply));
            if found < CANCEL_CHUNK {
                break;
            }
        }
        Ok(out)
    }

    /// The dead jobs of a replay, oldest death first: (finished at, id, queue).
    pub(super) async fn replay_candidates(
        &self,
        replay: &ReplayDead,
    ) -> Result<Vec<(f64, String, String)>, StoreError> {
        let wanted = |q: &str| replay.filter.queues.is_empty() || replay.filter.queues.iter().any(|w| w == q);
        let mut cands = Vec::new();
        if replay.ids.is_empty() {
            let queues = self.queues_or_all(&replay.filter.queues).await?;
            let dead = try_join_all(queues.iter().map(|q| {
                let mut cmd = redis::cmd("ZRANGE");
                cmd.arg(format!("{}done:dead", self.queue_prefix(q)))
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES");
                async move { self.query::<Vec<(String, f64)>>(&cmd, "replay dead jobs").await }
            }))
            .await?;
            for (q, jobs) in queues.iter().zip(dead) {
                cands.extend(jobs.into_iter().map(|(id, at)| (at, id, q.clone())));
            }
        } else {
            let located = self.locate(&replay.ids, "replay dead jobs").await?;
            for (id, q) in replay.ids.iter().zip(located) {
                if let Some(q) = q.filter(|q| wanted(q)) {
                    cands.push((0.0, id.to_string(), q));
                }
            }
            let scores = try_join_all(cands.iter().map(|(_, id, q)| {
                let mut cmd = redis::cmd("ZSCORE");
                cmd.arg(format!("{}done:dead", self.queue_prefix(q))).arg(id);
                async move { self.query::<Option<f64>>(&cmd, "replay dead jobs").await }
            }))
            .await?;
            cands = cands
                .into_iter()
                .zip(scores)
                .filter_map(|((_, id, q), at)| at.map(|at| (at, id, q)))
                .collect();
        }
        cands.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        Ok(cands)
    }
}

/// Jobs from script replies of one packed string per job (see [`packed_pairs`]).
pub(super) fn jobs_from(
    values: Vec<Value>,
    operation: &'static str,
    store: &RedisStore,
) -> Result<Vec<Job>, StoreError> {
    values
        .into_iter()
        .map(|v| {
            let bytes: Vec<u8> = redis::from_redis_value(v).map_err(|e| store.fail(operation)(e.into()))?;
            match packed_pairs(&bytes) {
                Some(pairs) => job_from_pairs(&pairs),
                None => Err(StoreError::query(KIND, operation, "a job reply that does not parse")),
            }
        })
        .collect()
}

/// The jobs a `cancel.lua` reply of mode 'F' names: id and previous status, pair by pair.
pub(super) fn cancelled_from(reply: &[String]) -> impl Iterator<Item = Cancelled> + '_ {
    reply.chunks_exact(2).map(|pair| Cancelled {
        id: JobId::from_stored(pair[0].clone()),
        previous: pair[1].parse().unwrap_or(JobStatus::Pending),
    })
}

/// The answers of a `cancel.lua` reply of mode 'I': id, status and what happened (`c` cancelled from
/// that status, `t` already terminal in it, `n` no such job), triple by triple.
pub(super) fn cancel_answers(reply: &[String]) -> impl Iterator<Item = CancelAnswer> + '_ {
    reply.chunks_exact(3).map(|t| {
        let id = JobId::from_stored(t[0].clone());
        let status = t[1].parse().unwrap_or(JobStatus::Pending);
        match t[2].as_str() {
            "c" => CancelAnswer::Cancelled(Cancelled { id, previous: status }),
            "t" => CancelAnswer::AlreadyTerminal { id, status },
            _ => CancelAnswer::NotFound(id),
        }
    })
}

/// The job an answer is about.
pub(super) fn answer_id(answer: &CancelAnswer) -> &str {
    match answer {
        CancelAnswer::Cancelled(c) => c.id.as_str(),
        CancelAnswer::AlreadyTerminal { id, .. } | CancelAnswer::NotFound(id) => id.as_str(),
    }
}

/// Adds the list arguments of a [`super::JobFilter`]-like call: count then items.
pub(super) fn push_list(cmd: &mut Cmd, items: &[impl redis::ToSingleRedisArg]) {
    cmd.arg(items.len()).arg(items);
}

pub(super) fn statuses(list: &[JobStatus]) -> Vec<&'static str> {
    list.iter().map(|s| s.as_str()).collect()
}

pub(super) fn opt_millis(at: Option<UnixMillis>) -> String {
    at.map(|t| t.0.to_string()).unwrap_or_default()
}

/// Progress as the scripts store it: JSON, or empty for none.
pub(super) fn progress_json(progress: Option<&crate::job::Progress>) -> String {
    progress
        .map(|p| serde_json::to_string(p).unwrap_or_default())
        .unwrap_or_default()
}

/// Adds a lease's id, attempt and worker.
pub(super) fn lease_args(cmd: &mut Cmd, lease: &Lease) {
    cmd.arg(lease.id.as_str()).arg(lease.attempt).arg(&lease.worker);
}

/// Adds one outcome of `finish.lua`: the lease, the kind and its value, the error entry, the progress.
pub(super) fn finish_args(cmd: &mut Cmd, finish: &Finish, now: UnixMillis) {
    lease_args(cmd, &finish.lease);
    let entry = |text: &str| error_entry(finish.lease.attempt, now, text);
    match &finish.outcome {
        Transition::Succeeded { result } => {
            cmd.arg("S").arg(result.as_ref().map(|r| r.get()).unwrap_or("")).arg("");
        }
        Transition::Retry {
            error,
            run_at,
            expires_at,
        } => {
            let value = match expires_at {
                Some(at) => format!("{};{}", run_key(*run_at), at.0),
                None => run_key(*run_at),
            };
            cmd.arg("R").arg(value).arg(entry(error));
        }
        Transition::Dead { error } => {
            cmd.arg("D").arg("").arg(entry(error));
        }
        Transition::Discarded { reason } => {
            cmd.arg("X").arg("").arg(entry(reason));
        }
        Transition::Cancelled { reason } => {
            cmd.arg("C").arg("").arg(entry(reason));
        }
        Transition::Waiting => {
            cmd.arg("W").arg("").arg("");
        }
        Transition::Snooze { run_at } => {
            cmd.arg("Z").arg(run_key(*run_at)).arg("");
        }
        // Only `finish_spawning.lua` takes this kind; `Store::finish` sends such outcomes there.
        Transition::AwaitChildren => {
            cmd.arg("A").arg("").arg("");
        }
    }
    cmd.arg(progress_json(finish.progress.as_ref()));
}
