//! The loop a worker with event subscriptions runs beside its dispatcher: expand the events that
//! applications stored themselves (rows of `jobq_events`, items of Redis's `events` list) into the
//! jobs this worker's config subscribes to them, in batches, and look again every
//! [`EXPAND_POLL`] while none wait.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Subscriptions;
use crate::job::{Limits, NewJob};
use crate::store::{DynStore, Event, ExpandEvents};
use crate::time::{Clock, UnixMillis};

/// How often an idle expander looks for stored events.
pub const EXPAND_POLL: Duration = Duration::from_millis(500);

/// Events expanded per store call.
const EXPAND_BATCH: usize = 200;

/// Expands stored events with the subscriptions `subscriptions` holds (a reload sends new ones) until
/// `stop` fires.
pub async fn run(
    store: DynStore,
    clock: Arc<dyn Clock>,
    limits: Limits,
    mut subscriptions: watch::Receiver<Arc<Subscriptions>>,
    stop: CancellationToken,
) {
    let mut failing = false;
    loop {
        let subs = subscriptions.borrow_and_update().clone();
        if subs.is_empty() {
            // Nothing subscribed: stored events are left to workers that subscribe to them.
            tokio::select! {
                _ = stop.cancelled() => return,
                changed = subscriptions.changed() => if changed.is_err() { return },
            }
            continue;
        }
        let expander = move |event: &Event, now: UnixMillis| -> Vec<NewJob> {
            if subs.of(&event.name).is_empty() {
                tracing::warn!(
                    event = %event.name, id = %event.id,
                    "a stored event that no [events] entry of this worker's config subscribes to: expanded into no job"
                );
            }
            subs.jobs_of(event, now, &limits)
        };
        let pause = match store
            .expand_events(&ExpandEvents {
                expander: &expander,
                limit: EXPAND_BATCH,
                now: clock.now(),
            })
            .await
        {
            Ok(n) => {
                failing = false;
                if n > 0 {
                    tracing::debug!("expanded {n} stored events");
                }
                if n == EXPAND_BATCH { Duration::ZERO } else { EXPAND_POLL }
            }
            Err(e) => {
                if !failing {
                    tracing::warn!("expanding stored events: {}", crate::error::causes(&e));
                }
                failing = true;
                EXPAND_POLL
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            changed = subscriptions.changed() => if changed.is_err() { return },
        }
    }
}
