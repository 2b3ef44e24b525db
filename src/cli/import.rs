//! `jobq import`: jobs from `jobq export` written back exactly — same ids, statuses, attempts, error
//! histories, results, times and unique keys — into the configured store. Every line is read and
//! checked before anything is written: one bad line refuses the whole file, naming the line.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::json;
use tokio::sync::mpsc;

use super::lines::{in_parallel, read_text};
use super::output::print_json;
use super::{Context, OutputFormat, progress};
use jobq::Error;
use jobq::client::{ImportOptions, ImportReport};
use jobq::error::Input;
use jobq::job::{Job, JobId};
use jobq::store::{ImportAnswer, ImportEdges, OnConflict};

/// Jobs per store call.
const BATCH: usize = 5000;

/// What to do with a job whose id the store holds already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConflictArg {
    /// Leave the stored job as it is, and count it
    Skip,
    /// Replace the stored job with the imported one
    Replace,
    /// Import nothing if any id is held
    Fail,
}

/// Arguments of `jobq import`.
#[derive(Debug, Args)]
#[command(
    after_help = "Running jobs arrive pending (their workers are gone), as if released, unless --keep-running.\n`jobq enqueue --file` is for new jobs; this restores jobs as they were.\nExamples:\n  jobq import jobs.ndjson\n  jobq --url postgres://… import - --on-conflict replace < jobs.ndjson"
)]
pub struct ImportArgs {
    /// An NDJSON file from `jobq export` (- for stdin)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// A job whose id the store holds already: skip it, replace it, or import nothing
    #[arg(long, value_enum, default_value_t = ConflictArg::Skip, value_name = "WHAT")]
    pub on_conflict: ConflictArg,

    /// Keep running jobs running (for workers that still hold them)
    #[arg(long)]
    pub keep_running: bool,

    /// Say what would be imported, write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `jobq import`.
pub async fn run(ctx: &Context, args: ImportArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let started = Instant::now();
    let name = args.file.display().to_string();
    let text: Arc<str> = read_text(&args.file)?.into();
    // Every line is checked before anything is written; the jobs are parsed again, batch by batch,
    // while the store writes the batch before (a file's jobs never all sit in memory at once).
    let total = check_exported(&text, &name)?;
    let client = ctx.client().await?;
    let options = ImportOptions {
        on_conflict: if args.on_conflict == ConflictArg::Replace {
            OnConflict::Replace
        } else {
            OnConflict::Skip
        },
        keep_running: args.keep_running,
        dry_run: args.dry_run,
    };
    if args.on_conflict == ConflictArg::Fail {
        refuse_held_ids(&client, parse_ahead(text.clone(), name.clone()), &name).await?;
    }
    let bar = progress::counter(total as u64, "importing", ctx.quiet);
    let mut report = ImportReport::default();
    let mut edges = Vec::new();
    let mut batches = parse_ahead(text, name.clone());
    while let Some(batch) = batches.recv().await {
        let jobs: Vec<Job> = batch?.into_iter().map(|(_, job)| job).collect();
        let n = jobs.len() as u64;
        let waiting: Vec<ImportEdges> = jobs.iter().filter_map(ImportEdges::of).collect();
        let done = client.import(jobs, options).await.map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "{} jobs of {name} were imported before this failure; importing the file again skips them",
                report.answers.len()
            ))
        })?;
        edges.extend(with_edges_to_write(waiting, &done.answers));
        report.answers.extend(done.answers);
        bar.inc(n);
    }
    // Last: a job's dependencies come after it in an export (newest first).
    let with_dependencies = if args.dry_run {
        0
    } else {
        client.import_edges(&edges).await.map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "the jobs of {name} were imported, not all of their dependencies; importing the file again writes them"
            ))
        })?
    };
    bar.finish_and_clear();
    summarize(ctx, format, &report, with_dependencies, &name, args.dry_run, started)
}

/// The edges of the jobs a batch wrote, or skipped as held (a resumed import may have written
/// the job and not its edges: the store leaves a job that has edges as it is).
pub(super) fn with_edges_to_write(waiting: Vec<ImportEdges>, answers: &[(JobId, ImportAnswer)]) -> Vec<ImportEdges> {
    let written: HashSet<&JobId> = answers
        .iter()
        .filter(|(_, a)| !matches!(a, ImportAnswer::KeyTaken { .. }))
        .map(|(id, _)| id)
        .collect();
    waiting.into_iter().filter(|e| written.contains(&e.job)).collect()
}

/// One job of an export line by line, named by its line number (1-based) for errors.
fn parse_line(line: &str, at: usize, name: &str) -> Result<Job, Error> {
    Job::from_exported(line).map_err(|e| Error::from(e.at(format_args!("{name}:{at}"))))
}

/// Checks every line of an export on all cores, keeping nothing; the first bad line refuses the lot.
/// Answers the number of jobs.
fn check_exported(text: &str, name: &str) -> Result<usize, Error> {
    let check_part = |first_line: usize, part: &str| -> Result<Vec<usize>, Error> {
        let mut jobs = 0;
        for (n, line) in part.lines().enumerate() {
            if !line.trim().is_empty() {
                parse_line(line, first_line + n + 1, name)?;
                jobs += 1;
            }
        }
        Ok(vec![jobs])
    };
    let mut total = 0;
    for part in in_parallel(text, name, check_part) {
        total += part?.iter().sum::<usize>();
    }
    Ok(total)
}

/// The jobs of an export in batches of [`BATCH`], each with its line number, parsed on a thread of
/// its own a couple of batches ahead of the one the store writes.
fn parse_ahead(text: Arc<str>, name: String) -> mpsc::Receiver<Result<Vec<(usize, Job)>, Error>> {
    let (batches, received) = mpsc::channel(2);
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(BATCH);
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match parse_line(line, n + 1, &name) {
                Ok(job) => batch.push((n + 1, job)),
                Err(e) => {
                    let _ = batches.blocking_send(Err(e));
                    return;
                }
            }
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if batches.blocking_send(Ok(full)).is_err() {
                    // The writer stopped.
                    return;
                }
            }
        }
        if !batch.is_empty() {
            let _ = batches.blocking_send(Ok(batch));
        }
    });
    received
}

/// With `--on-conflict fail`: a look at every id first, so that a held one refuses the file before
/// anything is written.
async fn refuse_held_ids(
    client: &jobq::Client,
    mut batches: mpsc::Receiver<Result<Vec<(usize, Job)>, Error>>,
    name: &str,
) -> Result<(), Error> {
    while let Some(batch) = batches.recv().await {
        let batch = batch?;
        let jobs: Vec<Job> = batch.iter().map(|(_, j)| j.clone()).collect();
        if let Some(n) = client.first_held(&jobs).await? {
            let (line, job) = &batch[n];
            return Err(Error::invalid(
                Input::JobId,
                format!(
                    "{name}:{line}: the store holds a job {} already; nothing imported (--on-conflict skip or replace to go on)",
                    job.id
                ),
            ));
        }
    }
    Ok(())
}

fn summarize(
    ctx: &Context,
    format: OutputFormat,
    report: &ImportReport,
    with_dependencies: u64,
    name: &str,
    dry_run: bool,
    started: Instant,
) -> anyhow::Result<()> {
    let imported = report.count(|a| *a == ImportAnswer::Imported);
    let replaced = report.count(|a| *a == ImportAnswer::Replaced);
    let skipped = report.count(|a| *a == ImportAnswer::Skipped);
    let key_taken: Vec<_> = report
        .answers
        .iter()
        .filter_map(|(id, a)| match a {
            ImportAnswer::KeyTaken { holder } => Some((id, holder)),
            _ => None,
        })
        .collect();
    if format == OutputFormat::Json {
        print_json(&json!({
            "imported": imported, "replaced": replaced, "skipped": skipped, "keyTaken": key_taken.len(),
            "withDependencies": with_dependencies, "dryRun": dry_run,
        }))?;
        return Ok(());
    }
    if ctx.quiet {
        return Ok(());
    }
    for (id, holder) in key_taken.iter().take(10) {
        eprintln!("left out {id}: live job {holder} of its queue holds its unique key");
    }
    let verb = if dry_run { "would import" } else { "imported" };
    let mut line = format!(
        "{verb} {} from {name} in {:.2}s",
        super::output::jobs(imported + replaced, ""),
        started.elapsed().as_secs_f64()
    );
    if replaced > 0 {
        line.push_str(&format!(" ({replaced} replacing stored ones)"));
    }
    if with_dependencies > 0 {
        line.push_str(&format!(", {with_dependencies} with the jobs they wait for"));
    }
    if skipped > 0 {
        line.push_str(&format!("; {skipped} skipped: the store holds their ids"));
    }
    if !key_taken.is_empty() {
        line.push_str(&format!(
            "; {} left out: a live job holds their unique key",
            key_taken.len()
        ));
    }
    eprintln!("{line}");
    Ok(())
}
