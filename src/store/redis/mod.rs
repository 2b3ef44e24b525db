//! RedisStore: jobs in a Redis 7 server (or anything that speaks its protocol and runs its Lua).
//!
//! Every transition is one Lua script (`lua/*.lua`, each prefixed with `lua/common.lua`), so it is
//! atomic on the server and costs one round trip per batch: enqueue, claim, heartbeat, finish,
//! release, rescue, cancel, replay and cleanup each take any number of jobs in one call. Scripts run
//! by `EVALSHA`, loaded again when the server has forgotten them (a restart, `SCRIPT FLUSH`).
//!
//! Key layout, under a prefix (`jobq:` unless the URL says `?prefix=`), `{q}` being the queue name as a
//! hash tag so that a queue's indexes live together:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `job:<id>` | hash | the job, once (see [`codec`]) |
//! | `{q}:prios` | sorted set | the priorities that have pending jobs |
//! | `{q}:pend:<priority>` | sorted set (lexicographic) | pending jobs as `<run key>:<id>`: by run_at, then id |
//! | `{q}:run` | sorted set | running jobs by last heartbeat (rescue reads the stale end) |
//! | `{q}:wait` | sorted set | waiting jobs by finish time |
//! | `{q}:done:<status>` | sorted set | terminal jobs by finish time (cleanup and replay read it) |
//! | `{q}:uniq` | hash | unique key → the live job holding it |
//! | `queues` | set | every queue that has had a job |
//! | `wake` | stream | one entry per batch that made work ready (wake-ups) |
//! | `workers`, `workers:seen` | hash, sorted set | the worker registry |
//! | `inbox:<q>` | list | items pushed by any client (see [`inbox`]) |
//! | `inbox-rejected:<q>` | list | inbox items that are not jobs, with the reason |
//! | `inbox-processing`, `inbox-processing:…` | hash, lists | items being ingested, by ingester |
//! | `version` | string | the layout version |
//!
//! Pending jobs need no separate "scheduled" set: a priority's pending set is ordered by run_at, so the
//! jobs due at `now` are its prefix up to `<run key of now>;`, read with `ZRANGEBYLEX`, and a delayed
//! job becomes claimable by time alone. Scripts reach job hashes by id, so a script touches keys in
//! more than one hash slot: the store needs a single Redis server (with replicas if wanted), not a
//! Redis Cluster.
//!
//! URL: `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS), plus jobq's own options,
//! removed before the driver sees the URL: `prefix=TEXT` (default `jobq:`), `connect_timeout=SECS`
//! (default 5) and `inbox_default_type=TYPE` (what a non-envelope inbox item becomes).

mod codec;
pub mod inbox;
mod scripts;
mod subscribe;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Cmd, FromRedisValue, Value};
use tokio::sync::Notify;

use self::codec::{error_entry, job_from_fields, run_key};
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

/// The layout version this build writes; `migrate` records it and refuses a newer one.
const LAYOUT_VERSION: u32 = 1;

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
    conn: ConnectionManager,
    client: Client,
    url: StoreUrl,
    settings: Arc<Settings>,
}

/// Written by hand: the client holds the password.
impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url.redacted())
            .field("prefix", &self.settings.prefix)
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

impl RedisStore {
    /// Connects to the server a `redis://` or `rediss://` URL names and checks that it answers.
    pub async fn connect(url: &StoreUrl) -> Result<RedisStore, StoreError> {
        let settings = Settings::parse(url)?;
        let client = Client::open(settings.driver_url.as_str()).map_err(|e| StoreError::InvalidUrl {
            url: url.redacted().to_string(),
            reason: DriverError::deepest(&e).to_string(),
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(settings.connect_timeout))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_secs(2));
        let conn = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(|e| StoreError::unavailable(KIND, &url.redacted(), &e))?;
        Ok(RedisStore {
            conn,
            client,
            url: url.clone(),
            settings: Arc::new(settings),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.settings.prefix
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.settings.prefix)
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

    /// An `EVALSHA` of `lua` with the prefix as its first argument; the caller adds the rest.
    fn script(&self, lua: &Lua) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(lua.sha()).arg(0).arg(&self.settings.prefix);
        cmd
    }

    /// Runs a script command, loading the script when the server does not have it. With `retry`, a
    /// call cut off by a dropped connection is sent once more on the new one: for calls whose repeat
    /// is harmless (reads, and fenced writes that a repeat finds already done).
    async fn eval<T: FromRedisValue>(
        &self,
        lua: &Lua,
        cmd: &Cmd,
        operation: &'static str,
        retry: bool,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        let mut tries = 0;
        loop {
            tries += 1;
            match cmd.query_async::<T>(&mut conn).await {
                Ok(v) => return Ok(v),
                Err(e) if is_noscript(&e) && tries <= 2 => {
                    lua.load(&mut conn).await.map_err(self.fail(operation))?;
                }
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

    fn claim_cmd(&self, claim: &Claim, limit: u32) -> Cmd {
        let mut cmd = self.script(&SCRIPTS.claim);
        cmd.arg(run_key(claim.now))
            .arg(claim.now.0)
            .arg(&claim.worker)
            .arg(limit)
            .arg(claim.queues.len())
            .arg(&claim.queues)
            .arg(claim.exclude_types.len())
            .arg(&claim.exclude_types)
            .arg(claim.queues.len());
        for q in &claim.queues {
            cmd.arg(self.inbox_key(q));
        }
        cmd
    }

    /// One claim script: the jobs leased, and how many inbox items wait in the claimed queues.
    async fn claim_once(&self, claim: &Claim, limit: u32) -> Result<(u64, Vec<Job>), StoreError> {
        let reply: Vec<Value> = self
            .eval(&SCRIPTS.claim, &self.claim_cmd(claim, limit), "claim", false)
            .await?;
        let mut reply = reply.into_iter();
        let waiting = match reply.next() {
            Some(v) => redis::from_redis_value::<u64>(v).map_err(|e| self.fail("claim")(e.into()))?,
            None => 0,
        };
        // The script returns each job as it was before the lease; apply the lease as it did.
        let mut jobs = jobs_from(reply.collect(), "claim", self)?;
        for job in &mut jobs {
            claim.lease(job);
        }
        Ok((waiting, jobs))
    }
}

/// Jobs from script replies of the form `[field, value, …, "id", id]`.
fn jobs_from(values: Vec<Value>, operation: &'static str, store: &RedisStore) -> Result<Vec<Job>, StoreError> {
    values
        .into_iter()
        .map(|v| {
            let fields: Vec<String> = redis::from_redis_value(v).map_err(|e| store.fail(operation)(e.into()))?;
            job_from_fields(None, fields)
        })
        .collect()
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

    async fn info(&self) -> Result<StoreInfo, StoreError> {
        let text: String = self.query(redis::cmd("INFO").arg("server"), "info").await?;
        let persistence: String = self.query(redis::cmd("INFO").arg("persistence"), "info").await?;
        let memory: String = self.query(redis::cmd("INFO").arg("memory"), "info").await?;
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
        let mut conn = self.conn.clone();
        for lua in SCRIPTS.all() {
            lua.load(&mut conn).await.map_err(self.fail("migrate"))?;
        }
        Ok(())
    }

    async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = self.script(&SCRIPTS.enqueue);
        scripts::enqueue_args(&mut cmd, jobs);
        let reply: Vec<String> = self.eval(&SCRIPTS.enqueue, &cmd, "enqueue", false).await?;
        scripts::enqueued(jobs, reply)
    }

    async fn claim(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        if claim.limit == 0 || claim.queues.is_empty() {
            return Ok(Vec::new());
        }
        let (waiting, mut jobs) = self.claim_once(claim, claim.limit).await?;
        if waiting > 0 {
            match self.ingest(&claim.queues, &claim.worker, claim.now).await {
                Ok(0) => {}
                Ok(_) if (jobs.len() as u32) < claim.limit => {
                    let (_, more) = self.claim_once(claim, claim.limit - jobs.len() as u32).await?;
                    jobs.extend(more);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("ingesting the inbox failed: {e}"),
            }
        }
        Ok(jobs)
    }

    async fn heartbeat(&self, beats: &[Heartbeat], now: UnixMillis) -> Result<Vec<LeaseState>, StoreError> {
        if beats.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = self.script(&SCRIPTS.heartbeat);
        cmd.arg(now.0).arg(beats.len());
        for beat in beats {
            lease_args(&mut cmd, &beat.lease);
            cmd.arg(progress_json(beat.progress.as_ref()));
        }
        let reply: Vec<u8> = self.eval(&SCRIPTS.heartbeat, &cmd, "heartbeat", true).await?;
        Ok(reply
            .into_iter()
            .map(|r| match r {
                0 => LeaseState::Held,
                1 => LeaseState::Cancelled,
                _ => LeaseState::Lost,
            })
            .collect())
    }

    async fn finish(&self, finishes: &[Finish], now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if finishes.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = self.script(&SCRIPTS.finish);
        cmd.arg(now.0).arg(finishes.len());
        for finish in finishes {
            lease_args(&mut cmd, &finish.lease);
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
        let reply: Vec<u8> = self.eval(&SCRIPTS.finish, &cmd, "finish", true).await?;
        Ok(reply.into_iter().map(|r| r == 1).collect())
    }

    async fn release(&self, leases: &[Lease], _now: UnixMillis) -> Result<Vec<bool>, StoreError> {
        if leases.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = self.script(&SCRIPTS.release);
        cmd.arg(leases.len());
        for lease in leases {
            lease_args(&mut cmd, lease);
        }
        let reply: Vec<u8> = self.eval(&SCRIPTS.release, &cmd, "release", true).await?;
        Ok(reply.into_iter().map(|r| r == 1).collect())
    }

    async fn rescue(&self, rescue: &Rescue) -> Result<Vec<Rescued>, StoreError> {
        // Inbox items whose ingester died go back first: they are not jobs yet, so nothing else would.
        let mut recover = self.script(&SCRIPTS.inbox_recover);
        recover.arg(rescue.stale_before.0);
        let _: u64 = self.eval(&SCRIPTS.inbox_recover, &recover, "rescue", true).await?;

        let mut cmd = self.script(&SCRIPTS.rescue);
        cmd.arg(rescue.stale_before.0)
            .arg(run_key(rescue.now))
            .arg(rescue.now.0)
            .arg(rescue.limit);
        let reply: Vec<(String, String, u32, String)> = self.eval(&SCRIPTS.rescue, &cmd, "rescue", false).await?;
        Ok(reply
            .into_iter()
            .map(|(id, job_type, attempt, status)| Rescued {
                id: JobId::from_stored(id),
                job_type,
                attempt,
                status: status.parse().unwrap_or(JobStatus::Pending),
            })
            .collect())
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let fields: Vec<String> = self
            .query(redis::cmd("HGETALL").arg(self.key(&format!("job:{id}"))), "get")
            .await?;
        if fields.is_empty() {
            return Ok(None);
        }
        job_from_fields(Some(id.to_string()), fields).map(Some)
    }

    async fn list(&self, params: &ListParams) -> Result<Vec<Job>, StoreError> {
        let f = &params.filter;
        let mut cmd = self.script(&SCRIPTS.list);
        cmd.arg(params.limit)
            .arg(params.offset)
            .arg(opt_millis(f.created_since))
            .arg(opt_millis(f.created_until));
        push_list(&mut cmd, &f.queues);
        push_list(&mut cmd, &f.job_types);
        push_list(&mut cmd, &statuses(&f.statuses));
        let reply: Vec<Value> = self.eval(&SCRIPTS.list, &cmd, "list", true).await?;
        jobs_from(reply, "list", self)
    }

    async fn stats(&self, params: &StatsParams) -> Result<Stats, StoreError> {
        let mut cmd = self.script(&SCRIPTS.stats);
        cmd.arg(run_key(params.now));
        push_list(&mut cmd, &params.queues);
        type Row = (String, u64, u64, u64, u64, u64, u64, u64, u64, String);
        let rows: Vec<Row> = self.eval(&SCRIPTS.stats, &cmd, "stats", true).await?;
        let mut queues: Vec<QueueStats> = rows
            .into_iter()
            .map(
                |(queue, ready, scheduled, running, waiting, succeeded, dead, cancelled, discarded, oldest)| {
                    QueueStats {
                        queue,
                        ready,
                        scheduled,
                        running,
                        waiting,
                        succeeded,
                        dead,
                        cancelled,
                        discarded,
                        oldest_ready_at: codec::from_run_key(&oldest),
                    }
                },
            )
            .collect();
        queues.sort_by(|a, b| a.queue.cmp(&b.queue));
        Ok(Stats { queues })
    }

    async fn cancel(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, StoreError> {
        let mut cmd = self.script(&SCRIPTS.cancel);
        cmd.arg(cancel.now.0);
        match &cancel.target {
            CancelTarget::Ids(ids) => {
                cmd.arg("I").arg(ids.len());
                for id in ids {
                    cmd.arg(id.as_str());
                }
            }
            CancelTarget::Filter(f) => {
                cmd.arg("F");
                push_list(&mut cmd, &f.queues);
                push_list(&mut cmd, &f.job_types);
                push_list(&mut cmd, &statuses(&f.statuses));
                cmd.arg(opt_millis(f.created_since)).arg(opt_millis(f.created_until));
            }
        }
        let reply: Vec<String> = self.eval(&SCRIPTS.cancel, &cmd, "cancel", false).await?;
        Ok(reply
            .chunks_exact(2)
            .map(|pair| Cancelled {
                id: JobId::from_stored(pair[0].clone()),
                previous: pair[1].parse().unwrap_or(JobStatus::Pending),
            })
            .collect())
    }

    async fn replay_dead(&self, replay: &ReplayDead) -> Result<Vec<JobId>, StoreError> {
        let mut cmd = self.script(&SCRIPTS.replay);
        cmd.arg(run_key(replay.now))
            .arg(replay.limit.map(|l| l.to_string()).unwrap_or_default());
        push_list(&mut cmd, &replay.queues);
        push_list(&mut cmd, &replay.job_types);
        let ids: Vec<&str> = replay.ids.iter().map(JobId::as_str).collect();
        push_list(&mut cmd, &ids);
        let reply: Vec<String> = self.eval(&SCRIPTS.replay, &cmd, "replay dead jobs", false).await?;
        Ok(reply.into_iter().map(JobId::from_stored).collect())
    }

    async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let mut cmd = self.script(&SCRIPTS.cleanup);
        cmd.arg(opt_millis(cleanup.finished_before))
            .arg(cleanup.limit)
            .arg(if cleanup.dry_run { "1" } else { "0" });
        push_list(&mut cmd, &cleanup.queues);
        let wanted: Vec<&str> = cleanup
            .statuses
            .iter()
            .filter(|s| s.is_terminal())
            .map(|s| s.as_str())
            .collect();
        if !cleanup.statuses.is_empty() && wanted.is_empty() {
            return Ok(0);
        }
        push_list(&mut cmd, &wanted);
        self.eval(&SCRIPTS.cleanup, &cmd, "cleanup", true).await
    }

    async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        let record = serde_json::to_string(worker).map_err(|e| StoreError::query(KIND, "register worker", e))?;
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("HSET")
            .arg(self.key("workers"))
            .arg(&worker.id)
            .arg(record)
            .ignore()
            .cmd("ZADD")
            .arg(self.key("workers:seen"))
            .arg(worker.last_seen_at.0)
            .arg(&worker.id)
            .ignore();
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(self.fail("register worker"))
    }

    async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("HDEL")
            .arg(self.key("workers"))
            .arg(id)
            .ignore()
            .cmd("ZREM")
            .arg(self.key("workers:seen"))
            .arg(id)
            .ignore();
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(self.fail("unregister worker"))
    }

    async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        let mut cmd = self.script(&SCRIPTS.workers);
        cmd.arg(seen_since.0);
        let records: Vec<String> = self.eval(&SCRIPTS.workers, &cmd, "list workers", true).await?;
        records
            .iter()
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
