//! `jobq pause` and `jobq resume`: stop and restart the starting of a queue's jobs (or one type's in
//! it) on every worker. The state lives in the store; workers see it within one poll interval.

use clap::Args;

use super::output::{print, print_json};
use super::{Context, OutputFormat};

/// Arguments of `jobq pause` and `jobq resume`.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The queue (it need not have jobs yet)
    #[arg(value_name = "QUEUE")]
    pub queue: String,

    /// Only this job type's jobs in the queue
    #[arg(long = "type", value_name = "TYPE")]
    pub job_type: Option<String>,
}

/// Runs `jobq pause` (`paused` true) or `jobq resume`.
pub async fn run(ctx: &Context, args: PauseArgs, paused: bool) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let job_type = args.job_type.as_deref();
    let changed = if paused {
        client.pause(&args.queue, job_type).await?
    } else {
        client.resume(&args.queue, job_type).await?
    };
    if format == OutputFormat::Json {
        return print_json(&crate::report::paused(&args.queue, job_type, paused, changed));
    }
    if ctx.quiet {
        return Ok(());
    }
    let what = match job_type {
        Some(t) => format!("{t} in queue {}", args.queue),
        None => format!("queue {}", args.queue),
    };
    let line = match (paused, changed) {
        (true, true) => {
            format!("paused {what}: workers start none of its jobs from their next poll; enqueueing goes on")
        }
        (true, false) => format!("{what} was paused already"),
        (false, true) => format!("resumed {what}"),
        (false, false) => format!("{what} was not paused"),
    };
    print(&format!("{line}\n"))
}
