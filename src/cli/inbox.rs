//! `jobq inbox`: the items pushed to a Redis store's inbox that could not become jobs, with why.

use clap::Args;

use super::output::{print, print_json, print_ndjson, short, table, when};
use super::{Context, OutputFormat};

/// Arguments of `jobq inbox`.
#[derive(Debug, Args)]
#[command(
    after_help = "Any Redis client enqueues a job with LPUSH <prefix>inbox:<queue> '<envelope JSON>' \
(prefix jobq: by default); workers of the queue ingest it. An item that is not an envelope becomes a job \
of inbox_default_type when the config sets one, and is otherwise kept aside: this lists those.\n\n\
Examples:\n  redis-cli LPUSH jobq:inbox:mail '{\"v\":1,\"jobType\":\"mail.send\",\"payload\":{\"to\":\"a@b\"}}'\n  \
jobq inbox --url redis://localhost\n  jobq inbox --queue mail --clear"
)]
pub struct InboxArgs {
    /// Only these queues (repeatable) [default: every queue]
    #[arg(long, short = 'Q', value_name = "QUEUE")]
    pub queue: Vec<String>,

    /// At most this many items per queue, oldest first
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub limit: usize,

    /// Delete the rejected items (of the queues named, or all) instead of listing them
    #[arg(long)]
    pub clear: bool,
}

/// Runs `jobq inbox`.
pub async fn run(ctx: &Context, args: InboxArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(
        OutputFormat::Table,
        &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Ndjson],
    )?;
    let url = &ctx.config.url;
    // Said before connecting: opening a store that has no inbox would create its file or schema for
    // nothing (the store itself would refuse the call, as unsupported).
    if !url.has_inbox() {
        return Err(jobq::Error::invalid(
            jobq::error::Input::Url,
            format!(
                "the inbox belongs to the Redis store, and {} is a {} store",
                url.redacted(),
                url.kind()
            ),
        )
        .into());
    }
    for q in &args.queue {
        jobq::job::validate_queue(q).map_err(jobq::Error::from)?;
    }
    let client = ctx.client().await?;
    if args.clear {
        let n = client.clear_rejected_inbox_items(&args.queue).await?;
        if !ctx.quiet {
            eprintln!("deleted {n} rejected inbox item{}", if n == 1 { "" } else { "s" });
        }
        return Ok(());
    }
    let items = client.rejected_inbox_items(&args.queue, args.limit).await?;
    match format {
        OutputFormat::Json => print_json(&items),
        OutputFormat::Ndjson => print_ndjson(&items),
        _ => {
            if items.is_empty() {
                if !ctx.quiet {
                    eprintln!("no rejected inbox items");
                }
                return Ok(());
            }
            let now = client.now();
            let mut t = table(&["QUEUE", "AT", "ERROR", "ITEM"]);
            for item in &items {
                t.add_row(vec![
                    item.queue.clone(),
                    when(Some(item.at), now),
                    short(&item.error, 60),
                    short(&item.item, 40),
                ]);
            }
            print(&t.to_string())
        }
    }
}
