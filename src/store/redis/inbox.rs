//! The inbox: any Redis client enqueues a job with `LPUSH <prefix>inbox:<queue> '<envelope JSON>'`.
//!
//! Workers ingest the inboxes of their queues when a claim finds items waiting there. An ingester
//! moves a batch into a processing list of its own (one script, recording when), turns each item into
//! a job with the lenient envelope reader, then in one `MULTI` enqueues the jobs, files the items that
//! are not jobs under `inbox-rejected:<queue>` with the reason, and deletes its processing list. An
//! ingester that dies in between leaves its list behind; the rescue sweep puts such items back into
//! their inbox once the list is older than the stale-heartbeat threshold. Only an ingester stalled for
//! longer than that, which then finishes, could enqueue an item twice; an item with a `jobId` then
//! comes back as a harmless duplicate. The store does not see the config's limits, so inbox jobs are
//! validated with the built-in ones.

use serde::{Deserialize, Serialize};

use super::{KIND, RedisStore, SCRIPTS, scripts};
use crate::job::{JobSpec, Limits, NewJob};
use crate::store::StoreError;
use crate::time::UnixMillis;

/// Items taken from one inbox per ingest.
const BATCH: usize = 1000;

/// An inbox item that could not become a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedItem {
    /// The inbox it came from.
    pub queue: String,
    /// When it was read.
    pub at: UnixMillis,
    /// Why it is not a job.
    pub error: String,
    /// The item as pushed (lossily decoded when it was not UTF-8).
    pub item: String,
}

impl RedisStore {
    /// The inbox list of a queue.
    pub fn inbox_key(&self, queue: &str) -> String {
        self.key(&format!("inbox:{queue}"))
    }

    fn rejected_key(&self, queue: &str) -> String {
        self.key(&format!("inbox-rejected:{queue}"))
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
        let inbox = self.inbox_key(queue);
        let processing = self.key(&format!(
            "inbox-processing:{queue}:{worker}:{:016x}",
            rand::random::<u64>()
        ));
        let mut take = self.script(&SCRIPTS.inbox_take);
        take.arg(&inbox).arg(&processing).arg(now.0).arg(BATCH);
        let items: Vec<Vec<u8>> = self.eval(&SCRIPTS.inbox_take, &take, "ingest the inbox", false).await?;
        if items.is_empty() {
            return Ok(0);
        }
        let mut jobs = Vec::new();
        let mut rejected = Vec::new();
        for bytes in items {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match self.job_of(queue, &text, now) {
                Ok(job) => jobs.push(job),
                Err(error) => rejected.push(RejectedItem {
                    queue: queue.to_string(),
                    at: now,
                    error,
                    item: text,
                }),
            }
        }
        let mut pipe = redis::pipe();
        pipe.atomic();
        if !jobs.is_empty() {
            let cmd = pipe
                .cmd("EVAL")
                .arg(SCRIPTS.enqueue.source())
                .arg(0)
                .arg(&self.settings.prefix);
            let mut args = redis::Cmd::new();
            scripts::enqueue_args(&mut args, &jobs);
            for arg in args.args_iter() {
                if let redis::Arg::Simple(bytes) = arg {
                    cmd.arg(bytes);
                }
            }
            cmd.ignore();
        }
        for item in &rejected {
            tracing::warn!(queue, error = %item.error, "inbox item rejected");
            let record = serde_json::to_string(item).map_err(|e| StoreError::query(KIND, "ingest the inbox", e))?;
            pipe.cmd("RPUSH").arg(self.rejected_key(queue)).arg(record).ignore();
        }
        pipe.cmd("DEL").arg(&processing).ignore();
        pipe.cmd("HDEL")
            .arg(self.key("inbox-processing"))
            .arg(&processing)
            .ignore();
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(self.fail("ingest the inbox"))?;
        Ok(jobs.len())
    }

    /// An inbox item as a job of `queue` (unless its envelope names another), or why it is none.
    fn job_of(&self, queue: &str, text: &str, now: UnixMillis) -> Result<NewJob, String> {
        let mut spec = JobSpec::from_json_line(text, self.settings.inbox_default_type.as_deref())?;
        if spec.queue.is_none() {
            spec.queue = Some(queue.to_string());
        }
        NewJob::validate(spec, now, &Limits::default())
    }

    /// The rejected inbox items of some queues (every queue when empty), oldest first, at most `limit`
    /// per queue.
    pub async fn rejected_items(&self, queues: &[String], limit: usize) -> Result<Vec<RejectedItem>, StoreError> {
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
        let pattern = self.key("inbox-rejected:*");
        let head = self.key("inbox-rejected:");
        let mut cursor: u64 = 0;
        let mut queues = Vec::new();
        loop {
            let (next, keys): (u64, Vec<String>) = self
                .query(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(1000),
                    "list rejected inbox items",
                )
                .await?;
            queues.extend(keys.iter().filter_map(|k| k.strip_prefix(&head)).map(str::to_string));
            if next == 0 {
                break;
            }
            cursor = next;
        }
        queues.sort();
        queues.dedup();
        Ok(queues)
    }

    /// Deletes the rejected items of some queues (every queue when empty); returns how many.
    pub async fn clear_rejected(&self, queues: &[String]) -> Result<u64, StoreError> {
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
            total += n;
        }
        Ok(total)
    }
}
