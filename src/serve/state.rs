//! What every handler shares: the `Client` (the API is a thin layer over it, as the CLI is), the bits
//! of the config the CLI reads for the same calls, the request counters and the tokens.

use std::sync::Arc;
use std::time::Duration;

use super::error::ApiError;
use super::flight::Flights;
use super::metrics::Counters;
use super::tokens::Tokens;
use crate::config::Config;
use jobq::autoscale::Policy;
use jobq::client::Client;
use jobq::doctor::Doctor;
use jobq::job::{JobSpec, TypeDefaults};
use jobq::schedule::Schedule;
use jobq::store::StatsReport;

/// Headroom over the payload limit for a request body: the envelope's other fields, JSON
/// whitespace, and a few jobs besides in a batch.
pub const BODY_HEADROOM: usize = 256 * 1024;

/// The handlers' shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState(pub Arc<Shared>);

/// See [`AppState`].
pub struct Shared {
    /// The store, through the library's front door.
    pub client: Client,
    /// The store's URL without its password, for the stats document.
    pub store: String,
    /// The configured schedules.
    pub schedules: Vec<Schedule>,
    /// What the configured handlers give a job of their type that does not say (attempts, expiry),
    /// as `jobq enqueue` gives it.
    pub type_defaults: TypeDefaults,
    /// How recently a worker must have been seen to be listed (as `jobq workers` decides it).
    pub workers_within: Duration,
    /// The tokens requests must carry (none: every request is let in).
    pub tokens: Tokens,
    /// Requests answered, by method, route and status.
    pub counters: Counters,
    /// The largest request body read.
    pub max_body: usize,
    /// The policy behind `jobq_queue_desired_workers` in `/metrics`, if configured.
    pub autoscale: Option<Policy>,
    /// What `GET /doctor` judges by: the config's workers and handlers, the default thresholds.
    pub doctor: Doctor,
    /// The counts in progress, by the queues they count (none: every queue), shared by the requests
    /// that ask for the same ones meanwhile (`flight.rs`).
    pub counts: Flights<Vec<String>, Result<StatsReport, ApiError>>,
}

impl AppState {
    /// The state for `client` with the config's schedules, handler attempts and worker settings.
    pub fn new(client: Client, config: &Config, tokens: Tokens) -> AppState {
        let settings = &config.worker;
        AppState(Arc::new(Shared {
            client,
            store: config.url.redacted().to_string(),
            schedules: config.schedules.clone(),
            type_defaults: config.type_defaults(),
            workers_within: settings.stale_after.max(settings.heartbeat * 3),
            tokens,
            counters: Counters::default(),
            max_body: config.limits.max_payload_bytes.saturating_add(BODY_HEADROOM),
            autoscale: config.serve.autoscale,
            doctor: config.doctor(),
            counts: Flights::default(),
        }))
    }

    /// The counts of `queues` (every queue when empty), as [`Client::stats`] answers them, from a count
    /// that began after this call; requests asking for the same queues at once share one
    /// (`flight.rs` has the rule).
    pub async fn stats(&self, queues: &[String]) -> Result<StatsReport, ApiError> {
        let mut key = queues.to_vec();
        key.sort_unstable();
        key.dedup();
        let client = &self.client;
        self.counts
            .run(key.clone(), || async move {
                client.stats(&key).await.map_err(ApiError::from)
            })
            .await
    }

    /// A job spec with the defaults `jobq enqueue` gives: its type's configured attempts, expiry and
    /// unique key (refused when the key's template names a field the job lacks).
    pub fn with_defaults(&self, mut spec: JobSpec) -> Result<JobSpec, jobq::error::InvalidInput> {
        self.0.type_defaults.apply(&mut spec, None)?;
        Ok(spec)
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
