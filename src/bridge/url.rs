//! The broker a bridge or a `publish` handler talks to, from its URL: `amqp://` or `amqps://`
//! (RabbitMQ, AMQP 0-9-1) and `kafka://host:port[,host:port…]`. A password in the URL is never shown:
//! everything that names a broker shows [`BrokerUrl::redacted`].

use std::fmt;

use jobq::error::{Input, InvalidInput};
use jobq::store::RedactedUrl;

/// A broker URL, checked for its scheme.
#[derive(Clone, PartialEq, Eq)]
pub enum BrokerUrl {
    /// RabbitMQ: the URL as lapin reads it (`amqp://user:pass@host:5672/vhost?heartbeat=10`).
    Amqp(String),
    /// Kafka: the bootstrap servers (`host:port,host:port`) and any client settings from the query
    /// (`?client.id=x&security.protocol=ssl`), given to librdkafka as they are.
    Kafka {
        /// The bootstrap servers.
        servers: String,
        /// librdkafka settings from the query.
        settings: Vec<(String, String)>,
    },
}

impl BrokerUrl {
    /// Reads a broker URL; an unknown scheme or a Kafka URL without servers is refused.
    pub fn parse(text: &str) -> Result<BrokerUrl, InvalidInput> {
        let refuse = |why: String| Err(InvalidInput::new(Input::Broker, why));
        let Some((scheme, rest)) = text.split_once("://") else {
            return refuse(format!(
                "{} is not a broker URL (expected amqp://, amqps:// or kafka://)",
                RedactedUrl::new(text)
            ));
        };
        match scheme.to_ascii_lowercase().as_str() {
            #[cfg(not(feature = "amqp"))]
            "amqp" | "amqps" => refuse(super::not_built("AMQP", "amqp")),
            #[cfg(feature = "amqp")]
            "amqp" | "amqps" => match text.parse::<lapin::uri::AMQPUri>() {
                Ok(_) => Ok(BrokerUrl::Amqp(text.to_string())),
                Err(e) => refuse(format!("{} is not a valid AMQP URL: {e}", RedactedUrl::new(text))),
            },
            #[cfg(not(feature = "kafka"))]
            "kafka" => refuse(super::not_built("Kafka", "kafka")),
            #[cfg(feature = "kafka")]
            "kafka" => {
                let (servers, query) = rest.split_once('?').unwrap_or((rest, ""));
                let servers = servers.trim_end_matches('/');
                if servers.contains('@') {
                    return refuse(
                        "a kafka:// URL takes no user or password; give librdkafka's sasl.* settings in its query"
                            .into(),
                    );
                }
                if servers.is_empty() || servers.split(',').any(|s| s.is_empty() || s.contains('/')) {
                    return refuse(format!(
                        "kafka://{rest}: expected kafka://HOST:PORT[,HOST:PORT…][?setting=value…]"
                    ));
                }
                let settings = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
                Ok(BrokerUrl::Kafka {
                    servers: servers.to_string(),
                    settings,
                })
            }
            other => refuse(format!(
                "unknown broker scheme {other:?} in {} (expected amqp, amqps or kafka)",
                RedactedUrl::new(text)
            )),
        }
    }

    /// A librdkafka client's settings for the servers of a `kafka://` URL: `ours` (what jobq needs
    /// of the client), then the URL's query, which may override them. `None` for an AMQP URL.
    #[cfg(feature = "kafka")]
    pub(crate) fn kafka_config(&self, ours: &[(&str, &str)]) -> Option<rdkafka::ClientConfig> {
        let BrokerUrl::Kafka { servers, settings } = self else {
            return None;
        };
        Some(kafka_config(servers, settings, ours))
    }

    /// The URL with any password replaced by `***`, and no query (a Kafka query may hold secrets).
    pub fn redacted(&self) -> String {
        match self {
            BrokerUrl::Amqp(text) => RedactedUrl::new(text.split('?').next().unwrap_or(text)).to_string(),
            BrokerUrl::Kafka { servers, .. } => format!("kafka://{servers}"),
        }
    }
}

/// A librdkafka client's settings: the bootstrap `servers`, `ours`, then the user's `settings`.
#[cfg(feature = "kafka")]
pub(crate) fn kafka_config(
    servers: &str,
    settings: &[(String, String)],
    ours: &[(&str, &str)],
) -> rdkafka::ClientConfig {
    let mut config = rdkafka::ClientConfig::new();
    config.set("bootstrap.servers", servers);
    for (key, value) in ours {
        config.set(*key, *value);
    }
    for (key, value) in settings {
        config.set(key, value);
    }
    config
}

impl fmt::Debug for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrokerUrl({})", self.redacted())
    }
}

impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amqp_and_kafka_urls_are_read_and_shown_without_secrets() {
        let amqp = BrokerUrl::parse("amqp://ana:s3cret@127.0.0.1:5672/%2f?heartbeat=10").unwrap();
        assert_eq!(amqp.redacted(), "amqp://ana:***@127.0.0.1:5672/%2f");
        assert!(!format!("{amqp:?}").contains("s3cret"));
        let kafka = BrokerUrl::parse("kafka://k1:9092,k2:9092?client.id=jobq&sasl.password=x").unwrap();
        assert_eq!(kafka.redacted(), "kafka://k1:9092,k2:9092");
        let BrokerUrl::Kafka { servers, settings } = kafka else {
            unreachable!()
        };
        assert_eq!(servers, "k1:9092,k2:9092");
        assert_eq!(settings[0], ("client.id".to_string(), "jobq".to_string()));
    }

    #[test]
    fn other_schemes_and_shapes_are_refused_without_the_password() {
        for bad in [
            "nats://ana:s3cret@host:4222",
            "ana:s3cret@host",
            "kafka://",
            "kafka://ana:s3cret@host:9092",
        ] {
            let e = BrokerUrl::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("s3cret"), "{e}");
            assert_eq!(BrokerUrl::parse(bad).unwrap_err().input, Input::Broker);
        }
        assert!(
            BrokerUrl::parse("nats://h")
                .unwrap_err()
                .to_string()
                .contains("unknown broker scheme")
        );
    }
}
