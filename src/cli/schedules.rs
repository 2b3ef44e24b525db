//! `jobq schedules`: the configured schedules with what the store recorded of them, their next tick
//! times, a run outside the tick sequence, and pausing and resuming them for every worker.

use clap::{Args, Subcommand};

use super::output::{print, print_json, print_rows, table, when};
use super::{Context, OutputFormat};
use crate::report;
use jobq::schedule::Schedule;
use jobq::time::UnixMillis;

/// Arguments of `jobq schedules`.
#[derive(Debug, Args)]
#[command(
    after_help = "With no subcommand: a table of the configured schedules.\n\nExamples:\n  jobq schedules\n  jobq schedules next nightly-report --count 5\n  jobq schedules trigger nightly-report\n  jobq schedules pause nightly-report\n  jobq schedules resume nightly-report --catch-up"
)]
pub struct SchedulesArgs {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// The next tick times of a schedule, computed (the store is not touched)
    Next {
        /// The schedule
        name: String,
        /// How many
        #[arg(long, default_value_t = 5, value_name = "N")]
        count: usize,
    },
    /// Enqueue one run now, outside the tick sequence, and print its job id
    Trigger {
        /// The schedule
        name: String,
    },
    /// Stop every worker from enqueueing the schedule's ticks (within a second; survives restarts)
    Pause {
        /// The schedule
        name: String,
    },
    /// Let the schedule's ticks be enqueued again
    Resume {
        /// The schedule
        name: String,
        /// Also enqueue the ticks missed while paused, as its catch_up allows (default: skip them)
        #[arg(long)]
        catch_up: bool,
    },
}

/// Runs `jobq schedules`.
pub async fn run(ctx: &Context, args: SchedulesArgs) -> anyhow::Result<()> {
    let schedules = &ctx.config.schedules;
    match args.action {
        None => list(ctx, schedules).await,
        Some(Action::Next { name, count }) => {
            let schedule = find(schedules, &name)?;
            let mut at = UnixMillis::now();
            let mut next = Vec::with_capacity(count);
            while next.len() < count {
                let Some(t) = schedule.when.next_after(at) else { break };
                next.push(t);
                at = t;
            }
            match ctx.format(OutputFormat::Table) {
                OutputFormat::Json => print_json(&next),
                _ => print(&next.iter().map(|t| t.to_rfc3339()).collect::<Vec<_>>().join("\n")),
            }
        }
        Some(Action::Trigger { name }) => {
            let schedule = find(schedules, &name)?;
            let client = ctx.client().await?;
            let enqueued = client.trigger_schedule(schedule).await?;
            print(enqueued.id.as_str())
        }
        Some(Action::Pause { name }) => pause(ctx, schedules, &name, true, false).await,
        Some(Action::Resume { name, catch_up }) => pause(ctx, schedules, &name, false, catch_up).await,
    }
}

async fn pause(ctx: &Context, schedules: &[Schedule], name: &str, paused: bool, catch_up: bool) -> anyhow::Result<()> {
    let schedule = find(schedules, name)?;
    let client = ctx.client().await?;
    client.set_schedule_paused(schedule, paused, catch_up).await?;
    if !ctx.quiet {
        let what = if paused { "paused" } else { "resumed" };
        let note = if !paused && schedule.paused {
            " (the config still pauses it: paused = true)"
        } else {
            ""
        };
        eprintln!("schedule {name} {what} for every worker of the store{note}");
    }
    Ok(())
}

async fn list(ctx: &Context, schedules: &[Schedule]) -> anyhow::Result<()> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let client = ctx.client().await?;
    let states = client.schedule_states(schedules).await?;
    let now = client.now();
    let rows = report::schedule_rows(schedules, states, now);
    let none = "no schedules are configured: add [schedules.NAME] sections with cron or every and type";
    print_rows(format, &rows, ctx.quiet, none, |rows| {
        let mut t = table(&[
            "NAME",
            "WHEN",
            "TIME ZONE",
            "NEXT RUN",
            "LAST TICK",
            "JOB STATUS",
            "PAUSED",
        ]);
        for r in rows {
            t.add_row(vec![
                r.name.clone(),
                r.when.clone(),
                r.timezone.clone(),
                when(r.next_run, now),
                when(r.last_tick, now),
                r.last_job_status.map_or_else(|| "-".to_string(), |s| s.to_string()),
                if r.paused { "yes".into() } else { "no".into() },
            ]);
        }
        t
    })
}

fn find<'a>(schedules: &'a [Schedule], name: &str) -> Result<&'a Schedule, jobq::Error> {
    schedules
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| jobq::Error::no_such_schedule(name))
}
