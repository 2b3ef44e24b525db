//! `jobq inbox`: the items pushed to a Redis store's inbox that could not become jobs, with why.

use clap::Args;

use super::Context;
use crate::store::StoreKind;

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
    let url = &ctx.config.url;
    if url.kind() != StoreKind::Redis {
        return Err(crate::Error::invalid(
            crate::error::Input::Url,
            format!(
                "the inbox belongs to the Redis store, and {} is a {} store",
                url.redacted(),
                url.kind()
            ),
        )
        .into());
    }
    for q in &args.queue {
        crate::job::validate_queue(q).map_err(crate::Error::from)?;
    }
    run_redis(ctx, args).await
}

#[cfg(feature = "redis")]
async fn run_redis(ctx: &Context, args: InboxArgs) -> anyhow::Result<()> {
    use super::OutputFormat;
    use super::output::{print, print_json, print_ndjson, short, table, when};

    let format = ctx.format_among(
        OutputFormat::Table,
        &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Ndjson],
    )?;
    let store = crate::store::redis::RedisStore::connect(&ctx.config.url)
        .await
        .map_err(crate::Error::from)?;
    if args.clear {
        let n = store.clear_rejected(&args.queue).await.map_err(crate::Error::from)?;
        if !ctx.quiet {
            eprintln!("deleted {n} rejected inbox item{}", if n == 1 { "" } else { "s" });
        }
        return Ok(());
    }
    let items = store
        .rejected_items(&args.queue, args.limit)
        .await
        .map_err(crate::Error::from)?;
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
            // The inbox is the Redis store's own; without a Client, the time is the wall clock's.
            let now = crate::time::UnixMillis::now();
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

#[cfg(not(feature = "redis"))]
async fn run_redis(_ctx: &Context, _args: InboxArgs) -> anyhow::Result<()> {
    Err(crate::Error::Store(crate::store::StoreError::Unsupported {
        store: StoreKind::Redis,
        operation: "the inbox (this build of jobq has no Redis store)",
    })
    .into())
}
