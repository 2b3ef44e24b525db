//! The publish handler: hands each job's envelope (the body an http handler POSTs) to a message
//! broker, for services that consume from RabbitMQ or Kafka. The job succeeds when the broker
//! confirms the message; a refused, returned (unroutable) or unconfirmed publish is a retry, so the
//! job's retries and dead letters cover the broker too. Delivery is at least once: a publish
//! confirmed just as the worker died is published again, with the same message id.
//!
//! - `amqp://USER:PASS@HOST:PORT/VHOST/EXCHANGE?routing_key=KEY`: published persistent and
//!   mandatory with publisher confirms on one connection per handler (made on first use, made again
//!   after a failure). An empty EXCHANGE is the default exchange, where the routing key names a
//!   queue; the routing key defaults to the job type. The message id is the job's idempotency key,
//!   and `x-jobq-attempt` says which attempt published it.
//! - `kafka://HOST:PORT[,HOST:PORT]/TOPIC[?setting=value…]`: produced with `acks=all`, keyed by the
//!   job's idempotency key (so one job's messages stay in order on one partition); the broker's
//!   acknowledgement is the confirm. The query holds librdkafka settings.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
#[cfg(feature = "amqp")]
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
#[cfg(feature = "amqp")]
use lapin::types::{AMQPValue, FieldTable, ShortString};
#[cfg(feature = "amqp")]
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
#[cfg(feature = "kafka")]
use rdkafka::producer::{FutureProducer, FutureRecord};

use jobq::handler::{CustomKind, Handler, HandlerFactory, HandlerKind, JobContext, Outcome};
use jobq::store::RedactedUrl;

/// How long connecting to the broker may take before the attempt is a retry.
#[cfg(feature = "amqp")]
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a publish may wait for its confirm.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// The handler kind a `publish = "…"` URL describes; the error says what is wrong without the
/// password.
pub fn kind(url: &str) -> Result<HandlerKind, String> {
    Ok(HandlerKind::Custom(CustomKind::new(Publish(PublishTarget::parse(
        url,
    )?))))
}

/// The `publish` kind of handler as the worker builds it (at start, and again on a reload that
/// changed its target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish(pub PublishTarget);

impl HandlerFactory for Publish {
    fn name(&self) -> &str {
        "publish"
    }

    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<Publish>() == Some(self)
    }

    fn build(&self, job_type: &str) -> jobq::Result<Arc<dyn Handler>> {
        let handler = PublishHandler::new(self.0.clone()).map_err(|e| {
            let key = format!("[handlers.{job_type:?}] publish");
            jobq::Error::config_at(None, Some(key.clone()), format!("{key}: {e}"), None)
        })?;
        Ok(Arc::new(handler))
    }
}

/// Where a publish handler sends envelopes, read from its `publish = "…"` URL.
#[derive(Clone, PartialEq, Eq)]
pub enum PublishTarget {
    /// An AMQP exchange.
    Amqp {
        /// The connection URL: scheme, credentials, host and vhost, without the exchange.
        connection: String,
        /// The exchange (empty: the default exchange).
        exchange: String,
        /// The routing key; `None`: the job type.
        routing_key: Option<String>,
    },
    /// A Kafka topic.
    Kafka {
        /// The bootstrap servers.
        servers: String,
        /// The topic.
        topic: String,
        /// librdkafka settings from the query.
        settings: Vec<(String, String)>,
    },
}

impl PublishTarget {
    /// Reads a `publish` URL; the error says what is wrong without the password.
    pub fn parse(text: &str) -> Result<PublishTarget, String> {
        let shown = RedactedUrl::new(text);
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| format!("{shown}: expected amqp://…/VHOST/EXCHANGE or kafka://HOST:PORT/TOPIC"))?;
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        match scheme.to_ascii_lowercase().as_str() {
            "amqp" | "amqps" => {
                let Some((authority, path)) = before_query.split_once('/') else {
                    return Err(format!(
                        "{shown}: expected amqp://HOST:PORT/VHOST/EXCHANGE (%2f is the vhost /; an empty EXCHANGE is the default exchange)"
                    ));
                };
                let Some((vhost, exchange)) = path.split_once('/') else {
                    return Err(format!(
                        "{shown}: name the exchange after the vhost: amqp://HOST:PORT/VHOST/EXCHANGE (an empty EXCHANGE is the default exchange)"
                    ));
                };
                let exchange = percent_decode(exchange);
                let mut routing_key = None;
                let mut passed = Vec::new();
                for (k, v) in pairs {
                    if k == "routing_key" {
                        routing_key = Some(v);
                    } else {
                        passed.push(format!("{k}={v}"));
                    }
                }
                if exchange.is_empty() && routing_key.is_none() {
                    return Err(format!(
                        "{shown}: the default exchange routes by queue name: add ?routing_key=QUEUE"
                    ));
                }
                let mut connection = format!("{scheme}://{authority}/{vhost}");
                if !passed.is_empty() {
                    connection.push('?');
                    connection.push_str(&passed.join("&"));
                }
                #[cfg(not(feature = "amqp"))]
                return Err(format!("{shown}: {}", super::not_built("AMQP", "amqp")));
                #[cfg(feature = "amqp")]
                connection
                    .parse::<lapin::uri::AMQPUri>()
                    .map_err(|e| format!("{shown}: {e}"))?;
                Ok(PublishTarget::Amqp {
                    connection,
                    exchange,
                    routing_key,
                })
            }
            "kafka" => {
                let Some((servers, topic)) = before_query.split_once('/') else {
                    return Err(format!("{shown}: name the topic: kafka://HOST:PORT/TOPIC"));
                };
                if servers.is_empty() || servers.contains('@') {
                    return Err(format!(
                        "{shown}: expected kafka://HOST:PORT[,HOST:PORT]/TOPIC (credentials go in librdkafka's sasl.* settings, in the query)"
                    ));
                }
                let topic = percent_decode(topic);
                if topic.is_empty() || topic.contains('/') {
                    return Err(format!("{shown}: name one topic: kafka://HOST:PORT/TOPIC"));
                }
                #[cfg(not(feature = "kafka"))]
                return Err(format!("{shown}: {}", super::not_built("Kafka", "kafka")));
                Ok(PublishTarget::Kafka {
                    servers: servers.to_string(),
                    topic,
                    settings: pairs,
                })
            }
            other => Err(format!(
                "{shown}: unknown scheme {other:?} (expected amqp, amqps or kafka)"
            )),
        }
    }

    /// Where messages go, without the password: for errors and logs.
    pub fn shown(&self) -> String {
        match self {
            PublishTarget::Amqp {
                connection, exchange, ..
            } => {
                let base = connection.split('?').next().unwrap_or(connection);
                format!("{} exchange {exchange:?}", RedactedUrl::new(base))
            }
            PublishTarget::Kafka { servers, topic, .. } => format!("kafka://{servers} topic {topic:?}"),
        }
    }
}

impl std::fmt::Debug for PublishTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublishTarget({})", self.shown())
    }
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// Publishes envelopes to one broker target.
pub struct PublishHandler {
    target: PublishTarget,
    link: Link,
}

enum Link {
    /// The AMQP channel in use, made on first use and dropped after a failure.
    #[cfg(feature = "amqp")]
    Amqp(Box<tokio::sync::Mutex<Option<(Connection, Channel)>>>),
    /// The Kafka producer; librdkafka connects and reconnects by itself.
    #[cfg(feature = "kafka")]
    Kafka(FutureProducer),
}

impl PublishHandler {
    /// A handler for `target`. A Kafka producer is set up now (it connects on first use).
    pub fn new(target: PublishTarget) -> Result<PublishHandler, String> {
        let link = match &target {
            #[cfg(feature = "amqp")]
            PublishTarget::Amqp { .. } => Link::Amqp(Box::default()),
            #[cfg(feature = "kafka")]
            PublishTarget::Kafka { servers, settings, .. } => {
                let config = super::url::kafka_config(
                    servers,
                    settings,
                    &[
                        ("acks", "all"),
                        ("enable.idempotence", "false"),
                        ("linger.ms", "1"),
                        ("client.id", "jobq-publish"),
                    ],
                );
                Link::Kafka(
                    config
                        .create()
                        .map_err(|e| format!("cannot set up a producer for {}: {e}", target.shown()))?,
                )
            }
            // A target this build cannot publish to is refused when its URL is read.
            #[allow(unreachable_patterns)]
            _ => unreachable!("PublishTarget::parse refuses a broker this build has no client for"),
        };
        Ok(PublishHandler { target, link })
    }

    /// The channel to publish on, connecting when there is none.
    #[cfg(feature = "amqp")]
    async fn channel(&self, slot: &tokio::sync::Mutex<Option<(Connection, Channel)>>) -> Result<Channel, String> {
        let PublishTarget::Amqp { connection: url, .. } = &self.target else {
            unreachable!("an AMQP link has an AMQP target")
        };
        let mut slot = slot.lock().await;
        if let Some((connection, channel)) = slot.as_ref()
            && connection.status().connected()
            && channel.status().connected()
        {
            return Ok(channel.clone());
        }
        *slot = None;
        let failed = |e: String| format!("cannot connect to {}: {e}", self.target.shown());
        let properties = ConnectionProperties::default().with_connection_name("jobq publish".into());
        let connection = tokio::time::timeout(CONNECT_TIMEOUT, Connection::connect(url, properties))
            .await
            .map_err(|_| {
                failed(format!(
                    "no answer within {}",
                    jobq::time::format_duration(CONNECT_TIMEOUT)
                ))
            })?
            .map_err(|e| failed(e.to_string()))?;
        let channel = connection.create_channel().await.map_err(|e| failed(e.to_string()))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| failed(e.to_string()))?;
        *slot = Some((connection, channel.clone()));
        Ok(channel)
    }

    /// Publishes `body` and waits for the confirm, for at most [`CONFIRM_TIMEOUT`] (the job's own
    /// time-out, when shorter, stops it sooner through its context).
    async fn publish(&self, job: &jobq::job::Job, body: &[u8]) -> Result<(), String> {
        let within = CONFIRM_TIMEOUT;
        match (&self.link, &self.target) {
            #[cfg(feature = "amqp")]
            (
                Link::Amqp(slot),
                PublishTarget::Amqp {
                    exchange, routing_key, ..
                },
            ) => {
                let channel = self.channel(slot).await?;
                let key = routing_key.as_deref().unwrap_or(&job.job_type);
                let mut headers = FieldTable::default();
                headers.insert("x-jobq-attempt".into(), AMQPValue::LongLongInt(i64::from(job.attempt)));
                let properties = BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type(ShortString::from("application/json"))
                    .with_message_id(ShortString::from(job.idempotency_key()))
                    .with_headers(headers);
                let options = BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                };
                let outcome = async {
                    let confirm = channel
                        .basic_publish(exchange.as_str().into(), key.into(), options, body, properties)
                        .await
                        .map_err(|e| e.to_string())?
                        .await
                        .map_err(|e| e.to_string())?;
                    match confirm {
                        lapin::Confirmation::Ack(None) => Ok(()),
                        lapin::Confirmation::Ack(Some(returned)) | lapin::Confirmation::Nack(Some(returned)) => {
                            Err(format!(
                                "returned unroutable ({} {}): no queue is bound for routing key {key:?}",
                                returned.reply_code, returned.reply_text
                            ))
                        }
                        lapin::Confirmation::Nack(None) => Err("the broker refused the message (nack)".into()),
                        lapin::Confirmation::NotRequested => Ok(()),
                    }
                };
                let result = tokio::time::timeout(within, outcome)
                    .await
                    .unwrap_or_else(|_| Err(format!("no confirm within {}", jobq::time::format_duration(within))));
                if result.is_err() && !channel.status().connected() {
                    // The next job connects again.
                    *slot.lock().await = None;
                }
                result.map_err(|e| format!("publishing to {}: {e}", self.target.shown()))
            }
            #[cfg(feature = "kafka")]
            (Link::Kafka(producer), PublishTarget::Kafka { topic, .. }) => {
                let record = FutureRecord::to(topic).key(job.idempotency_key()).payload(body);
                producer
                    .send(record, within)
                    .await
                    .map(drop)
                    .map_err(|(e, _)| format!("publishing to {}: {e}", self.target.shown()))
            }
            _ => unreachable!("the link is made for the target"),
        }
    }
}

#[async_trait]
impl Handler for PublishHandler {
    async fn run(&self, job: &jobq::job::Job, cx: &JobContext) -> Outcome {
        let body = match serde_json::to_vec(&job.envelope()) {
            Ok(b) => b,
            Err(e) => return Outcome::retry(format!("cannot encode the envelope: {e}")),
        };
        tokio::select! {
            biased;
            result = self.publish(job, &body) => match result {
                Ok(()) => Outcome::success(),
                Err(e) => Outcome::retry(e),
            },
            _ = cx.cancelled() => Outcome::retry(format!("publishing to {}: stopped", self.target.shown())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amqp_and_kafka_targets_are_read_from_their_urls() {
        let t =
            PublishTarget::parse("amqp://ana:s3cret@mq:5672/%2f/orders?routing_key=order.new&heartbeat=10").unwrap();
        assert_eq!(
            t,
            PublishTarget::Amqp {
                connection: "amqp://ana:s3cret@mq:5672/%2f?heartbeat=10".into(),
                exchange: "orders".into(),
                routing_key: Some("order.new".into()),
            }
        );
        assert_eq!(t.shown(), "amqp://ana:***@mq:5672/%2f exchange \"orders\"");
        let t = PublishTarget::parse("kafka://k1:9092,k2:9092/order%20events?linger.ms=5").unwrap();
        assert_eq!(
            t,
            PublishTarget::Kafka {
                servers: "k1:9092,k2:9092".into(),
                topic: "order events".into(),
                settings: vec![("linger.ms".into(), "5".into())],
            }
        );
    }

    #[test]
    fn incomplete_targets_are_refused_without_the_password() {
        for (bad, says) in [
            ("amqp://ana:s3cret@mq:5672/%2f", "name the exchange"),
            ("amqp://ana:s3cret@mq:5672/%2f/", "add ?routing_key=QUEUE"),
            ("kafka://k1:9092", "name the topic"),
            ("kafka://k1:9092/", "name one topic"),
            ("nats://ana:s3cret@h/x", "unknown scheme"),
        ] {
            let e = PublishTarget::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }
}
