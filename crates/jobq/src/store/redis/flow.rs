//! Flow control on Redis (see `store/flow.rs` for the rules). Pauses, blocks and recorded limits are
//! three hashes under the store's prefix, written and read with one command each; a limited claim is
//! `claim_limited.lua`, one script per hash slot of the claim's queues, which keeps the limits' state
//! (slots and rate buckets) under one flow prefix on a single server and per queue on a cluster.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `pauses` | hash | `<queue>\n<type>` (type empty for the whole queue) → paused at (ms) |
//! | `blocks` | hash | `<type>\n*` or `<type>\n=<partition>` → blocked until (ms) |
//! | `limits` | hash | scope key → the recorded limit, as JSON |
//! | `flow:used` | hash | a limited claim's slot counts: `<scope>\n<partition>` → running jobs holding one of its slots (on a cluster `{q}:flow:…`, like every key below) |
//! | `flow:counted` | string | when the slot counts were last recounted from the running jobs, and how many that read (kept 60 s) |
//! | `flow:rate:…` | string | a rate limit's bucket |
//! | `flow:depth` | string | how many jobs the last claim under a partitioned limit started (5 s), which bounds how far the next one reads |
//! | `flow:held:<pending set>` | string | a run of held-back jobs at the front of a pending set, as the last claim that read only such jobs left it (1 s), which the next claims under the same held-back types start after |

use serde_json::{Value as Json, json};

use redis::Cmd;

use super::RedisStore;
use super::calls::{finish_args, jobs_from};
use super::connection::slot;
use super::scripts::SCRIPTS;
use crate::job::Job;
use crate::store::{
    Block, Claim, FieldPath, Finish, FinishedAndClaimed, FlowState, Limit, Pause, Rate, RecordedLimit, Scope,
    StoreError,
};
use crate::time::UnixMillis;

impl RedisStore {
    pub(super) async fn read_flow_state(&self, now: UnixMillis) -> Result<FlowState, StoreError> {
        let operation = "reading pauses and blocks";
        let pauses: Vec<(String, i64)> = self
            .query(redis::cmd("HGETALL").arg(self.key("pauses")), operation)
            .await?;
        let mut pauses: Vec<Pause> = pauses
            .into_iter()
            .filter_map(|(field, since)| {
                let (queue, job_type) = field.split_once('\n')?;
                Some(Pause {
                    queue: queue.to_string(),
                    job_type: (!job_type.is_empty()).then(|| job_type.to_string()),
                    since: UnixMillis(since),
                })
            })
            .collect();
        pauses.sort_by(|a, b| (&a.queue, &a.job_type).cmp(&(&b.queue, &b.job_type)));
        let blocks: Vec<(String, i64)> = self
            .query(redis::cmd("HGETALL").arg(self.key("blocks")), operation)
            .await?;
        let mut blocks: Vec<Block> = blocks
            .into_iter()
            .filter(|(_, until)| *until > now.0)
            .filter_map(|(field, until)| {
                let (job_type, which) = field.split_once('\n')?;
                let partition = match which {
                    "*" => None,
                    p => Some(p.strip_prefix('=')?.to_string()),
                };
                Some(Block {
                    job_type: job_type.to_string(),
                    partition,
                    until: UnixMillis(until),
                })
            })
            .collect();
        blocks.sort_by(|a, b| (&a.job_type, &a.partition).cmp(&(&b.job_type, &b.partition)));
        Ok(FlowState { pauses, blocks })
    }

    pub(super) async fn write_paused(
        &self,
        queue: &str,
        job_type: Option<&str>,
        paused: bool,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let field = format!("{queue}\n{}", job_type.unwrap_or(""));
        let mut cmd = if paused {
            redis::cmd("HSETNX")
        } else {
            redis::cmd("HDEL")
        };
        cmd.arg(self.key("pauses")).arg(field);
        if paused {
            cmd.arg(now.0);
        }
        let changed: i64 = self.query(&cmd, if paused { "pausing" } else { "resuming" }).await?;
        Ok(changed > 0)
    }

    pub(super) async fn write_block(&self, block: &Block, now: UnixMillis) -> Result<(), StoreError> {
        let field = match &block.partition {
            None => format!("{}\n*", block.job_type),
            Some(p) => format!("{}\n={p}", block.job_type),
        };
        let mut cmd = self.script(&SCRIPTS.block, &[self.key("blocks")]);
        cmd.arg(field).arg(block.until.0).arg(now.0);
        self.eval::<i64>(&SCRIPTS.block, &cmd, "recording a block", true)
            .await
            .map(drop)
    }

    pub(super) async fn write_limits(&self, limits: &[Limit], worker: &str, now: UnixMillis) -> Result<(), StoreError> {
        if limits.is_empty() {
            return Ok(());
        }
        let mut cmd = redis::cmd("HSET");
        cmd.arg(self.key("limits"));
        for limit in limits {
            let record = json!({
                "gc": limit.global_concurrency,
                "rc": limit.rate.map(|r| r.count),
                "rp": limit.rate.map(|r| r.per_ms),
                "pb": limit.partition.as_ref().map(|p| p.to_string()),
                "by": worker,
                "at": now.0,
            });
            cmd.arg(limit.scope.key()).arg(record.to_string());
        }
        self.query::<i64>(&cmd, "recording limits").await.map(drop)
    }

    pub(super) async fn read_limits(&self) -> Result<Vec<RecordedLimit>, StoreError> {
        let all: Vec<(String, String)> = self
            .query(redis::cmd("HGETALL").arg(self.key("limits")), "reading limits")
            .await?;
        let mut out: Vec<RecordedLimit> = all
            .into_iter()
            .filter_map(|(scope, record)| {
                let scope = Scope::from_key(&scope)?;
                let r: Json = serde_json::from_str(&record).ok()?;
                let count = r["rc"].as_u64().and_then(|n| u32::try_from(n).ok());
                let per_ms = r["rp"].as_u64();
                Some(RecordedLimit {
                    limit: Limit {
                        scope,
                        global_concurrency: r["gc"].as_u64().and_then(|n| u32::try_from(n).ok()),
                        rate: count.zip(per_ms).map(|(count, per_ms)| Rate { count, per_ms }),
                        partition: r["pb"].as_str().and_then(|p| p.parse::<FieldPath>().ok()),
                    },
                    recorded_by: r["by"].as_str().unwrap_or_default().to_string(),
                    recorded_at: UnixMillis(r["at"].as_i64().unwrap_or_default()),
                })
            })
            .collect();
        out.sort_by_key(|r| r.limit.scope.key());
        Ok(out)
    }

    /// A limited claim of up to `limit` jobs (not `claim.limit`: an inbox ingest may ask for the rest):
    /// `claim_limited.lua` for each hash slot's queues, until that many are taken.
    pub(super) async fn claim_limited(&self, claim: &Claim, limit: u32) -> Result<Vec<Job>, StoreError> {
        let rules = limited_rules(claim).to_string();
        let mut jobs = Vec::new();
        for group in self.slot_groups(&claim.queues) {
            let left = limit - jobs.len() as u32;
            if left == 0 {
                break;
            }
            let keys: Vec<String> = group.iter().map(|q| self.queue_prefix(q)).collect();
            let mut cmd = self.script(&SCRIPTS.claim_limited, &keys);
            self.limited_claim_args(&mut cmd, claim, left, &rules);
            let reply: Vec<redis::Value> = self.eval(&SCRIPTS.claim_limited, &cmd, "claim", false).await?;
            let mut taken = jobs_from(reply, "claim", self)?;
            for job in &mut taken {
                claim.lease(job);
            }
            jobs.extend(taken);
        }
        crate::store::batch::sort_in_claim_order(&mut jobs);
        Ok(jobs)
    }

    /// The arguments of `claim_limited.lua` after its keys.
    fn limited_claim_args(&self, cmd: &mut Cmd, claim: &Claim, limit: u32, rules: &str) {
        let flow_prefix = if self.is_cluster() {
            String::new()
        } else {
            self.key("flow:")
        };
        cmd.arg(super::codec::run_key(claim.now))
            .arg(claim.now.0)
            .arg(&claim.worker)
            .arg(limit)
            .arg(flow_prefix)
            .arg(rules);
    }

    /// `Store::finish_and_claim` for a limited claim, as one script (`finish_and_claim.lua`): the
    /// outcomes, then the claim, which sees the slots they freed. `None`, with nothing written, when
    /// one script cannot hold both: outcomes of several queues, or (on a cluster) a claim beyond
    /// their queue's hash slot. Jobs waiting in a queue's inbox are ingested and claimed after it,
    /// as a claim does.
    pub(super) async fn finish_and_claim_joined(
        &self,
        finishes: &[Finish],
        claim: &Claim,
    ) -> Result<Option<FinishedAndClaimed>, StoreError> {
        let Some(queue) = finishes.first().map(|f| f.lease.queue.as_str()) else {
            return Ok(None);
        };
        let groups = self.slot_groups(&claim.queues);
        let [group] = groups.as_slice() else {
            return Ok(None);
        };
        let same_slot = !self.is_cluster() || group.iter().all(|q| slot(q) == slot(queue));
        if !same_slot || finishes.iter().any(|f| f.lease.queue != queue) {
            return Ok(None);
        }
        let mut outcomes = redis::cmd("finish.lua");
        outcomes.arg(claim.now.0).arg(finishes.len());
        for finish in finishes {
            finish_args(&mut outcomes, finish, claim.now);
        }
        let mut keys = vec![self.queue_prefix(queue)];
        keys.extend(group.iter().map(|q| self.queue_prefix(q)));
        let mut cmd = self.script(&SCRIPTS.finish_and_claim, &keys);
        let outcome_args: Vec<&[u8]> = outcomes
            .args_iter()
            .skip(1)
            .filter_map(|arg| match arg {
                redis::Arg::Simple(bytes) => Some(bytes),
                _ => None,
            })
            .collect();
        cmd.arg(outcome_args.len());
        for arg in outcome_args {
            cmd.arg(arg);
        }
        self.limited_claim_args(&mut cmd, claim, claim.limit, &limited_rules(claim).to_string());
        let joined =
            self.eval::<(Vec<u8>, Vec<redis::Value>)>(&SCRIPTS.finish_and_claim, &cmd, "finish and claim", false);
        let (joined, waiting) = tokio::join!(joined, self.inbox_waiting(&claim.queues));
        let (applied, reply) = joined?;
        let mut jobs = jobs_from(reply, "claim", self)?;
        for job in &mut jobs {
            claim.lease(job);
        }
        if waiting.is_ok_and(|n| n > 0) && (jobs.len() as u32) < claim.limit {
            // The outcomes are written and these jobs leased: a failure from here on is the
            // inbox's, and costs only the jobs it would have added.
            let more = match self.ingest(&claim.queues, &claim.worker, claim.now).await {
                Ok(0) => Ok(Vec::new()),
                Ok(_) => self.claim_limited(claim, claim.limit - jobs.len() as u32).await,
                Err(e) => Err(e),
            };
            match more {
                Ok(more) => {
                    jobs.extend(more);
                    crate::store::batch::sort_in_claim_order(&mut jobs);
                }
                Err(e) => tracing::warn!("ingesting the inbox failed: {e}"),
            }
        }
        Ok(Some(FinishedAndClaimed {
            applied: applied.into_iter().map(|r| r == 1).collect(),
            claimed: Ok(jobs),
        }))
    }
}

/// An object without its null fields: cjson reads a JSON null as a value that Lua takes for true.
fn without_nulls(value: Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect()),
        other => other,
    }
}

/// The rules `claim_limited.lua` reads (see its header).
fn limited_rules(claim: &Claim) -> Json {
    let flow = &claim.flow;
    let mut paused = serde_json::Map::new();
    for p in &flow.pauses {
        let entry = paused.entry(p.queue.clone()).or_insert_with(|| json!([]));
        if let Json::Array(types) = entry {
            types.push(json!(p.job_type.clone().unwrap_or_default()));
        }
    }
    let live_blocks = flow.blocks.iter().filter(|b| b.until > claim.now);
    let blocked_types: Vec<&str> = live_blocks
        .clone()
        .filter(|b| b.partition.is_none())
        .map(|b| b.job_type.as_str())
        .collect();
    let mut blocked_partitions = serde_json::Map::new();
    for b in live_blocks {
        if let Some(p) = &b.partition {
            let entry = blocked_partitions
                .entry(b.job_type.clone())
                .or_insert_with(|| json!([]));
            if let Json::Array(parts) = entry {
                parts.push(json!(p));
            }
        }
    }
    let limits: Vec<Json> = flow
        .limits
        .iter()
        .map(|l| {
            let (root, keys) = match &l.partition {
                Some(path) => {
                    let (column, keys) = path.column_and_keys();
                    (Some(column), keys)
                }
                None => (None, Vec::new()),
            };
            json!({
                "s": l.scope.key(),
                "t": match &l.scope { Scope::Type(t) => Some(t), Scope::Queue(_) => None },
                "q": match &l.scope { Scope::Queue(q) => Some(q), Scope::Type(_) => None },
                "gc": l.global_concurrency,
                "rc": l.rate.map(|r| r.count),
                "rp": l.rate.map(|r| r.per_ms),
                "pf": root,
                "pk": keys,
            })
        })
        .map(without_nulls)
        .collect();
    // cjson reads an empty JSON object and an empty array alike; every list here is read as a list.
    json!({
        "ex": claim.exclude_types,
        "pq": paused,
        "bt": blocked_types,
        "bp": blocked_partitions,
        "lim": limits,
    })
}
