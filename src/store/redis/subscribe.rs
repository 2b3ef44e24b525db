//! Wake-ups: every script that makes work ready appends `q=<queue>` to the `wake` stream (capped at a
//! few dozen entries). A subscription reads it with `XREAD BLOCK` on a connection of its own, so every
//! idle worker of every process wakes within a round trip of an enqueue, and between entries it looks
//! at the length of its queues' inboxes, which plain clients push to without a script. While the
//! server cannot be reached it signals at a steady pace (the caller polls) and reconnects with
//! back-off.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Value};
use tokio::sync::Notify;

use super::RedisStore;

/// How long one `XREAD` blocks; between two, the inboxes are looked at.
const BLOCK: Duration = Duration::from_millis(100);

/// While the connection is down, a subscription signals this often so its waiter polls.
const FALLBACK_POLL: Duration = Duration::from_millis(250);

/// Longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// One stream of an `XREAD` answer: its key, and its entries as (id, [field, value, …]).
type StreamReply = (String, Vec<(String, Vec<String>)>);

pub(super) struct Listener {
    client: Client,
    stream: String,
    inboxes: Vec<String>,
    queues: HashSet<String>,
    connect_timeout: Duration,
}

impl Listener {
    pub(super) fn new(store: &RedisStore, queues: &[String]) -> Listener {
        Listener {
            client: store.client.clone(),
            stream: store.key("wake"),
            inboxes: queues.iter().map(|q| store.inbox_key(q)).collect(),
            queues: queues.iter().cloned().collect(),
            connect_timeout: store.settings.connect_timeout,
        }
    }

    pub(super) async fn run(self, notify: Arc<Notify>) {
        let mut backoff = Duration::from_millis(100);
        // The last entry seen, so that nothing appended while reconnecting is missed.
        let mut last: Option<String> = None;
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

    async fn connect(&self) -> redis::RedisResult<MultiplexedConnection> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(BLOCK + self.connect_timeout));
        self.client.get_multiplexed_async_connection_with_config(&config).await
    }

    async fn listen(&self, notify: &Notify, last: &mut Option<String>) -> redis::RedisResult<()> {
        let mut conn = self.connect().await?;
        if last.is_none() {
            // Start from the newest entry: older ones were there before the caller began waiting.
            let newest: Vec<(String, Value)> = redis::cmd("XREVRANGE")
                .arg(&self.stream)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut conn)
                .await?;
            *last = Some(
                newest
                    .into_iter()
                    .next()
                    .map(|(id, _)| id)
                    .unwrap_or_else(|| "0-0".into()),
            );
        }
        // Connected: wake once, in case work arrived while down.
        notify.notify_one();
        loop {
            let from = last.clone().unwrap_or_else(|| "0-0".into());
            let reply: Option<Vec<StreamReply>> = redis::cmd("XREAD")
                .arg("BLOCK")
                .arg(BLOCK.as_millis() as u64)
                .arg("STREAMS")
                .arg(&self.stream)
                .arg(&from)
                .query_async(&mut conn)
                .await?;
            match reply {
                Some(streams) => {
                    let mut wanted = false;
                    for (_, entries) in streams {
                        for (id, fields) in entries {
                            wanted |= self.queues.is_empty()
                                || fields
                                    .chunks_exact(2)
                                    .any(|kv| kv[0] == "q" && self.queues.contains(&kv[1]));
                            *last = Some(id);
                        }
                    }
                    if wanted {
                        notify.notify_one();
                    }
                }
                None if !self.inboxes.is_empty() => {
                    let mut pipe = redis::pipe();
                    for key in &self.inboxes {
                        pipe.cmd("LLEN").arg(key);
                    }
                    let lengths: Vec<u64> = pipe.query_async(&mut conn).await?;
                    if lengths.iter().any(|&n| n > 0) {
                        notify.notify_one();
                    }
                }
                None => {}
            }
        }
    }
}
