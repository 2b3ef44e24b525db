//! How a worker tells of its store going away and coming back: one warning when the first call finds
//! the store unreachable, every failure after it at debug level only, and one line when a call is
//! answered again, saying how long the outage lasted and how many calls failed meanwhile. Each task
//! of the worker (claims, acknowledgements, heartbeats, the registry, …) goes on retrying its own
//! calls with its own back-off; only what they say is gathered here. A failure that is not an outage
//! (a statement refused, a SQLite file locked by another process) is reported by its caller each
//! time, as before: it is news every time.
//!
//! A PostgreSQL restart under a busy worker read as a dozen lines from jobq and as many from the
//! database pool before this: the same outage told by every task that met it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::causes;
use crate::store::StoreError;
use crate::time::format_duration;

/// How long calls must go on being answered, with no failure among them, before an outage is over. A
/// server going down answers some calls and fails others for a moment (PostgreSQL's fast shutdown
/// ends its sessions one by one): one outage, not several.
const SETTLED_AFTER: Duration = Duration::from_secs(1);

/// The store's outage as one worker sees it (see the module's text).
#[derive(Debug, Default)]
pub(crate) struct Outage {
    /// Whether an outage is under way: the one read on every answered call, so that a worker whose
    /// store answers pays a relaxed load and nothing else.
    on: AtomicBool,
    /// The outage under way.
    began: Mutex<Option<Began>>,
}

#[derive(Debug)]
struct Began {
    at: Instant,
    /// Which store, as errors name it ("the postgres store").
    store: String,
    /// Calls that failed since, the first included.
    failed: u64,
    /// Since when every call has been answered, if the last one was.
    answered_since: Option<Instant>,
}

impl Outage {
    /// A store call failed: `what` (such as "claiming jobs") met `e`, and `then` says what its caller
    /// does now (such as "trying again in 400ms"). An unreachable store starts an outage, told once;
    /// any other failure is told as it is.
    pub fn failed(&self, what: &str, e: &StoreError, then: &str) {
        let StoreError::Unavailable { kind, .. } = e else {
            tracing::warn!("{what} failed ({then}): {}", causes(e));
            return;
        };
        let mut began = self.began.lock().expect("the outage's lock");
        match &mut *began {
            Some(began) => {
                began.failed += 1;
                began.answered_since = None;
                tracing::debug!("{what} failed again during the outage ({then}): {}", causes(e));
            }
            None => {
                *began = Some(Began {
                    at: Instant::now(),
                    store: format!("the {kind} store"),
                    failed: 1,
                    answered_since: None,
                });
                self.on.store(true, Ordering::Relaxed);
                tracing::warn!(
                    "{what} failed: {}; retrying every store call with back-off until it answers (running \
                     jobs go on, and their outcomes are kept until they can be written)",
                    causes(e)
                );
            }
        }
    }

    /// A store call was answered: once calls have gone on being answered for [`SETTLED_AFTER`], the
    /// outage under way, if any, is over, and that is said.
    pub fn answered(&self) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let mut began = self.began.lock().expect("the outage's lock");
        let Some(outage) = began.as_mut() else { return };
        let now = Instant::now();
        let since = *outage.answered_since.get_or_insert(now);
        if now.duration_since(since) < SETTLED_AFTER {
            return;
        }
        tracing::info!(
            "{} answers again: it was unreachable for {} ({} calls failed meanwhile, each retried)",
            outage.store,
            format_duration(since.duration_since(outage.at)),
            outage.failed
        );
        *began = None;
        self.on.store(false, Ordering::Relaxed);
    }

    /// Whether an outage is under way.
    #[cfg(test)]
    fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreKind;
    use crate::store::url::RedactedUrl;

    fn unreachable() -> StoreError {
        let url = RedactedUrl::new("postgres://u:secret@127.0.0.1:1/db");
        StoreError::unavailable(StoreKind::Postgres, &url, &std::io::Error::other("refused"))
    }

    /// Moves the start of the answered streak back, as if calls had been answered that long.
    fn answered_for(outage: &Outage, long: Duration) {
        let mut began = outage.began.lock().unwrap();
        let began = began.as_mut().unwrap();
        began.answered_since = began.answered_since.map(|since| since - long);
    }

    #[test]
    fn an_unreachable_store_starts_one_outage_that_settled_answers_end() {
        let outage = Outage::default();
        outage.answered();
        assert!(!outage.is_on());
        outage.failed("claiming jobs", &unreachable(), "trying again in 100ms");
        outage.failed("recording outcomes", &unreachable(), "trying again in 100ms");
        assert!(outage.is_on());
        assert_eq!(outage.began.lock().unwrap().as_ref().map(|b| b.failed), Some(2));
        // One answer among failures is a server going down, not one coming back.
        outage.answered();
        assert!(outage.is_on());
        outage.failed("claiming jobs", &unreachable(), "trying again in 200ms");
        outage.answered();
        answered_for(&outage, SETTLED_AFTER);
        outage.answered();
        assert!(!outage.is_on());
        assert!(outage.began.lock().unwrap().is_none());
    }

    #[test]
    fn a_refused_statement_is_no_outage() {
        let outage = Outage::default();
        let refused = StoreError::query(StoreKind::Postgres, "claim", std::io::Error::other("syntax"));
        outage.failed("claiming jobs", &refused, "trying again in 100ms");
        assert!(!outage.is_on());
    }
}
