//! `jobq wait ID`: follow one job until it ends, with a progress bar on a terminal; the exit code
//! tells how it ended (0 succeeded, 4 dead, 5 cancelled, 6 discarded). Also behind `enqueue --wait`.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::exit::Exit;
use super::output::{print, print_json};
use super::{Context, OutputFormat, progress};
use crate::job::{Job, JobId, JobStatus};
use crate::store::WakeOn;
use crate::time::{format_duration, parse_duration};
use crate::{Client, Error};

/// Re-reads of the job start this often and slow down to [`SLOWEST_POLL`] while nothing changes.
const FIRST_POLL: Duration = Duration::from_millis(50);
/// Slowest re-read interval without a file watch.
const SLOWEST_POLL: Duration = Duration::from_millis(500);
/// Slowest re-read interval when a file watch reports writes (it only guards against missed events).
const SLOWEST_POLL_WATCHED: Duration = Duration::from_secs(2);
/// Least time between two reads when writes keep coming.
const MIN_GAP: Duration = Duration::from_millis(20);

/// Arguments of `jobq wait`.
#[derive(Debug, Args)]
#[command(after_help = "Exit codes: 0 succeeded, 4 dead, 5 cancelled, 6 discarded, 3 no such job, 1 timed out")]
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
    let started = Instant::now();
    let deadline = timeout.map(|t| started + t);
    let mut job = client.get(id.as_str()).await?;
    // Any write may be the job's: a store that announces changes wakes the waiter at once.
    let changed = Arc::new(Notify::new());
    let watch = client.store().subscribe(&WakeOn::Changes, changed.clone());
    let slowest = if watch.is_some() {
        SLOWEST_POLL_WATCHED
    } else {
        SLOWEST_POLL
    };
    let bar = progress::percent(&job.job_type, ctx.quiet);
    let mut poll = FIRST_POLL;
    let mut last_read = Instant::now();
    loop {
        draw(&bar, &job);
        if job.status.is_terminal() {
            break;
        }
        let far_future = Instant::now() + Duration::from_secs(86_400 * 365);
        tokio::select! {
            _ = changed.notified(), if watch.is_some() => {}
            _ = tokio::time::sleep(poll) => poll = (poll * 2).min(slowest),
            _ = tokio::time::sleep_until(deadline.unwrap_or(far_future)) => {
                bar.abandon();
                return Err(anyhow::anyhow!(
                    "job {id} is still {} after {} (wait again, or raise --timeout)",
                    job.status,
                    format_duration(started.elapsed())
                ));
            }
        }
        tokio::time::sleep_until(last_read + MIN_GAP).await;
        last_read = Instant::now();
        let before = (job.status, job.progress.clone());
        job = client.get(id.as_str()).await?;
        if (job.status, job.progress.clone()) != before {
            poll = FIRST_POLL;
        }
    }
    bar.finish_and_clear();
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
