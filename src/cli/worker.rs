//! `jobq worker`: runs the worker runtime in the foreground (for systemd, runit, supervisord,
//! Kubernetes) with the configured handlers, until SIGTERM/SIGINT or a self-imposed limit. SIGHUP,
//! and with `--reload-on-change` a change to the config file, reloads the config into the running
//! worker (`worker/reload.rs`). Also home of [`init_logging`], the tracing setup of long-running
//! commands.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use tokio::signal::unix::{SignalKind, signal};

use super::Context;
use crate::config::{Config, HandlerFlag};
use jobq::time::parse_duration;
use jobq::worker::WorkerSettings;
use jobq::worker::{Worker, on_signals};

mod reload;

use reload::Reloader;

/// Arguments of `jobq worker`.
#[derive(Debug, Args)]
#[command(
    after_help = "Handlers come from the config file's [handlers.\"TYPE\"] sections (exec, http, publish or builtin).\n\
Stop with SIGTERM or Ctrl-C: running jobs get shutdown_timeout to finish, then go back to pending;\n\
a second signal stops them at once. SIGHUP reloads the config file: handlers, their settings,\n\
[retry], concurrency and schedules apply to jobs claimed from then on.\n\nExamples:\n  jobq worker --queue default --queue mail --concurrency 8\n  jobq worker --burst          # run what is ready, then exit\n  jobq worker --reload-on-change"
)]
pub struct WorkerArgs {
    /// Queue to take jobs from (repeatable, or comma-separated) [default: [worker] queues, or default]
    // The brackets are --help text naming a config section, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long = "queue", value_name = "QUEUE", value_delimiter = ',')]
    pub queues: Vec<String>,

    /// Jobs run at once [default: [worker] concurrency, or 8]
    // The brackets are --help text naming a config section, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, short = 'c', value_name = "N")]
    pub concurrency: Option<u32>,

    /// Exit once no job is ready (after finishing the running ones)
    #[arg(long)]
    pub burst: bool,

    /// Exit after taking on N jobs (after finishing them)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_jobs: Option<u64>,

    /// Finish the running jobs and exit once resident memory exceeds SIZE, e.g. 512MiB or 2G
    #[arg(long, value_name = "SIZE", value_parser = jobq::memory::parse_size)]
    pub max_memory: Option<u64>,

    /// Lower the CPU priority of the worker and the programs it runs (0-19; negative needs root)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub nice: Option<i32>,

    /// Name shown by `jobq workers` [default: the host name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Log format: text for people, json (one object per line) for log shippers
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Time a stopped program gets between SIGTERM and SIGKILL
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub kill_grace: Duration,

    /// Reload the config file whenever it changes on disk, as SIGHUP does
    #[arg(long)]
    pub reload_on_change: bool,

    /// A handler for TYPE (`*`: every type without its own), added to the config file's or
    /// replacing its handler for TYPE: a program with its arguments (`./bin/send-mail --fast`),
    /// persistent:PROGRAM, builtin:NAME, an http(s):// URL, or an amqp(s):// or kafka:// target to
    /// publish to. Repeatable
    #[arg(long = "handler", value_name = "TYPE=TARGET", value_parser = HandlerFlag::parse)]
    pub handlers: Vec<HandlerFlag>,
}

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum LogFormat {
    /// One line per event for people
    Text,
    /// One JSON object per event
    Json,
}

/// Runs `jobq worker`.
pub async fn run(ctx: &Context, args: WorkerArgs) -> anyhow::Result<()> {
    init_logging(args.log_format, ctx.verbose, ctx.quiet);
    let flags = SettingFlags {
        queues: args.queues.clone(),
        concurrency: args.concurrency,
        handlers: args.handlers.clone(),
        base: std::env::current_dir().context("cannot read the current folder")?,
    };
    let config = flags.overlay(ctx.config.clone())?;
    check_handlers(&config)?;
    if let Some(n) = args.nice {
        set_nice(n)?;
    }
    let settings = flags.apply(&config);
    warn_of_idle_capacity(&config, settings.concurrency);
    // Before the worker starts: SIGHUP's default action ends the process, and a file that cannot be
    // watched is bad usage, not a log line.
    let hangups = signal(SignalKind::hangup())?;
    let changes = if args.reload_on_change {
        Some(reload::watch_file(&config)?)
    } else {
        None
    };
    let client = ctx.client().await?;
    let mut builder = config
        .configure_worker(Worker::builder(client.store().clone()))?
        .settings(&settings)
        .burst(args.burst)
        .max_jobs(args.max_jobs)
        .max_memory(args.max_memory)
        .kill_grace(args.kill_grace);
    if let Some(name) = args.name {
        builder = builder.name(name);
    }
    let worker = builder.build()?;
    let signals = tokio::spawn(on_signals(worker.handle(), settings.shutdown_timeout));
    let reloader = Reloader::new(config, flags, worker.handle());
    let reloads = tokio::spawn(reloader.run(hangups, changes));
    let report = worker.run().await;
    signals.abort();
    reloads.abort();
    report?;
    Ok(())
}

/// Says so when a persistent handler's programs could hold more jobs than the worker will run at
/// once: the extra room would never be used, and the cure (a larger `concurrency`) is easy to miss.
fn warn_of_idle_capacity(config: &Config, concurrency: u32) {
    for (job_type, h) in &config.handlers {
        let jobq::handler::HandlerKind::Persistent { options, .. } = &h.kind else {
            continue;
        };
        let runs = h.concurrency.unwrap_or(concurrency).min(concurrency);
        if options.capacity() > u64::from(runs) {
            tracing::warn!(
                "[handlers.{job_type:?}] processes × in_flight is {}, but the worker runs at most {runs} of its jobs at once: raise concurrency to use them all",
                options.capacity()
            );
        }
    }
}

/// Refuses a config without handlers, at start and at a reload.
fn check_handlers(config: &Config) -> Result<(), jobq::Error> {
    if config.handlers.is_empty() {
        return Err(jobq::Error::config(
            "no handlers are configured, so every job would go dead: add [handlers.\"TYPE\"] sections with exec, http, publish or builtin to the config file (--config or ./jobq.toml), or --handler TYPE=PROGRAM flags",
        ));
    }
    Ok(())
}

/// The flags that win over the config's `[worker]` settings and handlers, at start and at every
/// reload.
struct SettingFlags {
    queues: Vec<String>,
    concurrency: Option<u32>,
    handlers: Vec<HandlerFlag>,
    /// The folder the worker started in, which `--handler` programs resolve against.
    base: std::path::PathBuf,
}

impl SettingFlags {
    /// The config with the `--handler` flags' handlers added (over the file's for the same types).
    fn overlay(&self, config: Config) -> Result<Config, jobq::Error> {
        config.with_handler_flags(&self.handlers, &self.base)
    }

    fn apply(&self, config: &Config) -> WorkerSettings {
        let mut settings = config.worker.clone();
        if !self.queues.is_empty() {
            settings.queues = self.queues.clone();
        }
        if let Some(c) = self.concurrency {
            settings.concurrency = c;
        }
        settings
    }
}

/// Sets up logging to stderr: `text` (colour on a terminal) or `json`. `verbose` (-v count) and
/// `quiet` pick the level; `JOBQ_LOG` (an `EnvFilter` directive such as `jobq=debug,sqlx=info`)
/// overrides them. Does nothing if logging is already set up.
pub fn init_logging(format: LogFormat, verbose: u8, quiet: bool) {
    init_logging_with(format, verbose, quiet, "");
}

/// As [`init_logging`], with `always` (an `EnvFilter` directive such as `jobq::audit=info`) added
/// to the level `verbose` and `quiet` pick, for lines a command shows whatever they say.
pub fn init_logging_with(format: LogFormat, verbose: u8, quiet: bool, always: &str) {
    use tracing_subscriber::EnvFilter;
    // The broker clients' own logs (lapin, librdkafka) say again, many times over, what jobq reports
    // once in its own words (a bridge's lost connection, a publish handler's failed job): shown
    // from -vv only. So does the database pool's (sqlx's warnings of each connection it found
    // broken, and of each wait for one, during a store's outage, which jobq tells as one outage).
    let default = match (quiet, verbose) {
        (true, _) => "error,jobq=warn,lapin=off,librdkafka=off,rdkafka=off,sqlx=error",
        (false, 0) => "warn,jobq=info,lapin=off,librdkafka=off,rdkafka=off,sqlx=error",
        (false, 1) => "warn,jobq=debug,lapin=off,librdkafka=off,rdkafka=off,sqlx=error",
        (false, _) => "info,jobq=trace",
    };
    let default = if always.is_empty() {
        default.to_string()
    } else {
        format!("{default},{always}")
    };
    let filter = EnvFilter::try_from_env("JOBQ_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    // A second call (a library user who set up logging already) is not an error.
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
}

/// Lowers (or, as root, raises) the scheduling priority of every thread of this process; threads
/// and programs started later inherit it. Linux keeps a nice value per thread, so setting it for the
/// process alone would leave the runtime's worker threads untouched.
fn set_nice(n: i32) -> anyhow::Result<()> {
    let mut threads: Vec<libc::id_t> = std::fs::read_dir("/proc/self/task")
        .map(|dir| dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    if threads.is_empty() {
        threads.push(0);
    }
    for tid in threads {
        // SAFETY: setpriority only changes scheduling attributes.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, n) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(jobq::Error::invalid(
                jobq::error::Input::Nice,
                format!("cannot set --nice {n}: {e} (values below the current one need root)"),
            )
            .into());
        }
    }
    Ok(())
}
