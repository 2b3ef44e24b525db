//! `jobq copy`: every job that matches, whole, from the configured store to another (`--to`), in
//! batches, each committed by the target before the next is read. `--resume` goes on after an
//! interrupted copy (what the target holds is skipped); `--move` deletes from the source what the
//! target has committed, and leaves running jobs where their workers hold them.

use std::collections::HashSet;
use std::time::Instant;

use clap::Args;
use serde_json::json;
use tokio::sync::mpsc;

use super::export::PAGE;
use super::filter::SelectArgs;
use super::import::with_edges_to_write;
use super::output::print_json;
use super::{Context, OutputFormat, progress};
use jobq::Error;
use jobq::client::{Client, ImportOptions};
use jobq::error::Input;
use jobq::job::{Job, JobId, JobStatus};
use jobq::store::{ImportAnswer, ImportEdges, JobFilter, ListCursor, OnConflict, StoreUrl, Usage};

/// Jobs per write into the target.
const WRITE_BATCH: usize = 5000;

/// Pages read ahead of the writes.
const READ_AHEAD: usize = 8;

/// Arguments of `jobq copy`.
#[derive(Debug, Args)]
#[command(
    after_help = "Jobs keep their ids, statuses, attempts, error histories, results and times. Running jobs arrive\npending unless --keep-running; with --move they stay in the source until they finish.\nExamples:\n  jobq copy --to postgres://jobq@db/jobq\n  jobq copy --to redis://cache:6379 --queue mail --move\n  jobq copy --to postgres://jobq@db/jobq --resume"
)]
pub struct CopyArgs {
    /// The store to copy into (its schema is created or upgraded first)
    #[arg(long, value_name = "URL")]
    pub to: String,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Go on after an interrupted copy: skip the jobs the target holds already
    #[arg(long)]
    pub resume: bool,

    /// Delete from the source the jobs the target has committed (running jobs stay; live ones go last)
    #[arg(long = "move")]
    pub move_jobs: bool,

    /// Keep running jobs running in the target
    #[arg(long, conflicts_with = "move_jobs")]
    pub keep_running: bool,
}

/// What a copy did.
#[derive(Debug, Default)]
struct Tally {
    copied: u64,
    skipped: u64,
    key_taken: u64,
    moved: u64,
    left_running: u64,
    /// The edges of the jobs written, for the target once every job is in.
    edges: Vec<ImportEdges>,
    /// With `--move`, the live jobs copied, deleted from the source once every job is copied.
    move_last: Vec<String>,
    with_dependencies: u64,
}

/// Runs `jobq copy`.
pub async fn run(ctx: &Context, args: CopyArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    args.select.check()?;
    let to = StoreUrl::parse(&args.to).map_err(Error::from)?;
    if to.redacted().to_string() == ctx.config.url.redacted().to_string() {
        return Err(Error::invalid(Input::Url, "--to names the configured store itself").into());
    }
    let started = Instant::now();
    let source = ctx.client().await?;
    // Pooled: a batch is checked on one connection while the batch before it is written on another.
    let target = Client::new(ctx.open(&to, Usage::Pooled).await?);
    target.migrate().await?;
    let filter = args.select.filter(&source)?;
    // Pauses and schedules first: the target's workers must not start a paused queue's jobs, or fire
    // a tick the source handled, while the jobs arrive.
    let keys: Vec<_> = ctx.config.schedules.iter().map(|s| s.key()).collect();
    let state = source.copy_state_to(&target, &filter.queues, &keys).await?;
    let options = ImportOptions {
        on_conflict: OnConflict::Skip,
        keep_running: args.keep_running,
        dry_run: false,
    };
    let bar = progress::count("copying", "jobs", ctx.quiet);
    let mut tally = Tally::default();
    let writer = Writer {
        source: &source,
        target: &target,
        args: &args,
        options,
    };
    // The source reads ahead on a task of its own while the target writes; the target takes several
    // pages at once, so that its fixed costs per write (a transaction, its commit, round trips) are
    // paid once per many jobs.
    let mut pages = read_ahead(source.clone(), filter);
    // A batch is checked (without --resume: does the target hold any of its jobs?) while the batch
    // before it is written.
    let mut checked: Option<Vec<Job>> = None;
    loop {
        let mut batch: Vec<Job> = Vec::new();
        let mut last = false;
        while batch.len() < WRITE_BATCH {
            match pages.recv().await.transpose()? {
                Some(page) => batch.extend(page),
                None => {
                    last = true;
                    break;
                }
            }
        }
        let next = (!batch.is_empty()).then(|| writer.keep_running_in_source(batch, &mut tally));
        let write = async {
            match checked.take() {
                Some(jobs) => {
                    let n = jobs.len() as u64;
                    writer.write(jobs, &mut tally).await?;
                    bar.inc(n);
                    Ok(())
                }
                None => Ok::<_, Error>(()),
            }
        };
        let check = async {
            match &next {
                Some(jobs) => writer.first_held(jobs).await,
                None => Ok(None),
            }
        };
        let (written, held_id) = tokio::join!(write, check);
        written?;
        if let Some(id) = held_id? {
            return Err(held(&id, tally.copied).into());
        }
        checked = next;
        if last && checked.is_none() {
            break;
        }
    }
    // Last: a job's dependencies come after it in the source's pages (newest first).
    tally.with_dependencies = target.import_edges(&tally.edges).await.map_err(|e| {
        anyhow::Error::new(e)
            .context("the jobs were copied, not all of their dependencies; copying again with --resume writes them")
    })?;
    let last = std::mem::take(&mut tally.move_last);
    tally.moved += writer.delete_from_source(&last).await?;
    bar.finish_and_clear();
    if format == OutputFormat::Json {
        print_json(&json!({
            "copied": tally.copied, "skipped": tally.skipped, "keyTaken": tally.key_taken,
            "moved": tally.moved, "leftRunning": tally.left_running, "withDependencies": tally.with_dependencies,
            "pauses": state.pauses, "schedules": state.schedules,
        }))?;
    } else if !ctx.quiet {
        let mut line = format!(
            "copied {} to {to} in {:.2}s",
            super::output::jobs(tally.copied, ""),
            started.elapsed().as_secs_f64()
        );
        if tally.with_dependencies > 0 {
            line.push_str(&format!(", {} with the jobs they wait for", tally.with_dependencies));
        }
        if state.pauses > 0 || state.schedules > 0 {
            line.push_str(&format!(
                ", with {} pauses and {} schedules' state",
                state.pauses, state.schedules
            ));
        }
        if tally.skipped > 0 {
            line.push_str(&format!("; {} skipped: the target holds them", tally.skipped));
        }
        if tally.key_taken > 0 {
            line.push_str(&format!(
                "; {} left out: a live job of the target holds their unique key",
                tally.key_taken
            ));
        }
        if args.move_jobs {
            line.push_str(&format!("; {} deleted from the source", tally.moved));
        }
        if tally.left_running > 0 {
            line.push_str(&format!(
                "; {} running jobs left in the source (move them once they finish)",
                tally.left_running
            ));
        }
        eprintln!("{line}");
    }
    Ok(())
}

/// Pages of the source read ahead of the writes, [`READ_AHEAD`] at most; the channel closes after the
/// last page (or the first failure).
fn read_ahead(source: Client, filter: JobFilter) -> mpsc::Receiver<Result<Vec<Job>, Error>> {
    let (pages, received) = mpsc::channel(READ_AHEAD);
    tokio::spawn(async move {
        let mut after = None;
        loop {
            let page = source.export_page(&filter, after.take(), PAGE).await;
            let more = match &page {
                Ok(jobs) if jobs.len() == PAGE as usize => jobs.last().map(ListCursor::of),
                _ => None,
            };
            if pages.send(page).await.is_err() {
                return;
            }
            match more {
                Some(cursor) => after = Some(cursor),
                None => return,
            }
        }
    });
    received
}

/// What each batch of a copy is written with.
struct Writer<'a> {
    source: &'a Client,
    target: &'a Client,
    args: &'a CopyArgs,
    options: ImportOptions,
}

impl Writer<'_> {
    /// The batch without its running jobs when they stay in the source (`--move`), counted.
    fn keep_running_in_source(&self, batch: Vec<Job>, tally: &mut Tally) -> Vec<Job> {
        let (jobs, running): (Vec<Job>, Vec<Job>) = batch
            .into_iter()
            .partition(|j| !(self.args.move_jobs && j.status == JobStatus::Running));
        tally.left_running += running.len() as u64;
        jobs
    }

    /// Without --resume, the first job of a batch that the target holds: it stops the copy before
    /// the batch is written.
    async fn first_held(&self, jobs: &[Job]) -> Result<Option<JobId>, Error> {
        if self.args.resume {
            return Ok(None);
        }
        Ok(self.target.first_held(jobs).await?.map(|n| jobs[n].id.clone()))
    }

    /// Writes one batch into the target and, with `--move`, deletes from the source what the target
    /// committed.
    async fn write(&self, jobs: Vec<Job>, tally: &mut Tally) -> Result<(), Error> {
        let waiting: Vec<ImportEdges> = jobs.iter().filter_map(ImportEdges::of).collect();
        let live: HashSet<JobId> = jobs
            .iter()
            .filter(|j| !j.status.is_terminal())
            .map(|j| j.id.clone())
            .collect();
        let report = self.target.import(jobs, self.options).await?;
        tally.edges.extend(with_edges_to_write(waiting, &report.answers));
        let mut committed: Vec<String> = Vec::new();
        for (id, answer) in &report.answers {
            let moved = match answer {
                ImportAnswer::Imported | ImportAnswer::Replaced => {
                    tally.copied += 1;
                    true
                }
                // Only a resumed copy gets here: the target holds the job from the copy before.
                ImportAnswer::Skipped => {
                    tally.skipped += 1;
                    true
                }
                _ => {
                    tally.key_taken += 1;
                    false
                }
            };
            // A live job leaves the source last: deleted now, it would break, in the source, the
            // edges of jobs that wait for it and are not copied yet (a flow lists its parent
            // before its children), and the copy would carry their cancel.
            match (moved && self.args.move_jobs, live.contains(id)) {
                (true, true) => tally.move_last.push(id.to_string()),
                (true, false) => committed.push(id.to_string()),
                _ => {}
            }
        }
        tally.moved += self.delete_from_source(&committed).await?;
        Ok(())
    }

    /// Deletes copied jobs from the source, forced, for waiting jobs: they move to the target, where
    /// `resolve` now finds them.
    async fn delete_from_source(&self, ids: &[String]) -> Result<u64, Error> {
        let mut moved = 0;
        for chunk in ids.chunks(PAGE as usize) {
            moved += self.source.delete(chunk, true).await?.deleted.len() as u64;
        }
        Ok(moved)
    }
}

fn held(id: &JobId, copied: u64) -> Error {
    Error::invalid(
        Input::JobId,
        format!(
            "the target holds a job {id} already; {copied} jobs were copied before it (--resume skips what the target holds)"
        ),
    )
}
