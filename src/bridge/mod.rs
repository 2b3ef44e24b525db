//! Bridges: `jobq bridge` consumes a RabbitMQ queue ([`amqp`]) or a Kafka topic ([`kafka`]) and turns
//! each message into a job, so services that already move work over a broker hand it to jobq's
//! workers, retries and dead letters without changing their producers.
//!
//! Both bridges keep one promise: a message is acknowledged to its broker (an AMQP ack, a committed
//! Kafka offset) only after its job is committed to the store, so a crash, a killed connection or a
//! broker restart loses nothing; the broker redelivers what was not acknowledged. Delivery is thus at
//! least once, and a message that names its job (an envelope's `jobId`, an AMQP `message-id`, a Kafka
//! topic, partition and offset) finds that job on its redelivery and adds no other. A message that
//! cannot become a job ([`Intake`]) is refused to the broker (AMQP: rejected without requeue, so the
//! queue's dead-letter exchange gets it; Kafka: passed over) with one log line that says why.
//!
//! What is shared lives here: [`Intake`] (message → job), [`Sink`] (a batch into the store, retried
//! while the store is away), [`Counts`] and the registry entry `jobq workers` and `/metrics` read.

#[cfg(feature = "amqp")]
pub mod amqp;
mod intake;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod publish;
pub(crate) mod url;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use intake::Intake;
pub use url::BrokerUrl;

use jobq::client::Client;
use jobq::job::NewJob;
use jobq::store::{BridgeInfo, EnqueueOutcome, WorkerInfo};

/// The refusal of a broker this build of jobq has no client for: it was built without the cargo
/// feature (`amqp`, `kafka`) that brings one, as the demo builds it.
#[cfg(not(all(feature = "amqp", feature = "kafka")))]
pub(crate) fn not_built(broker: &str, feature: &str) -> String {
    format!("this jobq was built without {broker} (the cargo feature {feature:?}); build it with the default features")
}

/// How long a batch waits for one more message before it is stored.
pub(crate) const LINGER: Duration = Duration::from_millis(1);

/// How a bridge runs, whatever its broker.
#[derive(Debug, Clone)]
pub struct BridgeSettings {
    /// How messages become jobs.
    pub intake: Intake,
    /// Messages delivered and not yet acknowledged, at most (the AMQP prefetch; Kafka's batch).
    pub max_in_flight: usize,
    /// How long the first connection to the broker may take before the bridge gives up.
    pub connect_timeout: Duration,
    /// After a stop is asked for, how long the batch in hand may wait for the store.
    pub shutdown_timeout: Duration,
    /// How often the registry entry is refreshed.
    pub heartbeat: Duration,
    /// The registry name (`--name`); the host name when unset.
    pub name: Option<String>,
}

impl BridgeSettings {
    /// Messages stored per batch: half the messages in flight, so the broker delivers the next half
    /// while the store commits this one.
    pub fn batch(&self) -> usize {
        (self.max_in_flight / 2).clamp(1, 1_000)
    }
}

/// What a bridge has done so far, counted as it goes.
#[derive(Debug, Default)]
pub struct Counts {
    /// Messages that became new jobs.
    pub created: AtomicU64,
    /// Messages whose job was there already.
    pub duplicates: AtomicU64,
    /// Messages refused.
    pub rejected: AtomicU64,
    /// Times the bridge lost its broker connection and made a new one.
    pub reconnects: AtomicU64,
}

/// The totals of a bridge that stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    /// Messages that became new jobs.
    pub created: u64,
    /// Messages whose job was there already.
    pub duplicates: u64,
    /// Messages refused.
    pub rejected: u64,
    /// Reconnections to the broker.
    pub reconnects: u64,
}

impl Counts {
    /// A snapshot of the counts.
    pub fn totals(&self) -> Totals {
        Totals {
            created: self.created.load(Ordering::Relaxed),
            duplicates: self.duplicates.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            reconnects: self.reconnects.load(Ordering::Relaxed),
        }
    }

    /// Counts one refused message, with the log line that says which and why.
    pub(crate) fn reject(&self, which: &str, reason: &str) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("rejected {which}: {reason}");
    }
}

/// The store side of a bridge: commits batches of jobs and keeps the registry entry fresh.
pub(crate) struct Sink {
    client: Client,
    counts: Arc<Counts>,
    entry: std::sync::Mutex<WorkerInfo>,
    settings: BridgeSettings,
}

/// Why a batch was not stored.
#[derive(Debug)]
pub(crate) struct NotStored;

impl Sink {
    pub(crate) fn new(client: Client, settings: BridgeSettings, source: String, counts: Arc<Counts>) -> Sink {
        let mut entry = jobq::worker::registry_entry(settings.name.clone(), &[], client.now());
        entry.bridge = Some(BridgeInfo {
            source,
            duplicates: 0,
            rejected: 0,
        });
        Sink {
            client,
            counts,
            entry: std::sync::Mutex::new(entry),
            settings,
        }
    }

    pub(crate) fn settings(&self) -> &BridgeSettings {
        &self.settings
    }

    pub(crate) fn client_now(&self) -> jobq::time::UnixMillis {
        self.client.now()
    }

    pub(crate) fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Commits `jobs`, trying again while the store is away. Gives up (`NotStored`, nothing to
    /// acknowledge) only when `stop` has fired and the store stayed away for the shutdown time-out.
    pub(crate) async fn store(&self, jobs: &[NewJob], stop: &CancellationToken) -> Result<(), NotStored> {
        if jobs.is_empty() {
            return Ok(());
        }
        let mut pause = Duration::from_millis(50);
        let mut logged = false;
        let mut give_up_at: Option<tokio::time::Instant> = None;
        loop {
            match self.client.enqueue_validated(jobs).await {
                Ok(answers) => {
                    let created = answers.iter().filter(|a| a.outcome == EnqueueOutcome::Created).count() as u64;
                    self.counts.created.fetch_add(created, Ordering::Relaxed);
                    self.counts
                        .duplicates
                        .fetch_add(answers.len() as u64 - created, Ordering::Relaxed);
                    if logged {
                        tracing::info!("the store answers again; storing goes on");
                    }
                    return Ok(());
                }
                Err(e) => {
                    if !logged {
                        tracing::warn!(
                            "storing {} jobs failed, trying again until the store answers (nothing is acknowledged meanwhile): {}",
                            jobs.len(),
                            jobq::error::causes(&e)
                        );
                        logged = true;
                    }
                }
            }
            if stop.is_cancelled() {
                let at =
                    *give_up_at.get_or_insert_with(|| tokio::time::Instant::now() + self.settings.shutdown_timeout);
                if tokio::time::Instant::now() >= at {
                    tracing::warn!(
                        "stopping with {} messages not stored and not acknowledged: the broker delivers them again",
                        jobs.len()
                    );
                    return Err(NotStored);
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Writes the registry entry with the counts as they are now.
    pub(crate) async fn register(&self) {
        let entry = {
            let mut entry = self.entry.lock().unwrap_or_else(|p| p.into_inner());
            let totals = self.counts.totals();
            entry.last_seen_at = self.client.now();
            entry.jobs_done = totals.created;
            if let Some(b) = entry.bridge.as_mut() {
                b.duplicates = totals.duplicates;
                b.rejected = totals.rejected;
            }
            entry.clone()
        };
        if let Err(e) = self.client.store().register_worker(&entry).await {
            tracing::warn!(
                "refreshing the bridge's registry entry failed: {}",
                jobq::error::causes(&e)
            );
        }
    }

    /// Registers the bridge now and keeps its entry fresh in a task of its own, until
    /// [`Registration::end`].
    pub(crate) fn start_registration(self: &Arc<Self>) -> Registration {
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let sink = self.clone();
            let stop = stop.clone();
            async move { sink.keep_registered(stop).await }
        });
        Registration { stop, task }
    }

    /// Refreshes the registry entry every heartbeat until `stop` fires, then removes it.
    async fn keep_registered(&self, stop: CancellationToken) {
        loop {
            self.register().await;
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(self.settings.heartbeat) => {}
            }
        }
        let id = self.entry.lock().unwrap_or_else(|p| p.into_inner()).id.clone();
        if let Err(e) = self.client.store().unregister_worker(&id).await {
            tracing::warn!(
                "removing the bridge's registry entry failed: {}",
                jobq::error::causes(&e)
            );
        }
    }
}

/// A bridge's registry upkeep, running beside it.
pub(crate) struct Registration {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Registration {
    /// Stops the upkeep and removes the entry.
    pub(crate) async fn end(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// A pause that doubles from 100 ms up to 5 s: the wait between two attempts to reach a broker.
pub(crate) struct Backoff(Duration);

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff(Duration::from_millis(100))
    }

    pub(crate) fn next(&mut self) -> Duration {
        let now = self.0;
        self.0 = (self.0 * 2).min(Duration::from_secs(5));
        now
    }
}
