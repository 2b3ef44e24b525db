//! `jobq emit`: records an event and enqueues the jobs the config's `[events."NAME"]` says it
//! becomes, all in one store transaction, and prints their ids.

use clap::Args;
use serde_json::json;

use super::enqueue::{parse_meta, read_payload};
use super::output::{print, print_json};
use super::{Context, OutputFormat};
use jobq::client::EventSpec;
use jobq::store::EmitOutcome;

/// Arguments of `jobq emit`.
#[derive(Debug, Args)]
#[command(
    after_help = "Emitting an id again enqueues nothing new, so a producer that retries should give one.\n\nExamples:\n  jobq emit user.registered '{\"userId\":7}' --id signup-7\n  jobq emit order.paid @order.json --meta source=shop"
)]
pub struct EmitArgs {
    /// Event name, e.g. user.registered
    #[arg(value_name = "EVENT")]
    pub name: String,

    /// Payload: JSON text, @FILE to read a file, or - for stdin [default: {}]
    #[arg(value_name = "PAYLOAD", allow_negative_numbers = true)]
    pub payload: Option<String>,

    /// The event's id: emitting it again enqueues nothing [default: a new UUIDv7]
    #[arg(long, value_name = "EVENT_ID")]
    pub id: Option<String>,

    /// Meta entry every job gets (repeatable), e.g. --meta tenantId=42
    #[arg(long, value_name = "KEY=VALUE")]
    pub meta: Vec<String>,

    /// Accept an event nobody subscribes to (it becomes no job)
    #[arg(long)]
    pub allow_none: bool,
}

/// Runs `jobq emit`: prints each job's id on a line (`-o json`: the event id, whether it was a
/// duplicate, and the job ids).
pub async fn run(ctx: &Context, args: EmitArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let event = EventSpec {
        name: args.name,
        payload: read_payload(args.payload.as_deref())?,
        id: args.id,
        meta: parse_meta(&args.meta)?,
        allow_none: args.allow_none,
    };
    let client = ctx.client().await?;
    let emitted = client.emit(&ctx.config.events, event).await?;
    let duplicate = emitted.outcome == EmitOutcome::Duplicate;
    if format == OutputFormat::Json {
        let jobs: Vec<&str> = emitted.jobs.iter().map(|j| j.as_str()).collect();
        return print_json(&json!({ "eventId": emitted.event_id, "duplicate": duplicate, "jobs": jobs }));
    }
    if duplicate && !ctx.quiet {
        eprintln!("event {} was emitted before: nothing new enqueued", emitted.event_id);
    }
    if !emitted.jobs.is_empty() {
        let ids: Vec<&str> = emitted.jobs.iter().map(|j| j.as_str()).collect();
        print(&ids.join("\n"))?;
    }
    Ok(())
}
