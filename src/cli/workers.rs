//! `jobq workers`: the workers (and bridges) that registered recently, as a table or JSON.

use clap::Args;

use super::output::{print_rows, table, when};
use super::{Context, OutputFormat};
use jobq::time::format_duration;

/// Arguments of `jobq workers`.
#[derive(Debug, Args)]
pub struct WorkersArgs {}

/// Runs `jobq workers`. A worker refreshes its entry every heartbeat; one not seen for `stale_after`
/// (or three heartbeats, if longer) is presumed gone and forgotten.
pub async fn run(ctx: &Context, _args: WorkersArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let settings = &ctx.config.worker;
    let within = settings.stale_after.max(settings.heartbeat * 3);
    let workers = client.workers(within).await?;
    let now = client.now();
    let none = format!("no workers seen in the last {}", format_duration(within));
    print_rows(format, &workers, ctx.quiet, &none, |workers| {
        let mut t = table(&[
            "NAME",
            "HOST",
            "PID",
            "QUEUES",
            "STARTED",
            "LAST SEEN",
            "JOBS DONE",
            "ID",
        ]);
        for w in workers {
            // A bridge runs no jobs: its row says what it reads and what its messages became.
            let (queues, done) = match &w.bridge {
                None => (w.queues.join(","), w.jobs_done.to_string()),
                Some(b) => (
                    format!("bridge from {}", b.source),
                    format!(
                        "{} enqueued, {} duplicate, {} rejected",
                        w.jobs_done, b.duplicates, b.rejected
                    ),
                ),
            };
            t.add_row(vec![
                w.name.clone(),
                w.host.clone(),
                w.pid.to_string(),
                queues,
                when(Some(w.started_at), now),
                when(Some(w.last_seen_at), now),
                done,
                w.id.clone(),
            ]);
        }
        t
    })
}
