//! The expiry sweep: jobs of the worker's queues that have not started by their expiry end
//! `expired` ([`crate::store::Store::expire`], judged by the store's clock).
//!
//! It runs after each rescue sweep (`rescue.rs`), at its cadence. A claim never starts an expired
//! job whether or not the sweep has run; the sweep takes such jobs out of the ready set, so that
//! claims stop reading past them, and resolves the jobs that wait for them. Any number of workers
//! may sweep at once: the store ends each job once and passes over those another holds. A store
//! with no job that carries an expiry answers from an empty index.

use super::Shared;
use crate::store::Expire;

/// Jobs ended per store call.
const EXPIRE_BATCH: u32 = 1000;

/// One sweep: batch by batch until a batch comes back short.
pub(super) async fn sweep(s: &Shared) {
    let mut ended = 0u64;
    loop {
        let expire = Expire {
            queues: s.settings.queues.clone(),
            limit: EXPIRE_BATCH,
        };
        match s.store.expire(&expire).await {
            Ok(n) => {
                ended += n;
                if n < u64::from(EXPIRE_BATCH) {
                    break;
                }
            }
            Err(e) => {
                s.outage
                    .failed("the expiry sweep", &e, "sweeping again at the next round");
                break;
            }
        }
    }
    if ended > 0 {
        tracing::info!("expired {ended} jobs that had not started by their expiry");
        // Jobs that waited for them may have become ready.
        s.control.wake.notify_one();
    }
}
