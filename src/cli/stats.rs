//! `jobq stats`: counts by queue and status, as a table, JSON or Prometheus text; `--watch` refreshes.

use std::time::Duration;

use clap::Args;
use comfy_table::Cell;

use super::output::{print, print_json, stdout_is_terminal, table};
use super::{Context, OutputFormat, filter};
use crate::report;
use jobq::store::{Pause, QueueStats, StatsReport};
use jobq::time::{UnixMillis, format_duration};

/// Arguments of `jobq stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only this queue (repeatable or comma-separated)
    #[arg(long, value_name = "QUEUE")]
    pub queue: Vec<String>,

    /// Refresh every SECS seconds until interrupted
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "2")]
    pub watch: Option<f64>,
}

/// Runs `jobq stats`.
pub async fn run(ctx: &Context, args: StatsArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(
        OutputFormat::Table,
        &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Prometheus],
    )?;
    let queues = filter::list(&args.queue);
    let interval = match args.watch {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(jobq::Error::invalid(
                jobq::error::Input::Duration,
                format!("--watch {s}: expected a number of seconds above 0"),
            )
            .into());
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None => None,
    };
    let client = ctx.client().await?;
    let store = ctx.config.url.redacted().to_string();
    loop {
        let (stats, flow) = tokio::try_join!(client.stats(&queues), client.flow_state())?;
        let now = client.now();
        let text = match format {
            OutputFormat::Json => {
                print_json(&report::stats(&store, &stats, &flow.pauses))?;
                None
            }
            OutputFormat::Prometheus => Some(report::prometheus(&stats, now)),
            _ => Some(render_table(&stats, &store, now, &flow.pauses)),
        };
        if let Some(text) = text {
            if interval.is_some() && stdout_is_terminal() {
                // Clear the screen and home the cursor so the table redraws in place.
                print!("\x1b[2J\x1b[H");
            }
            print(&text)?;
        }
        let Some(every) = interval else { return Ok(()) };
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

fn render_table(stats: &StatsReport, store: &str, now: UnixMillis, pauses: &[Pause]) -> String {
    let mut t = table(&[
        "QUEUE",
        "READY",
        "SCHEDULED",
        "BLOCKED",
        "RUNNING",
        "WAITING",
        "SUCCEEDED",
        "DEAD",
        "CANCELLED",
        "DISCARDED",
        "EXPIRED",
        "OLDEST READY",
    ]);
    let mut rows: Vec<&QueueStats> = stats.queues.iter().collect();
    let total = report::totals(stats);
    if stats.queues.len() > 1 {
        rows.push(&total);
    }
    for q in rows {
        let age = q
            .oldest_ready_at
            .map(|at| format_duration(now.since(at)))
            .unwrap_or_else(|| "-".into());
        t.add_row(vec![
            Cell::new(if pauses.iter().any(|p| p.queue == q.queue && p.job_type.is_none()) {
                format!("{} (paused)", q.queue)
            } else {
                q.queue.clone()
            }),
            Cell::new(q.ready),
            Cell::new(q.scheduled),
            Cell::new(q.blocked),
            Cell::new(q.running),
            Cell::new(q.waiting),
            Cell::new(q.succeeded),
            Cell::new(q.dead),
            Cell::new(q.cancelled),
            Cell::new(q.discarded),
            Cell::new(q.expired),
            Cell::new(age),
        ]);
    }
    if stats.queues.is_empty() {
        format!("store: {store}\nno jobs yet")
    } else {
        format!("store: {store}\n{t}")
    }
}
