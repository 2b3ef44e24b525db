//! `jobq resolve ID`: finish a waiting job from outside, as the third party it waits on (a webhook
//! handler, an operator). Resolving a job the same way twice succeeds and changes nothing, so a
//! callback delivered twice does not fail its caller.

use clap::{ArgGroup, Args};
use serde_json::value::RawValue;

use super::output::{print, print_json};
use super::{Context, OutputFormat};
use crate::report;
use jobq::Error;
use jobq::error::Input;
use jobq::job::JobId;
use jobq::store::{Resolution, ResolveAnswer};
use jobq::time::parse_duration;

/// The reason a `--discard` without one records.
const DISCARDED: &str = "discarded by an operator";

/// Arguments of `jobq resolve`.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("action").required(true).args(["succeed", "fail", "retry", "discard"])),
    after_help = "Only a waiting job (an exec handler printed ::wait, an http handler answered 202) is resolved.\nResolving it again the same way changes nothing and exits 0.\nExamples:\n  jobq resolve 0193a5c4-… --succeed --result '{\"charge\":\"ch_1\"}'\n  jobq resolve 0193a5c4-… --fail 'card declined'\n  jobq resolve 0193a5c4-… --retry --delay 10m"
)]
pub struct ResolveArgs {
    /// The job id
    #[arg(value_name = "ID")]
    pub id: String,

    /// The job succeeded
    #[arg(long)]
    pub succeed: bool,

    /// With --succeed: its result (JSON)
    #[arg(long, value_name = "JSON", conflicts_with_all = ["fail", "retry", "discard"])]
    pub result: Option<String>,

    /// The job failed for good (dead), with this error
    #[arg(long, value_name = "MESSAGE")]
    pub fail: Option<String>,

    /// Run the job again (the attempt it waited in counts as used)
    #[arg(long)]
    pub retry: bool,

    /// With --retry: not before this long from now, e.g. 30s, 10m [default: at once]
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["succeed", "fail", "discard"])]
    pub delay: Option<String>,

    /// Drop the job (discarded), with an optional reason
    #[arg(long, value_name = "REASON", num_args = 0..=1, default_missing_value = DISCARDED)]
    pub discard: Option<String>,
}

/// Runs `jobq resolve`.
pub async fn run(ctx: &Context, args: ResolveArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let id = JobId::parse(&args.id).map_err(Error::from)?;
    let result = args.result.as_deref().map(parse_result).transpose()?;
    let delay = args
        .delay
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| Error::invalid(Input::Duration, format!("--delay: {e}")))?;
    let client = ctx.client().await?;
    let action = if args.succeed {
        Resolution::Succeed { result }
    } else if let Some(error) = args.fail {
        Resolution::Fail { error }
    } else if args.retry {
        Resolution::Retry {
            run_at: client.now().plus(delay.unwrap_or_default()),
            error: None,
        }
    } else {
        Resolution::Discard {
            reason: args.discard.unwrap_or_else(|| DISCARDED.to_string()),
        }
    };
    let leads_to = action.status();
    let answer = client.resolve(id.as_str(), action).await?;
    if format == OutputFormat::Json {
        print_json(&report::resolved(&id, answer))?;
    }
    if let Some(refusal) = report::resolve_refusal(&id, answer, leads_to) {
        return Err(refusal.into());
    }
    if format == OutputFormat::Table {
        match answer {
            ResolveAnswer::Resolved { status } => print(&format!("resolved {id}: {status}"))?,
            // Twice the same way: what the caller wanted is already the case.
            ResolveAnswer::NotWaiting { status } if !ctx.quiet => {
                eprintln!("job {id} is already {status}; nothing changed")
            }
            _ => {}
        }
    }
    Ok(())
}

/// `--result`: any JSON, kept compact.
fn parse_result(text: &str) -> Result<Box<RawValue>, Error> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(Input::Resolution, format!("--result is not JSON: {e}")))?;
    serde_json::value::to_raw_value(&value).map_err(|e| Error::invalid(Input::Resolution, format!("--result: {e}")))
}
