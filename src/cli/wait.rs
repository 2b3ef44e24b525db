//! `jobq wait ID`: follow one job until it ends, with a progress bar on a terminal; the exit code
//! tells how it ended (0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired). Also behind `enqueue --wait`.

use std::time::Duration;

use clap::Args;

use super::exit::Exit;
use super::output::{print, print_json};
use super::{Context, OutputFormat, progress};
use jobq::job::{Job, JobId, JobStatus};
use jobq::time::{format_duration, parse_duration};
use jobq::{Client, Error};

/// Arguments of `jobq wait`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired, 3 no such job, 1 timed out"
)]
pub struct WaitArgs {
    /// The job's id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Give up after this long, e.g. 30s or 5m (exit code 1) [default: wait as long as it takes]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
}

/// Runs `jobq wait`: prints the result (or, with `--output json`, the whole job) on success, and
/// exits with how the job ended.
pub async fn run(ctx: &Context, args: WaitArgs) -> anyhow::Result<Exit> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let id = JobId::parse(&args.id).map_err(Error::from)?;
    let client = ctx.client().await?;
    let job = follow(ctx, &client, &id, args.timeout).await?;
    match format {
        OutputFormat::Json => print_json(&job)?,
        _ => {
            if let (JobStatus::Succeeded, Some(result)) = (job.status, &job.result) {
                print(result.get())?;
            }
        }
    }
    Ok(Exit::of_outcome(job.status))
}

/// Waits for a job another command just enqueued (`enqueue --wait`): progress on stderr, a closing
/// line on stderr, the outcome as the [`Exit`]. Prints nothing on stdout, which the caller owns.
pub async fn wait_for(ctx: &Context, client: &Client, id: &JobId) -> anyhow::Result<Exit> {
    let job = follow(ctx, client, id, None).await?;
    Ok(Exit::of_outcome(job.status))
}

/// Follows the job until it is terminal, drawing its progress; says on stderr how it ended.
async fn follow(ctx: &Context, client: &Client, id: &JobId, timeout: Option<Duration>) -> anyhow::Result<Job> {
    // The bar is made at the first read, which names the job's type.
    let mut bar = None;
    let waited = client
        .wait(id, timeout, |job| {
            draw(
                bar.get_or_insert_with(|| progress::percent(&job.job_type, ctx.quiet)),
                job,
            )
        })
        .await;
    let job = match waited {
        Ok(job) => job,
        Err(err @ Error::TimedOut { .. }) => {
            if let Some(bar) = bar {
                bar.abandon();
            }
            anyhow::bail!("{err} (wait again, or raise --timeout)");
        }
        Err(err) => return Err(err.into()),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if !ctx.quiet {
        eprintln!("{}", closing_line(&job));
    }
    Ok(job)
}

fn draw(bar: &indicatif::ProgressBar, job: &Job) {
    let percent = match job.status {
        JobStatus::Succeeded => 100,
        _ => job.progress.as_ref().map(|p| u64::from(p.percent)).unwrap_or(0),
    };
    bar.set_position(percent);
    let message = match (&job.status, job.progress.as_ref().and_then(|p| p.message.as_deref())) {
        (JobStatus::Running, Some(m)) => m.to_string(),
        (JobStatus::Pending, _) if job.attempt > 0 => {
            format!("pending (retry {} of {})", job.attempt + 1, job.max_attempts)
        }
        (status, _) => status.to_string(),
    };
    bar.set_message(message);
}

/// One line for people: how the job ended.
fn closing_line(job: &Job) -> String {
    let took = match (job.started_at, job.finished_at) {
        (Some(s), Some(f)) => format!(" in {}", format_duration(f.since(s))),
        _ => String::new(),
    };
    let last_error = job.errors.last().map(|e| e.error.as_str()).unwrap_or("");
    match job.status {
        JobStatus::Succeeded => format!("job {} succeeded{took} (attempt {})", job.id, job.attempt),
        JobStatus::Dead => format!(
            "job {} is dead after {} attempt{}: {}",
            job.id,
            job.attempt,
            if job.attempt == 1 { "" } else { "s" },
            super::output::short(last_error, 200)
        ),
        JobStatus::Cancelled => format!("job {} was cancelled", job.id),
        JobStatus::Discarded => format!(
            "job {} was discarded: {}",
            job.id,
            super::output::short(last_error, 200)
        ),
        status => format!("job {} is {status}", job.id),
    }
}
