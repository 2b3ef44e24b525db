//! Wake-ups: every script that makes work ready appends an entry to its queue's wake-up stream,
//! `{q}:wake` (capped at a hundred or two entries). A subscription reads its queues' streams with `XREAD
//! BLOCK` on a connection of its own, so every idle worker of every process wakes within a round trip
//! of an enqueue, and between reads it looks at the length of its queues' inboxes, which plain clients
//! push to without a script. On a cluster, one `XREAD` names keys of one slot only, so a subscription
//! reads each slot's streams in a task of its own. While the server cannot be reached it signals at a
//! steady pace (the caller polls) and reconnects with back-off.

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use tokio::sync::Notify;

use super::RedisStore;
use super::connection::{Conn, Connector};
use super::outbox::Sources;

/// How long one `XREAD` blocks; between two, the inboxes are looked at.
const BLOCK: Duration = Duration::from_millis(100);

/// While the connection is down, a subscription signals this often so its waiter polls.
const FALLBACK_POLL: Duration = Duration::from_millis(250);

/// Longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// One stream of an `XREAD` answer: its key, and its entries as (id, [field, value, …]).
type StreamReply = (String, Vec<(String, Vec<String>)>);

pub(super) struct Listener {
    connector: Connector,
    /// Per group of queues that one `XREAD` may name: the queues, their streams and inboxes.
    groups: Vec<(Vec<String>, Vec<String>, Vec<String>)>,
    connect_timeout: Duration,
    /// What the store has read of its queues' sources (see `outbox.rs`), forgotten for a queue whose
    /// stream says it has a new one.
    sources: Sources,
}

impl Listener {
    pub(super) fn new(store: &RedisStore, queues: &[String]) -> Listener {
        let groups = store
            .slot_groups(queues)
            .into_iter()
            .filter(|group| !group.is_empty())
            .map(|group| {
                let names = group.iter().map(|q| q.to_string()).collect();
                let streams = group.iter().map(|q| format!("{}wake", store.queue_prefix(q))).collect();
                let inboxes = group.iter().map(|q| store.inbox_key(q)).collect();
                (names, streams, inboxes)
            })
            .collect();
        Listener {
            connector: store.connector.clone(),
            groups,
            connect_timeout: store.settings.connect_timeout,
            sources: store.sources.clone(),
        }
    }

    pub(super) async fn run(self, notify: Arc<Notify>) {
        let connector = Arc::new(self.connector);
        // A JoinSet aborts its tasks when dropped: they end with this task, when the subscription is
        // dropped.
        let mut groups = tokio::task::JoinSet::new();
        for (queues, streams, inboxes) in self.groups {
            let group = Group {
                connector: connector.clone(),
                queues,
                streams,
                inboxes,
                connect_timeout: self.connect_timeout,
                sources: self.sources.clone(),
            };
            groups.spawn(group.run(notify.clone()));
        }
        groups.join_all().await;
    }
}

/// The queues whose streams one `XREAD` may name together, their streams and their inboxes.
struct Group {
    connector: Arc<Connector>,
    queues: Vec<String>,
    streams: Vec<String>,
    inboxes: Vec<String>,
    connect_timeout: Duration,
    sources: Sources,
}

impl Group {
    async fn run(self, notify: Arc<Notify>) {
        let mut backoff = Duration::from_millis(100);
        // The last entry seen per stream, so that nothing appended while reconnecting is missed.
        let mut last: Option<Vec<String>> = None;
        loop {
            match self.listen(&notify, &mut last).await {
                Ok(()) => {}
                Err(e) => tracing::debug!("wake-up connection lost: {e}"),
            }
            // Down: let the caller poll while trying again.
            let until = tokio::time::Instant::now() + backoff;
            while tokio::time::Instant::now() < until {
                notify.notify_one();
                tokio::time::sleep(FALLBACK_POLL.min(backoff)).await;
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn listen(&self, notify: &Notify, last: &mut Option<Vec<String>>) -> redis::RedisResult<()> {
        let mut conn = self
            .connector
            .connect(self.connect_timeout, BLOCK + self.connect_timeout)
            .await?;
        if last.is_none() {
            // Start from each stream's newest entry: older ones were there before the caller began.
            let mut newest = Vec::new();
            for stream in &self.streams {
                newest.push(newest_entry(&mut conn, stream).await?);
            }
            *last = Some(newest);
        }
        // Connected: wake once, in case work arrived while down.
        notify.notify_one();
        let Some(from) = last.as_mut() else {
            return Ok(());
        };
        loop {
            let reply: Option<Vec<StreamReply>> = redis::cmd("XREAD")
                .arg("BLOCK")
                .arg(BLOCK.as_millis() as u64)
                .arg("STREAMS")
                .arg(&self.streams)
                .arg(&*from)
                .query_async(&mut conn)
                .await?;
            match reply {
                Some(streams) => {
                    for (key, entries) in streams {
                        let Some(n) = self.streams.iter().position(|s| *s == key) else {
                            continue;
                        };
                        if let Some((id, _)) = entries.last() {
                            from[n] = id.clone();
                        }
                        // An enqueue that gave the queue a new source (`enqueue_after.lua`).
                        if entries
                            .iter()
                            .any(|(_, fields)| fields.first().is_some_and(|f| f == "s"))
                        {
                            self.sources.forget(&self.queues[n]);
                        }
                    }
                    notify.notify_one();
                }
                None if !self.inboxes.is_empty() => {
                    let mut waiting = false;
                    for key in &self.inboxes {
                        let n: u64 = redis::cmd("LLEN").arg(key).query_async(&mut conn).await?;
                        waiting |= n > 0;
                    }
                    if waiting {
                        notify.notify_one();
                    }
                }
                None => {}
            }
        }
    }
}

/// The id of a stream's newest entry, or `0-0` when it has none.
async fn newest_entry(conn: &mut Conn, stream: &str) -> redis::RedisResult<String> {
    let newest: Vec<(String, Value)> = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(conn)
        .await?;
    Ok(newest
        .into_iter()
        .next()
        .map(|(id, _)| id)
        .unwrap_or_else(|| "0-0".into()))
}
