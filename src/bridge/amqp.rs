//! The AMQP 0-9-1 bridge (RabbitMQ), on lapin: consume one queue with a prefetch of `max_in_flight`,
//! take what has arrived as one batch, store it, then acknowledge the batch with one `basic.ack`
//! (`multiple`) on its last stored delivery. A message that cannot become a job is rejected without
//! requeue before that ack, so the queue's dead-letter exchange (if it has one) gets it.
//!
//! Nothing is acknowledged before its job is committed: when the connection drops, the broker puts
//! every unacknowledged delivery back, and the bridge connects again (with back-off, for as long as
//! it takes) and consumes them anew.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::{FutureExt, StreamExt};
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions, BasicRejectOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties, Consumer};
use tokio_util::sync::CancellationToken;

use super::{Backoff, BridgeSettings, BrokerUrl, Counts, Sink, Totals};
use jobq::client::Client;
use jobq::error::Input;

/// Consumes `queue` on the broker at `url` into the store of `client` until `stop` fires; then
/// finishes the batch in hand, acknowledges it and closes. The first connection must succeed within
/// the connect time-out; later ones are retried until they do.
pub async fn run(
    client: Client,
    url: &BrokerUrl,
    queue: &str,
    settings: BridgeSettings,
    stop: CancellationToken,
) -> jobq::Result<Totals> {
    let BrokerUrl::Amqp(raw) = url else {
        return Err(jobq::Error::invalid(
            Input::Broker,
            format!("{url} is not an amqp:// URL"),
        ));
    };
    let broker = Broker {
        raw: with_heartbeat(raw),
        shown: url.redacted(),
        queue: queue.to_string(),
    };
    let counts = Arc::new(Counts::default());
    let source = format!("{} queue {queue}", broker.shown);
    let sink = Arc::new(Sink::new(client, settings, source.clone(), counts.clone()));
    let mut session = broker.open(sink.settings()).await?;
    let registration = sink.start_registration();
    tracing::info!("bridging {source} into the store");
    loop {
        let lost = match session.pump(&sink, &broker.queue, &stop).await {
            Pumped::Stopped => {
                session.close().await;
                break;
            }
            Pumped::Lost(why) => why,
        };
        counts.reconnects.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            "lost {}: {lost}; connecting again (unacknowledged messages come back from the broker)",
            broker.shown
        );
        session.close().await;
        match broker.reopen(sink.settings(), &stop).await {
            Some(s) => session = s,
            None => break,
        }
    }
    registration.end().await;
    Ok(counts.totals())
}

/// Where the bridge reads: the URL (with its password, never shown), the URL as shown, the queue.
struct Broker {
    raw: String,
    shown: String,
    queue: String,
}

impl Broker {
    /// Connects, checks that the queue exists, and starts consuming.
    async fn open(&self, settings: &BridgeSettings) -> jobq::Result<Session> {
        let failed = |what: &str, e: lapin::Error| jobq::Error::broker(format!("{what} {}: {e}", self.shown));
        let properties = ConnectionProperties::default().with_connection_name(
            format!(
                "jobq bridge {}",
                settings.name.clone().unwrap_or_else(|| std::process::id().to_string())
            )
            .into(),
        );
        let connection =
            match tokio::time::timeout(settings.connect_timeout, Connection::connect(&self.raw, properties)).await {
                Ok(Ok(c)) => c,
                Ok(Err(e)) => return Err(failed("cannot connect to", e)),
                Err(_) => {
                    return Err(jobq::Error::broker(format!(
                        "cannot connect to {}: no answer within {}",
                        self.shown,
                        jobq::time::format_duration(settings.connect_timeout)
                    )));
                }
            };
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| failed("cannot open a channel on", e))?;
        // A passive declare only looks: a missing queue is an error here, not a queue made by the bridge.
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        if let Err(e) = channel
            .queue_declare(self.queue.as_str().into(), passive, FieldTable::default())
            .await
        {
            let _ = connection.close(200, "".into()).await;
            return Err(jobq::Error::broker(format!(
                "cannot consume queue {:?} on {}: {e}",
                self.queue, self.shown
            )));
        }
        let prefetch = settings.max_in_flight.clamp(1, usize::from(u16::MAX)) as u16;
        channel
            .basic_qos(prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| failed("cannot set the prefetch on", e))?;
        let consumer = channel
            .basic_consume(
                self.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| failed(&format!("cannot consume queue {:?} on", self.queue), e))?;
        Ok(Session {
            connection,
            channel,
            consumer,
        })
    }

    /// Connects again after a loss, with back-off, until it works or `stop` fires (`None`).
    async fn reopen(&self, settings: &BridgeSettings, stop: &CancellationToken) -> Option<Session> {
        let mut backoff = Backoff::new();
        let mut failures = 0u32;
        loop {
            if stop.is_cancelled() {
                return None;
            }
            match self.open(settings).await {
                Ok(session) => {
                    tracing::info!("connected to {} again", self.shown);
                    return Some(session);
                }
                Err(e) => {
                    failures += 1;
                    // One line for the first failure, then one a minute or so: a long outage is not a
                    // flood of lines.
                    if failures == 1 || failures.is_multiple_of(12) {
                        tracing::warn!("{e}; trying again");
                    }
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                _ = tokio::time::sleep(backoff.next()) => {}
            }
        }
    }
}

/// One connection's consumer.
struct Session {
    connection: Connection,
    channel: Channel,
    consumer: Consumer,
}

/// How a session's pumping ended.
enum Pumped {
    /// A stop was asked for; the batch in hand was stored and acknowledged (or left to the broker).
    Stopped,
    /// The connection or channel failed, for this reason.
    Lost(String),
}

impl Session {
    /// Moves batches from the consumer into the store until a stop or a failure.
    async fn pump(&mut self, sink: &Sink, queue: &str, stop: &CancellationToken) -> Pumped {
        let batch_size = sink.settings().batch();
        let mut batch = Vec::with_capacity(batch_size);
        loop {
            let first = tokio::select! {
                biased;
                _ = stop.cancelled() => return Pumped::Stopped,
                next = self.consumer.next() => next,
            };
            let mut failure = None;
            match first {
                Some(Ok(delivery)) => batch.push(delivery),
                Some(Err(e)) => return Pumped::Lost(e.to_string()),
                None => return Pumped::Lost("the broker cancelled the consumer".into()),
            }
            // Whatever else has arrived joins the batch, and what arrives within `LINGER` of the
            // last: under load the batch fills (one commit and one ack for many messages), and a lone
            // message waits no longer than that.
            while batch.len() < batch_size {
                let next = match self.consumer.next().now_or_never() {
                    Some(next) => Some(next),
                    None => tokio::time::timeout(super::LINGER, self.consumer.next()).await.ok(),
                };
                match next {
                    Some(Some(Ok(delivery))) => batch.push(delivery),
                    Some(Some(Err(e))) => {
                        failure = Some(e.to_string());
                        break;
                    }
                    Some(None) => {
                        failure = Some("the broker cancelled the consumer".into());
                        break;
                    }
                    None => break,
                }
            }
            let now = sink.client_now();
            let mut jobs = Vec::with_capacity(batch.len());
            let mut last_stored = None;
            for (i, delivery) in batch.iter().enumerate() {
                let id = delivery.properties.message_id().as_ref().map(|m| m.as_str());
                match sink.settings().intake.job(&delivery.data, id, now) {
                    Ok(job) => {
                        jobs.push(job);
                        last_stored = Some(i);
                    }
                    Err(reason) => {
                        sink.counts()
                            .reject(&describe(queue, delivery.delivery_tag, id), &reason);
                        let requeue = BasicRejectOptions { requeue: false };
                        if let Err(why) = answered("the rejection", delivery.acker.reject(requeue), sink).await {
                            return Pumped::Lost(why);
                        }
                    }
                }
            }
            if sink.store(&jobs, stop).await.is_err() {
                return Pumped::Stopped;
            }
            if let Some(i) = last_stored {
                let ack = batch[i].acker.ack(BasicAckOptions { multiple: true });
                if let Err(why) = answered("the acknowledgement", ack, sink).await {
                    return Pumped::Lost(why);
                }
            }
            batch.clear();
            if let Some(why) = failure {
                return Pumped::Lost(why);
            }
        }
    }

    /// Closes the channel and the connection; deliveries not acknowledged go back to the queue.
    async fn close(self) {
        let _ = self.channel.close(200, "".into()).await;
        let _ = self.connection.close(200, "".into()).await;
    }
}

/// Waits for an acknowledgement or a rejection to be handed to the broker. lapin resolves it once the
/// frame is written; on a connection that died under it (a close it missed) the frame is never
/// written and the wait would never end, so it is bounded by the connect time-out, after which the
/// connection counts as lost (the broker redelivers what was not acknowledged; the jobs' ids make
/// that harmless).
async fn answered(
    what: &str,
    sent: impl std::future::Future<Output = lapin::Result<bool>>,
    sink: &Sink,
) -> Result<(), String> {
    let limit = sink.settings().connect_timeout;
    match tokio::time::timeout(limit, sent).await {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(format!("the channel closed before {what}")),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "{what} was not sent within {}",
            jobq::time::format_duration(limit)
        )),
    }
}

/// The heartbeat a bridge asks for unless its URL names one. lapin declares a connection dead after
/// two heartbeats without a byte from the broker; with the server's default (60 s) a connection that
/// died without a word (a cut network, or a close lapin misses while a call of its own is under
/// way, seen when a proxy cuts both ends) held the bridge for two minutes.
const HEARTBEAT_SECS: u32 = 10;

/// `url` with `heartbeat=10` added to its query, unless it has a heartbeat already.
fn with_heartbeat(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_string();
    };
    if parsed.query_pairs().any(|(key, _)| key == "heartbeat") {
        return url.to_string();
    }
    parsed
        .query_pairs_mut()
        .append_pair("heartbeat", &HEARTBEAT_SECS.to_string());
    parsed.to_string()
}

/// Names a delivery in a log line: its queue, its delivery tag and its message id when it has one.
fn describe(queue: &str, tag: u64, message_id: Option<&str>) -> String {
    match message_id {
        Some(id) => format!("message {id:?} (delivery {tag}) of queue {queue:?}"),
        None => format!("delivery {tag} of queue {queue:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_is_asked_for_unless_the_url_names_one() {
        assert_eq!(
            with_heartbeat("amqp://ana:s3cret@127.0.0.1:5672/%2f"),
            "amqp://ana:s3cret@127.0.0.1:5672/%2f?heartbeat=10"
        );
        assert_eq!(
            with_heartbeat("amqps://mq.internal/orders?channel_max=8"),
            "amqps://mq.internal/orders?channel_max=8&heartbeat=10"
        );
        assert_eq!(
            with_heartbeat("amqp://127.0.0.1:5672/%2f?heartbeat=30"),
            "amqp://127.0.0.1:5672/%2f?heartbeat=30"
        );
    }
}
