//! `jobq batch`: a group of jobs from an NDJSON file and a callback that runs once all of them have
//! ended, with their outcomes in its envelope, and an on-failure job that runs at the first member
//! that fails; `jobq batch show ID`: where a batch stands.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use comfy_table::Cell;

use super::enqueue::read_payload;
use super::lines::read_text;
use super::output::{print, print_json, status_cell, table};
use super::{Context, OutputFormat};
use jobq::Error;
use jobq::error::{Input, InvalidInput};
use jobq::job::{JobSpec, JobStatus};

/// Arguments of `jobq batch`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "The callback waits for every member (by finish) and receives each one's status and result in its\nenvelope's deps. The batch's id is the callback's.\n\nThe on-failure job runs once, at the first member that ends dead or discarded, with the members'\nends so far in its deps; it is cancelled once every member ended otherwise. Its id is the batch's\nwith .on-failure added.\n\nExamples:\n  jobq batch --file images.ndjson --then album.publish --then-payload '{\"album\": 7}'\n  jobq batch --file images.ndjson --then album.publish --on-failure album.alert\n  jobq batch show 0193a5c4-…"
)]
pub struct BatchArgs {
    #[command(subcommand)]
    action: Option<Action>,

    /// The members: one job JSON per line, or - for stdin
    #[arg(long, value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,

    /// The callback's type: it runs once every member has ended, however it ended
    #[arg(long, value_name = "TYPE", required = true)]
    pub then: Option<String>,

    /// The callback's payload: JSON, @FILE or - for stdin (default {})
    #[arg(long, value_name = "JSON")]
    pub then_payload: Option<String>,

    /// A job that runs once, at the first member that ends dead or discarded
    #[arg(long, value_name = "TYPE")]
    pub on_failure: Option<String>,

    /// The on-failure job's payload: JSON, @FILE or - for stdin (default {})
    #[arg(long, value_name = "JSON", requires = "on_failure")]
    pub on_failure_payload: Option<String>,

    /// The queue of the callback and the on-failure job, and of members that name none
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// The batch's id (the callback's); a new one by default
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Where a batch stands: its members counted by status, and its callback's status
    Show {
        /// The batch's id (its callback's)
        id: String,
    },
}

/// Runs `jobq batch`.
pub async fn run(ctx: &Context, args: BatchArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    if let Some(Action::Show { id }) = args.action {
        return show(ctx, &id, format).await;
    }
    let (Some(file), Some(then_type)) = (args.file, args.then) else {
        unreachable!("clap requires --file and --then without a subcommand");
    };
    let text = read_text(&file)?;
    let name = file.display().to_string();
    let mut members = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: InvalidInput| Error::from(e.at(format_args!("{name}:{}", n + 1)));
        let mut spec = JobSpec::from_json_line(line, None).map_err(at)?;
        if spec.queue.is_none() {
            spec.queue = args.queue.clone();
        }
        members.push(spec);
    }
    if members.is_empty() {
        return Err(Error::invalid(
            Input::JobsFile,
            format!("{name} holds no job: a batch needs at least one"),
        )
        .into());
    }
    let mut then = JobSpec::new(then_type, read_payload(args.then_payload.as_deref())?);
    if let Some(queue) = args.queue {
        then = then.queue(queue);
    }
    if let Some(id) = args.id {
        then = then.id(id);
    }
    let on_failure = match args.on_failure {
        Some(job_type) => {
            let mut spec = JobSpec::new(job_type, read_payload(args.on_failure_payload.as_deref())?);
            spec.queue = then.queue.clone();
            Some(spec)
        }
        None => None,
    };
    let client = ctx.client().await?;
    let batch = match on_failure {
        Some(on_failure) => client.batch_on_failure(members, then, on_failure).await?,
        None => client.batch(members, then).await?,
    };
    if format == OutputFormat::Json {
        return print_json(&batch);
    }
    if !ctx.quiet {
        let alert = match &batch.on_failure {
            Some(job) => format!(", and {} at the first that fails", job.id),
            None => String::new(),
        };
        eprintln!(
            "batch of {}: its callback runs once every one has ended{alert}",
            super::output::jobs(batch.members.len() as u64, "")
        );
    }
    print(batch.batch.as_str())
}

/// `jobq batch show ID`.
async fn show(ctx: &Context, id: &str, format: OutputFormat) -> anyhow::Result<()> {
    let client = ctx.client().await?;
    let status = client.batch_status(id).await?;
    if format == OutputFormat::Json {
        return print_json(&status);
    }
    let mut t = table(&["STATUS", "MEMBERS"]);
    for (s, n) in &status.counts {
        if *n > 0 {
            t.add_row(vec![status_cell(*s), Cell::new(n)]);
        }
    }
    if status.deleted > 0 {
        t.add_row(vec![Cell::new("deleted"), Cell::new(status.deleted)]);
    }
    let head = format!(
        "batch {}: {} of {} ended; callback {} is {}",
        status.batch, status.ended, status.members, status.then_type, status.then_status
    );
    let done = if status.then_status == JobStatus::Blocked {
        ""
    } else {
        " (every member has ended)"
    };
    let on_failure = match &status.on_failure {
        Some(job) => format!("; on failure {} is {}", job.job_type, job.status),
        None => String::new(),
    };
    print(&format!("{head}{done}{on_failure}\n{t}"))
}
