//! `jobq doctor`: what is wrong with the store and its jobs, one line per finding (severity, what,
//! what to do), or one JSON document. Exits 0 when nothing is found and 1 otherwise, for cron and
//! monitoring. It only reads.

use std::time::Duration;

use clap::Args;

use super::exit::Exit;
use super::output::{print, print_json};
use super::{Context, OutputFormat};
use jobq::doctor::Report;
use jobq::memory::parse_size;
use jobq::time::parse_duration;

/// Arguments of `jobq doctor`. The worker settings it judges jobs by (`stale_after`, each handler's
/// `wait_timeout`) come from the config.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Report a queue whose oldest ready job has waited this long while none of its jobs runs
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub ready_late: Duration,

    /// Report a queue (or type) paused for longer than this
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1d")]
    pub paused_for: Duration,

    /// Report jobs rescued from lost workers more than N times
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub rescues: u32,

    /// Report a queue holding at least N dead jobs (0: any)
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub dead_letters: u64,

    /// SQLite: report a write-ahead log larger than this
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1GiB")]
    pub wal_size: u64,

    /// PostgreSQL: report a jobq table with more dead rows than this (and over 20% of its live rows)
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub dead_rows: u64,
}

/// Runs `jobq doctor`.
pub async fn run(ctx: &Context, args: DoctorArgs) -> anyhow::Result<Exit> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let mut doctor = ctx.config.doctor();
    let t = &mut doctor.thresholds;
    t.ready_late = args.ready_late;
    t.paused_for = args.paused_for;
    t.rescues = args.rescues;
    t.dead_letters = args.dead_letters;
    t.health.sqlite_wal_bytes = args.wal_size;
    t.health.postgres_dead_rows = args.dead_rows;
    let client = ctx.client().await?;
    let report = client.doctor(&doctor).await?;
    if format == OutputFormat::Json {
        print_json(&report)?;
    } else if !ctx.quiet || !report.healthy {
        print(&lines(&report, &ctx.config.url.redacted().to_string()))?;
    }
    Ok(if report.healthy { Exit::Success } else { Exit::Failure })
}

/// One line per finding: severity, code, what is wrong, what to do, and some of the jobs.
fn lines(report: &Report, store: &str) -> String {
    if report.healthy {
        return format!("ok: nothing wrong found in {store}\n");
    }
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&format!("{}: [{}] {} — {}", f.severity, f.code, f.message, f.advice));
        if !f.ids.is_empty() {
            out.push_str(&format!(" (jobs: {})", f.ids.join(", ")));
        }
        out.push('\n');
    }
    out
}
