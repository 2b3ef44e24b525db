//! MySQL's wake-ups: there are no notifications in MySQL, so a [`Watcher`] asks the claim index every
//! `wake_poll` (default 5 ms) whether a ready job waits in the caller's queues, a single indexed read
//! without locks, and signals when one does; plain `INSERT`s by applications are seen the same way.

use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::MySqlPool;
use tokio::sync::Notify;

use crate::time::UnixMillis;

/// The task behind the store's `subscribe`: looks for ready jobs every `every`.
pub(super) struct Watcher {
    pub pool: MySqlPool,
    pub queues: Vec<String>,
    pub notify: Arc<Notify>,
    pub every: Duration,
    pub url: String,
}

impl Watcher {
    pub async fn run(self) {
        // One indexed read, no locks: the first ready job of any of the queues. Readiness is judged by
        // this machine's clock: a hint may be early or late, and the caller still polls now and then.
        let sql = if self.queues.is_empty() {
            "SELECT 1 FROM jobq_jobs FORCE INDEX (jobq_jobs_running) WHERE status = 'pending' AND run_at <= ? \
             LIMIT 1"
                .to_string()
        } else {
            let per_queue = "SELECT 1 FROM jobq_jobs FORCE INDEX (jobq_jobs_ready) WHERE queue = ? \
                 AND status = 'pending' AND run_at <= ?";
            let parts: Vec<String> = self.queues.iter().map(|_| format!("({per_queue} LIMIT 1)")).collect();
            format!("{} LIMIT 1", parts.join(" UNION ALL "))
        };
        let mut failures: u32 = 0;
        let mut interval = tokio::time::interval(self.every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let now = UnixMillis::now().0;
            let mut query = sqlx::query(&sql);
            if self.queues.is_empty() {
                query = query.bind(now);
            }
            for queue in &self.queues {
                query = query.bind(queue).bind(now);
            }
            match query.fetch_optional(&self.pool).await {
                Ok(found) => {
                    if failures > 0 {
                        tracing::info!("looking for new jobs at {} again", self.url);
                        // Jobs may have arrived while the server was away.
                        self.notify.notify_one();
                    }
                    failures = 0;
                    if found.is_some() {
                        self.notify.notify_one();
                    }
                }
                Err(e) => {
                    if failures == 0 {
                        tracing::warn!(
                            "cannot look for new jobs at {} ({e}); polling until it is back",
                            self.url
                        );
                    }
                    failures = failures.saturating_add(1);
                    // The waiter polls meanwhile; look again less often while the server is away.
                    self.notify.notify_one();
                    let pause = (self.every * 2u32.saturating_pow(failures.min(8))).min(Duration::from_secs(1));
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}
