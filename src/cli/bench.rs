//! `jobq bench`: measures the configured store with the crate's bench harness (`src/bench/`) and prints
//! the figures with the conditions they were taken under: a table for people, `--output json` for
//! machines. Also home of the hidden `--producer` mode, the separate process that enqueues the
//! latency workload's jobs. Ctrl-C or SIGTERM stops the bench and still removes its queue.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use indicatif::ProgressBar;

use super::output::{print, print_json, stderr_is_terminal, table};
use super::{Context, OutputFormat, progress};
use crate::bench::{Bench, BenchError, BenchHandler, Plan, Progress, Report, Setup, Summary, Workload};
use jobq::job::UniqueMode;
use jobq::time::parse_duration;

/// Arguments of `jobq bench`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every run uses a queue of its own (jobq-bench-<random>) and removes it at the end, \
even after an error or Ctrl-C; no other queue's jobs are claimed, rescued or deleted.\n\
Measure release builds (cargo build --release) on a quiet machine; the report states the load.\n\n\
Examples:\n  jobq bench --url sqlite:///tmp/bench.db\n  \
jobq bench drain --processes 2 --url postgres://localhost/test\n  \
jobq bench latency --latency-jobs 1000 -o json"
)]
pub struct BenchArgs {
    /// Workloads to run
    #[arg(value_enum, value_name = "WORKLOAD", default_value = "all")]
    pub workloads: Vec<WorkloadArg>,

    /// Jobs worked off by the drain workload
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub jobs: u64,

    /// Jobs enqueued in bulk by the enqueue workload
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub bulk_jobs: u64,

    /// Jobs enqueued one at a time by the enqueue workload
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    pub single_jobs: u64,

    /// Producers enqueueing those one-at-a-time jobs at once, each awaiting its own calls (as
    /// concurrent web requests do)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub producers: u32,

    /// Jobs per call when enqueueing in bulk
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_size: u64,

    /// Handlers each worker runs at once [default: [worker] concurrency, or 8]
    // The brackets are --help text naming a config section, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, short = 'c', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: Option<u32>,

    /// Run drain and steady with N `jobq worker` processes instead of one worker inside the bench;
    /// with enqueue, N worker processes work the one-at-a-time jobs off while they are enqueued
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub processes: u32,

    /// Run each drain and steady job with this program (no arguments) instead of the builtin noop
    #[arg(long, value_name = "PROGRAM", conflicts_with = "persistent")]
    pub exec: Option<String>,

    /// Hand each drain and steady job to this program (no arguments) kept running, as a persistent
    /// handler, instead of the builtin noop
    #[arg(long, value_name = "PROGRAM")]
    pub persistent: Option<String>,

    /// With --persistent: jobs one copy of the program holds at once
    #[arg(long, value_name = "N", default_value_t = 8, requires = "persistent", value_parser = clap::value_parser!(u32).range(1..))]
    pub in_flight: u32,

    /// With --persistent: copies of the program each worker runs
    #[arg(long, value_name = "N", default_value_t = 1, requires = "persistent", value_parser = clap::value_parser!(u32).range(1..))]
    pub copies: u32,

    /// Jobs per second enqueued by the steady workload
    #[arg(long, value_name = "N", default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,

    /// How long the steady workload enqueues
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    pub duration: Duration,

    /// Jobs enqueued by the latency workload's producer process
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    pub latency_jobs: u32,

    /// Pause between two of the latency producer's jobs
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "20ms")]
    pub spacing: Duration,

    /// Give each one-at-a-time job a unique key in this mode: coalesce, replace, debounce or
    /// throttle (with --unique-window)
    #[arg(long, value_name = "MODE")]
    pub unique_mode: Option<String>,

    /// The debounce or throttle window of --unique-mode
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "unique_mode")]
    pub unique_window: Option<Duration>,

    /// How many keys the one-at-a-time jobs share, job i taking key i mod N [default: one per job]
    #[arg(long, value_name = "N", requires = "unique_mode")]
    pub unique_keys: Option<u64>,

    /// Internal: be the latency workload's producer process
    #[arg(long, hide = true, requires = "queue")]
    pub producer: bool,

    /// Internal: the producer's queue
    #[arg(long, hide = true, value_name = "QUEUE", requires = "producer")]
    pub queue: Option<String>,
}

/// A workload to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum WorkloadArg {
    /// Enqueue one at a time and in bulk
    Enqueue,
    /// Work off pre-enqueued jobs
    Drain,
    /// Enqueue at a steady rate while workers run
    Steady,
    /// Enqueue→start latency from a separate producer process
    Latency,
    /// All four, in this order
    All,
}

/// Runs `jobq bench`.
pub async fn run(ctx: &Context, args: BenchArgs) -> anyhow::Result<()> {
    if args.producer {
        let queue = args.queue.unwrap_or_default();
        let client = ctx.client().await?;
        crate::bench::produce(&client, &queue, args.latency_jobs, args.spacing).await?;
        return Ok(());
    }
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    let plan = plan(ctx, &args)?;
    let client = ctx.client().await?;
    let exe = std::env::current_exe().context("cannot find the jobq executable to start worker processes from")?;
    let bar = Arc::new(Bar::new(ctx.quiet));
    let bench = Bench::new(Setup {
        client,
        url: ctx.config.url.clone(),
        exe,
        settings: ctx.config.worker.clone(),
        handler: bench_handler(&args),
        progress: bar.clone(),
    });
    if !ctx.quiet && stderr_is_terminal() {
        eprintln!(
            "benchmarking {} in queue {} (removed afterwards)",
            ctx.config.url,
            bench.queue()
        );
    }
    let outcome = tokio::select! {
        report = bench.run(&plan) => report.map_err(bench_error),
        signal = interrupted() => Err(anyhow::anyhow!("bench stopped by {signal}; its queue was removed")),
    };
    bar.end();
    let finished = bench.finish().await.map_err(bench_error);
    let report = match (outcome, finished) {
        (Ok(report), Ok(_)) => report,
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
        (Err(e), Err(cleanup)) => {
            return Err(anyhow::anyhow!(
                "{e:#} (and removing the bench queue failed: {cleanup:#})"
            ));
        }
    };
    match format {
        OutputFormat::Json => print_json(&report),
        _ => print(&render(&report)),
    }
}

/// The plan the arguments ask for.
/// What the bench's jobs run: `--persistent`, `--exec`, or the builtin noop.
fn bench_handler(args: &BenchArgs) -> BenchHandler {
    match (&args.persistent, &args.exec) {
        (Some(program), _) => BenchHandler::Persistent {
            program: program.clone(),
            in_flight: args.in_flight,
            processes: args.copies,
        },
        (None, Some(program)) => BenchHandler::Exec(program.clone()),
        (None, None) => BenchHandler::Noop,
    }
}

fn plan(ctx: &Context, args: &BenchArgs) -> Result<Plan, jobq::Error> {
    let mut workloads: Vec<Workload> = Vec::new();
    for w in &args.workloads {
        match w {
            WorkloadArg::Enqueue => workloads.push(Workload::Enqueue),
            WorkloadArg::Drain => workloads.push(Workload::Drain),
            WorkloadArg::Steady => workloads.push(Workload::Steady),
            WorkloadArg::Latency => workloads.push(Workload::Latency),
            WorkloadArg::All => workloads.extend(Workload::ALL),
        }
    }
    Ok(Plan {
        workloads,
        single_jobs: args.single_jobs,
        producers: args.producers,
        bulk_jobs: args.bulk_jobs,
        batch_size: usize::try_from(args.batch_size).unwrap_or(usize::MAX),
        drain_jobs: args.jobs,
        concurrency: args.concurrency.unwrap_or(ctx.config.worker.concurrency),
        processes: args.processes,
        rate: args.rate,
        duration: args.duration,
        latency_jobs: args.latency_jobs,
        spacing: args.spacing,
        unique: unique_plan(args)?,
    })
}

/// `--unique-mode` with its window and keys: the window goes to the mode that takes one.
fn unique_plan(args: &BenchArgs) -> Result<Option<(UniqueMode, u64)>, jobq::Error> {
    let Some(name) = args.unique_mode.as_deref() else {
        return Ok(None);
    };
    let (debounce, throttle) = match name {
        "debounce" => (args.unique_window, None),
        "throttle" => (None, args.unique_window),
        _ => (None, None),
    };
    let mode = UniqueMode::from_parts(jobq::job::UniqueModeParts {
        name: Some(name),
        debounce,
        throttle,
        ..Default::default()
    })?;
    Ok(Some((mode, args.unique_keys.unwrap_or(args.single_jobs.max(1)))))
}

/// A library error as `main` should see it: a `jobq::Error` keeps its exit code.
fn bench_error(e: BenchError) -> anyhow::Error {
    match e {
        BenchError::Jobq(e) => e.into(),
        other => other.into(),
    }
}

/// Resolves on Ctrl-C or SIGTERM, naming it.
async fn interrupted() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "Ctrl-C",
        _ = term.recv() => "SIGTERM",
    }
}

/// The report for people: the conditions, then one row per measurement.
fn render(r: &Report) -> String {
    let settings: Vec<String> = r.store.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let load = |l: &[f64]| l.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(" ");
    let mut out = format!(
        "jobq {} ({} build) on {}: {}, {}\nmachine: {}, {} cores, load {} before, {} after; {}\nqueue {} (removed), handler {}\n\n",
        r.jobq.version,
        r.jobq.profile,
        r.store.kind,
        r.store.version,
        settings.join(", "),
        r.machine.cpu,
        r.machine.cores,
        load(&r.machine.load_before),
        load(&r.machine.load_after),
        r.date,
        r.queue,
        r.handler
    );
    let mut t = table(&["WORKLOAD", "WHAT", "JOBS", "SECONDS", "JOBS/S", "DETAIL"]);
    if let Some(e) = &r.enqueue {
        let per_call = |c: Option<Summary>| c.map(|c| format!("per call p50 {} ms, p99 {} ms", ms(c.p50), ms(c.p99)));
        if let Some(s) = &e.single {
            let mut what = match s.producers {
                1 => "one at a time".to_string(),
                n => format!("one at a time, {n} producers"),
            };
            if let Some(u) = &s.unique {
                what.push_str(&format!(", unique {} on {} keys: {} jobs", u.mode, u.keys, u.jobs));
            }
            t.add_row(row(
                "enqueue",
                &what,
                s.jobs,
                Some(s.seconds),
                Some(s.jobs_per_second),
                per_call(s.call_ms),
            ));
            if let Some(b) = &s.beside {
                let what = format!("…and worked off by {}", workers(&b.workers));
                let detail = Some("first call to the last job's end".to_string());
                t.add_row(row(
                    "enqueue",
                    &what,
                    s.jobs,
                    Some(b.seconds),
                    Some(b.jobs_per_second),
                    detail,
                ));
            }
        }
        if let Some(g) = &e.get {
            let row = row(
                "get",
                "one at a time, by id",
                g.jobs,
                Some(g.seconds),
                Some(g.jobs_per_second),
                per_call(g.call_ms),
            );
            t.add_row(row);
        }
        if let Some(b) = &e.bulk {
            let what = format!("bulk, {} per call", thousands(b.batch_size as f64));
            t.add_row(row(
                "enqueue",
                &what,
                b.jobs,
                Some(b.seconds),
                Some(b.jobs_per_second),
                None,
            ));
        }
    }
    if let Some(d) = &r.drain {
        let mut detail = format!("first start to last finish; wall {:.2} s", d.wall_seconds);
        if let Some(rss) = d.worker_peak_rss_mib {
            detail.push_str(&format!("; worker peak RSS {rss:.1} MiB"));
        }
        let what = workers(&d.workers);
        t.add_row(row(
            "drain",
            &what,
            d.jobs,
            Some(d.seconds),
            Some(d.jobs_per_second),
            Some(detail),
        ));
    }
    if let Some(s) = &r.steady {
        let what = format!(
            "{}/s target; {}",
            thousands(f64::from(s.target_rate)),
            workers(&s.workers)
        );
        let mut detail = format!(
            "finished {}/s; pending min/avg/max {}/{:.1}/{}",
            thousands(s.finish_rate),
            s.depth.min,
            s.depth.avg,
            s.depth.max
        );
        if let Some(w) = s.wait_ms {
            detail.push_str(&format!("; wait p50 {} ms, p99 {} ms", ms(w.p50), ms(w.p99)));
        }
        t.add_row(row(
            "steady",
            &what,
            s.enqueued,
            Some(s.seconds),
            Some(s.enqueue_rate),
            Some(detail),
        ));
    }
    if let Some(l) = &r.latency {
        let what = format!("{} ms apart, producer process", ms(l.spacing_ms));
        let detail = l.ms.map(|s| {
            format!(
                "enqueue→start p50 {} ms, p99 {} ms, max {} ms (poll {} ms)",
                ms(s.p50),
                ms(s.p99),
                ms(s.max),
                l.workers.poll_interval_ms
            )
        });
        t.add_row(row("latency", &what, u64::from(l.jobs), None, None, detail));
    }
    out.push_str(&t.to_string());
    out
}

fn row(
    workload: &str,
    what: &str,
    jobs: u64,
    seconds: Option<f64>,
    rate: Option<f64>,
    detail: Option<String>,
) -> Vec<String> {
    vec![
        workload.to_string(),
        what.to_string(),
        thousands(jobs as f64),
        seconds.map(|s| format!("{s:.2}")).unwrap_or_else(|| "-".into()),
        rate.map(thousands).unwrap_or_else(|| "-".into()),
        detail.unwrap_or_default(),
    ]
}

/// `1 in-process worker ×8`, `2 worker processes ×8`.
fn workers(w: &crate::bench::WorkerSetup) -> String {
    if w.processes == 0 {
        format!("in-process worker, concurrency {}", w.concurrency)
    } else {
        format!("{} worker processes, concurrency {}", w.processes, w.concurrency)
    }
}

/// Milliseconds with two decimals below 10 ms, one below 100, none above.
fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A whole number with thousands separators: `25,000`.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The bench's progress as one bar on stderr (hidden off a terminal or with --quiet).
struct Bar {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Bar {
    fn new(quiet: bool) -> Bar {
        Bar {
            quiet,
            bar: Mutex::new(None),
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.bar.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Progress for Bar {
    fn begin(&self, what: &str, total: u64) {
        let bar = progress::counter(total, what, self.quiet);
        if let Some(old) = self.slot().replace(bar) {
            old.finish_and_clear();
        }
    }

    fn set(&self, done: u64) {
        if let Some(bar) = self.slot().as_ref() {
            bar.set_position(done);
        }
    }

    fn end(&self) {
        if let Some(bar) = self.slot().take() {
            bar.finish_and_clear();
        }
    }

    fn visible(&self) -> bool {
        !self.quiet && stderr_is_terminal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(25_000.0), "25,000");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
        assert_eq!(ms(1.234), "1.23");
        assert_eq!(ms(12.34), "12.3");
        assert_eq!(ms(123.4), "123");
    }

    #[test]
    fn all_expands_to_every_workload() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["jobq", "bench", "drain", "all"]).unwrap();
        let crate::cli::Command::Bench(args) = cli.command else {
            panic!("not bench")
        };
        assert_eq!(args.workloads, vec![WorkloadArg::Drain, WorkloadArg::All]);
        let cli = crate::cli::Cli::try_parse_from(["jobq", "bench"]).unwrap();
        let crate::cli::Command::Bench(args) = cli.command else {
            panic!("not bench")
        };
        assert_eq!(args.workloads, vec![WorkloadArg::All]);
    }
}
