//! The Kafka bridge, on rdkafka (librdkafka): one consumer of a consumer group, subscribed to one
//! topic. Messages that have arrived are taken as one batch, stored, and only then is each
//! partition's offset stored past its last message of the batch; librdkafka commits stored offsets
//! every second, at a rebalance and at the close, so a committed offset never runs ahead of the
//! store. A message that cannot become a job is passed over (its offset stored with the rest) with one
//! log line that says why: Kafka has no rejection to hand it back with.
//!
//! A message that is not an envelope with a `jobId` gets the id `kafka:TOPIC:PARTITION:OFFSET`, so a
//! redelivery (after a crash or a rebalance, from the last committed offset) finds its job and adds
//! none. librdkafka reconnects to the brokers by itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::FutureExt;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use sha2::Digest;
use tokio_util::sync::CancellationToken;

use super::{BridgeSettings, BrokerUrl, Counts, Sink, Totals};
use jobq::client::Client;
use jobq::error::Input;
use jobq::job::{JobId, NewJob};

/// Consumes `topic` as a member of `group` into the store of `client` until `stop` fires; then stores
/// the batch in hand, commits its offsets and leaves the group. The brokers must answer within the
/// connect time-out at the start.
pub async fn run(
    client: Client,
    url: &BrokerUrl,
    topic: &str,
    group: &str,
    settings: BridgeSettings,
    stop: CancellationToken,
) -> jobq::Result<Totals> {
    let Some(config) = url.kafka_config(&[
        ("group.id", group),
        ("enable.auto.commit", "true"),
        ("auto.commit.interval.ms", "1000"),
        // Offsets are stored by the bridge once their jobs are committed, never by librdkafka.
        ("enable.auto.offset.store", "false"),
        ("auto.offset.reset", "earliest"),
        ("client.id", "jobq-bridge"),
        // A bridge that dies hands its partitions to the others after 10 s rather than librdkafka's
        // 45 s (Kafka's default before 3.0; heartbeats come from librdkafka's own thread, so a slow
        // store never misses one). Brokers that hold a group's join for the session's length, as
        // Tansu does for half of it, let a bridge start sooner as well.
        ("session.timeout.ms", "10000"),
        ("heartbeat.interval.ms", "3000"),
    ]) else {
        return Err(jobq::Error::invalid(
            Input::Broker,
            format!("{url} is not a kafka:// URL"),
        ));
    };
    let shown = url.redacted();
    let consumer: StreamConsumer = config
        .create()
        .map_err(|e| jobq::Error::broker(format!("cannot set up a consumer for {shown}: {e}")))?;
    let consumer = Arc::new(consumer);
    check_topic(&consumer, topic, &shown, settings.connect_timeout).await?;
    consumer
        .subscribe(&[topic])
        .map_err(|e| jobq::Error::broker(format!("cannot subscribe to topic {topic:?} on {shown}: {e}")))?;

    let counts = Arc::new(Counts::default());
    let source = format!("{shown} topic {topic} group {group}");
    let sink = Arc::new(Sink::new(client, settings, source.clone(), counts.clone()));
    let registration = sink.start_registration();
    tracing::info!("bridging {source} into the store");
    pump(&consumer, topic, &sink, &stop).await;
    // The offsets stored for what was committed, committed before the group is left.
    let committing = consumer.clone();
    match tokio::task::spawn_blocking(move || committing.commit_consumer_state(CommitMode::Sync)).await {
        Ok(Ok(()))
        | Ok(Err(rdkafka::error::KafkaError::ConsumerCommit(rdkafka::types::RDKafkaErrorCode::NoOffset))) => {}
        Ok(Err(e)) => tracing::warn!(
            "committing the last offsets to {shown} failed: {e}; those messages come again, and find their jobs"
        ),
        Err(e) => tracing::warn!("committing the last offsets to {shown} failed: {e}"),
    }
    consumer.unsubscribe();
    registration.end().await;
    Ok(counts.totals())
}

/// Reads the topic's metadata: the brokers answer within `timeout`, and the topic is there.
async fn check_topic(
    consumer: &Arc<StreamConsumer>,
    topic: &str,
    shown: &str,
    timeout: std::time::Duration,
) -> jobq::Result<()> {
    let asking = consumer.clone();
    let name = topic.to_string();
    let metadata = tokio::task::spawn_blocking(move || asking.fetch_metadata(Some(&name), timeout))
        .await
        .map_err(|e| jobq::Error::broker(format!("cannot reach {shown}: {e}")))?
        .map_err(|e| {
            jobq::Error::broker(format!(
                "cannot reach {shown} within {}: {e}",
                jobq::time::format_duration(timeout)
            ))
        })?;
    match metadata.topics().iter().find(|t| t.name() == topic) {
        Some(t) if t.error().is_none() && !t.partitions().is_empty() => Ok(()),
        Some(t) => Err(jobq::Error::broker(format!(
            "cannot consume topic {topic:?} on {shown}: {}",
            t.error()
                .map(|e| rdkafka::types::RDKafkaErrorCode::from(e).to_string())
                .unwrap_or_else(|| "it has no partitions".into())
        ))),
        None => Err(jobq::Error::broker(format!("no topic named {topic:?} on {shown}"))),
    }
}

/// One message as the batch keeps it: where it was, and its job or why it has none.
struct Taken {
    partition: i32,
    offset: i64,
    job: Result<NewJob, String>,
}

/// Moves batches from the consumer into the store until `stop` fires.
async fn pump(consumer: &StreamConsumer, topic: &str, sink: &Sink, stop: &CancellationToken) {
    let batch_size = sink.settings().batch();
    let mut batch: Vec<Taken> = Vec::with_capacity(batch_size);
    // librdkafka reports broker trouble through the consumer and goes on retrying by itself: one
    // line when trouble starts, one when messages come again.
    let mut trouble = false;
    let report = |e: &rdkafka::error::KafkaError, trouble: &mut bool| {
        if !*trouble {
            tracing::warn!("reading {topic:?}: {e}; librdkafka keeps trying");
            *trouble = true;
        }
    };
    loop {
        let first = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            next = consumer.recv() => next,
        };
        let now = sink.client_now();
        let take = |m: &rdkafka::message::BorrowedMessage<'_>| {
            let id = message_id(m.topic(), m.partition(), m.offset());
            let job = match m.payload() {
                Some(body) => sink.settings().intake.job(body, Some(id.as_str()), now),
                None => Err("the message has no value".into()),
            };
            Taken {
                partition: m.partition(),
                offset: m.offset(),
                job,
            }
        };
        match first {
            Ok(m) => batch.push(take(&m)),
            Err(e) => {
                report(&e, &mut trouble);
                continue;
            }
        }
        if trouble {
            tracing::info!("reading {topic:?} again");
            trouble = false;
        }
        // What has arrived joins the batch, and what arrives within `LINGER` of the last.
        while batch.len() < batch_size {
            let next = match consumer.recv().now_or_never() {
                Some(next) => Some(next),
                None => tokio::time::timeout(super::LINGER, consumer.recv()).await.ok(),
            };
            match next {
                Some(Ok(m)) => batch.push(take(&m)),
                Some(Err(e)) => {
                    report(&e, &mut trouble);
                    break;
                }
                None => break,
            }
        }
        let mut jobs = Vec::with_capacity(batch.len());
        let mut next_offsets: BTreeMap<i32, i64> = BTreeMap::new();
        for taken in batch.drain(..) {
            match taken.job {
                Ok(job) => jobs.push(job),
                Err(reason) => sink.counts().reject(
                    &format!(
                        "message at offset {} of {topic:?} partition {}",
                        taken.offset, taken.partition
                    ),
                    &reason,
                ),
            }
            let last = next_offsets.entry(taken.partition).or_insert(taken.offset);
            *last = (*last).max(taken.offset);
        }
        if sink.store(&jobs, stop).await.is_err() {
            return;
        }
        for (partition, offset) in next_offsets {
            // Fails only for a partition this consumer no longer holds (a rebalance took it): its new
            // holder reads from the last commit and finds these jobs stored.
            if let Err(e) = consumer.store_offset(topic, partition, offset) {
                tracing::debug!("storing the offset of {topic:?} partition {partition}: {e}");
            }
        }
    }
}

/// The job id of a message that names none: where the message sits in the log, which no other
/// message shares. A topic name long enough to push it past a job id's length is hashed.
fn message_id(topic: &str, partition: i32, offset: i64) -> String {
    let id = format!("kafka:{topic}:{partition}:{offset}");
    if JobId::parse(&id).is_ok() {
        return id;
    }
    let digest = sha2::Sha256::digest(topic.as_bytes());
    format!("kafka:{}:{partition}:{offset}", hex::encode(&digest[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_id_is_where_the_message_sits_and_always_a_valid_job_id() {
        assert_eq!(message_id("orders", 2, 41), "kafka:orders:2:41");
        let long = message_id(&"t".repeat(249), 0, 1);
        assert!(JobId::parse(&long).is_ok(), "{long}");
        assert_ne!(long, message_id(&"u".repeat(249), 0, 1));
    }
}
