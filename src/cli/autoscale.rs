//! `jobq autoscale`: works out how many workers a queue needs every `--interval` and hands the figure
//! to a program (`--exec`, whenever it changes, at most once per `--cool-down`) or prints it
//! (`--print`, once per evaluation). `--once` evaluates once and exits, for cron and tests. The
//! figure and its formula are the library's (`jobq::autoscale`); this file runs the loop and the
//! program.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;

use super::output::print;
use super::{Context, OutputFormat};
use jobq::autoscale::{Cooldown, Estimate, Policy};
use jobq::client::Client;
use jobq::time::{format_duration, parse_duration};

/// Arguments of `jobq autoscale`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["exec", "print"])))]
pub struct AutoscaleArgs {
    /// The queue to size workers for
    #[arg(long, value_name = "QUEUE")]
    pub queue: String,

    /// Never fewer workers than this
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub min: u32,

    /// Never more workers than this
    #[arg(long, value_name = "N")]
    pub max: u32,

    /// How long a ready job may wait before it starts
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub target_latency: Duration,

    /// Jobs one worker runs at once (its --concurrency)
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: u32,

    /// Run this program with the number of workers as its argument (and in JOBQ_DESIRED_WORKERS)
    /// whenever it changes
    #[arg(long, value_name = "PROGRAM")]
    pub exec: Option<PathBuf>,

    /// Print the number of workers at each evaluation instead
    #[arg(long)]
    pub print: bool,

    /// Least time between two runs of the program
    #[arg(long = "cool-down", visible_alias = "cooldown", value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub cool_down: Duration,

    /// Time between evaluations
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    pub interval: Duration,

    /// How far back arrivals and run times are measured
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub window: Duration,

    /// Evaluate once and exit
    #[arg(long)]
    pub once: bool,
}

/// Runs `jobq autoscale`.
pub async fn run(ctx: &Context, args: AutoscaleArgs) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let policy = Policy {
        min: args.min,
        max: args.max,
        target_latency: args.target_latency,
        concurrency: args.concurrency,
        window: args.window,
    };
    // Everything the command line says is checked before the store is opened.
    policy.check()?;
    jobq::job::validate_queue(&args.queue)?;
    if args.interval.is_zero() {
        return Err(jobq::Error::invalid(jobq::error::Input::Duration, "--interval must be longer than 0s").into());
    }
    if let Some(program) = &args.exec {
        // A path (not a name looked up in PATH) that names no file is a typo: refused before any run.
        if program.components().count() > 1 && !program.is_file() {
            return Err(jobq::Error::invalid(
                jobq::error::Input::Scaling,
                format!(
                    "--exec {}: no such file (give the path of the scaling program)",
                    program.display()
                ),
            )
            .into());
        }
    }
    let client = ctx.client().await?;
    let mut cooldown = Cooldown::new(args.cool_down);
    let mut ticks = tokio::time::interval(args.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Listening from here on, not only while waiting for a tick: a signal that arrives during an
    // evaluation is kept and ends the loop before the next one (the evaluation and its program run
    // to the end, so a scaling program is never killed half-way).
    let mut stop = std::pin::pin!(interrupted());
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = &mut stop => return Ok(()),
        }
        let evaluated = evaluate(&client, &args, &policy, format, &mut cooldown).await;
        match evaluated {
            Ok(()) if args.once => return Ok(()),
            Ok(()) => {}
            Err(e) if args.once => return Err(e),
            // A passing store outage or a failed program must not end the scaler: say so, go on.
            Err(e) => eprintln!("warning: {e:#}"),
        }
    }
}

/// One evaluation: the figure, then printed or handed to the program.
async fn evaluate(
    client: &Client,
    args: &AutoscaleArgs,
    policy: &Policy,
    format: OutputFormat,
    cooldown: &mut Cooldown,
) -> anyhow::Result<()> {
    let estimate = client.desired_workers(&args.queue, policy).await?;
    if args.print {
        return match format {
            OutputFormat::Json => print(&format!("{}\n", serde_json::to_string(&estimate)?)),
            _ => print(&format!("{}\n", estimate.workers)),
        };
    }
    let Some(program) = &args.exec else {
        return Ok(());
    };
    let now = Instant::now();
    if !cooldown.due(estimate.workers, now) {
        return Ok(());
    }
    let previous = cooldown.applied();
    let ran = run_program(program, &estimate, previous).await;
    cooldown.ran(estimate.workers, ran.is_ok(), now);
    ran
}

/// Runs the program with the figure as its one argument and in its environment, and waits for it.
async fn run_program(program: &PathBuf, estimate: &Estimate, previous: Option<u32>) -> anyhow::Result<()> {
    let workers = estimate.workers.to_string();
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg(&workers)
        .env("JOBQ_DESIRED_WORKERS", &workers)
        .env("JOBQ_QUEUE", &estimate.queue)
        .env(
            "JOBQ_PREVIOUS_WORKERS",
            previous.map(|p| p.to_string()).unwrap_or_default(),
        )
        .kill_on_drop(true);
    let status = cmd
        .status()
        .await
        .with_context(|| format!("cannot run --exec {}", program.display()))?;
    if !status.success() {
        anyhow::bail!(
            "--exec {} {workers} failed ({status}); trying again after the cool-down",
            program.display()
        );
    }
    tracing::info!(
        "queue {}: {} workers (was {}), from {:.2} jobs/s arriving, {} ready, mean run time {}",
        estimate.queue,
        estimate.workers,
        previous.map(|p| p.to_string()).unwrap_or_else(|| "unknown".into()),
        estimate.demand.arrival_rate,
        estimate.demand.backlog,
        estimate
            .demand
            .mean_run_time
            .map(format_duration)
            .unwrap_or_else(|| "unknown".into())
    );
    Ok(())
}

/// A future that resolves on Ctrl-C or SIGTERM. The handlers are installed when it is made, not
/// when it is first polled, so a signal that arrives before the first poll still counts.
fn interrupted() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let streams = signal(SignalKind::terminate()).and_then(|term| Ok((term, signal(SignalKind::interrupt())?)));
    async move {
        let Ok((mut term, mut int)) = streams else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    }
}
