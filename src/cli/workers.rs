//! `jobq workers`: the workers that registered recently, as a table or JSON.

use clap::Args;

use super::output::{print_rows, table, when};
use super::{Context, OutputFormat};
use crate::time::format_duration;

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
            t.add_row(vec![
                w.name.clone(),
                w.host.clone(),
                w.pid.to_string(),
                w.queues.join(","),
                when(Some(w.started_at), now),
                when(Some(w.last_seen_at), now),
                w.jobs_done.to_string(),
                w.id.clone(),
            ]);
        }
        t
    })
}
