//! What `jobq doctor` asks of a Redis store: whether the server keeps its data (AOF or RDB
//! snapshots; without either a restart loses every job), whether it may evict jobq's keys under
//! memory pressure (any `maxmemory-policy` but `noeviction`), the jobs workers keep losing
//! (`often_rescued.lua`), a queue's load over a window (`queue_load.lua`) and the jobs finished per
//! bucket (`throughput.lua`).
//!
//! The settings come from `INFO` (which every server answers) and `CONFIG GET save` (which managed
//! servers may refuse: then whether RDB snapshots are on is unknown, and no persistence finding is
//! made rather than a guessed one). On a cluster, `INFO` is the first node's (see `info_section`).
//! Nothing here writes.

use futures_util::future::try_join_all;
use redis::Value;

use super::RedisStore;
use super::calls::jobs_from;
use super::codec::run_key;
use super::scripts::SCRIPTS;
use crate::job::JobStatus;
use crate::job::{Job, JobId};
use crate::store::{Finding, FinishedCount, Load, OftenRescued, QueueLoad, Severity, StoreError, Throughput};

/// What persistence and eviction settings say, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Durability {
    /// `aof_enabled` of `INFO persistence`.
    pub aof: bool,
    /// The `save` rules (`""` when RDB snapshots are off); `None` when `CONFIG GET` was refused.
    pub save: Option<String>,
    /// `maxmemory_policy` of `INFO memory`.
    pub policy: String,
}

impl RedisStore {
    /// The server's persistence and eviction findings.
    pub(super) async fn health_findings(&self) -> Result<Vec<Finding>, StoreError> {
        let persistence = self.info_section("persistence").await?;
        let memory = self.info_section("memory").await?;
        let save = match self
            .query::<Value>(redis::cmd("CONFIG").arg("GET").arg("save"), "config get")
            .await
        {
            Ok(reply) => config_value(&reply, "save"),
            Err(e) => {
                tracing::debug!("CONFIG GET save refused ({e}): whether RDB snapshots are on is unknown");
                None
            }
        };
        let durability = Durability {
            aof: info_field(&persistence, "aof_enabled").as_deref() == Some("1"),
            save,
            policy: info_field(&memory, "maxmemory_policy").unwrap_or_default(),
        };
        Ok(findings(&durability))
    }

    /// Often rescued jobs of every queue, by id, at most `limit`.
    pub(super) async fn often_rescued_jobs(&self, params: &OftenRescued) -> Result<Vec<Job>, StoreError> {
        let queues = self.known_queues().await?;
        let per_queue = try_join_all(queues.iter().map(|q| async move {
            let mut cmd = self.queue_script(&SCRIPTS.often_rescued, q);
            cmd.arg(params.at_least.max(1)).arg(params.limit);
            let reply: Vec<Value> = self
                .eval(&SCRIPTS.often_rescued, &cmd, "finding often rescued jobs", true)
                .await?;
            jobs_from(reply, "finding often rescued jobs", self)
        }))
        .await?;
        let mut jobs: Vec<Job> = per_queue.into_iter().flatten().collect();
        jobs.sort_by(|a, b| a.id.cmp(&b.id));
        jobs.truncate(params.limit as usize);
        Ok(jobs)
    }

    /// Stranded blocked jobs of every queue (see [`crate::store::Store::stranded`]), by id, at most
    /// `limit`: `stranded.lua` a page at a time per queue.
    pub(super) async fn stranded_jobs(&self, limit: u32) -> Result<Vec<JobId>, StoreError> {
        const PAGE: u32 = 500;
        let queues = self.known_queues().await?;
        let mut ids = Vec::new();
        for q in &queues {
            let mut from = 0u64;
            loop {
                let mut cmd = self.queue_script(&SCRIPTS.stranded, q);
                cmd.arg(from).arg(PAGE);
                let (next, found): (u64, Vec<String>) = self
                    .eval(&SCRIPTS.stranded, &cmd, "finding stranded blocked jobs", true)
                    .await?;
                ids.extend(found.into_iter().map(JobId::from_stored));
                if next == 0 {
                    break;
                }
                from = next;
            }
        }
        ids.sort();
        ids.truncate(limit as usize);
        Ok(ids)
    }

    /// One queue's load over a window.
    pub(super) async fn load_of(&self, load: &QueueLoad) -> Result<Load, StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.queue_load, &load.queue);
        cmd.arg(load.since.0)
            .arg(load.now.0)
            .arg(run_key(load.since))
            .arg(run_key(load.now));
        let (arrived, finished, busy_ms, ready, running): (u64, u64, u64, u64, u64) = self
            .eval(&SCRIPTS.queue_load, &cmd, "reading a queue's load", true)
            .await?;
        Ok(Load {
            arrived,
            finished,
            busy_ms,
            ready,
            running,
        })
    }
}

impl RedisStore {
    /// The jobs finished per queue, bucket and status, one script per queue.
    pub(super) async fn throughput_of(&self, params: &Throughput) -> Result<Vec<FinishedCount>, StoreError> {
        let what = "counting finished jobs";
        let queues = self.queues_or_all(&params.queues).await?;
        let per_queue = try_join_all(queues.iter().map(|q| async move {
            let mut cmd = self.queue_script(&SCRIPTS.throughput, q);
            cmd.arg(params.since.0).arg(params.bucket_ms.max(1)).arg(params.buckets);
            let flat: Vec<(String, u32, u64)> = self.eval(&SCRIPTS.throughput, &cmd, what, true).await?;
            flat.into_iter()
                .map(|(status, bucket, count)| {
                    let status = status.parse::<JobStatus>().map_err(|reason| StoreError::Corrupt {
                        kind: super::KIND,
                        id: format!("counted in queue {q}"),
                        reason,
                    })?;
                    Ok(FinishedCount {
                        queue: q.clone(),
                        bucket,
                        status,
                        count,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()
        }))
        .await?;
        let mut counts: Vec<FinishedCount> = per_queue.into_iter().flatten().collect();
        counts.sort();
        counts.dedup_by(|a, b| (&a.queue, a.bucket, a.status) == (&b.queue, b.bucket, b.status));
        Ok(counts)
    }
}

/// The findings the settings call for.
pub(super) fn findings(d: &Durability) -> Vec<Finding> {
    let mut out = Vec::new();
    if !d.aof && d.save.as_deref().is_some_and(|s| s.trim().is_empty()) {
        out.push(Finding::new(
            "redis-no-persistence",
            Severity::Error,
            "the Redis server keeps jobs in memory only (no AOF, no RDB snapshots): a restart loses every job".into(),
            "turn on the append-only file: CONFIG SET appendonly yes, and appendonly yes in redis.conf".into(),
        ));
    }
    let policy = d.policy.as_str();
    if !policy.is_empty() && policy != "noeviction" {
        let (severity, which) = if policy.starts_with("allkeys") {
            (Severity::Error, "any key, jobs included")
        } else {
            (
                Severity::Warning,
                "keys with an expiry, some of jobq's markers included",
            )
        };
        out.push(Finding::new(
            "redis-evicting",
            severity,
            format!("the Redis server's maxmemory-policy is {policy}: at its memory limit it deletes {which}"),
            "use CONFIG SET maxmemory-policy noeviction (and in redis.conf), so a full server refuses writes \
             instead of dropping jobs"
                .into(),
        ));
    }
    out
}

/// A field of an `INFO` section's text (`name:value` lines).
fn info_field(text: &str, name: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .map(|v| v.trim().to_string())
}

/// The value of `name` in a `CONFIG GET` reply: a flat array of names and values (RESP2) or a map
/// (RESP3); on a cluster, a map from node to either, of which the first node that has it answers.
fn config_value(reply: &Value, name: &str) -> Option<String> {
    let text = |v: &Value| redis::from_redis_value::<String>(v.clone()).ok();
    match reply {
        Value::Array(items) => items
            .chunks_exact(2)
            .find(|pair| text(&pair[0]).as_deref() == Some(name))
            .and_then(|pair| text(&pair[1])),
        Value::Map(pairs) => pairs.iter().find_map(|(k, v)| {
            if text(k).as_deref() == Some(name) {
                text(v)
            } else {
                config_value(v, name)
            }
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn durability(aof: bool, save: Option<&str>, policy: &str) -> Durability {
        Durability {
            aof,
            save: save.map(str::to_string),
            policy: policy.into(),
        }
    }

    fn codes(d: &Durability) -> Vec<&'static str> {
        findings(d).iter().map(|f| f.code).collect::<Vec<_>>()
    }

    #[test]
    fn persistence_is_missing_only_without_aof_and_without_snapshots() {
        assert_eq!(
            codes(&durability(false, Some(""), "noeviction")),
            ["redis-no-persistence"]
        );
        assert!(codes(&durability(true, Some(""), "noeviction")).is_empty());
        assert!(codes(&durability(false, Some("3600 1 300 100"), "noeviction")).is_empty());
        assert!(
            codes(&durability(false, None, "noeviction")).is_empty(),
            "unknown save rules are not guessed"
        );
    }

    #[test]
    fn every_policy_but_noeviction_evicts() {
        let all = findings(&durability(true, Some(""), "allkeys-lru"));
        assert_eq!(all[0].code, "redis-evicting");
        assert_eq!(all[0].severity, Severity::Error);
        let volatile = findings(&durability(true, Some(""), "volatile-ttl"));
        assert_eq!(volatile[0].severity, Severity::Warning);
    }

    #[test]
    fn config_replies_are_read_in_either_protocol_and_per_node() {
        let s = |t: &str| Value::BulkString(t.as_bytes().to_vec());
        let resp2 = Value::Array(vec![s("save"), s("3600 1")]);
        assert_eq!(config_value(&resp2, "save").as_deref(), Some("3600 1"));
        let resp3 = Value::Map(vec![(s("save"), s(""))]);
        assert_eq!(config_value(&resp3, "save").as_deref(), Some(""));
        let nodes = Value::Map(vec![(s("127.0.0.1:7000"), resp2)]);
        assert_eq!(config_value(&nodes, "save").as_deref(), Some("3600 1"));
        assert_eq!(config_value(&Value::Nil, "save"), None);
    }
}
