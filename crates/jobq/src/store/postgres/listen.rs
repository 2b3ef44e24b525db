//! PostgreSQL's wake-ups: an insert into `jobq_jobs` (jobq's own or an application's plain `INSERT`)
//! fires a statement trigger that NOTIFYs channel `jobq_jobs` when its transaction commits; releases,
//! rescues and replays notify from their own statements ([`notify_cte`]). [`Listener`] LISTENs on a
//! dedicated connection, turns notifications for the caller's queues into wake-ups, and, while that
//! connection is down, signals at a steady pace so the caller polls, reconnecting in the background.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::store::sql::pause_unless_stopped;

/// The NOTIFY channel of new work (the migration's trigger uses the same name).
pub(super) const CHANNEL: &str = "jobq_jobs";

/// While the listening connection is down, a subscription signals this often so its waiter polls.
const FALLBACK_POLL: Duration = Duration::from_millis(250);

/// A listening connection that has heard nothing for this long proves it is alive by notifying
/// itself; a half-open TCP connection would otherwise go unnoticed until the kernel gives up on it.
const LISTEN_QUIET: Duration = Duration::from_secs(30);

/// How long the self-notification may take before the listening connection is taken for dead.
const LISTEN_PING_WAIT: Duration = Duration::from_secs(5);

/// Longest pause between reconnection attempts of a subscription.
const LISTEN_MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The schema `jobq_jobs` resolves to on this connection: notifications name it, so that listeners of
/// other jobq schemas in the same database can ignore them.
macro_rules! jobs_schema {
    () => {
        "(SELECT n.nspname::text FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('jobq_jobs'))"
    };
}
const JOBS_SCHEMA: &str = jobs_schema!();

/// Wakes the listeners of the queue it binds when its transaction commits: for statements of the
/// shared SQL layer that make jobs pending.
pub(super) const NOTIFY_READY: &str = concat!(
    "SELECT pg_notify('jobq_jobs', json_build_object('schema', ",
    jobs_schema!(),
    ", 'queue', $1::text)::text)"
);

/// A CTE named `n` that notifies listeners once per queue in which the rows of `source` (a CTE with
/// `queue` and `status` columns) made jobs pending. Reading `n` runs it; a volatile CTE is evaluated
/// once, and PostgreSQL delivers the notifications when the statement's transaction commits.
pub(super) fn notify_cte(source: &str) -> String {
    format!(
        "n AS (SELECT count(pg_notify('{CHANNEL}', \
         json_build_object('schema', {JOBS_SCHEMA}, 'queue', d.queue)::text)) \
         AS sent FROM (SELECT DISTINCT queue FROM {source} WHERE status = 'pending') AS d)"
    )
}

/// A notification's payload, as the trigger and [`notify_cte`] write it.
#[derive(Deserialize)]
struct WakePayload {
    schema: Option<String>,
    queue: Option<String>,
}

/// The task behind the store's `subscribe`.
pub(super) struct Listener {
    pub options: PgConnectOptions,
    /// The store's pool: finds the schema of `jobq_jobs` and sends the liveness pings.
    pub pool: PgPool,
    pub queues: HashSet<String>,
    pub notify: Arc<Notify>,
    pub connect_timeout: Duration,
    pub url: String,
}

impl Listener {
    /// Listens until `stop` is cancelled (the subscription dropped, the store closed), reconnecting
    /// with back-off and signalling every [`FALLBACK_POLL`] while the connection is down.
    pub async fn run(self, stop: CancellationToken) {
        let mut failures: u32 = 0;
        loop {
            let outcome = self.session(&mut failures, &stop).await;
            if stop.is_cancelled() {
                return;
            }
            // Notifications sent while the connection was going down are lost: look once.
            self.notify.notify_one();
            match outcome {
                Ok(()) => tracing::debug!("lost the listening connection to {}; reconnecting", self.url),
                Err(e) if failures == 0 => {
                    tracing::warn!(
                        "cannot listen for new jobs at {} ({e}); polling until it is back",
                        self.url
                    )
                }
                Err(e) => tracing::debug!("still cannot listen for new jobs at {}: {e}", self.url),
            }
            failures = failures.saturating_add(1);
            let pause = (FALLBACK_POLL * 2u32.saturating_pow(failures.min(6))).min(LISTEN_MAX_BACKOFF);
            let until = tokio::time::Instant::now() + pause;
            while tokio::time::Instant::now() < until {
                if !pause_unless_stopped(FALLBACK_POLL.min(until - tokio::time::Instant::now()), &stop).await {
                    return;
                }
                self.notify.notify_one();
            }
        }
    }

    /// One listening connection, from connect to loss. `Ok` when the connection was lost after working,
    /// `Err` when it could not be set up or failed.
    async fn session(&self, failures: &mut u32, stop: &CancellationToken) -> Result<(), sqlx::Error> {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .acquire_timeout(self.connect_timeout)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with(self.options.clone());
        // Asked to stop, the listener returns between notifications, never while it connects or
        // subscribes: it drops there and hands its connection back to `pool` (sqlx's drop of it
        // unlistens first), whose close below says goodbye.
        let result = self.listen(&pool, failures, stop).await;
        // Closing says goodbye to the server; a half-open connection must not hold the reconnect up.
        let _ = tokio::time::timeout(self.connect_timeout, pool.close()).await;
        result
    }

    async fn listen(&self, pool: &PgPool, failures: &mut u32, stop: &CancellationToken) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.ignore_pool_close_event(true);
        // A lost connection ends the session; `run` reconnects after signalling the waiter.
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        // Which schema's notifications are ours, read after LISTEN so that nothing falls in between.
        // Unknown before the first migration: then every notification counts.
        let schema: Option<String> = sqlx::query_scalar(&format!("SELECT {JOBS_SCHEMA}"))
            .fetch_one(&self.pool)
            .await
            .unwrap_or(None);
        if *failures > 0 {
            tracing::info!("listening for new jobs at {} again", self.url);
        }
        *failures = 0;
        // Jobs may have arrived while nobody listened.
        self.notify.notify_one();
        let ping = format!("{{\"ping\":\"{}\"}}", uuid::Uuid::now_v7());
        loop {
            let waited = tokio::select! {
                waited = tokio::time::timeout(LISTEN_QUIET, listener.try_recv()) => waited,
                () = stop.cancelled() => return Ok(()),
            };
            let next = match waited {
                Ok(next) => next?,
                Err(_quiet) => {
                    // Prove the connection still delivers: notify ourselves and expect to hear something.
                    sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(CHANNEL)
                        .bind(&ping)
                        .execute(&self.pool)
                        .await?;
                    match tokio::time::timeout(LISTEN_PING_WAIT, listener.try_recv()).await {
                        Ok(next) => next?,
                        Err(_) => {
                            return Err(sqlx::Error::Io(std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                "the listening connection stopped delivering notifications",
                            )));
                        }
                    }
                }
            };
            let Some(notification) = next else { return Ok(()) };
            if wanted(notification.payload(), schema.as_deref(), &self.queues) {
                self.notify.notify_one();
            }
        }
    }
}

/// True when a notification's payload names one of `queues` (any, when empty) in `schema` (any, when
/// not known yet). Liveness pings and foreign payloads name no queue.
fn wanted(payload: &str, schema: Option<&str>, queues: &HashSet<String>) -> bool {
    let Ok(wake) = serde_json::from_str::<WakePayload>(payload) else {
        return false;
    };
    let Some(queue) = wake.queue else { return false };
    let same_schema = match (schema, wake.schema.as_deref()) {
        (Some(ours), Some(theirs)) => ours == theirs,
        _ => true,
    };
    same_schema && (queues.is_empty() || queues.contains(&queue))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_count_for_our_queues_in_our_schema() {
        let queues: HashSet<String> = ["mail".to_string()].into();
        let payload = r#"{"schema" : "jobq", "queue" : "mail"}"#;
        assert!(wanted(payload, Some("jobq"), &queues));
        assert!(wanted(payload, None, &queues));
        assert!(wanted(payload, Some("jobq"), &HashSet::new()));
        assert!(!wanted(payload, Some("other"), &queues));
        assert!(!wanted(r#"{"schema":"jobq","queue":"default"}"#, Some("jobq"), &queues));
        assert!(!wanted(r#"{"ping":"0190"}"#, Some("jobq"), &HashSet::new()));
        assert!(!wanted("not json", None, &HashSet::new()));
    }
}
