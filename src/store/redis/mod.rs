//! RedisStore: jobs in a Redis 7 server or Redis Cluster (or anything that speaks its protocol and
//! runs its Lua).
//!
//! Every transition is one Lua script (`lua/*.lua`, each prefixed with `lua/common.lua`), so it is
//! atomic on the server and costs one round trip per batch: enqueue, claim, heartbeat, finish,
//! release, rescue, cancel, replay and cleanup each take any number of jobs of a queue in one call, and
//! the calls for several queues go out together. Scripts run by `EVALSHA`, sent in full when the
//! server (or cluster node) does not have them yet.
//!
//! Key layout, under a prefix (`jobq:` unless the URL says `?prefix=`). Everything of queue `q` starts
//! with `<prefix>{q}:`: the `{q}` hash tag puts a queue's jobs and indexes in one hash slot, so that
//! on a Redis Cluster every script runs on the one node that owns the queue, and queues spread over
//! the nodes.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{q}:job:<id>` | hash | the job, once (see [`codec`]) |
//! | `{q}:prios` | sorted set | the priorities that have pending jobs |
//! | `{q}:pend:<priority>` | sorted set (lexicographic) | pending jobs as `<run key>:<id>`: by run_at, then id |
//! | `{q}:run` | sorted set | running jobs by last heartbeat (rescue reads the stale end) |
//! | `{q}:wait` | sorted set | waiting jobs by finish time |
//! | `{q}:done:<status>` | sorted set | terminal jobs by finish time (cleanup and replay read it) |
//! | `{q}:uniq` | hash | unique key → the live job holding it |
//! | `{q}:wake` | stream | one entry per batch that made work ready (wake-ups) |
//! | `queues` | set | every queue that has jobs (cleanup takes out a queue it empties) |
//! | `workers`, `workers:seen` | hash, sorted set | the worker registry |
//! | `inbox:<q>` | list | items pushed by any client (see [`inbox`]) |
//! | `{<prefix>inbox:<q>}:processing`, `…:processing:<id>` | hash, lists | items being ingested |
//! | `{<prefix>inbox:<q>}:rejected` | list | inbox items that are not jobs, with the reason |
//! | `inbox-rejected` | set | queues that have rejected inbox items |
//! | `version` | string | the layout version |
//!
//! Pending jobs need no separate "scheduled" set: a priority's pending set is ordered by run_at, so the
//! jobs due at `now` are its prefix up to `<run key of now>;`, read with `ZRANGEBYLEX`, and a delayed
//! job becomes claimable by time alone.
//!
//! A job is found by its queue and id. Calls that carry a lease know the queue; calls by id alone
//! (`get`, cancel or replay by id) look for the id in every queue of the `queues` set, so on Redis a
//! job id is unique within its queue.
//!
//! A worker serving several queues whose slots differ (only on a cluster) first asks each slot for the
//! jobs it would hand out, then claims from each as many as it has of the best ones overall: the same
//! order as one call on a single server, in two round trips.
//!
//! URL: `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS), plus jobq's own options,
//! removed before the driver sees the URL: `prefix=TEXT` (default `jobq:`), `connect_timeout=SECS`
//! (default 5) and `inbox_default_type=TYPE` (what a non-envelope inbox item becomes). A URL naming
//! any node of a Redis Cluster connects to the whole cluster: jobq asks the server whether it is one.

mod codec;
mod connection;
pub mod inbox;
mod scripts;
mod subscribe;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::try_join_all;
use redis::{Client, Cmd, FromRedisValue, Value};
use tokio::sync::Notify;

use self::codec::{error_entry, job_from_pairs, packed_pairs, run_key};
use self::connection::{Conn, Connector};
use self::scripts::{Lua, SCRIPTS};
use super::error::DriverError;
use super::url::positive_duration_option;
use super::{
    Cancel, CancelTarget, Cancelled, Claim, Cleanup, Enqueued, Finish, Heartbeat, Lease, LeaseState, ListParams,
    Outcome, QueueStats, ReplayDead, Rescue, Rescued, Stats, StatsParams, Store, StoreError, StoreInfo, StoreKind,
    StoreUrl, Subscription, WorkerInfo,
};
use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Redis;

/// The key prefix unless the URL says otherwise.
pub const DEFAULT_PREFIX: &str = "jobq:";

/// The key layout version this build writes; `migrate` records it and refuses any other.
const LAYOUT_VERSION: u32 = 2;

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Jobs per enqueue script: a larger batch is split into calls of this many, sent back to back
/// (500, 1,000, 2,000 and 5,000 measured within noise of each other, 2,000 and 5,000 a little lower).
const ENQUEUE_CHUNK: usize = 1_000;

/// Jobs one cancel-by-filter script reads at most, when every job it reads matches (a status and
/// queue filter): about 20 ms of Redis's time on the development machine, where 10,000 took 93 to
/// 106 ms.
const CANCEL_CHUNK: usize = 2_000;

/// Longest a command may wait for its answer: a list or cancel over a very large store is the slowest.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a `redis://` URL says, jobq's own options taken out.
#[derive(Debug, Clone)]
struct Settings {
    /// The URL for the driver, password included.
    driver_url: String,
    prefix: String,
    connect_timeout: Duration,
    inbox_default_type: Option<String>,
}

impl Settings {
    fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: url.redacted().to_string(),
            reason,
        };
        let mut parsed = url::Url::parse(url.expose()).map_err(|e| invalid(e.to_string()))?;
        let mut prefix = DEFAULT_PREFIX.to_string();
        let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
        let mut inbox_default_type = None;
        let mut passed_on: Vec<(String, String)> = Vec::new();
        for (key, value) in parsed.query_pairs() {
            match key.as_ref() {
                "prefix" => {
                    if value.is_empty()
                        || value.len() > 64
                        || value.contains(['{', '}'])
                        || value.contains(char::is_whitespace)
                    {
                        return Err(invalid(format!(
                            "prefix={value:?} (expected 1 to 64 characters without spaces or braces)"
                        )));
                    }
                    prefix = value.into_owned();
                }
                "connect_timeout" => {
                    connect_timeout = positive_duration_option("connect_timeout", &value).map_err(invalid)?;
                }
                "inbox_default_type" => {
                    crate::job::validate_type(&value).map_err(|e| invalid(format!("inbox_default_type: {e}")))?;
                    inbox_default_type = Some(value.into_owned());
                }
                _ => passed_on.push((key.into_owned(), value.into_owned())),
            }
        }
        if passed_on.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&passed_on);
        }
        Ok(Settings {
            driver_url: parsed.to_string(),
            prefix,
            connect_timeout,
            inbox_default_type,
        })
    }
}

/// The Redis store.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    connector: Connector,
    url: StoreUrl,
    settings: Arc<Settings>,
}

/// Written by hand: the client holds the password.
impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url.redacted())
            .field("prefix", &self.settings.prefix)
            .field("cluster", &self.connector.is_cluster())
            .finish_non_exhaustive()
    }
}

/// True for driver errors that mean the server cannot be reached rather than refusing a request.
fn is_unreachable(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_refusal() || e.is_connection_dropped() || e.is_timeout()
}

fn is_noscript(e: &redis::RedisError) -> bool {
    e.code() == Some("NOSCRIPT")
}

/// The positions of `items` grouped by queue, queues in order of first appearance.
fn by_queue<'a, T>(items: &'a [T], queue: impl Fn(&'a T) -> &'a str) -> Vec<(&'a str, Vec<usize>)> {
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
fn in_input_order<R>(len: usize, groups: &[(&str, Vec<usize>)], answers: Vec<Vec<R>>) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..len).map(|_| None).collect();
    for ((_, positions), answers) in groups.iter().zip(answers) {
        for (&n, answer) in positions.iter().zip(answers) {
            out[n] = Some(answer);
        }
    }
    out.into_iter().flatten().collect()
}

impl RedisStore {
    /// Connects to the server a `redis://` or `rediss://` URL names (and to its whole cluster when it is
    /// a cluster node) and checks that it answers.
    pub async fn connect(url: &StoreUrl) -> Result<RedisStore, StoreError> {
        let settings = Settings::parse(url)?;
        if let Err(e) = Client::open(settings.driver_url.as_str()) {
            return Err(StoreError::InvalidUrl {
                url: url.redacted().to_string(),
                reason: DriverError::deepest(&e).to_string(),
            });
        }
        let (conn, connector) = Connector::open(&settings.driver_url, settings.connect_timeout, RESPONSE_TIMEOUT)
            .await
            .map_err(|e| StoreError::unavailable(KIND, &url.redacted(), &e))?;
        Ok(RedisStore {
            conn,
            connector,
            url: url.clone(),
            settings: Arc::new(settings),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.settings.prefix
    }

    /// Whether the URL named a node of a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.connector.is_cluster()
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.settings.prefix)
    }

    /// The start of every key of a queue: the prefix and the queue as hash tag.
    fn queue_prefix(&self, queue: &str) -> String {
        format!("{}{{{queue}}}:", self.settings.prefix)
    }

    fn fail(&self, operation: &'static str) -> impl Fn(redis::RedisError) -> StoreError + '_ {
        move |e| {
            if is_unreachable(&e) {
                StoreError::unavailable(KIND, &self.url.redacted(), &e)
            } else {
                StoreError::query(KIND, operation, DriverError::deepest(&e))
            }
        }
    }

    /// An `EVALSHA` of `lua` over `keys` (which route it to its node); the caller adds the arguments.
    fn script(&self, lua: &Lua, keys: &[String]) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(lua.sha()).arg(keys.len()).arg(keys);
        cmd
    }

    /// An `EVALSHA` of `lua` over one queue's keys.
    fn queue_script(&self, lua: &Lua, queue: &str) -> Cmd {
        self.script(lua, &[self.queue_prefix(queue)])
    }

    /// Runs a script command, sending the script's text when the server does not have it. With
    /// `retry`, a call cut off by a dropped connection is sent once more on the new one: for calls
    /// whose repeat is harmless (reads, and fenced writes that a repeat finds already done).
    async fn eval<T: FromRedisValue>(
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
    async fn query<T: FromRedisValue>(&self, cmd: &Cmd, operation: &'static str) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        match cmd.query_async::<T>(&mut conn).await {
            Err(e) if e.is_connection_dropped() || e.is_io_error() => {
                cmd.query_async::<T>(&mut conn).await.map_err(self.fail(operation))
            }
            other => other.map_err(self.fail(operation)),
        }
    }

    /// One section of `INFO`: the server's, or on a cluster the first node's (a cluster client asks
    /// every node and answers with a map from node to text).
    async fn info_section(&self, section: &str) -> Result<String, StoreError> {
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
    async fn known_queues(&self) -> Result<Vec<String>, StoreError> {
        let mut queues: Vec<String> = self
            .query(redis::cmd("SMEMBERS").arg(self.key("queues")), "list queues")
            .await?;
        queues.sort();
        Ok(queues)
    }

    /// Takes a queue that cleanup left without jobs out of the registry, and puts it back if a job
    /// arrived meanwhile. An enqueue registers its queue after its script has run (see `enqueue`), so
    /// whichever order the two calls meet in, a queue with jobs ends up registered.
    async fn forget_queue(&self, queue: &str) -> Result<(), StoreError> {
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

    /// What one queue holds, by status, as of `now` (which splits pending into ready and scheduled):
    /// one `stats.lua` call, for `stats` itself and for the calls that need a queue's size.
    async fn queue_stats(
        &self,
        queue: &str,
        now: UnixMillis,
        operation: &'static str,
    ) -> Result<QueueStats, StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.stats, queue);
        cmd.arg(run_key(now));
        let (ready, scheduled, running, waiting, succeeded, dead, cancelled, discarded, oldest): (
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
            ready,
            scheduled,
            running,
            waiting,
            succeeded,
            dead,
            cancelled,
            discarded,
            oldest_ready_at: codec::from_run_key(&oldest),
        })
    }

    /// The queues a call names, or every queue when it names none.
    async fn queues_or_all(&self, queues: &[String]) -> Result<Vec<String>, StoreError> {
        if queues.is_empty() {
            self.known_queues().await
        } else {
            Ok(queues.to_vec())
        }
    }

    /// The queue of each job id, `None` for an id no queue has: the job is looked for in every queue.
    async fn locate(&self, ids: &[JobId], operation: &'static str) -> Result<Vec<Option<String>>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let queues = self.known_queues().await?;
        let probes = ids.iter().flat_map(|id| {
            queues.iter().map(move |q| {
                let mut cmd = redis::cmd("EXISTS");
                cmd.arg(format!("{}job:{id}", self.queue_prefix(q)));
                async move { self.query::<bool>(&cmd, operation).await }
            })
        });
        let found = try_join_all(probes).await?;
        Ok(ids
            .iter()
            .enumerate()
            .map(|(n, _)| {
                let row = &found[n * queues.len()..(n + 1) * queues.len()];
                row.iter().position(|&hit| hit).map(|q| queues[q].clone())
            })
            .collect())
    }

    /// Groups queues that one script may serve together: all of them on a single server, those that
    /// share a hash slot on a cluster.
    fn slot_groups<'a>(&self, queues: &'a [String]) -> Vec<Vec<&'a String>> {
        if !self.is_cluster() {
            return vec![queues.iter().collect()];
        }
        let mut groups: Vec<(u16, Vec<&String>)> = Vec::new();
        for q in queues {
            let s = connection::slot(q);
            match groups.iter_mut().find(|(slot, _)| *slot == s) {
                Some((_, group)) => group.push(q),
                None => groups.push((s, vec![q])),
            }
        }
        groups.into_iter().map(|(_, group)| group).collect()
    }

    fn claim_cmd(&self, queues: &[&String], claim: &Claim, limit: u32, peek: bool) -> Cmd {
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
    async fn claim_from(&self, queues: &[&String], claim: &Claim, limit: u32) -> Result<Vec<Job>, StoreError> {
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
    async fn claim_jobs(&self, claim: &Claim, limit: u32) -> Result<Vec<Job>, StoreError> {
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
        jobs.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
        Ok(jobs)
    }

    /// How many inbox items wait in the queues' inboxes, or sit in processing lists (perhaps of an
    /// ingester that died, which an ingest takes over).
    async fn inbox_waiting(&self, queues: &[String]) -> Result<u64, StoreError> {
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

    /// Runs one call per queue of a batch, all sent at once, and answers in the batch's order.
    async fn per_queue<'a, T, R>(
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
    async fn cancel_in_queue(
        &self,
        queue: &str,
        f: &super::JobFilter,
        now: UnixMillis,
    ) -> Result<Vec<Cancelled>, StoreError> {
        let chunked = f.job_types.is_empty() && f.created_since.is_none() && f.created_until.is_none();
        let mut calls_left = if chunked {
            let s = self.queue_stats(queue, now, "cancel").await?;
            let live = s.ready + s.scheduled + s.running + s.waiting;
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
    async fn replay_candidates(&self, replay: &ReplayDead) -> Result<Vec<(f64, String, String)>, StoreError> {
        let wanted = |q: &str| replay.queues.is_empty() || replay.queues.iter().any(|w| w == q);
        let mut cands = Vec::new();
        if replay.ids.is_empty() {
            let queues = self.queues_or_all(&replay.queues).await?;
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
fn jobs_from(values: Vec<Value>, operation: &'static str, store: &RedisStore) -> Result<Vec<Job>, StoreError> {
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

/// The jobs a `cancel.lua` reply names: id and previous status, pair by pair.
fn cancelled_from(reply: &[String]) -> impl Iterator<Item = Cancelled> + '_ {
    reply.chunks_exact(2).map(|pair| Cancelled {
        id: JobId::from_stored(pair[0].clone()),
        previous: pair[1].parse().unwrap_or(JobStatus::Pending),
    })
}

/// Adds the list arguments of a [`super::JobFilter`]-like call: count then items.
fn push_list(cmd: &mut Cmd, items: &[impl redis::ToSingleRedisArg]) {
    cmd.arg(items.len()).arg(items);
}

fn statuses(list: &[JobStatus]) -> Vec<&'static str> {
    list.iter().map(|s| s.as_str()).collect()
}

fn opt_millis(at: Option<UnixMillis>) -> String {
    at.map(|t| t.0.to_string()).unwrap_or_default()
}

#[async_trait]
impl Store for RedisStore {
    fn kind(&self) -> StoreKind {
        KIND
    }

    fn schema_version(&self) -> u32 {
        LAYOUT_VERSION
    }

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let text = self.info_section("server").await?;
        let persistence = self.info_section("persistence").await?;
        let memory = self.info_section("memory").await?;
        let field = |text: &str, name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        Ok(StoreInfo {
            kind: KIND,
            url: self.url.redacted().to_string(),
            version: field(&text, "redis_version"),
            settings: vec![
                ("prefix".into(), self.settings.prefix.clone()),
                ("cluster".into(), if self.is_cluster() { "yes" } else { "no" }.into()),
                ("appendonly".into(), field(&persistence, "aof_enabled")),
                ("rdb_last_save_time".into(), field(&persistence, "rdb_last_save_time")),
                ("maxmemory_policy".into(), field(&memory, "maxmemory_policy")),
            ],
        })
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let key = self.key("version");
        let _: () = self
            .query(redis::cmd("SET").arg(&key).arg(LAYOUT_VERSION).arg("NX"), "migrate")
            .await?;
        let found: u32 = self.query(redis::cmd("GET").arg(&key), "migrate").await?;
        if found > LAYOUT_VERSION {
            return Err(StoreError::SchemaTooNew {
                kind: KIND,
                found,
                known: LAYOUT_VERSION,
            });
        }
        if found < LAYOUT_VERSION {
            return Err(StoreError::query(
                KIND,
                "migrate",
                format!(
                    "the keys under {:?} have layout {found}, written by an earlier jobq build, which kept \
                     job hashes outside their queue's hash slot; drain them with that build, or use another \
                     prefix",
                    self.settings.prefix
                ),
            ));
        }
        // Scripts are sent in full the first time a server (or cluster node) lacks them; loading them
        // here saves a single server that round trip.
        if let Conn::Managed(conn) = &self.conn {
            let mut conn = Conn::Managed(conn.clone());
            for lua in SCRIPTS.all() {
                lua.load(&mut conn).await.map_err(self.fail("migrate"))?;
            }
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let groups = by_queue(jobs, |j| j.queue.as_str());
        // The queue registry is written by a command of its own, not by the scripts: it is a key of no
        // queue's slot.
        let mut register = redis::cmd("SADD");
        register.arg(self.key("queues"));
        for (q, _) in &groups {
            register.arg(*q);
        }
        let registered = self.query::<()>(&register, "enqueue");
        // A large batch goes as several calls, sent back to back on one connection: Redis runs them in
        // order (so the first of two equal ids or unique keys still wins) and serves other clients in
        // between, and jobq encodes each call while Redis runs the one before.
        let chunks: Vec<(usize, Vec<&NewJob>)> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, (_, positions))| {
                positions
                    .chunks(ENQUEUE_CHUNK)
                    .map(move |chunk| (g, chunk.iter().map(|&n| &jobs[n]).collect()))
            })
            .collect();
        let calls = chunks.iter().map(|(g, members)| {
            let queue = groups[*g].0;
            async move {
                let mut cmd = self.queue_script(&SCRIPTS.enqueue, queue);
                scripts::enqueue_args(&mut cmd, members);
                let reply: Value = self.eval(&SCRIPTS.enqueue, &cmd, "enqueue", false).await?;
                scripts::enqueued(members, reply)
            }
        });
        // The queue is registered after its jobs are written, never before (see `forget_queue`): on
        // one connection Redis runs commands in the order they were sent, and the registration is
        // polled, so sent, after the scripts; a cluster may run them on other nodes, so it waits.
        let answers = if self.is_cluster() {
            let answers = try_join_all(calls).await?;
            registered.await?;
            answers
        } else {
            tokio::try_join!(try_join_all(calls), registered)?.0
        };
        let mut per_group: Vec<Vec<Enqueued>> = groups.iter().map(|_| Vec::new()).collect();
        for ((g, _), answer) in chunks.iter().zip(answers) {
            per_group[*g].extend(answer);
        }
        Ok(in_input_order(jobs.len(), &groups, per_group))
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.limit == 0 || claim.queues.is_empty() {
            return Ok(Vec::new());
        }
        let (mut jobs, waiting) =
            tokio::try_join!(self.claim_jobs(claim, claim.limit), self.inbox_waiting(&claim.queues))?;
        if waiting > 0 {
            match self.ingest(&claim.queues, &claim.worker, claim.now).await {
                Ok(0) => {}
                Ok(_) if (jobs.len() as u32) < claim.limit => {
                    let more = self.claim_jobs(claim, claim.limit - jobs.len() as u32).await?;
                    jobs.extend(more);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("ingesting the inbox failed: {e}"),
            }
        }
        Ok(jobs)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        let answers: Vec<u8> = self
            .per_queue(
                beats,
                |b| b.lease.queue.as_str(),
                &SCRIPTS.heartbeat,
                "heartbeat",
                true,
                |cmd, beats| {
                    cmd.arg(now.0).arg(beats.len());
                    for beat in beats {
                        lease_args(cmd, &beat.lease);
                        cmd.arg(progress_json(beat.progress.as_ref()));
                    }
                },
            )
            .await?;
        Ok(answers
            .into_iter()
            .map(|r| match r {
                0 => LeaseState::Held,
                1 => LeaseState::Cancelled,
                _ => LeaseState::Lost,
            })
            .collect())
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let answers: Vec<u8> = self
            .per_queue(
                finishes,
                |f| f.lease.queue.as_str(),
                &SCRIPTS.finish,
                "finish",
                true,
                |cmd, finishes| {
                    cmd.arg(now.0).arg(finishes.len());
                    for finish in finishes {
                        finish_args(cmd, finish, now);
                    }
                },
            )
            .await?;
        Ok(answers.into_iter().map(|r| r == 1).collect())
    }

    async fn release(&self, leases: &[Lease], _now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        let answers: Vec<u8> = self
            .per_queue(
                leases,
                |l| l.queue.as_str(),
                &SCRIPTS.release,
                "release",
                true,
                |cmd, leases| {
                    cmd.arg(leases.len());
                    for lease in leases {
                        lease_args(cmd, lease);
                    }
                },
            )
            .await?;
        Ok(answers.into_iter().map(|r| r == 1).collect())
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        // First a cheap count per queue, all at once; then a script for each queue that has stale jobs.
        let queues = self.known_queues().await?;
        let stale = try_join_all(queues.iter().map(|q| {
            let mut cmd = redis::cmd("ZCOUNT");
            cmd.arg(format!("{}run", self.queue_prefix(q)))
                .arg("-inf")
                .arg(format!("({}", rescue.stale_before.0));
            async move { self.query::<u64>(&cmd, "rescue").await }
        }))
        .await?;
        let mut out = Vec::new();
        for (q, _) in queues.iter().zip(stale).filter(|(_, n)| *n > 0) {
            let left = rescue.limit.saturating_sub(out.len() as u32);
            if left == 0 {
                break;
            }
            let mut cmd = self.queue_script(&SCRIPTS.rescue, q);
            cmd.arg(rescue.stale_before.0)
                .arg(run_key(rescue.now))
                .arg(rescue.now.0)
                .arg(left);
            let reply: Vec<(String, String, u32, String)> = self.eval(&SCRIPTS.rescue, &cmd, "rescue", false).await?;
            out.extend(reply.into_iter().map(|(id, job_type, attempt, status)| Rescued {
                id: JobId::from_stored(id),
                job_type,
                attempt,
                status: status.parse().unwrap_or(JobStatus::Pending),
            }));
        }
        Ok(out)
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let Some(queue) = self.locate(std::slice::from_ref(id), "get").await?.remove(0) else {
            return Ok(None);
        };
        let key = format!("{}job:{id}", self.queue_prefix(&queue));
        let fields: Vec<String> = self.query(redis::cmd("HGETALL").arg(key), "get").await?;
        if fields.is_empty() {
            return Ok(None);
        }
        // The hash holds neither its queue nor its id: the key names them.
        let mut pairs: Vec<(&str, &str)> = fields.chunks_exact(2).map(|f| (f[0].as_str(), f[1].as_str())).collect();
        pairs.extend([("q", queue.as_str()), ("id", id.as_str())]);
        job_from_pairs(&pairs).map(Some)
    }

    async fn list(&self, params: &ListParams) -> Result<Vec<Job>, StoreError> {
        let f = &params.filter;
        let queues = self.queues_or_all(&f.queues).await?;
        // Each queue answers its newest `offset + limit`; the page is cut from all of them merged.
        let most = params.offset.saturating_add(u64::from(params.limit));
        let replies = try_join_all(queues.iter().map(|q| {
            let mut cmd = self.queue_script(&SCRIPTS.list, q);
            cmd.arg(most)
                .arg(opt_millis(f.created_since))
                .arg(opt_millis(f.created_until));
            push_list(&mut cmd, &f.job_types);
            push_list(&mut cmd, &statuses(&f.statuses));
            async move { self.eval::<Vec<Value>>(&SCRIPTS.list, &cmd, "list", true).await }
        }))
        .await?;
        let mut jobs = Vec::new();
        for reply in replies {
            jobs.extend(jobs_from(reply, "list", self)?);
        }
        jobs.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        Ok(jobs
            .into_iter()
            .skip(params.offset as usize)
            .take(params.limit as usize)
            .collect())
    }

    async fn stats(&self, params: &StatsParams) -> Result<Stats, StoreError> {
        let queues = self.queues_or_all(&params.queues).await?;
        let mut queues: Vec<QueueStats> = try_join_all(queues.iter().map(|q| self.queue_stats(q, params.now, "stats")))
            .await?
            .into_iter()
            // Only queues that have jobs.
            .filter(|s| s.total() > 0)
            .collect();
        queues.sort_by(|a, b| a.queue.cmp(&b.queue));
        queues.dedup_by(|a, b| a.queue == b.queue);
        Ok(Stats { queues })
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, StoreError> {
        let calls: Vec<Cmd> = match &cancel.target {
            CancelTarget::Ids(ids) => {
                let located = self.locate(ids, "cancel").await?;
                let found: Vec<(&JobId, String)> = ids
                    .iter()
                    .zip(located)
                    .filter_map(|(id, q)| q.map(|q| (id, q)))
                    .collect();
                by_queue(&found, |(_, q)| q.as_str())
                    .into_iter()
                    .map(|(q, positions)| {
                        let mut cmd = self.queue_script(&SCRIPTS.cancel, q);
                        cmd.arg(cancel.now.0).arg("I").arg(positions.len());
                        for n in positions {
                            cmd.arg(found[n].0.as_str());
                        }
                        cmd
                    })
                    .collect()
            }
            CancelTarget::Filter(f) => {
                let queues = self.queues_or_all(&f.queues).await?;
                let cancelled = try_join_all(queues.iter().map(|q| self.cancel_in_queue(q, f, cancel.now))).await?;
                return Ok(cancelled.into_iter().flatten().collect());
            }
        };
        let replies = try_join_all(
            calls
                .iter()
                .map(|cmd| self.eval::<Vec<String>>(&SCRIPTS.cancel, cmd, "cancel", false)),
        )
        .await?;
        Ok(replies.iter().flat_map(|reply| cancelled_from(reply)).collect())
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<JobId>, StoreError> {
        if replay.ids.is_empty() && replay.limit.is_none() {
            // Every dead job of the queues: each queue's script reads its own dead set, all at once.
            let queues = self.queues_or_all(&replay.queues).await?;
            let replies = try_join_all(queues.iter().map(|q| {
                let mut cmd = self.queue_script(&SCRIPTS.replay, q);
                cmd.arg(run_key(replay.now)).arg("");
                push_list(&mut cmd, &replay.job_types);
                cmd.arg(0);
                async move {
                    self.eval::<Vec<String>>(&SCRIPTS.replay, &cmd, "replay dead jobs", false)
                        .await
                }
            }))
            .await?;
            return Ok(replies.into_iter().flatten().map(JobId::from_stored).collect());
        }
        // Oldest death first across queues: each run of candidates of one queue is one script, which
        // checks each again (type, unique key) and replays up to what the limit leaves.
        let cands = self.replay_candidates(replay).await?;
        let mut out = Vec::new();
        let mut start = 0;
        while start < cands.len() {
            let left = replay.limit.map(|l| l.saturating_sub(out.len() as u32));
            if left == Some(0) {
                break;
            }
            let queue = &cands[start].2;
            let end = start + cands[start..].iter().take_while(|c| &c.2 == queue).count();
            let mut cmd = self.queue_script(&SCRIPTS.replay, queue);
            cmd.arg(run_key(replay.now))
                .arg(left.map(|l| l.to_string()).unwrap_or_default());
            push_list(&mut cmd, &replay.job_types);
            cmd.arg(end - start);
            for c in &cands[start..end] {
                cmd.arg(&c.1);
            }
            let ids: Vec<String> = self.eval(&SCRIPTS.replay, &cmd, "replay dead jobs", false).await?;
            out.extend(ids.into_iter().map(JobId::from_stored));
            start = end;
        }
        Ok(out)
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let wanted: Vec<&str> = cleanup
            .statuses
            .iter()
            .filter(|s| s.is_terminal())
            .map(|s| s.as_str())
            .collect();
        if !cleanup.statuses.is_empty() && wanted.is_empty() {
            return Ok(0);
        }
        let mut count = 0u64;
        for q in self.queues_or_all(&cleanup.queues).await? {
            let left = u64::from(cleanup.limit).saturating_sub(count);
            if left == 0 {
                break;
            }
            let mut cmd = self.queue_script(&SCRIPTS.cleanup, &q);
            cmd.arg(opt_millis(cleanup.finished_before))
                .arg(left)
                .arg(if cleanup.dry_run { "1" } else { "0" });
            push_list(&mut cmd, &wanted);
            let (removed, emptied): (u64, bool) = self.eval(&SCRIPTS.cleanup, &cmd, "cleanup", true).await?;
            count += removed;
            if emptied {
                self.forget_queue(&q).await?;
            }
        }
        Ok(count)
    }

    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        let record = serde_json::to_string(worker).map_err(|e| StoreError::query(KIND, "register worker", e))?;
        // Two keys of different slots on a cluster, so two commands, sent together: `workers` reads a
        // record only for an id seen recently, and skips an id without one.
        let mut info = redis::cmd("HSET");
        info.arg(self.key("workers")).arg(&worker.id).arg(record);
        let mut seen = redis::cmd("ZADD");
        seen.arg(self.key("workers:seen"))
            .arg(worker.last_seen_at.0)
            .arg(&worker.id);
        tokio::try_join!(
            self.query::<()>(&info, "register worker"),
            self.query::<()>(&seen, "register worker")
        )
        .map(|_| ())
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        let mut seen = redis::cmd("ZREM");
        seen.arg(self.key("workers:seen")).arg(id);
        let mut info = redis::cmd("HDEL");
        info.arg(self.key("workers")).arg(id);
        tokio::try_join!(
            self.query::<()>(&seen, "unregister worker"),
            self.query::<()>(&info, "unregister worker")
        )
        .map(|_| ())
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        let seen = self.key("workers:seen");
        let gone: Vec<String> = self
            .query(
                redis::cmd("ZRANGE")
                    .arg(&seen)
                    .arg("-inf")
                    .arg(format!("({}", seen_since.0))
                    .arg("BYSCORE"),
                "list workers",
            )
            .await?;
        if !gone.is_empty() {
            // Forgotten: their records first, so that no record outlives its last-seen entry.
            let _: () = self
                .query(redis::cmd("HDEL").arg(self.key("workers")).arg(&gone), "list workers")
                .await?;
            let _: () = self
                .query(redis::cmd("ZREM").arg(&seen).arg(&gone), "list workers")
                .await?;
        }
        let ids: Vec<String> = self
            .query(
                redis::cmd("ZRANGE")
                    .arg(&seen)
                    .arg(seen_since.0)
                    .arg("+inf")
                    .arg("BYSCORE"),
                "list workers",
            )
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let records: Vec<Option<String>> = self
            .query(redis::cmd("HMGET").arg(self.key("workers")).arg(&ids), "list workers")
            .await?;
        records
            .iter()
            .flatten()
            .map(|r| {
                scripts::worker_from_json(r).map_err(|e| StoreError::Corrupt {
                    kind: KIND,
                    id: "worker registry".into(),
                    reason: e.to_string(),
                })
            })
            .collect()
    }

    fn subscribe(&self, queues: &[String], notify: Arc<Notify>) -> Option<Subscription> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let listener = subscribe::Listener::new(self, queues);
        Some(Subscription::new(runtime.spawn(listener.run(notify))))
    }
}

/// Progress as the scripts store it: JSON, or empty for none.
fn progress_json(progress: Option<&crate::job::Progress>) -> String {
    progress
        .map(|p| serde_json::to_string(p).unwrap_or_default())
        .unwrap_or_default()
}

/// Adds a lease's id, attempt and worker.
fn lease_args(cmd: &mut Cmd, lease: &Lease) {
    cmd.arg(lease.id.as_str()).arg(lease.attempt).arg(&lease.worker);
}

/// Adds one outcome of `finish.lua`: the lease, the kind and its value, the error entry, the progress.
fn finish_args(cmd: &mut Cmd, finish: &Finish, now: UnixMillis) {
    lease_args(cmd, &finish.lease);
    let entry = |text: &str| error_entry(finish.lease.attempt, now, text);
    match &finish.outcome {
        Outcome::Succeeded { result } => {
            cmd.arg("S").arg(result.as_ref().map(|r| r.get()).unwrap_or("")).arg("");
        }
        Outcome::Retry { error, run_at } => {
            cmd.arg("R").arg(run_key(*run_at)).arg(entry(error));
        }
        Outcome::Dead { error } => {
            cmd.arg("D").arg("").arg(entry(error));
        }
        Outcome::Discarded { reason } => {
            cmd.arg("X").arg("").arg(entry(reason));
        }
        Outcome::Waiting => {
            cmd.arg("W").arg("").arg("");
        }
    }
    cmd.arg(progress_json(finish.progress.as_ref()));
}
