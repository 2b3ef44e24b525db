//! The command line: clap definitions and dispatch. A thin layer over the library: each subcommand
//! turns its arguments into validated library values once, calls `Client` (or `Worker`), and formats.
//! clap types stop here.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};

use crate::config::{Config, Overrides};
use exit::Exit;
use jobq::client::Client;
use jobq::store::{DynStore, StoreUrl, Usage};

pub mod autoscale;
pub mod batch;
pub mod bench;
pub mod bridge;
pub mod cancel;
pub mod cleanup;
pub mod confirm;
pub mod copy;
pub mod delete;
pub mod doctor;
pub mod emit;
pub mod enqueue;
pub mod exit;
pub mod export;
pub mod filter;
pub mod generate;
pub mod graph;
pub mod import;
pub mod inbox;
pub mod init;
pub mod lines;
pub mod list;
pub mod migrate;
pub mod output;
pub mod pause;
pub mod progress;
pub mod queues;
pub mod replay_dead;
pub mod resolve;
pub mod retry;
pub mod schedules;
#[cfg(feature = "serve")]
pub mod serve;
pub mod show;
pub mod stats;
pub mod wait;
pub mod worker;
pub mod workers;

/// The help heading of the options every subcommand takes, so they do not interleave with its own.
const GLOBAL: &str = "Global options";

/// A durable background-job queue for the shell: enqueue work, run workers, and see, cancel, resolve,
/// retry, replay, delete and clean up jobs. Stores: SQLite (default), PostgreSQL, MySQL/MariaDB, Redis.
#[derive(Debug, Parser)]
#[command(name = "jobq", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user's data directory]
    #[arg(long, global = true, value_name = "URL", help_heading = GLOBAL)]
    pub url: Option<String>,

    /// Config file (TOML) [default: ./jobq.toml, then the user config directory]
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,

    /// Output format
    #[arg(
        long,
        short = 'o',
        global = true,
        value_enum,
        value_name = "FORMAT",
        env = "JOBQ_OUTPUT",
        help_heading = GLOBAL
    )]
    pub output: Option<OutputFormat>,

    /// Print only errors
    #[arg(long, short = 'q', global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,

    /// Print more (repeat for debug logs)
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,

    /// The subcommand
    #[command(subcommand)]
    pub command: Command,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum OutputFormat {
    /// Tables and sentences for people
    Table,
    /// One JSON document
    Json,
    /// One JSON object per line (list)
    Ndjson,
    /// Prometheus text exposition format (stats)
    Prometheus,
}

/// jobq's subcommands.
#[derive(Debug, Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Write a commented jobq.toml here to start from
    Init(init::InitArgs),
    /// Put a job (or a file of jobs) on a queue
    Enqueue(Box<enqueue::EnqueueArgs>),
    /// Enqueue a graph of jobs that wait for each other, all or none, from a JSON document
    Flow(graph::FlowArgs),
    /// Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch
    Batch(batch::BatchArgs),
    /// Run jobs: claim, run handlers, retry, heartbeat, rescue
    Worker(worker::WorkerArgs),
    /// Counts by queue and status
    Stats(stats::StatsArgs),
    /// List jobs, newest first
    List(list::ListArgs),
    /// Show one job in full: payload, meta, errors, times
    Show(show::ShowArgs),
    /// Wait for a job to finish, with a progress bar; the exit code tells the outcome
    Wait(wait::WaitArgs),
    /// Cancel pending, running or waiting jobs
    Cancel(cancel::CancelArgs),
    /// Finish a waiting job from outside: succeed, fail, retry or discard it
    Resolve(resolve::ResolveArgs),
    /// Put finished jobs of any outcome back on their queue (attempts reset, errors kept)
    Retry(retry::RetryArgs),
    /// Delete jobs for good, by id or by filter
    Delete(delete::DeleteArgs),
    /// Put dead jobs back on their queue (attempts reset, errors kept)
    #[command(visible_alias = "replay")]
    ReplayDead(replay_dead::ReplayDeadArgs),
    /// Delete finished jobs
    Cleanup(cleanup::CleanupArgs),
    /// Write every job that matches, whole (state included), as NDJSON for `import`
    Export(export::ExportArgs),
    /// Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)
    Import(import::ImportArgs),
    /// Copy (or move) every job that matches, whole, to another store
    Copy(copy::CopyArgs),
    /// Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored
    Bridge(bridge::BridgeArgs),
    /// List the workers that are running
    Workers(workers::WorkersArgs),
    /// Each queue with its counts, pauses and limits; each type with a limit or a block
    Queues(queues::QueuesArgs),
    /// Stop starting a queue's jobs (or one type's) on every worker; enqueueing goes on
    Pause(pause::PauseArgs),
    /// Start a paused queue's (or type's) jobs again
    Resume(pause::PauseArgs),
    /// Show, trigger, pause and resume the configured schedules
    Schedules(schedules::SchedulesArgs),
    /// Emit an event: enqueue the jobs the config subscribes to it, all or none
    Emit(emit::EmitArgs),
    /// Serve the HTTP admin API, /metrics and /healthz
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// List the Redis inbox items that could not become jobs
    Inbox(inbox::InboxArgs),
    /// Create or upgrade the store's schema
    Migrate(migrate::MigrateArgs),
    /// Find what is wrong with the store and its jobs, and what to do about it
    Doctor(doctor::DoctorArgs),
    /// Work out how many workers a queue needs and hand the number to a program, or print it
    Autoscale(autoscale::AutoscaleArgs),
    /// Measure this store's throughput and latency on a throwaway queue
    Bench(bench::BenchArgs),
    /// Print shell completions
    Completions(generate::CompletionsArgs),
    /// Print man pages (roff) into a folder, or jobq(1) on stdout
    Man(generate::ManArgs),
}

impl Command {
    /// Whether the command runs work in parallel (handlers, in-process bench workers, the requests
    /// `serve` answers) and so wants a runtime thread per core. The others are a few store round
    /// trips: one thread starts and stops faster, which is most of a one-shot command's time.
    pub fn wants_threads(&self) -> bool {
        // A copy reads one store while it writes the other, each decoding or encoding its jobs.
        self.pools() || matches!(self, Command::Copy(_))
    }

    /// The commands that run calls at once.
    fn pools(&self) -> bool {
        matches!(self, Command::Worker(_) | Command::Bench(_) | Command::Bridge(_)) || self.serves()
    }

    /// `jobq serve`, in a build that has it.
    fn serves(&self) -> bool {
        #[cfg(feature = "serve")]
        return matches!(self, Command::Serve(_));
        #[cfg(not(feature = "serve"))]
        false
    }

    /// How the command uses the store's connections: the same commands run calls at once and want a
    /// pool (`serve`'s one that keeps little while idle); the others make a few calls in turn and
    /// exit, on one connection.
    pub fn store_usage(&self) -> Usage {
        match self {
            _ if self.serves() => Usage::Serving,
            _ if self.pools() => Usage::Pooled,
            _ => Usage::OneShot,
        }
    }
}

/// What every subcommand gets: the resolved configuration and global flags.
#[derive(Debug)]
pub struct Context {
    /// Resolved configuration.
    pub config: Config,
    /// `--output`, if given.
    pub output: Option<OutputFormat>,
    /// `-q`.
    pub quiet: bool,
    /// `-v` count.
    pub verbose: u8,
    /// How the subcommand uses the store's connections.
    pub usage: Usage,
    /// Every store the command opened, closed when it ends (see [`Context::close_stores`]).
    opened: std::sync::Mutex<Vec<DynStore>>,
}

impl Context {
    /// Opens the configured store (see [`Context::connect`]) and brings the schema up to date unless
    /// `auto_migrate = false`.
    pub async fn client(&self) -> anyhow::Result<Client> {
        let client = self.connect().await?;
        if self.config.auto_migrate {
            client.migrate().await?;
        }
        Ok(client)
    }

    /// Opens the configured store, creating the default database's folder on first use, and leaves
    /// its schema as it is.
    pub async fn connect(&self) -> anyhow::Result<Client> {
        if self.config.uses_default_database()
            && let Some(dir) = self.config.url.sqlite_path().parent()
        {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the default database folder {}", dir.display()))?;
        }
        let store = self.open(&self.config.url, self.usage).await?;
        Ok(Client::new(store).with_limits(self.config.limits))
    }

    /// Opens the store `url` names (the configured one, or another a command writes to) and keeps it
    /// to close when the command ends.
    pub async fn open(&self, url: &StoreUrl, usage: Usage) -> anyhow::Result<DynStore> {
        let store = jobq::store::connect_for(url, usage).await.map_err(jobq::Error::from)?;
        self.opened.lock().expect("opened stores").push(store.clone());
        Ok(store)
    }

    /// Closes every store the command opened, so that a server sees each connection end with its
    /// goodbye rather than torn off by the process's exit (see [`jobq::store::Store::close`]).
    async fn close_stores(&self) {
        let opened = std::mem::take(&mut *self.opened.lock().expect("opened stores"));
        for store in opened {
            store.close().await;
        }
    }

    /// The output format, or `default` when none was asked for.
    pub fn format(&self, default: OutputFormat) -> OutputFormat {
        self.output.unwrap_or(default)
    }

    /// Refuses an output format this subcommand cannot print.
    pub fn format_among(&self, default: OutputFormat, allowed: &[OutputFormat]) -> anyhow::Result<OutputFormat> {
        let f = self.format(default);
        if allowed.contains(&f) {
            Ok(f)
        } else {
            let names: Vec<String> = allowed.iter().map(|a| format!("{a:?}").to_lowercase()).collect();
            Err(jobq::Error::invalid(
                jobq::error::Input::OutputFormat,
                format!(
                    "--output {} is not available here (expected {})",
                    format!("{f:?}").to_lowercase(),
                    names.join(", ")
                ),
            )
            .into())
        }
    }
}

/// Runs a parsed command line; the exit code says how it went (for `wait` and `enqueue --wait`, how
/// the job ended).
pub async fn run(cli: Cli) -> anyhow::Result<Exit> {
    // Generation needs no configuration or store.
    match cli.command {
        Command::Completions(args) => return generate::completions(args).map(|()| Exit::Success),
        Command::Man(args) => return generate::man(args).map(|()| Exit::Success),
        // A config file that is not there yet, or is broken, is what `init` is for.
        Command::Init(args) => return init::run(args),
        _ => {}
    }
    let config = Config::load(&Overrides {
        url: cli.url.clone(),
        config: cli.config.clone(),
    })?;
    let ctx = Context {
        config,
        output: cli.output,
        quiet: cli.quiet,
        verbose: cli.verbose,
        usage: cli.command.store_usage(),
        opened: Default::default(),
    };
    let exit = run_command(&ctx, cli.command).await;
    ctx.close_stores().await;
    exit
}

/// Runs a command that works on a store (see [`run`]).
async fn run_command(ctx: &Context, command: Command) -> anyhow::Result<Exit> {
    let done = match command {
        // These two tell how the job they waited for ended.
        Command::Enqueue(args) => return enqueue::run(ctx, *args).await,
        Command::Wait(args) => return wait::run(ctx, args).await,
        // Its exit code says whether anything was found.
        Command::Doctor(args) => return doctor::run(ctx, args).await,
        Command::Worker(args) => worker::run(ctx, args).await,
        Command::Stats(args) => stats::run(ctx, args).await,
        Command::List(args) => list::run(ctx, args).await,
        Command::Show(args) => show::run(ctx, args).await,
        Command::Cancel(args) => cancel::run(ctx, args).await,
        Command::Resolve(args) => resolve::run(ctx, args).await,
        Command::Retry(args) => retry::run(ctx, args).await,
        Command::Delete(args) => delete::run(ctx, args).await,
        Command::ReplayDead(args) => replay_dead::run(ctx, args).await,
        Command::Cleanup(args) => cleanup::run(ctx, args).await,
        Command::Export(args) => export::run(ctx, args).await,
        Command::Import(args) => import::run(ctx, args).await,
        Command::Copy(args) => copy::run(ctx, args).await,
        Command::Bridge(args) => bridge::run(ctx, args).await,
        Command::Inbox(args) => inbox::run(ctx, args).await,
        Command::Workers(args) => workers::run(ctx, args).await,
        Command::Queues(args) => queues::run(ctx, args).await,
        Command::Pause(args) => pause::run(ctx, args, true).await,
        Command::Resume(args) => pause::run(ctx, args, false).await,
        Command::Schedules(args) => schedules::run(ctx, args).await,
        Command::Emit(args) => emit::run(ctx, args).await,
        Command::Flow(args) => graph::run(ctx, args).await,
        Command::Batch(args) => batch::run(ctx, args).await,
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(ctx, args).await,
        Command::Migrate(args) => migrate::run(ctx, args).await,
        Command::Bench(args) => bench::run(ctx, args).await,
        Command::Autoscale(args) => autoscale::run(ctx, args).await,
        Command::Completions(_) | Command::Man(_) | Command::Init(_) => unreachable!("handled above"),
    };
    done.map(|()| Exit::Success)
}
