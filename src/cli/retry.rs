//! `jobq retry ID…`: finished jobs of any outcome back to pending (dead letters have `replay-dead`).

use clap::Args;

use super::output::{print, print_json};
use super::{Context, OutputFormat};
use crate::report::Document as _;

/// Arguments of `jobq retry`.
#[derive(Debug, Args)]
#[command(
    after_help = "A succeeded, dead, cancelled or discarded job runs again from now: attempts reset, errors kept.\nExamples:\n  jobq retry 0193a5c4-…\n  jobq retry 0193a5c4-… 0193a5c5-… -o json"
)]
pub struct RetryArgs {
    /// Job ids
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
}

/// Runs `jobq retry`.
pub async fn run(ctx: &Context, args: RetryArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let report = client.retry(&args.ids).await?;
    if format == OutputFormat::Json {
        print_json(&report.document())?;
    } else {
        for job in &report.retried {
            print(&format!("retried {} ({} in queue {})", job.id, job.job_type, job.queue))?;
        }
    }
    report.refusal().map_or(Ok(()), |e| Err(e.into()))
}
