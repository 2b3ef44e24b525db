//! `jobq delete`: remove jobs for good, by id or every job matching filters (asks first on a terminal).
//! Running and waiting jobs only with `--force`.

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
use jobq::time::parse_duration;

/// Arguments of `jobq delete`.
#[derive(Debug, Args)]
#[command(
    after_help = "Deleted jobs are gone for good (cleanup deletes finished jobs routinely). A running or waiting job\nis refused unless --force; a forced running job's worker stops it at the next heartbeat.\nExamples:\n  jobq delete 0193a5c4-…\n  jobq delete --queue mail --status dead --older-than 7d --yes",
    mut_args = QueueTypeArgs::worded("Delete every job in this queue", "Delete every job of this type")
)]
pub struct DeleteArgs {
    /// Job ids
    #[arg(
        value_name = "ID",
        required_unless_present_any = ["queue", "job_type", "status", "older_than"],
        conflicts_with_all = ["queue", "job_type", "status", "older_than"]
    )]
    pub ids: Vec<String>,

    #[command(flatten)]
    pub scope: QueueTypeArgs,

    /// Only jobs in this status (repeatable or comma-separated)
    #[arg(long, value_name = "STATUS")]
    pub status: Vec<String>,

    /// Only jobs created longer ago than this, e.g. 7d, 12h
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,

    /// Delete running and waiting jobs too
    #[arg(long)]
    pub force: bool,

    /// Do not ask before deleting by filter
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Runs `jobq delete`.
pub async fn run(ctx: &Context, args: DeleteArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    if !args.ids.is_empty() {
        return delete_ids(ctx, &args.ids, args.force, format).await;
    }
    let statuses = filter::statuses(&args.status)?;
    let older_than = args
        .older_than
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| Error::invalid(Input::Duration, format!("--older-than: {e}")))?;
    let client = ctx.client().await?;
    let job_filter = JobFilter {
        statuses: statuses.clone(),
        created_until: older_than.map(|d| client.now().minus(d)),
        ..args.scope.filter()
    };
    let question = format!(
        "Delete every {}job{}{}{}{}?",
        describe_statuses(&statuses),
        describe("queue", &job_filter.queues),
        describe("type", &job_filter.job_types),
        older_than
            .map(|d| format!(" created more than {} ago", jobq::time::format_duration(d)))
            .unwrap_or_default(),
        if args.force {
            ", running and waiting ones included"
        } else {
            ""
        }
    );
    if !confirm(question, args.yes, "job ids").await? {
        eprintln!("nothing deleted");
        return Ok(());
    }
    let n = client.delete_matching(job_filter, args.force).await?;
    if format == OutputFormat::Json {
        print_json(&n)?;
    } else {
        print(&format!("deleted {}", super::output::jobs(n.deleted, "")))?;
    }
    report::delete_matching_refusal(&n).map_or(Ok(()), |e| Err(e.into()))
}

async fn delete_ids(ctx: &Context, ids: &[String], force: bool, format: OutputFormat) -> anyhow::Result<()> {
    let client = ctx.client().await?;
    let report = client.delete(ids, force).await?;
    if format == OutputFormat::Json {
        print_json(&report.document())?;
    } else {
        for (id, previous) in &report.deleted {
            let note = if *previous == JobStatus::Running {
                " (its worker stops it at the next heartbeat)"
            } else {
                ""
            };
            print(&format!("deleted {id} (was {previous}){note}"))?;
        }
    }
    report.refusal().map_or(Ok(()), |e| Err(e.into()))
}

fn describe_statuses(statuses: &[JobStatus]) -> String {
    if statuses.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        format!("{} ", names.join(", "))
    }
}

fn describe(what: &str, values: &[String]) -> String {
    if values.is_empty() {
        String::new()
    } else {
        format!(" of {what} {}", values.join(", "))
    }
}
