//! `jobq export`: every job that matches, whole (its state included), as NDJSON, one job JSON a line,
//! for `jobq import` into any store. The selection flags are shared with `jobq copy`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::filter::SelectArgs;
use super::{Context, progress};
use jobq::Error;
use jobq::error::Input;
use jobq::job::ExportLine;
use jobq::store::ListCursor;

/// Jobs read per page.
pub(super) const PAGE: u32 = 1000;

/// Arguments of `jobq export`.
#[derive(Debug, Args)]
#[command(
    after_help = "Each line is a job as `jobq show -o json` prints it, state included, and for a job that waits\nfor others its side of those edges (after, join); `jobq import` restores it exactly into any store.\nExamples:\n  jobq export > jobs.ndjson\n  jobq export --queue mail --status dead --file dead-mail.ndjson"
)]
pub struct ExportArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// Write to this file instead of stdout (- for stdout)
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Runs `jobq export`.
pub async fn run(ctx: &Context, args: ExportArgs) -> anyhow::Result<()> {
    args.select.check()?;
    let started = Instant::now();
    let to_file = args.file.as_ref().filter(|f| f.as_os_str() != "-");
    let mut out: Box<dyn Write> = match to_file {
        Some(path) => Box::new(std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(path)
                .map_err(|e| Error::invalid_because(Input::JobsFile, format!("cannot create {}", path.display()), e))?,
        )),
        None => Box::new(std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock())),
    };
    let client = ctx.client().await?;
    let filter = args.select.filter(&client)?;
    let bar = progress::count("exporting", "jobs", ctx.quiet);
    let mut after: Option<ListCursor> = None;
    let mut written = 0u64;
    loop {
        let page = client.export_page(&filter, after.take(), PAGE).await?;
        for job in &page {
            serde_json::to_writer(&mut out, &ExportLine(job))?;
            out.write_all(b"\n")?;
        }
        written += page.len() as u64;
        bar.inc(page.len() as u64);
        match page.last() {
            Some(last) if page.len() == PAGE as usize => after = Some(ListCursor::of(last)),
            _ => break,
        }
    }
    out.flush()?;
    bar.finish_and_clear();
    if !ctx.quiet {
        let place = to_file.map(|p| format!(" to {}", p.display())).unwrap_or_default();
        eprintln!(
            "exported {}{place} in {:.2}s",
            super::output::jobs(written, ""),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
