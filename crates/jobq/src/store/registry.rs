//! The registry's records: the workers (and bridges) `jobq workers` lists, and the inbox items that
//! could not become jobs.

use serde::{Deserialize, Serialize};

use crate::time::UnixMillis;

/// A worker process as it registered itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerInfo {
    /// Unique id: name, host, pid and a random suffix.
    pub id: String,
    /// The name given with `--name` (or the host name).
    pub name: String,
    /// Host it runs on.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Queues it serves.
    pub queues: Vec<String>,
    /// When it started.
    pub started_at: UnixMillis,
    /// Its last registry heartbeat.
    pub last_seen_at: UnixMillis,
    /// Jobs it has finished; for a bridge, the jobs its messages created.
    pub jobs_done: u64,
    /// What a bridge reads and its counts; `None` for a worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<BridgeInfo>,
}

/// A bridge's part of its registry entry (`jobq bridge`): where it reads, and what became of the
/// messages that were not new jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeInfo {
    /// The broker (its URL without a password) and the queue or topic it consumes.
    pub source: String,
    /// Messages whose job was there already (a redelivery, a job id sent twice).
    pub duplicates: u64,
    /// Messages that could not become jobs, rejected to the broker.
    pub rejected: u64,
}

/// Which rejected inbox items [`crate::store::Store::rejected_inbox_items`] reads.
#[derive(Debug, Clone, Copy)]
pub struct RejectedInbox<'a> {
    /// Of these queues; every queue when empty.
    pub queues: &'a [String],
    /// At most this many per queue, oldest first.
    pub limit: usize,
}

/// An item pushed to a store's inbox that could not become a job (see [`Store::rejected_inbox_items`](crate::store::Store::rejected_inbox_items)).
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
