//! The filter flags shared by list, cancel and replay-dead: `--queue` and `--type` declared once, and
//! the parsing of statuses and times. A time is checked as soon as it is read, and placed against the
//! client's clock only once there is one.

use clap::{Arg, Args};

use jobq::Error;
use jobq::error::Input;
use jobq::job::JobStatus;
use jobq::store::JobFilter;
use jobq::time::{UnixMillis, parse_duration, parse_instant_str};

/// What the help of every flag that [`list`] reads says of how it is given.
const GIVEN: &str = " (repeatable or comma-separated)";

/// `--queue` and `--type`, flattened into each command that picks jobs by them. A command whose
/// help words them its own way says so in its `#[command]` with [`QueueTypeArgs::worded`].
#[derive(Debug, Args)]
pub struct QueueTypeArgs {
    /// Only this queue (repeatable or comma-separated)
    #[arg(long, value_name = "QUEUE")]
    pub queue: Vec<String>,

    /// Only this job type (repeatable or comma-separated)
    #[arg(long = "type", value_name = "TYPE")]
    pub job_type: Vec<String>,
}

impl QueueTypeArgs {
    /// For `#[command(mut_args = …)]`: the help of `--queue` and `--type` in a command's own words,
    /// followed by how the flags are given, which is the same everywhere. (`mut_args` keeps the
    /// arguments in their order, which completions follow; `mut_arg` would move each to the end.)
    pub fn worded(queue: &str, job_type: &str) -> impl FnMut(Arg) -> Arg {
        let (queue, job_type) = (format!("{queue}{GIVEN}"), format!("{job_type}{GIVEN}"));
        move |arg| match arg.get_id().as_str() {
            "queue" => arg.help(queue.clone()),
            "job_type" => arg.help(job_type.clone()),
            _ => arg,
        }
    }

    /// The jobs of these queues and types (any, where a flag is not given).
    pub fn filter(&self) -> JobFilter {
        JobFilter {
            queues: list(&self.queue),
            job_types: list(&self.job_type),
            ..Default::default()
        }
    }
}

/// Statuses from `--status a,b --status c`.
pub fn statuses(values: &[String]) -> Result<Vec<JobStatus>, Error> {
    let mut out = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let v = v.trim();
        if v.is_empty() {
            continue;
        }
        let status: JobStatus = v
            .parse()
            .map_err(|e: String| Error::invalid(Input::Status, format!("--status: {e}")))?;
        if !out.contains(&status) {
            out.push(status);
        }
    }
    Ok(out)
}

/// A point in time from `--since`/`--until`, as given: a duration ago or a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// This long before now.
    Ago(std::time::Duration),
    /// This instant.
    At(UnixMillis),
}

impl When {
    /// The instant this names, as of `now`.
    pub fn at(self, now: UnixMillis) -> UnixMillis {
        match self {
            When::Ago(d) => now.minus(d),
            When::At(t) => t,
        }
    }
}

/// A point in time from `--since`/`--until`: a duration ago (`1h`, `7d`) or a time (RFC 3339, Unix seconds).
pub fn when(flag: &str, text: &str) -> Result<When, Error> {
    if let Ok(d) = parse_duration(text) {
        return Ok(When::Ago(d));
    }
    parse_instant_str(text).map(When::At).map_err(|_| {
        Error::invalid(
            Input::Time,
            format!("{flag} {text:?}: expected a duration ago (30m, 7d) or a time (2026-01-31T09:00:00Z)"),
        )
    })
}

/// Values from repeatable, comma-separable flags.
pub fn list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// Which jobs `list`, `export` and `copy` take: queue, type, status and creation time.
#[derive(Debug, Args)]
pub struct SelectArgs {
    #[command(flatten)]
    pub scope: QueueTypeArgs,

    /// Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)
    #[arg(long, value_name = "STATUS")]
    pub status: Vec<String>,

    /// Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Created before: a duration ago or a time
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

impl SelectArgs {
    /// The filter, its times placed against `client`'s clock.
    pub fn filter(&self, client: &jobq::Client) -> Result<JobFilter, Error> {
        let statuses = statuses(&self.status)?;
        let since = self.since.as_deref().map(|s| when("--since", s)).transpose()?;
        let until = self.until.as_deref().map(|s| when("--until", s)).transpose()?;
        let now = client.now();
        Ok(JobFilter {
            statuses,
            created_since: since.map(|w| w.at(now)),
            created_until: until.map(|w| w.at(now)),
            ..self.scope.filter()
        })
    }

    /// Checks the flags before anything is opened.
    pub fn check(&self) -> Result<(), Error> {
        statuses(&self.status)?;
        for (flag, value) in [("--since", &self.since), ("--until", &self.until)] {
            if let Some(v) = value {
                when(flag, v)?;
            }
        }
        Ok(())
    }
}
