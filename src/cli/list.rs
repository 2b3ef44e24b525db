//! `jobq list`: jobs newest first, filtered and paged.

use clap::Args;
use comfy_table::Cell;

use super::filter::SelectArgs;
use super::output::{last_error, print_rows, status_cell, table, when};
use super::{Context, OutputFormat};
use jobq::store::{List, ListCursor};

/// Arguments of `jobq list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// At most this many jobs
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: u32,

    /// Skip this many jobs (for paging)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub offset: u64,

    /// Only jobs after this one in the list: the next page after a page that ended with it (as fast however deep)
    #[arg(long, value_name = "ID")]
    pub after: Option<String>,
}

/// Runs `jobq list`.
pub async fn run(ctx: &Context, args: ListArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(
        OutputFormat::Table,
        &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Ndjson],
    )?;
    args.select.check()?;
    let client = ctx.client().await?;
    let now = client.now();
    // The cursor is the job's place in list order, read from the job itself, so a page can follow
    // one however the job has changed since (only its creation time and id place it).
    let after = match &args.after {
        Some(id) => Some(ListCursor::of(&client.get(id).await?)),
        None => None,
    };
    let job_filter = args.select.filter(&client)?;
    let jobs = client
        .list(&List {
            filter: job_filter,
            limit: args.limit,
            offset: args.offset,
            after,
        })
        .await?;
    print_rows(format, &jobs, ctx.quiet, "no jobs match", |jobs| {
        let mut t = table(&[
            "ID",
            "TYPE",
            "QUEUE",
            "STATUS",
            "ATTEMPT",
            "CREATED",
            "RUN AT",
            "LAST ERROR",
        ]);
        for job in jobs {
            t.add_row(vec![
                Cell::new(job.id.as_str()),
                Cell::new(&job.job_type),
                Cell::new(&job.queue),
                status_cell(job.status),
                Cell::new(format!("{}/{}", job.attempt, job.max_attempts)),
                Cell::new(when(Some(job.created_at), now)),
                Cell::new(if job.status == jobq::JobStatus::Pending {
                    when(Some(job.run_at), now)
                } else {
                    "-".into()
                }),
                Cell::new(last_error(job, 60)),
            ]);
        }
        t
    })
}
