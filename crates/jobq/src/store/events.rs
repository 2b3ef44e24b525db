//! Events as the store sees them (see [`super::Store::emit`] and [`super::Store::expand_events`]): an
//! event is a name, a payload and an id that makes its emit idempotent; what jobs it becomes is the
//! caller's to say (`crate::events` expands it with the config's subscriptions).

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::job::NewJob;
use crate::time::UnixMillis;

/// Longest event id, so that its jobs' ids stay within a job id's 128 bytes.
pub const MAX_EVENT_ID_BYTES: usize = 100;

/// One event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Its id: emitting an id that was emitted before changes nothing.
    pub id: String,
    /// Its name, e.g. `user.registered`.
    pub name: String,
    /// Its payload, compact JSON: every job it becomes carries it.
    pub payload: Box<RawValue>,
    /// Meta every job it becomes carries.
    pub meta: BTreeMap<String, String>,
}

/// One event for [`super::Store::emit`], with the jobs it becomes.
#[derive(Debug, Clone)]
pub struct Emit {
    /// The event.
    pub event: Event,
    /// Its jobs (none, for an event nobody subscribes to that the caller emits anyway).
    pub jobs: Vec<NewJob>,
    /// The present, recorded as the event's creation and expansion time.
    pub now: UnixMillis,
}

/// What [`super::Store::emit`] did with one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitOutcome {
    /// Recorded, and its jobs enqueued.
    Emitted,
    /// An event with this id was emitted before: nothing changed.
    Duplicate,
}

/// Turns an event an application stored itself into its jobs (the expanding worker's subscriptions).
pub type Expander = dyn Fn(&Event, UnixMillis) -> Vec<NewJob> + Send + Sync;

/// What [`crate::store::Store::expand_events`] expands: the events applications stored themselves.
#[derive(Clone, Copy)]
pub struct ExpandEvents<'a> {
    /// Makes each event's jobs.
    pub expander: &'a Expander,
    /// At most this many events.
    pub limit: usize,
    /// The present.
    pub now: UnixMillis,
}

impl std::fmt::Debug for ExpandEvents<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpandEvents")
            .field("limit", &self.limit)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}
