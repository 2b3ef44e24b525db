//! MySQL's wake-ups: there are no notifications in MySQL, so a [`Watcher`] asks the claim index every
//! `wake_poll` (default 5 ms) whether a ready job waits in the caller's queues, a single indexed read
//! without locks, and signals when one does; plain `INSERT`s by applications are seen the same way.
//!
//! While it keeps finding ready jobs, it asks less often: twice the time after each look that found
//! one, up to [`BACKLOG_POLL_MAX`], and every `wake_poll` again after the first that finds none. A
//! queue with ready jobs in it is a backlog that the worker is draining without waiting for a wake-up,
//! or one that limits, pauses or its own full slots hold back, which a wake-up cannot start either
//! (a worker held back by cluster-wide limits claims again no sooner than 5 to 40 ms after its last
//! claim anyway). Each look then only cost the server: three workers draining a backlog asked 600
//! times a second, a fifth of the statement time of MariaDB's limited drain.

use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::MySqlPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::store::sql::pause_unless_stopped;
use crate::time::UnixMillis;

/// The longest wait between two looks while each finds a ready job.
const BACKLOG_POLL_MAX: Duration = Duration::from_millis(40);

/// The task behind the store's `subscribe`: looks for ready jobs every `every` (less often while it
/// keeps finding some).
pub(super) struct Watcher {
    pub pool: MySqlPool,
    pub queues: Vec<String>,
    pub notify: Arc<Notify>,
    pub every: Duration,
    pub url: String,
}

impl Watcher {
    /// Looks until `stop` is cancelled, never in the middle of a look: a look cut off would drop its
    /// connection mid-conversation, which the server logs as aborted.
    pub async fn run(self, stop: CancellationToken) {
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
        // Looks in a row that found a ready job.
        let mut found_in_a_row: u32 = 0;
        loop {
            let wait = wait_before_look(self.every, found_in_a_row);
            if !pause_unless_stopped(wait, &stop).await {
                return;
            }
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
                        found_in_a_row = found_in_a_row.saturating_add(1);
                        self.notify.notify_one();
                    } else {
                        found_in_a_row = 0;
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
                    let wait = (self.every * 2u32.saturating_pow(failures.min(8))).min(Duration::from_secs(1));
                    if !pause_unless_stopped(wait, &stop).await {
                        return;
                    }
                }
            }
        }
    }
}

/// The wait before the next look, after `found_in_a_row` looks in a row found a ready job.
fn wait_before_look(every: Duration, found_in_a_row: u32) -> Duration {
    crate::time::doubling(every, found_in_a_row, BACKLOG_POLL_MAX.max(every))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_slow_down_while_they_find_ready_jobs_and_never_below_wake_poll() {
        let ms = |every: u64, n| wait_before_look(Duration::from_millis(every), n).as_millis();
        assert_eq!((0..=5).map(|n| ms(5, n)).collect::<Vec<_>>(), [5, 5, 10, 20, 40, 40]);
        assert_eq!(ms(100, 3), 100, "a wake_poll above the cap is kept");
    }
}
