//! `jobq queues`: each queue with its counts, whether it is paused (whole or by type) and the limits
//! recorded for it, then each type with a limit or an upstream block; as a table or JSON.

use clap::Args;

use super::output::{print, print_json, table, when};
use super::{Context, OutputFormat};
use jobq::client::{LimitReport, QueuesReport};
use jobq::time::{UnixMillis, format_duration};

/// Arguments of `jobq queues`.
#[derive(Debug, Args)]
pub struct QueuesArgs {}

/// Runs `jobq queues`.
pub async fn run(ctx: &Context, _args: QueuesArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let report = client.queues().await?;
    if format == OutputFormat::Json {
        return print_json(&report);
    }
    if report.queues.is_empty() && report.types.is_empty() {
        if !ctx.quiet {
            print("no queues yet: none has jobs, a pause or a limit\n")?;
        }
        return Ok(());
    }
    print(&render(&report, client.now()))
}

fn render(report: &QueuesReport, now: UnixMillis) -> String {
    let mut t = table(&[
        "QUEUE",
        "STATE",
        "READY",
        "SCHEDULED",
        "BLOCKED",
        "RUNNING",
        "WAITING",
        "DEAD",
        "LIMITS",
    ]);
    for q in &report.queues {
        let state = match (q.paused_since, q.paused_types.is_empty()) {
            (Some(since), _) => format!("paused {}", when(Some(since), now)),
            (None, false) => format!("paused: {}", q.paused_types.join(", ")),
            (None, true) => "active".into(),
        };
        let c = &q.counts;
        t.add_row(vec![
            c.queue.clone(),
            state,
            c.ready.to_string(),
            c.scheduled.to_string(),
            c.blocked.to_string(),
            c.running.to_string(),
            c.waiting.to_string(),
            c.dead.to_string(),
            limits(q.limit.as_ref()),
        ]);
    }
    let mut out = format!("{t}\n");
    if !report.types.is_empty() {
        let mut t = table(&["TYPE", "LIMITS", "BLOCKED"]);
        for ty in &report.types {
            let blocked: Vec<String> = ty
                .blocks
                .iter()
                .map(|b| {
                    let left = format_duration(b.until.since(now));
                    match &b.partition {
                        Some(p) => format!("partition {p:?} for {left}"),
                        None => format!("for {left}"),
                    }
                })
                .collect();
            t.add_row(vec![
                ty.job_type.clone(),
                limits(ty.limit.as_ref()),
                if blocked.is_empty() {
                    "-".into()
                } else {
                    blocked.join(", ")
                },
            ]);
        }
        out.push_str(&format!("\n{t}\n"));
    }
    out
}

/// `global 5, 100/1m per meta.tenantId`.
fn limits(limit: Option<&LimitReport>) -> String {
    let Some(l) = limit else { return "-".into() };
    let mut parts = Vec::new();
    if let Some(n) = l.global_concurrency {
        parts.push(format!("{n} at once"));
    }
    if let Some(rate) = &l.rate {
        parts.push(rate.clone());
    }
    let mut text = if parts.is_empty() {
        "-".to_string()
    } else {
        parts.join(", ")
    };
    if let Some(p) = &l.partition {
        text.push_str(&format!(" per {p}"));
    }
    text
}
