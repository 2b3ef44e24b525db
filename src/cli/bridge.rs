//! `jobq bridge`: consumes a RabbitMQ queue or a Kafka topic into the store until SIGTERM or SIGINT
//! (see `bridge/`). The first signal finishes the batch in hand, acknowledges it and exits; a second
//! one exits at once, leaving what was not acknowledged to the broker.

// Built without a broker's client (the `amqp`, `kafka` features), its arm goes and the rest of the
// bridge is never reached.
#![cfg_attr(
    not(all(feature = "amqp", feature = "kafka")),
    allow(unused_imports, unused_variables, unreachable_code, dead_code)
)]

use std::time::Duration;

use clap::Args;

use super::Context;
use super::worker::{LogFormat, init_logging};
use crate::bridge::{self, BridgeSettings, BrokerUrl, Intake, Totals};
use jobq::Error;
use jobq::error::Input;
use jobq::time::parse_duration;

/// Arguments of `jobq bridge`.
#[derive(Debug, Args)]
#[command(
    after_help = "Each message becomes a job as `jobq enqueue --file` reads a line: an envelope as it is, anything\n\
else the payload of --type (without --type, rejected). A message is acknowledged only after its job\n\
is committed; one that cannot become a job is rejected (AMQP: without requeue, to the queue's\n\
dead-letter exchange; Kafka: passed over), with one log line saying why.\n\n\
Examples:\n  jobq bridge amqp://guest:guest@127.0.0.1:5672/%2f --from orders --to orders\n  \
jobq bridge amqp://127.0.0.1:5672/%2f --from legacy-mail --type mail.send\n  \
jobq bridge kafka://127.0.0.1:9092 --topic orders --group jobq-orders"
)]
pub struct BridgeArgs {
    /// The broker: amqp://USER:PASS@HOST:PORT/VHOST (amqps:// for TLS) or kafka://HOST:PORT[,HOST:PORT]
    // Its own id: `url` is the global --url of the store.
    #[arg(id = "broker", value_name = "URL")]
    pub broker: String,

    /// The RabbitMQ queue to consume (amqp:// only)
    #[arg(long, value_name = "QUEUE")]
    pub from: Option<String>,

    /// The Kafka topic to consume (kafka:// only)
    #[arg(long, value_name = "TOPIC")]
    pub topic: Option<String>,

    /// The Kafka consumer group whose offsets the bridge commits (kafka:// only)
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,

    /// The jobq queue of messages that name none [default: default]
    #[arg(long, value_name = "QUEUE")]
    pub to: Option<String>,

    /// The job type of messages that are not envelopes (their whole body is the payload)
    #[arg(long = "type", value_name = "TYPE")]
    pub default_type: Option<String>,

    /// Messages delivered and not yet acknowledged, at most
    //
    // 4,000 rather than 1,000: RabbitMQ delivers one queue a fifth faster to a consumer with the
    // larger prefetch (BENCHMARKS.md, "Bridges"), and 4,000 envelopes of 1 KB are 4 MB in memory.
    #[arg(long, value_name = "N", default_value_t = 4000, value_parser = clap::value_parser!(u32).range(1..=65535))]
    pub max_in_flight: u32,

    /// How long the first connection to the broker may take
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    pub connect_timeout: Duration,

    /// Name shown by `jobq workers` [default: the host name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Log format: text for people, json (one object per line) for log shippers
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// What `jobq bridge` consumes, its arguments checked against its URL's scheme.
enum Source {
    Amqp { queue: String },
    Kafka { topic: String, group: String },
}

/// Runs `jobq bridge` until a signal.
pub async fn run(ctx: &Context, args: BridgeArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(
        super::OutputFormat::Table,
        &[super::OutputFormat::Table, super::OutputFormat::Json],
    )?;
    let url = BrokerUrl::parse(&args.broker).map_err(Error::from)?;
    let source = source(&url, &args)?;
    if let Some(q) = &args.to {
        jobq::job::validate_queue(q).map_err(|e| Error::from(e.at("--to")))?;
    }
    if let Some(t) = &args.default_type {
        jobq::job::validate_type(t).map_err(|e| Error::from(e.at("--type")))?;
    }
    init_logging(args.log_format, ctx.verbose, ctx.quiet);
    let settings = BridgeSettings {
        intake: Intake {
            queue: args.to.clone(),
            default_type: args.default_type.clone(),
            type_defaults: ctx.config.type_defaults(),
            limits: ctx.config.limits,
        },
        max_in_flight: args.max_in_flight as usize,
        connect_timeout: args.connect_timeout,
        shutdown_timeout: ctx.config.worker.shutdown_timeout,
        heartbeat: ctx.config.worker.heartbeat,
        name: args.name.clone(),
    };
    let client = ctx.client().await?;
    let stop = tokio_util::sync::CancellationToken::new();
    let signals = tokio::spawn(on_signals(stop.clone()));
    let totals: jobq::Result<Totals> = match source {
        #[cfg(feature = "amqp")]
        Source::Amqp { queue } => bridge::amqp::run(client, &url, &queue, settings, stop).await,
        #[cfg(feature = "kafka")]
        Source::Kafka { topic, group } => bridge::kafka::run(client, &url, &topic, &group, settings, stop).await,
        // BrokerUrl::parse refuses a broker this build has no client for.
        #[allow(unreachable_patterns)]
        _ => unreachable!("a broker URL this build cannot use is refused when read"),
    };
    signals.abort();
    let totals = totals?;
    match format {
        super::OutputFormat::Json => super::output::print_json(&totals)?,
        _ if !ctx.quiet => eprintln!("{}", summary(&totals)),
        _ => {}
    }
    Ok(())
}

/// `--from` for AMQP, `--topic` and `--group` for Kafka, and neither for the other.
fn source(url: &BrokerUrl, args: &BridgeArgs) -> Result<Source, Error> {
    let refuse = |why: &str| Err(Error::invalid(Input::Broker, why));
    match url {
        BrokerUrl::Amqp(_) => {
            if args.topic.is_some() || args.group.is_some() {
                return refuse("--topic and --group are for kafka:// bridges; an amqp:// bridge reads --from QUEUE");
            }
            match &args.from {
                Some(q) if !q.is_empty() => Ok(Source::Amqp { queue: q.clone() }),
                _ => refuse("an amqp:// bridge needs --from QUEUE, the RabbitMQ queue to consume"),
            }
        }
        BrokerUrl::Kafka { .. } => {
            if args.from.is_some() {
                return refuse("--from is for amqp:// bridges; a kafka:// bridge reads --topic TOPIC --group GROUP");
            }
            let topic = args.topic.as_deref().filter(|t| !t.is_empty());
            let group = args.group.as_deref().filter(|g| !g.is_empty());
            match (topic, group) {
                (None, _) => refuse("a kafka:// bridge needs --topic TOPIC, the Kafka topic to consume"),
                (_, None) => {
                    refuse("a kafka:// bridge needs --group GROUP, the consumer group whose offsets it commits")
                }
                (Some(topic), Some(group)) => Ok(Source::Kafka {
                    topic: topic.to_string(),
                    group: group.to_string(),
                }),
            }
        }
    }
}

/// The first SIGTERM or SIGINT asks the bridge to stop after its batch; a second one exits at once.
async fn on_signals(stop: tokio_util::sync::CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!(
        "{name} received: storing and acknowledging the batch in hand, then exiting (send it again to exit now)"
    );
    stop.cancel();
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::warn!("second {name}: exiting now; the broker delivers what was not acknowledged again");
    std::process::exit(1);
}

/// The line printed when a bridge stops.
fn summary(t: &Totals) -> String {
    let mut line = format!(
        "bridge stopped: {} messages became new jobs, {} were stored already, {} were rejected",
        t.created, t.duplicates, t.rejected
    );
    if t.reconnects > 0 {
        line.push_str(&format!("; reconnected {} times", t.reconnects));
    }
    line
}
