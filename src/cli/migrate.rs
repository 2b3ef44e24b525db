//! `jobq migrate`: create or upgrade the schema; `--print` shows the SQL instead.

use clap::Args;

use super::Context;
use super::output::print;
use jobq::store::migrate;

/// Arguments of `jobq migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Print the SQL of every migration for the configured store instead of applying it
    #[arg(long)]
    pub print: bool,
}

/// Runs `jobq migrate`.
pub async fn run(ctx: &Context, args: MigrateArgs) -> anyhow::Result<()> {
    let kind = ctx.config.url.kind();
    if args.print {
        let script = migrate::script(kind);
        if script.is_empty() {
            return print(&format!("-- the {kind} store has no SQL schema"));
        }
        return print(&script);
    }
    let version = ctx.connect().await?.migrate().await?;
    if !ctx.quiet {
        print(&format!("{} is at schema version {version}", ctx.config.url.redacted()))?;
    }
    Ok(())
}
