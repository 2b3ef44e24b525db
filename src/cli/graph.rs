//! `jobq flow`: a whole graph of jobs from a JSON document, checked first and enqueued all at once;
//! prints each job's ref and id.

use std::path::PathBuf;

use clap::Args;

use super::lines::read_text;
use super::output::{print, print_json};
use super::{Context, OutputFormat};
use jobq::Error;
use jobq::error::Input;
use jobq::job::{Flow, ids_by_ref};

/// Arguments of `jobq flow`.
#[derive(Debug, Args)]
#[command(
    after_help = "The document: {\"jobs\": [{\"ref\": \"build\", \"type\": \"report.build\", \"payload\": {}},\n  {\"ref\": \"mail\", \"type\": \"report.mail\", \"after\": [\"build\"]},\n  {\"ref\": \"alert\", \"type\": \"report.alert\", \"after\": [{\"ref\": \"build\", \"on\": \"failure\"}]}]}\nEach job takes any option of the job JSON; after lists refs of the flow, or {\"ref\"|\"id\", \"on\"}.\n\nExamples:\n  jobq flow report.json\n  jobq flow - -o json < report.json"
)]
pub struct FlowArgs {
    /// The flow's JSON document, or - for stdin
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// Runs `jobq flow`: refuses a document with duplicate refs, refs that name no job, a job after
/// itself or a cycle (exit 2, naming them) before it connects; then writes the whole flow in one
/// call and prints `REF ID` lines (`-o json`: an object of ref → id).
pub async fn run(ctx: &Context, args: FlowArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let text = read_text(&args.file)?;
    let doc = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(Input::Flow, format!("{} is not JSON: {e}", args.file.display())))?;
    let flow = Flow::from_json(doc).map_err(Error::from)?;
    let client = ctx.client().await?;
    let enqueued = client.flow(&flow).await?;
    let ids = ids_by_ref(enqueued.iter().map(|(name, e)| (name.as_str(), &e.id)));
    if format == OutputFormat::Json {
        return print_json(&ids);
    }
    let lines: Vec<String> = enqueued.iter().map(|(name, e)| format!("{name}\t{}", e.id)).collect();
    print(&lines.join("\n"))
}
