//! The inbox: any Redis client enqueues a job with `LPUSH <prefix>inbox:<queue> '<envelope JSON>'`.
//!
//! Workers ingest the inboxes of their queues when a claim finds items waiting there. An ingester
//! moves a batch into a processing list of its own (one script, which records when), turns each item
//! into a job with the lenient envelope reader, enqueues the jobs, then in one more script files the
//! items that are not jobs under the inbox's rejected list and deletes its processing list. The
//! processing lists, their registry and the rejected list are named inside the inbox key's hash tag
//! (`{<prefix>inbox:<queue>}:…`), so both scripts stay in the inbox's slot on a Redis Cluster.
//!
//! An item is never lost: an ingester that dies leaves its list behind, and the next ingest of that
//! inbox after [`STALE_AFTER`] takes the list over whole. Nor is it enqueued twice: an item without a
//! `jobId` gets an id made from its list's name and its place in it, so an ingest that is repeated
//! (taken over, or by a stalled ingester that wakes) finds its jobs already there. The store does not
//! see the config's limits, so inbox jobs are validated with the built-in ones.

use crate::store::RejectedItem;

use super::{KIND, RedisStore, SCRIPTS};
use crate::job::{JobId, JobSpec, Limits, NewJob};
use crate::store::{Store, StoreError};
use crate::time::UnixMillis;

/// Items taken from one inbox per ingest.
const BATCH: usize = 1000;

/// A processing list not finished within this long is taken over by the next ingest: its ingester
/// died (an ingest holds a list for milliseconds).
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

impl RedisStore {
    /// The inbox list of a queue.
    pub fn inbox_key(&self, queue: &str) -> String {
        self.key(&format!("inbox:{queue}"))
    }

    /// A key in the inbox's hash slot: the inbox key is its hash tag.
    fn inbox_side_key(&self, queue: &str, name: &str) -> String {
        format!("{{{}}}:{name}", self.inbox_key(queue))
    }

    /// The inbox's processing lists, each with when it was taken.
    pub(super) fn inbox_registry_key(&self, queue: &str) -> String {
        self.inbox_side_key(queue, "processing")
    }

    fn rejected_key(&self, queue: &str) -> String {
        self.inbox_side_key(queue, "rejected")
    }

    /// Ingests up to one batch from the inbox of each queue as `worker`; returns how many jobs were
    /// enqueued (created or not).
    pub async fn ingest(&self, queues: &[String], worker: &str, now: UnixMillis) -> Result<usize, StoreError> {
        let mut total = 0;
        for queue in queues {
            total += self.ingest_queue(queue, worker, now).await?;
        }
        Ok(total)
    }

    async fn ingest_queue(&self, queue: &str, worker: &str, now: UnixMillis) -> Result<usize, StoreError> {
        let registry = self.inbox_registry_key(queue);
        let fresh = format!("{registry}:{worker}:{}", JobId::generate());
        let mut take = self.script(&SCRIPTS.inbox_take, &[self.inbox_key(queue), registry.clone(), fresh]);
        let stale_before = now.0.saturating_sub(STALE_AFTER.as_millis() as i64);
        take.arg(now.0).arg(stale_before).arg(BATCH);
        // Nothing to take is an empty reply.
        let taken: Vec<redis::Value> = self.eval(&SCRIPTS.inbox_take, &take, "ingest the inbox", false).await?;
        if taken.is_empty() {
            return Ok(0);
        }
        let (list, items): (String, Vec<Vec<u8>>) =
            redis::from_redis_value(redis::Value::Array(taken)).map_err(|e| self.fail("ingest the inbox")(e.into()))?;
        let mut jobs = Vec::new();
        let mut rejected = Vec::new();
        for (n, bytes) in items.into_iter().enumerate() {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match self.job_of(queue, &text, now, item_id(&list, n)) {
                Ok(job) => jobs.push(job),
                Err(error) => rejected.push(RejectedItem {
                    queue: queue.to_string(),
                    at: now,
                    error,
                    item: text,
                }),
            }
        }
        self.enqueue(&jobs).await?;
        let mut done = self.script(&SCRIPTS.inbox_done, &[registry, list, self.rejected_key(queue)]);
        for item in &rejected {
            tracing::warn!(queue, error = %item.error, "inbox item rejected");
            let record = serde_json::to_string(item).map_err(|e| StoreError::query(KIND, "ingest the inbox", e))?;
            done.arg(record);
        }
        let _: i64 = self.eval(&SCRIPTS.inbox_done, &done, "ingest the inbox", true).await?;
        if !rejected.is_empty() {
            let _: () = self
                .query(
                    redis::cmd("SADD").arg(self.key("inbox-rejected")).arg(queue),
                    "ingest the inbox",
                )
                .await?;
        }
        Ok(jobs.len())
    }

    /// An inbox item as a job of `queue` (unless its envelope names another), or why it is none.
    /// `id` is the job's id when the item has none.
    fn job_of(&self, queue: &str, text: &str, now: UnixMillis, id: String) -> Result<NewJob, String> {
        let mut spec = JobSpec::from_json_line(text, self.settings.inbox_default_type.as_deref())?;
        if spec.queue.is_none() {
            spec.queue = Some(queue.to_string());
        }
        if spec.id.is_none() {
            spec.id = Some(id);
        }
        NewJob::validate(spec, now, &Limits::default())
    }

    /// The rejected inbox items of some queues (every queue when empty), oldest first, at most `limit`
    /// per queue.
    pub(super) async fn rejected_items(
        &self,
        queues: &[String],
        limit: usize,
    ) -> Result<Vec<RejectedItem>, StoreError> {
        let queues = if queues.is_empty() {
            self.rejected_queues().await?
        } else {
            queues.to_vec()
        };
        let mut out = Vec::new();
        for queue in queues {
            let records: Vec<String> = self
                .query(
                    redis::cmd("LRANGE")
                        .arg(self.rejected_key(&queue))
                        .arg(0)
                        .arg(limit.saturating_sub(1) as i64),
                    "list rejected inbox items",
                )
                .await?;
            for record in records {
                let item = serde_json::from_str(&record).map_err(|e| StoreError::Corrupt {
                    kind: KIND,
                    id: format!("rejected inbox item of {queue}"),
                    reason: e.to_string(),
                })?;
                out.push(item);
            }
        }
        Ok(out)
    }

    /// Queues that have rejected inbox items.
    async fn rejected_queues(&self) -> Result<Vec<String>, StoreError> {
        let mut queues: Vec<String> = self
            .query(
                redis::cmd("SMEMBERS").arg(self.key("inbox-rejected")),
                "list rejected inbox items",
            )
            .await?;
        queues.sort();
        Ok(queues)
    }

    /// Deletes the rejected items of some queues (every queue when empty); returns how many.
    pub(super) async fn clear_rejected(&self, queues: &[String]) -> Result<u64, StoreError> {
        let queues = if queues.is_empty() {
            self.rejected_queues().await?
        } else {
            queues.to_vec()
        };
        let mut total = 0;
        for queue in queues {
            let n: u64 = self
                .query(
                    redis::cmd("LLEN").arg(self.rejected_key(&queue)),
                    "clear rejected inbox items",
                )
                .await?;
            let _: () = self
                .query(
                    redis::cmd("DEL").arg(self.rejected_key(&queue)),
                    "clear rejected inbox items",
                )
                .await?;
            let _: () = self
                .query(
                    redis::cmd("SREM").arg(self.key("inbox-rejected")).arg(&queue),
                    "clear rejected inbox items",
                )
                .await?;
            total += n;
        }
        Ok(total)
    }
}

/// The id of the `n`th item of a processing list that gives none: the list's name ends in a fresh
/// UUIDv7, and the item's place is added to its random bits, so the ids are new, distinct, and the
/// same each time the list is ingested.
pub(super) fn item_id(list: &str, n: usize) -> String {
    let base = list
        .rsplit(':')
        .next()
        .and_then(|tail| uuid::Uuid::parse_str(tail).ok())
        .map(|u| u.as_u128())
        .unwrap_or_default();
    // The low 62 bits are random in a UUIDv7; version and variant bits stay as they are.
    const RANDOM: u128 = (1 << 62) - 1;
    let bits = (base & !RANDOM) | (base.wrapping_add(n as u128) & RANDOM);
    uuid::Uuid::from_u128(bits).to_string()
}
