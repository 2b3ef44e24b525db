//! `jobq show ID`: one job in full.

use clap::Args;
use comfy_table::Cell;

use super::output::{print, print_json, status_cell, table, when};
use super::{Context, OutputFormat};
use crate::report::ShownJob;
use jobq::job::Join;
use jobq::store::Edge;
use jobq::time::format_duration;

/// Arguments of `jobq show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The job id
    #[arg(value_name = "ID")]
    pub id: String,
}

/// Runs `jobq show`.
pub async fn run(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let job = client.get(&args.id).await?;
    let edges = client.edges(&job).await?;
    if format == OutputFormat::Json {
        return print_json(&ShownJob::new(&job, &edges));
    }
    let now = client.now();
    let time = |t: Option<jobq::UnixMillis>| match t {
        Some(t) => format!("{} ({})", t.to_rfc3339(), when(Some(t), now)),
        None => "-".to_string(),
    };
    let mut t = table(&["FIELD", "VALUE"]);
    let mut row = |k: &str, v: Cell| {
        t.add_row(vec![Cell::new(k), v]);
    };
    row("id", Cell::new(job.id.as_str()));
    row("type", Cell::new(&job.job_type));
    row("queue", Cell::new(&job.queue));
    row("status", status_cell(job.status));
    row("attempt", Cell::new(format!("{} of {}", job.attempt, job.max_attempts)));
    row("priority", Cell::new(job.priority));
    row("run at", Cell::new(time(Some(job.run_at))));
    row("created", Cell::new(time(Some(job.created_at))));
    row("started", Cell::new(time(job.started_at)));
    row("heartbeat", Cell::new(time(job.heartbeat_at)));
    row("finished", Cell::new(time(job.finished_at)));
    if let Some(w) = &job.worker_id {
        row("worker", Cell::new(w));
    }
    if let Some(k) = &job.unique_key {
        row("unique key", Cell::new(format!("{k} ({})", job.unique_mode)));
    }
    if let Some(at) = job.expires_at {
        let expiry = if job.status == jobq::job::JobStatus::Expired {
            format!("{} — not started by then", time(Some(at)))
        } else {
            time(Some(at))
        };
        row("expires", Cell::new(expiry));
    }
    if let Some(ms) = job.timeout_ms {
        row(
            "timeout",
            Cell::new(format_duration(std::time::Duration::from_millis(ms))),
        );
    }
    if let Some(p) = &job.progress {
        row(
            "progress",
            Cell::new(format!("{}% {}", p.percent, p.message.as_deref().unwrap_or(""))),
        );
    }
    for (k, v) in &job.meta {
        row(&format!("meta.{k}"), Cell::new(v));
    }
    row("payload", Cell::new(pretty(job.payload.get())));
    if let Some(r) = &job.result {
        row("result", Cell::new(pretty(r.get())));
    }
    let mut out = t.to_string();
    if !job.errors.is_empty() {
        let mut errors = table(&["ATTEMPT", "AT", "ERROR"]);
        for e in &job.errors {
            errors.add_row(vec![
                Cell::new(e.attempt),
                Cell::new(time(Some(e.at))),
                Cell::new(&e.error),
            ]);
        }
        out.push_str("\n\nerrors (newest last):\n");
        out.push_str(&errors.to_string());
    }
    let waits = match edges.join {
        Join::All => "waits for",
        Join::Any => "waits for any of (runs at the first met)",
    };
    for (title, side) in [(waits, &edges.dependencies), ("waited for by", &edges.dependents)] {
        if !side.is_empty() {
            out.push_str(&format!("\n\n{title}:\n"));
            out.push_str(&edge_table(side).to_string());
        }
    }
    print(&out)
}

/// One side of a job's edges: the job at the other end as it is now, the rule, and the edge's state.
fn edge_table(edges: &[Edge]) -> comfy_table::Table {
    let mut t = table(&["ID", "TYPE", "STATUS", "ON", "EDGE"]);
    for e in edges {
        t.add_row(vec![
            Cell::new(e.job_id.as_str()),
            Cell::new(e.job_type.as_deref().unwrap_or("-")),
            match e.status {
                Some(s) => status_cell(s),
                None => Cell::new("deleted"),
            },
            Cell::new(e.on),
            Cell::new(e.state.as_str()),
        ]);
    }
    t
}

fn pretty(raw: &str) -> String {
    serde_json::from_str::<serde_json::Value>(raw)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| raw.to_string())
}
