//! Events that fan out to jobs: `[events."user.registered"] jobs = [{ type = "mail.welcome" }, …]`
//! says which jobs an event becomes. `jobq emit` (and [`crate::client::Client::emit`]) records an
//! event and enqueues its jobs in one store transaction; an application may also store an event
//! itself (a row of `jobq_events` in its own transaction, or an item pushed onto Redis's `events`
//! list), which a worker expands with its own subscriptions.
//!
//! An event's jobs have ids made from the event's id and the subscriber's place in the list
//! (`evt:<event id>#1`, `#2`, …), and carry the event's payload, its meta, and `meta.event` and
//! `meta.eventId`.

mod expander;

use std::collections::BTreeMap;
use std::time::Duration;

pub use expander::{EXPAND_POLL, run as run_expander};

use crate::job::{JobId, Join, Limits, NewJob, UniqueMode};
use crate::store::Event;
use crate::time::UnixMillis;

pub use crate::store::MAX_EVENT_ID_BYTES;

/// One job an event becomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscriber {
    /// The job's type.
    pub job_type: String,
    /// The job's queue.
    pub queue: String,
    /// The job's priority.
    pub priority: i32,
    /// The job's attempts, `None` for the default.
    pub max_attempts: Option<u32>,
    /// The job's time-out.
    pub timeout: Option<Duration>,
    /// Meta added to the job (beside the event's own).
    pub meta: BTreeMap<String, String>,
}

impl Subscriber {
    /// A subscriber making jobs of `job_type` in the default queue.
    pub fn new(job_type: impl Into<String>) -> Subscriber {
        Subscriber {
            job_type: job_type.into(),
            queue: crate::job::DEFAULT_QUEUE.to_string(),
            priority: 0,
            max_attempts: None,
            timeout: None,
            meta: BTreeMap::new(),
        }
    }
}

/// Which jobs each event becomes, by event name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subscriptions(pub BTreeMap<String, Vec<Subscriber>>);

impl Subscriptions {
    /// The subscribers of `name` (none when nobody subscribes).
    pub fn of(&self, name: &str) -> &[Subscriber] {
        self.0.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether any event has subscribers.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }

    /// The jobs `event` becomes, created `now`.
    pub fn jobs_of(&self, event: &Event, now: UnixMillis, limits: &Limits) -> Vec<NewJob> {
        self.of(&event.name)
            .iter()
            .enumerate()
            .map(|(n, s)| {
                let mut meta = event.meta.clone();
                meta.extend(s.meta.clone());
                meta.insert("event".into(), event.name.clone());
                meta.insert("eventId".into(), event.id.clone());
                NewJob {
                    id: job_id(&event.id, n + 1),
                    queue: s.queue.clone(),
                    job_type: s.job_type.clone(),
                    payload: event.payload.clone(),
                    meta,
                    priority: s.priority,
                    max_attempts: s.max_attempts.unwrap_or(limits.default_max_attempts),
                    run_at: now,
                    unique_key: None,
                    unique_mode: UniqueMode::Coalesce,
                    timeout_ms: s.timeout.map(|t| t.as_millis().min(u128::from(u64::MAX)) as u64),
                    expires_at: None,
                    created_at: now,
                    after: Vec::new(),
                    join: Join::All,
                }
            })
            .collect()
    }
}

/// The id of the job an event's `n`th subscriber (from 1) gets.
pub fn job_id(event_id: &str, n: usize) -> JobId {
    JobId::from_stored(format!("evt:{event_id}#{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_becomes_one_job_per_subscriber_with_its_payload_and_meta() {
        let mut crm = Subscriber::new("crm.sync");
        crm.queue = "crm".into();
        crm.priority = 5;
        let subs = Subscriptions(BTreeMap::from([(
            "user.registered".to_string(),
            vec![Subscriber::new("mail.welcome"), crm],
        )]));
        let event = Event {
            id: "e-1".into(),
            name: "user.registered".into(),
            payload: serde_json::value::to_raw_value(&serde_json::json!({"userId": 7})).unwrap(),
            meta: BTreeMap::from([("source".to_string(), "signup".to_string())]),
        };
        let jobs = subs.jobs_of(&event, UnixMillis(1_000), &Limits::default());
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["evt:e-1#1", "evt:e-1#2"]);
        assert_eq!((jobs[1].queue.as_str(), jobs[1].priority), ("crm", 5));
        assert_eq!(jobs[0].payload.get(), r#"{"userId":7}"#);
        assert_eq!(jobs[0].meta["event"], "user.registered");
        assert_eq!(jobs[0].meta["eventId"], "e-1");
        assert_eq!(jobs[0].meta["source"], "signup");
        assert!(subs.of("nobody.listens").is_empty());
    }
}
