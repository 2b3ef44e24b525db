//! `jobq import`: jobs from `jobq export` written back exactly — same ids, statuses, attempts, error
//! histories, results, times and unique keys — into the configured store. Every line is read and
//! checked before anything is written: one bad line refuses the whole file, naming the line.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::json;

use super::lines::{in_parallel, read_text};
use super::output::print_json;
use super::{Context, OutputFormat, progress};
use crate::Error;
use crate::client::{ImportOptions, ImportReport};
use crate::error::Input;
use crate::job::Job;
use crate::store::{ImportAnswer, OnConflict};

/// Jobs per store call.
const BATCH: usize = 1000;

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
    let text = read_text(&args.file)?;
    let jobs = parse_exported(&text, &name)?;
    drop(text);
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
        refuse_held_ids(&client, &jobs, &name).await?;
    }
    let bar = progress::counter(jobs.len() as u64, "importing", ctx.quiet);
    let mut report = ImportReport::default();
    for chunk in jobs.chunks(BATCH) {
        let batch: Vec<Job> = chunk.iter().map(|(_, j)| j.clone()).collect();
        let done = client.import(batch, options).await.map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "{} jobs of {name} were imported before this failure; importing the file again skips them",
                report.answers.len()
            ))
        })?;
        report.answers.extend(done.answers);
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    summarize(ctx, format, &report, &name, args.dry_run, started)
}

/// Every line of an export, with its line number; the first bad line refuses the lot.
fn parse_exported(text: &str, name: &str) -> Result<Vec<(usize, Job)>, Error> {
    let parse_part = |first_line: usize, part: &str| -> Result<Vec<(usize, Job)>, Error> {
        let mut jobs = Vec::with_capacity(part.len() / 200);
        for (n, line) in part.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = first_line + n + 1;
            let job = Job::from_exported(line).map_err(|e| Error::from(e.at(format_args!("{name}:{at}"))))?;
            jobs.push((at, job));
        }
        Ok(jobs)
    };
    let mut jobs = Vec::new();
    for part in in_parallel(text, name, parse_part) {
        jobs.extend(part?);
    }
    Ok(jobs)
}

/// With `--on-conflict fail`: a look at every id first, so that a held one refuses the file before
/// anything is written.
async fn refuse_held_ids(client: &crate::Client, jobs: &[(usize, Job)], name: &str) -> Result<(), Error> {
    for chunk in jobs.chunks(BATCH) {
        let batch: Vec<Job> = chunk.iter().map(|(_, j)| j.clone()).collect();
        if let Some(n) = client.first_held(&batch).await? {
            let (line, job) = &chunk[n];
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
            "dryRun": dry_run,
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
