//! RedisStore: jobs in a Redis 7 server or Redis Cluster (or anything that speaks its protocol and
//! runs its Lua).
//!
//! Every transition is one Lua script (`lua/*.lua`, each prefixed with `lua/common.lua`), so it is
//! atomic on the server and costs one round trip per batch: enqueue, claim, heartbeat, finish,
//! release, rescue, cancel, replay, and cleanup, resolve, delete and retry (`manage.rs`) each take any
//! number of jobs of a queue in one call, and the calls for several queues go out together. Scripts run
//! by `EVALSHA`, sent in full when the server (or cluster node) does not have them yet.
//!
//! Key layout, under a prefix (`jobq:` unless the URL says `?prefix=`). Everything of queue `q` starts
//! with `<prefix>{q}:`: the `{q}` hash tag puts a queue's jobs and indexes in one hash slot, so that
//! on a Redis Cluster every script runs on the one node that owns the queue, and queues spread over
//! the nodes.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `{q}:job:<id>` | hash | the job, once (see `codec.rs`) |
//! | `{q}:prios` | sorted set | the priorities that have pending jobs |
//! | `{q}:pend:<priority>` | sorted set (lexicographic) | pending jobs as `<run key>:<id>`: by run_at, then id |
//! | `{q}:blocked` | sorted set | blocked jobs (waiting for others to end) by creation time; since layout 4 |
//! | `{q}:after:<id>`, `{q}:dependents:<id>` | hashes | a job's dependency edges, from its side and from its dependency's (see `dependencies.rs`) |
//! | `{q}:run` | sorted set | running jobs by last heartbeat (rescue reads the stale end) |
//! | `{q}:wait` | sorted set | waiting jobs by finish time |
//! | `{q}:done:<status>` | sorted set | terminal jobs by finish time (cleanup and replay read it) |
//! | `{q}:made` | sorted set | every job by creation time, so same-time jobs by id: list order (`lua/list.lua`); since layout 3 |
//! | `{q}:uniq` | hash | unique key → the live job holding it |
//! | `{q}:wake` | stream | one entry per batch that made work ready (wake-ups) |
//! | `{q}:sched:<name>` | hash | a schedule whose jobs go to `q`: its record (see `lua/schedules.lua`) |
//! | `{q}:listed` | string | on a cluster: the queue is in `queues` (a marker that expires after a minute; see `enqueue.lua`) |
//! | `queues` | set | every queue that has jobs (cleanup takes out a queue it empties) |
//! | `workers`, `workers:seen` | hash, sorted set | the worker registry |
//! | `inbox:<q>` | list | items pushed by any client (see [`inbox`]) |
//! | `{<prefix>inbox:<q>}:processing`, `…:processing:<id>` | hash, lists | items being ingested |
//! | `{<prefix>inbox:<q>}:rejected` | list | inbox items that are not jobs, with the reason |
//! | `events` | list | events pushed by any client (see `events.rs`) |
//! | `{<prefix>events}:processing`, `…:processing:<id>`, `…:rejected` | hash, lists | events being expanded, items that are not events |
//! | `event:<id>` | string | an emitted event's record (its name); on a cluster `{<prefix>events}:emitted:event:<id>`, and `{q}:event:<id>` per hash slot of its queues |
//! | `inbox-rejected` | set | queues that have rejected inbox items |
//! | `version` | string | the layout version |
//!
//! Pending jobs need no separate "scheduled" set: a priority's pending set is ordered by run_at, so the
//! jobs due at `now` are its prefix up to `<run key of now>;`, read with `ZRANGEBYLEX`, and a delayed
//! job becomes claimable by time alone.
//!
//! A job is found by its queue and id. Calls that carry a lease know the queue; calls by id alone
//! (`get`, cancel or replay by id) look for the id in every queue of the `queues` set, so on Redis a
//! job id is unique within its queue. On a single server `get` does that inside one script
//! (`get.lua`, which a cluster would refuse: the keys it reads depend on what it read).
//!
//! A worker serving several queues whose slots differ (only on a cluster) first asks each slot for the
//! jobs it would hand out, then claims from each as many as it has of the best ones overall: the same
//! order as one call on a single server, in two round trips.
//!
//! URL: `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS), plus jobq's own options,
//! removed before the driver sees the URL: `prefix=TEXT` (default `jobq:`), `connect_timeout=SECS`
//! (default 5) and `inbox_default_type=TYPE` (what a non-envelope inbox item becomes). A URL naming
//! any node of a Redis Cluster connects to the whole cluster: jobq asks the server whether it is one.

mod calls;
mod codec;
mod connection;
mod dependencies;
mod events;
mod flow;
mod health;
pub mod inbox;
mod manage;
mod outbox;
mod schedules;
mod scripts;
mod settings;
mod subscribe;
mod transfer;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::try_join_all;
use redis::{Client, Value};
use tokio::sync::Notify;

use self::calls::{
    answer_id, by_queue, cancel_answers, finish_args, in_input_order, jobs_from, lease_args, opt_millis, progress_json,
    push_list, statuses,
};
use self::codec::{job_from_pairs, packed_pairs, run_key};
use self::connection::{Conn, Connector};
use self::scripts::SCRIPTS;
pub use self::settings::DEFAULT_PREFIX;
use self::settings::Settings;
use super::batch::finish_spawning_apart;
use super::error::DriverError;
use super::{
    Block, Cancel, CancelAnswer, CancelTarget, Claim, ClaimPlan, Cleanup, Delete, DeleteAnswer, DeleteMatching,
    DeletedCount, Emit, EmitOutcome, Enqueued, ExpandEvents, Expire, Finding, Finish, FinishedAndClaimed,
    FinishedCount, FlowState, Health, Heartbeat, Import, ImportAnswer, ImportEdges, JobEdges, Lease, LeaseState, List,
    Load, OftenRescued, QueueLoad, QueueStats, ReadEdges, RecordLimits, RecordedLimit, RejectedInbox, RejectedItem,
    ReplayDead, Rescue, Rescued, Resolve, ResolveAnswer, Retry, RetryAnswer, ScheduleKey, ScheduleState, SetPaused,
    SetSchedulePaused, Stats, StatsReport, Store, StoreError, StoreInfo, StoreKind, StoreUrl, Subscription, Throughput,
    Tick, TickOutcome, WakeOn, WorkerInfo,
};
use crate::job::{Job, JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Redis;

/// The key layout version this build writes; `migrate` records it and refuses any other. Layout 4 adds
/// jobs that wait for others (`{q}:blocked`, `after:`, `dependents:`, and `ao` and `dn` in a job's
/// hash): a build of layout 3 would neither claim a blocked job nor release its dependents when a
/// dependency ends, so it must refuse a store that may hold them, as it refuses any newer layout.
/// Layout 5 adds expiry (`xa` in a job's hash, `{q}:expiry`, the `expired` status): a build of layout
/// 4 would start a job past its expiry and could not read an expired one.
const LAYOUT_VERSION: u32 = 5;

/// Jobs per enqueue script: a larger batch is split into calls of this many, sent back to back
/// (500, 1,000, 2,000 and 5,000 measured within noise of each other, 2,000 and 5,000 a little lower).
const ENQUEUE_CHUNK: usize = 1_000;

/// Jobs one cancel-by-filter script reads at most, when every job it reads matches (a status and
/// queue filter): about 20 ms of Redis's time on the development machine, where 10,000 took 93 to
/// 106 ms.
const CANCEL_CHUNK: usize = 2_000;

/// Longest a command may wait for its answer: a list or cancel over a very large store is the slowest.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// The Redis store.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    connector: Connector,
    url: StoreUrl,
    settings: Arc<Settings>,
    /// On a cluster, the queues whose outboxes hold releases for each queue this store claims from.
    sources: outbox::Sources,
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
            sources: outbox::Sources::default(),
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
        if found == 2 {
            // Layout 3 adds each queue's created-order index (`{q}:made`), built here from the
            // status indexes, a queue at a time; a job enqueued meanwhile by this build is indexed
            // by its own script, and ZADD of a job twice is harmless.
            for queue in self.known_queues().await? {
                let cmd = self.queue_script(&SCRIPTS.reindex, &queue);
                let _: u64 = self.eval(&SCRIPTS.reindex, &cmd, "migrate", true).await?;
            }
        }
        if (2..LAYOUT_VERSION).contains(&found) {
            // Layouts 4 and 5 add only keys and fields that jobs with dependencies or expiries bring,
            // so a store of an older layout holds none to build: recording the number is the
            // migration, and from then on an older build refuses the store.
            let _: () = self
                .query(redis::cmd("SET").arg(&key).arg(LAYOUT_VERSION), "migrate")
                .await?;
        } else if found < LAYOUT_VERSION {
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
        // here saves a single server that round trip. Only the missing ones: every command opens the
        // store, and sending all of them (25 texts of a few KB each, hashed by the server) cost a
        // one-shot command several milliseconds where one `SCRIPT EXISTS` costs a round trip.
        if let Conn::Managed(conn) = &self.conn {
            let mut conn = Conn::Managed(conn.clone());
            let all = SCRIPTS.all(false);
            let mut exists = redis::cmd("SCRIPT");
            exists.arg("EXISTS");
            for lua in &all {
                exists.arg(lua.sha());
            }
            let loaded: Vec<bool> = exists.query_async(&mut conn).await.map_err(self.fail("migrate"))?;
            for (lua, loaded) in all.iter().zip(loaded.into_iter().chain(std::iter::repeat(false))) {
                if !loaded {
                    lua.load(&mut conn).await.map_err(self.fail("migrate"))?;
                }
            }
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        if jobs.iter().any(|j| !j.after.is_empty()) {
            return self.enqueue_after(jobs).await;
        }
        let groups = by_queue(jobs, |j| j.queue.as_str());
        // On a single server each script registers its queue too, so one job is one round trip. On
        // a cluster the registry is a key of no queue's slot: a script answers whether its queue
        // still needs registering (rarely: see `enqueue.lua`), and that is a command of its own.
        let cluster = self.is_cluster();
        let registry = self.key("queues");
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
            let registry = &registry;
            async move {
                let mut cmd = if cluster {
                    self.queue_script(&SCRIPTS.enqueue, queue)
                } else {
                    self.script(&SCRIPTS.enqueue, &[self.queue_prefix(queue), registry.clone()])
                };
                scripts::enqueue_args(&mut cmd, members);
                let reply: Value = self.eval(&SCRIPTS.enqueue, &cmd, "enqueue", false).await?;
                scripts::enqueued(members, reply)
            }
        });
        let answers = try_join_all(calls).await?;
        // The queue is registered after its jobs are written, never before (see `forget_queue`).
        let mut unlisted: Vec<&str> = chunks
            .iter()
            .zip(&answers)
            .filter(|(_, (_, register))| *register)
            .map(|((g, _), _)| groups[*g].0)
            .collect();
        unlisted.dedup();
        if !unlisted.is_empty() {
            let _: () = self
                .query(redis::cmd("SADD").arg(&registry).arg(&unlisted), "enqueue")
                .await?;
        }
        let mut per_group: Vec<Vec<Enqueued>> = groups.iter().map(|_| Vec::new()).collect();
        for ((g, _), (answer, _)) in chunks.iter().zip(answers) {
            per_group[*g].extend(answer);
        }
        Ok(in_input_order(jobs.len(), &groups, per_group))
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.queues.is_empty() {
            return Ok(Vec::new());
        }
        // On a cluster, the ends of dependencies in other slots that its queues' jobs wait for
        // (even for a claim of none, as the contract says).
        self.apply_outboxes(&claim.queues, claim.now).await?;
        if claim.limit == 0 {
            return Ok(Vec::new());
        }
        // A claim that carries no flow control is the plain claim as it is.
        let planned;
        let claim = match claim.flow.is_empty() {
            true => claim,
            false => match claim.plan() {
                ClaimPlan::Nothing => return Ok(Vec::new()),
                ClaimPlan::Plain(plain) => {
                    planned = plain;
                    &planned
                }
                ClaimPlan::Limited => {
                    return self
                        .beside_the_inbox(claim, |limit| self.claim_limited(claim, limit))
                        .await;
                }
            },
        };
        self.beside_the_inbox(claim, |limit| self.claim_jobs(claim, limit))
            .await
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
                3 => LeaseState::CancelRequested,
                _ => LeaseState::Lost,
            })
            .collect())
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if finishes.iter().any(Finish::spawns) {
            // Those that spawn, one script each; the rest as below.
            let plain = async |rest: Vec<Finish>| self.finish(&rest, now).await;
            let spawning =
                async |own: Vec<Finish>| try_join_all(own.iter().map(|f| self.finish_spawning(f, now))).await;
            return finish_spawning_apart(finishes, plain, spawning).await;
        }
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

    async fn finish_and_claim(&self, finishes: &[Finish], claim: &Claim) -> Result<FinishedAndClaimed, StoreError> {
        let limited = claim.limit > 0 && !claim.queues.is_empty() && matches!(claim.plan(), ClaimPlan::Limited);
        if limited {
            // As a claim does (see `claim`): a busy worker under limits may claim only this way.
            self.apply_outboxes(&claim.queues, claim.now).await?;
        }
        if limited
            && !finishes.iter().any(Finish::spawns)
            && let Some(done) = self.finish_and_claim_joined(finishes, claim).await?
        {
            return Ok(done);
        }
        let applied = self.finish(finishes, claim.now).await?;
        let claimed = self.claim(claim).await;
        Ok(FinishedAndClaimed { applied, claimed })
    }

    fn spawns_across_queues(&self) -> bool {
        !self.is_cluster()
    }

    async fn release(&self, leases: &[Lease]) -> Result<Vec<bool>, StoreError> {
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
        // A single server looks for the job in every queue in one script, one round trip.
        if !self.is_cluster() {
            let mut cmd = self.script(&SCRIPTS.get, &[self.key("queues")]);
            cmd.arg(&self.settings.prefix).arg(id.as_str());
            let reply: Option<Vec<u8>> = self.eval(&SCRIPTS.get, &cmd, "get", true).await?;
            return match reply {
                None => Ok(None),
                Some(bytes) => match packed_pairs(&bytes) {
                    Some(pairs) => job_from_pairs(&pairs).map(Some),
                    None => Err(StoreError::query(KIND, "get", "a job reply that does not parse")),
                },
            };
        }
        // A cluster: the registry, then the job's hash in every queue at once (the first queue in
        // name order that has it answers, as on a single server).
        let queues = self.known_queues().await?;
        let found = try_join_all(queues.iter().map(|q| {
            let mut cmd = redis::cmd("HGETALL");
            cmd.arg(self.job_key(q, id.as_str()));
            async move { self.query::<Vec<String>>(&cmd, "get").await }
        }))
        .await?;
        let Some((queue, fields)) = queues.iter().zip(&found).find(|(_, f)| !f.is_empty()) else {
            return Ok(None);
        };
        // The hash holds neither its queue nor its id: the key names them.
        let mut pairs: Vec<(&str, &str)> = fields.chunks_exact(2).map(|f| (f[0].as_str(), f[1].as_str())).collect();
        pairs.extend([("q", queue.as_str()), ("id", id.as_str())]);
        job_from_pairs(&pairs).map(Some)
    }

    async fn list(&self, params: &List) -> Result<Vec<Job>, StoreError> {
        let f = &params.filter;
        let queues = self.queues_or_all(&f.queues).await?;
        // Each queue answers its newest `offset + limit`; the page is cut from all of them merged.
        let most = params.offset.saturating_add(u64::from(params.limit));
        let replies = try_join_all(queues.iter().map(|q| {
            let mut cmd = self.queue_script(&SCRIPTS.list, q);
            cmd.arg(most)
                .arg(opt_millis(f.created_since))
                .arg(opt_millis(f.created_until));
            match &params.after {
                Some(after) => cmd.arg(after.created_at.0).arg(after.id.as_str()),
                None => cmd.arg("").arg(""),
            };
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

    async fn edges(&self, read: &ReadEdges) -> Result<Vec<JobEdges>, StoreError> {
        RedisStore::edges(self, read).await
    }

    async fn stats(&self, params: &Stats) -> Result<StatsReport, StoreError> {
        let queues = self.queues_or_all(&params.queues).await?;
        let mut queues: Vec<QueueStats> = try_join_all(queues.iter().map(|q| self.queue_stats(q, params.now, "stats")))
            .await?
            .into_iter()
            // Only queues that have jobs.
            .filter(|s| s.total() > 0)
            .collect();
        queues.sort_by(|a, b| a.queue.cmp(&b.queue));
        queues.dedup_by(|a, b| a.queue == b.queue);
        Ok(StatsReport { queues })
    }

    async fn health(&self, _health: &Health) -> Result<Vec<Finding>, StoreError> {
        self.health_findings().await
    }

    async fn often_rescued(&self, params: &OftenRescued) -> Result<Vec<Job>, StoreError> {
        self.often_rescued_jobs(params).await
    }

    async fn stranded(&self, limit: u32) -> Result<Vec<JobId>, StoreError> {
        self.stranded_jobs(limit).await
    }

    async fn queue_load(&self, load: &QueueLoad) -> Result<Load, StoreError> {
        self.load_of(load).await
    }

    async fn throughput(&self, throughput: &Throughput) -> Result<Vec<FinishedCount>, StoreError> {
        self.throughput_of(throughput).await
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<CancelAnswer>, StoreError> {
        let ids = match &cancel.target {
            CancelTarget::Ids(ids) => ids,
            CancelTarget::Filter(f) => {
                let queues = self.queues_or_all(&f.queues).await?;
                let cancelled = try_join_all(queues.iter().map(|q| self.cancel_in_queue(q, f, cancel.now))).await?;
                let mut cancelled: Vec<_> = cancelled.into_iter().flatten().collect();
                cancelled.sort_by(|a, b| a.id.cmp(&b.id));
                return Ok(cancelled.into_iter().map(CancelAnswer::Cancelled).collect());
            }
        };
        let mut seen = std::collections::HashSet::new();
        let ids: Vec<&JobId> = ids.iter().filter(|id| seen.insert(id.as_str())).collect();
        let located = self
            .locate(&ids.iter().map(|id| (*id).clone()).collect::<Vec<_>>(), "cancel")
            .await?;
        let found: Vec<(&JobId, String)> = ids
            .iter()
            .zip(&located)
            .filter_map(|(id, q)| q.clone().map(|q| (*id, q)))
            .collect();
        let replies = try_join_all(by_queue(&found, |(_, q)| q.as_str()).into_iter().map(|(q, positions)| {
            let mut cmd = self.queue_script(&SCRIPTS.cancel, q);
            cmd.arg(cancel.now.0).arg("I").arg(positions.len());
            for n in positions {
                cmd.arg(found[n].0.as_str());
            }
            async move { self.eval::<Vec<String>>(&SCRIPTS.cancel, &cmd, "cancel", false).await }
        }))
        .await?;
        let mut answers: HashMap<String, CancelAnswer> = HashMap::new();
        for reply in &replies {
            for answer in cancel_answers(reply) {
                answers.insert(answer_id(&answer).to_string(), answer);
            }
        }
        Ok(ids
            .into_iter()
            .map(|id| {
                answers
                    .remove(id.as_str())
                    .unwrap_or_else(|| CancelAnswer::NotFound(id.clone()))
            })
            .collect())
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<Job>, StoreError> {
        let dry = if replay.dry_run { "1" } else { "" };
        let cascade = if replay.cascade { "1" } else { "" };
        if replay.ids.is_empty() && replay.limit.is_none() {
            // Every dead job of the queues: each queue's script reads its own dead set, all at once.
            let queues = self.queues_or_all(&replay.filter.queues).await?;
            let replies = try_join_all(queues.iter().map(|q| {
                let mut cmd = self.queue_script(&SCRIPTS.replay, q);
                cmd.arg(run_key(replay.now)).arg(dry).arg("");
                push_list(&mut cmd, &replay.filter.job_types);
                cmd.arg(0).arg(cascade);
                async move {
                    self.eval::<(Vec<Value>, Vec<String>)>(&SCRIPTS.replay, &cmd, "replay dead jobs", false)
                        .await
                }
            }))
            .await?;
            let (mut jobs, mut far) = (Vec::new(), Vec::new());
            for (reply, elsewhere) in replies {
                jobs.extend(jobs_from(reply, "replay dead jobs", self)?);
                far.extend(elsewhere);
            }
            // A dry run answers oldest death first across queues, as a replay would take them.
            jobs.sort_by(|a, b| (a.finished_at, &a.id).cmp(&(b.finished_at, &b.id)));
            self.reopen_across_slots(far, &mut jobs, replay.now).await?;
            return Ok(jobs);
        }
        // Oldest death first across queues: each run of candidates of one queue is one script, which
        // checks each again (type, unique key) and replays up to what the limit leaves.
        let cands = self.replay_candidates(replay).await?;
        let (mut out, mut far) = (Vec::new(), Vec::new());
        let mut start = 0;
        while start < cands.len() {
            // (The jobs a cascade brought back, blocked, count for nothing.)
            let replayed = out.iter().filter(|j: &&Job| j.status != JobStatus::Blocked).count();
            let left = replay.limit.map(|l| l.saturating_sub(replayed as u32));
            if left == Some(0) {
                break;
            }
            let queue = &cands[start].2;
            let end = start + cands[start..].iter().take_while(|c| &c.2 == queue).count();
            let mut cmd = self.queue_script(&SCRIPTS.replay, queue);
            cmd.arg(run_key(replay.now))
                .arg(dry)
                .arg(left.map(|l| l.to_string()).unwrap_or_default());
            push_list(&mut cmd, &replay.filter.job_types);
            cmd.arg(end - start);
            for c in &cands[start..end] {
                cmd.arg(&c.1);
            }
            cmd.arg(cascade);
            let (reply, elsewhere): (Vec<Value>, Vec<String>) =
                self.eval(&SCRIPTS.replay, &cmd, "replay dead jobs", false).await?;
            out.extend(jobs_from(reply, "replay dead jobs", self)?);
            far.extend(elsewhere);
            start = end;
        }
        self.reopen_across_slots(far, &mut out, replay.now).await?;
        Ok(out)
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        self.cleanup_jobs(cleanup).await
    }

    async fn expire(&self, expire: &Expire) -> Result<u64, StoreError> {
        self.expire_jobs(expire).await
    }

    async fn resolve(&self, resolves: &[Resolve], now: UnixMillis) -> Result<Vec<ResolveAnswer>, StoreError> {
        self.resolve_jobs(resolves, now).await
    }

    async fn delete(&self, delete: &Delete) -> Result<Vec<DeleteAnswer>, StoreError> {
        self.delete_jobs(delete).await
    }

    async fn delete_matching(&self, delete: &DeleteMatching) -> Result<DeletedCount, StoreError> {
        self.delete_filtered(delete).await
    }

    async fn retry(&self, retry: &Retry) -> Result<Vec<RetryAnswer>, StoreError> {
        self.retry_jobs(retry).await
    }

    async fn import(&self, import: &Import) -> Result<Vec<ImportAnswer>, StoreError> {
        self.import_jobs(import).await
    }

    async fn import_edges(&self, edges: &[ImportEdges], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        RedisStore::import_edges(self, edges, now).await
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

    async fn forget_workers(&self, seen_before: UnixMillis) -> Result<u64, StoreError> {
        let seen = self.key("workers:seen");
        let gone: Vec<String> = self
            .query(
                redis::cmd("ZRANGE")
                    .arg(&seen)
                    .arg("-inf")
                    .arg(format!("({}", seen_before.0))
                    .arg("BYSCORE"),
                "forget workers",
            )
            .await?;
        if !gone.is_empty() {
            // Their records first, so that no record outlives its last-seen entry.
            let _: () = self
                .query(redis::cmd("HDEL").arg(self.key("workers")).arg(&gone), "forget workers")
                .await?;
            let _: () = self
                .query(redis::cmd("ZREM").arg(&seen).arg(&gone), "forget workers")
                .await?;
        }
        Ok(gone.len() as u64)
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        let seen = self.key("workers:seen");
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

    async fn schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError> {
        self.read_schedules(keys).await
    }

    async fn register_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError> {
        self.add_schedules(keys, now).await
    }

    async fn restore_schedules(
        &self,
        records: &[(ScheduleKey, ScheduleState)],
        _now: UnixMillis,
    ) -> Result<(), StoreError> {
        self.restore(records).await
    }

    async fn fire_ticks(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError> {
        self.fire(ticks).await
    }

    async fn set_schedule_paused(&self, pause: &SetSchedulePaused<'_>) -> Result<(), StoreError> {
        self.pause_schedule(pause.key, pause.paused, pause.now, pause.skip_missed)
            .await
    }

    async fn emit(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, StoreError> {
        self.emit_events(events).await
    }

    async fn expand_events(&self, expand: &ExpandEvents<'_>) -> Result<usize, StoreError> {
        self.expand_pushed_events(expand.expander, expand.limit, expand.now)
            .await
    }

    async fn flow_state(&self, now: UnixMillis) -> Result<FlowState, StoreError> {
        self.read_flow_state(now).await
    }

    async fn set_paused(&self, pause: &SetPaused<'_>) -> Result<bool, StoreError> {
        self.write_paused(pause.queue, pause.job_type, pause.paused, pause.now)
            .await
    }

    async fn block(&self, block: &Block, now: UnixMillis) -> Result<(), StoreError> {
        self.write_block(block, now).await
    }

    async fn record_limits(&self, record: &RecordLimits<'_>) -> Result<(), StoreError> {
        self.write_limits(record.limits, record.worker, record.now).await
    }

    async fn limits(&self) -> Result<Vec<RecordedLimit>, StoreError> {
        self.read_limits().await
    }

    async fn rejected_inbox_items(&self, read: &RejectedInbox<'_>) -> Result<Vec<RejectedItem>, StoreError> {
        self.rejected_items(read.queues, read.limit).await
    }

    async fn clear_rejected_inbox_items(&self, queues: &[String]) -> Result<u64, StoreError> {
        self.clear_rejected(queues).await
    }

    /// Work made ready is announced on the queues' wake-up streams; other changes are not.
    fn subscribe(&self, on: &WakeOn, notify: Arc<Notify>) -> Option<Subscription> {
        let WakeOn::Ready(queues) = on else { return None };
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let listener = subscribe::Listener::new(self, queues);
        Some(Subscription::new(runtime.spawn(listener.run(notify))))
    }
}
