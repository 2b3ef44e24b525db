//! `jobq cleanup`: delete finished jobs. `--older-than` is the routine, cron-safe form: it never asks.

use clap::Args;

use super::confirm::confirm;
use super::output::{print, print_json};
use super::{Context, OutputFormat, filter};
use jobq::Error;
use jobq::client::CleanupRequest;
use jobq::error::Input;
use jobq::time::parse_duration;

/// Arguments of `jobq cleanup`.
#[derive(Debug, Args)]
#[command(
    after_help = "Only terminal jobs (succeeded, dead, cancelled, discarded, expired) are ever deleted, and never one\nthat a job which has not ended waits for. The conditions combine: each narrows what goes.\nExamples:\n  jobq cleanup --older-than 7d            (routine: never asks; fine for cron)\n  jobq cleanup --status dead --queue mail --dry-run\n  jobq cleanup --status succeeded --keep-last 1000 --yes"
)]
pub struct CleanupArgs {
    /// Only jobs that finished longer ago than this, e.g. 7d, 12h
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,

    /// Only this terminal status: succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)
    #[arg(long, value_name = "STATUS")]
    pub status: Vec<String>,

    /// Only this queue (repeatable or comma-separated)
    #[arg(long, value_name = "QUEUE")]
    pub queue: Vec<String>,

    /// Only this job type (repeatable or comma-separated)
    #[arg(long = "type", value_name = "TYPE")]
    pub job_type: Vec<String>,

    /// Keep the newest N finished jobs of each queue and status; delete only older ones
    #[arg(long, value_name = "N")]
    pub keep_last: Option<u32>,

    /// Count what would be deleted without deleting
    #[arg(long)]
    pub dry_run: bool,

    /// Do not ask before deleting without --older-than
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Runs `jobq cleanup`.
pub async fn run(ctx: &Context, args: CleanupArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let older_than = args
        .older_than
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| Error::invalid(Input::Duration, format!("--older-than: {e}")))?;
    let statuses = filter::statuses(&args.status)?;
    if let Some(s) = statuses.iter().find(|s| !s.is_terminal()) {
        return Err(Error::invalid(
            Input::Status,
            format!(
                "--status {s}: cleanup deletes only terminal jobs (succeeded, dead, cancelled, discarded, expired)"
            ),
        )
        .into());
    }
    let request = CleanupRequest {
        older_than,
        statuses,
        queues: filter::list(&args.queue),
        job_types: filter::list(&args.job_type),
        keep_last: args.keep_last,
        dry_run: args.dry_run,
    };
    let client = ctx.client().await?;
    if older_than.is_none() && !args.dry_run {
        let count = client
            .cleanup(&CleanupRequest {
                dry_run: true,
                ..request.clone()
            })
            .await?;
        if count == 0 {
            return report(ctx, format, 0, false);
        }
        if !confirm(
            format!("Delete {count} finished jobs of any age?"),
            args.yes,
            "--older-than DURATION",
        )
        .await?
        {
            eprintln!("nothing deleted");
            return Ok(());
        }
    }
    let n = client.cleanup(&request).await?;
    report(ctx, format, n, args.dry_run)
}

fn report(ctx: &Context, format: OutputFormat, n: u64, dry_run: bool) -> anyhow::Result<()> {
    if format == OutputFormat::Json {
        return print_json(&crate::report::cleanup(n, dry_run));
    }
    let _ = ctx;
    print(&if dry_run {
        format!("would delete {}", super::output::jobs(n, ""))
    } else {
        format!("deleted {}", super::output::jobs(n, ""))
    })
}
