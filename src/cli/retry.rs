//! `jobq retry ID…`: finished jobs of any outcome back to pending (dead letters have `replay-dead`).

use clap::Args;
use serde_json::json;

use super::output::{print, print_json};
use super::{Context, OutputFormat};
use crate::Error;
use crate::job::JobId;

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
        let retried: Vec<&JobId> = report.retried.iter().map(|j| &j.id).collect();
        let not_terminal: Vec<_> = report
            .not_terminal
            .iter()
            .map(|(id, status)| json!({"id": id, "status": status}))
            .collect();
        let key_taken: Vec<_> = report
            .key_taken
            .iter()
            .map(|(id, holder)| json!({"id": id, "holder": holder}))
            .collect();
        print_json(&json!({
            "retried": retried,
            "notTerminal": not_terminal,
            "keyTaken": key_taken,
            "notFound": report.not_found,
        }))?;
    } else {
        for job in &report.retried {
            print(&format!("retried {} ({} in queue {})", job.id, job.job_type, job.queue))?;
        }
    }
    let mut refused: Vec<JobId> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for (id, status) in &report.not_terminal {
        reasons.push(format!("job {id} is {status}: only a finished job can be retried"));
        refused.push(id.clone());
    }
    for (id, holder) in &report.key_taken {
        reasons.push(format!(
            "job {id} stays as it is: live job {holder} holds its unique key"
        ));
        refused.push(id.clone());
    }
    if refused.is_empty() && report.not_found.is_empty() {
        return Ok(());
    }
    if refused.is_empty() {
        return Err(Error::NotFound { ids: report.not_found }.into());
    }
    if !report.not_found.is_empty() {
        reasons.push(Error::NotFound { ids: report.not_found }.to_string());
    }
    Err(Error::conflict(refused, reasons.join("; ")).into())
}
