//! `jobq replay-dead` (alias `replay`): dead jobs back to pending, attempts reset, errors kept.

use clap::Args;
use comfy_table::Cell;

use super::confirm::confirm;
use super::filter::QueueTypeArgs;
use super::output::{last_error, print, print_json, print_ndjson, table};
use super::{Context, OutputFormat};
use crate::report;
use jobq::Error;
use jobq::error::Input;
use jobq::job::{JobId, JobStatus};
use jobq::store::ReplayDead;

/// Arguments of `jobq replay-dead`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  jobq replay-dead --limit 10              (routine: never asks)\n  jobq replay-dead --queue mail --dry-run\n  jobq replay --id 0193a5c4-… --id 0193a5c5-…",
    mut_args = QueueTypeArgs::worded("Only dead jobs of this queue", "Only dead jobs of this type")
)]
pub struct ReplayDeadArgs {
    #[command(flatten)]
    pub scope: QueueTypeArgs,

    /// Only this job (repeatable)
    #[arg(long, value_name = "ID")]
    pub id: Vec<String>,

    /// At most this many, oldest death first
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,

    /// Show what would be replayed without changing anything
    #[arg(long)]
    pub dry_run: bool,

    /// Also bring back, blocked, the jobs that these jobs' failure cancelled (and those that their
    /// cancellation cancelled, and so on), with their dependencies counted again
    #[arg(long, conflicts_with = "dry_run")]
    pub cascade: bool,

    /// Print the replayed jobs as JSON lines on stdout
    #[arg(long)]
    pub print: bool,

    /// Do not ask before an unbounded replay (no --limit or --id)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Runs `jobq replay-dead`.
pub async fn run(ctx: &Context, args: ReplayDeadArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let ids = args
        .id
        .iter()
        .map(|i| JobId::parse(i).map_err(Error::from))
        .collect::<Result<Vec<_>, _>>()?;
    if args.limit == Some(0) {
        return Err(Error::invalid(Input::Limit, "--limit 0 replays nothing; give at least 1").into());
    }
    let client = ctx.client().await?;
    let request = ReplayDead {
        filter: args.scope.filter(),
        ids,
        limit: args.limit,
        ..Default::default()
    };
    let cascade = args.cascade;
    // The preview and the prompt's count: what the replay would move now, by the store's own selection.
    let candidates = client
        .replay_dead(ReplayDead {
            dry_run: true,
            ..request.clone()
        })
        .await?;
    if args.dry_run {
        return match format {
            OutputFormat::Json => print_json(&report::ReplayDryRun {
                dry_run: true,
                would_replay: &candidates,
            }),
            _ if args.print => print_ndjson(&candidates),
            _ => {
                let mut t = table(&["ID", "TYPE", "QUEUE", "ATTEMPTS", "LAST ERROR"]);
                for job in &candidates {
                    t.add_row(vec![
                        Cell::new(job.id.as_str()),
                        Cell::new(&job.job_type),
                        Cell::new(&job.queue),
                        Cell::new(job.attempt),
                        Cell::new(last_error(job, 70)),
                    ]);
                }
                let head = format!("would replay {}", super::output::jobs(candidates.len() as u64, "dead"));
                if candidates.is_empty() {
                    print(&head)
                } else {
                    print(&format!("{head}\n{t}"))
                }
            }
        };
    }
    if candidates.is_empty() {
        if format == OutputFormat::Json {
            return print_json(&report::replayed(&[]));
        }
        if !ctx.quiet {
            eprintln!("no dead jobs match");
        }
        return Ok(());
    }
    let bounded = request.limit.is_some() || !request.ids.is_empty();
    if !bounded {
        let question = format!("Replay {}?", super::output::jobs(candidates.len() as u64, "dead"));
        if !confirm(question, args.yes, "--limit N or --id ID").await? {
            eprintln!("nothing replayed");
            return Ok(());
        }
    }
    let mut replayed = client.replay_dead(ReplayDead { cascade, ..request }).await?;
    replayed.sort_by(|a, b| a.id.cmp(&b.id));
    let reopened = replayed.iter().filter(|j| j.status == JobStatus::Blocked).count();
    match format {
        OutputFormat::Json => print_json(&report::replayed(&replayed)),
        _ if args.print => print_ndjson(&replayed),
        _ if cascade => print(&format!(
            "replayed {}; {} that {} failure cancelled {} blocked again",
            super::output::jobs((replayed.len() - reopened) as u64, "dead"),
            super::output::jobs(reopened as u64, ""),
            if replayed.len() - reopened == 1 { "its" } else { "their" },
            if reopened == 1 { "is" } else { "are" },
        )),
        _ => print(&format!(
            "replayed {}",
            super::output::jobs(replayed.len() as u64, "dead")
        )),
    }
}
