//! `jobq cancel`: by id, or every live job matching filters (asks first on a terminal).

use clap::Args;

use super::confirm::confirm;
use super::filter::{self, QueueTypeArgs};
use super::output::{print, print_json};
use super::{Context, OutputFormat};
use crate::report::{self, Document as _};
use jobq::Error;
use jobq::error::Input;
use jobq::job::JobStatus;
use jobq::store::JobFilter;

/// Arguments of `jobq cancel`.
#[derive(Debug, Args)]
#[command(
    after_help = "A running job's worker stops its handler at the next heartbeat.\nExamples:\n  jobq cancel 0193a5c4-…\n  jobq cancel --queue mail --type mail.send --yes",
    mut_args = QueueTypeArgs::worded("Cancel every live job in this queue", "Cancel every live job of this type")
)]
pub struct CancelArgs {
    /// Job ids
    #[arg(value_name = "ID", required_unless_present_any = ["queue", "job_type", "status"], conflicts_with_all = ["queue", "job_type", "status"])]
    pub ids: Vec<String>,

    #[command(flatten)]
    pub scope: QueueTypeArgs,

    /// Only jobs in this status: pending, running or waiting (repeatable or comma-separated)
    #[arg(long, value_name = "STATUS")]
    pub status: Vec<String>,

    /// Also cancel every job that waits for these (and those that wait for them, and so on) and has
    /// not ended, whatever its rule
    #[arg(long, conflicts_with_all = ["queue", "job_type", "status"])]
    pub cascade: bool,

    /// Do not ask before cancelling by filter
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Runs `jobq cancel`.
pub async fn run(ctx: &Context, args: CancelArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    if !args.ids.is_empty() {
        return cancel_ids(ctx, &args.ids, args.cascade, format).await;
    }
    let statuses = filter::statuses(&args.status)?;
    if let Some(s) = statuses.iter().find(|s| s.is_terminal()) {
        return Err(Error::invalid(
            Input::Status,
            format!("--status {s}: only pending, running and waiting jobs can be cancelled"),
        )
        .into());
    }
    let job_filter = JobFilter {
        statuses: statuses.clone(),
        ..args.scope.filter()
    };
    let client = ctx.client().await?;
    let question = format!(
        "Cancel every {} job{}{}?",
        describe_statuses(&statuses),
        describe("queue", &job_filter.queues),
        describe("type", &job_filter.job_types)
    );
    if !confirm(question, args.yes, "job ids").await? {
        eprintln!("nothing cancelled");
        return Ok(());
    }
    let cancelled = client.cancel_matching(job_filter).await?;
    if format == OutputFormat::Json {
        return print_json(&report::cancelled(&cancelled));
    }
    let running = cancelled.iter().filter(|c| c.previous == JobStatus::Running).count();
    let mut line = format!("cancelled {}", super::output::jobs(cancelled.len() as u64, ""));
    if running > 0 {
        line.push_str(&format!(
            " ({running} running: their workers stop them at the next heartbeat)"
        ));
    }
    print(&line)
}

async fn cancel_ids(ctx: &Context, ids: &[String], cascade: bool, format: OutputFormat) -> anyhow::Result<()> {
    let client = ctx.client().await?;
    let report = client.cancel_ids(ids, cascade).await?;
    if format == OutputFormat::Json {
        print_json(&report.document())?;
    } else {
        for c in &report.cancelled {
            let note = if c.previous == JobStatus::Running {
                " (its worker stops it at the next heartbeat)"
            } else {
                ""
            };
            print(&format!("cancelled {} (was {}){note}", c.id, c.previous))?;
        }
        for c in &report.descendants {
            print(&format!("cancelled {} (was {}), downstream", c.id, c.previous))?;
        }
        for (id, status) in &report.already_terminal {
            eprintln!("job {id} is already {status}; left as it is");
        }
    }
    report.refusal().map_or(Ok(()), |e| Err(e.into()))
}

fn describe_statuses(statuses: &[JobStatus]) -> String {
    if statuses.is_empty() {
        "pending, running and waiting".into()
    } else {
        statuses.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    }
}

fn describe(what: &str, values: &[String]) -> String {
    if values.is_empty() {
        String::new()
    } else {
        format!(" of {what} {}", values.join(", "))
    }
}
