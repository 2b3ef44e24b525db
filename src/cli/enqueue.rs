//! `jobq enqueue`: one job from arguments, or many from an NDJSON file with a progress bar.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::exit::Exit;
use super::lines::{in_parallel, read_text};
use super::output::{print, print_json};
use super::{Context, OutputFormat, progress};
use jobq::Error;
use jobq::error::{Input, InvalidInput};
use jobq::job::{DependOn, Dependency, JobId, JobSpec, Join, NewJob, TypeDefaults, UniqueMode, UniqueModeParts};
use jobq::store::{EnqueueOutcome, Enqueued};
use jobq::time::{parse_duration, parse_instant_str};

/// Jobs per store transaction when enqueueing a file.
const FILE_BATCH: usize = 10_000;

/// Arguments of `jobq enqueue`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  jobq enqueue mail.send '{\"to\":\"ana@example.com\"}'\n  jobq enqueue report.build @params.json --queue reports --delay 10m\n  jobq enqueue --file jobs.ndjson --type legacy.import"
)]
pub struct EnqueueArgs {
    /// Job type, e.g. mail.send
    #[arg(value_name = "TYPE", required_unless_present = "file")]
    pub job_type: Option<String>,

    /// Payload: JSON text, @FILE to read a file, or - for stdin [default: {}]
    #[arg(value_name = "PAYLOAD", allow_negative_numbers = true)]
    pub payload: Option<String>,

    /// Queue [default: default]
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,

    /// Priority; smaller runs first [default: 0]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub priority: Option<i32>,

    /// Run no sooner than this from now, e.g. 30s, 10m, 2h
    #[arg(long, value_name = "DURATION", conflicts_with = "at", allow_hyphen_values = true)]
    pub delay: Option<String>,

    /// Run no sooner than this time (RFC 3339 or Unix seconds)
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,

    /// Runs allowed, the first included [default: 5, or [retry] max_attempts]
    // The brackets are --help text naming a config section, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,

    /// Time-out for each run of this job, overriding its handler's, e.g. 30s
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub timeout: Option<String>,

    /// Never start the job once this long has passed, e.g. 10m: it ends expired instead [default:
    /// its type's expires_in, or never]
    #[arg(
        long,
        value_name = "DURATION",
        conflicts_with = "expires_at",
        allow_hyphen_values = true
    )]
    pub expires_in: Option<String>,

    /// Never start the job at or after this time (RFC 3339 or Unix seconds): it ends expired instead
    #[arg(long, value_name = "TIME")]
    pub expires_at: Option<String>,

    /// Meta entry (repeatable), e.g. --meta tenantId=42
    #[arg(long, value_name = "KEY=VALUE")]
    pub meta: Vec<String>,

    /// While a live job with this key is in the queue, return it instead of adding another
    #[arg(long, value_name = "KEY", conflicts_with = "file")]
    pub unique_key: Option<String>,

    /// What to do when a live job holds the unique key: coalesce (return it), replace (update it
    /// if it has not started), keep-last (replace, or wait behind it while it runs),
    /// cancel-running (keep-last, and cancel it while it runs), debounce or throttle (each with
    /// its window) [default: its type's unique_mode, or coalesce]
    #[arg(long, value_name = "MODE")]
    pub unique_mode: Option<String>,

    /// Debounce: replace the holder and put its run off to this long from now, e.g. 30s (implies
    /// --unique-mode debounce)
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub debounce: Option<String>,

    /// With --unique-mode replace or --debounce: what happens while the key's holder runs:
    /// coalesce (the default: the new job is dropped) or queue-behind (it waits for the running
    /// job to end; replace with queue-behind is keep-last)
    #[arg(long, value_name = "RULE")]
    pub unique_running: Option<String>,

    /// With --debounce: never put a job off longer than this from its first enqueue, e.g. 5m
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub max_wait: Option<String>,

    /// Throttle: hold the key this long after its job was created, finished or not, e.g. 1m;
    /// an enqueue in that window is dropped (implies --unique-mode throttle)
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub throttle: Option<String>,

    /// Job id [default: a new UUIDv7]
    #[arg(long, value_name = "ID", conflicts_with = "file")]
    pub id: Option<String>,

    /// Run after job ID has ended, and by RULE how: success (the default: cancelled if it ends
    /// otherwise), finish (however it ends) or failure (only if it ends dead or discarded); repeatable
    #[arg(long, value_name = "ID[:RULE]", conflicts_with = "file")]
    pub after: Vec<String>,

    /// With several --after: all (run once every one is met, the default) or any (run at the first
    /// met; cancelled only once every one has broken)
    #[arg(long, value_name = "JOIN", requires = "after", value_parser = parse_join)]
    pub join: Option<Join>,

    /// Wait for the job to finish; the exit code tells how (0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired)
    #[arg(long, conflicts_with = "file")]
    pub wait: bool,

    /// Enqueue every line of an NDJSON file (- for stdin) in bulk
    #[arg(long, value_name = "FILE", conflicts_with_all = ["job_type", "payload"])]
    pub file: Option<PathBuf>,

    /// With --file: the type given to lines that are not jobq envelopes (their whole value becomes the payload)
    #[arg(long = "type", value_name = "TYPE", requires = "file")]
    pub default_type: Option<String>,
}

/// Runs `jobq enqueue`; with `--wait`, exits with how the job ended.
pub async fn run(ctx: &Context, args: EnqueueArgs) -> anyhow::Result<Exit> {
    let format = ctx.format_among(OutputFormat::Table, &[OutputFormat::Table, OutputFormat::Json])?;
    // clap waives `requires = "file"` when TYPE is given (TYPE conflicts with --file), so check here.
    if args.default_type.is_some() && args.file.is_none() {
        return Err(Error::invalid(
            Input::JobType,
            "--type applies only to the lines of --file; give one job's type as the first argument",
        )
        .into());
    }
    let mut defaults = Defaults::from_args(&args)?;
    defaults.types = ctx.config.type_defaults();
    match args.file.clone() {
        Some(file) => enqueue_file(ctx, &args, &defaults, file, format)
            .await
            .map(|()| Exit::Success),
        None => enqueue_one(ctx, args, &defaults, format).await,
    }
}

/// `--join all|any`.
fn parse_join(text: &str) -> Result<Join, String> {
    text.parse()
}

/// `--after ID[:RULE]`: the rule is the text after the last colon when it names one (ids may hold
/// colons themselves), `success` otherwise.
fn parse_after(text: &str) -> Result<Dependency, Error> {
    let (id, on) = match text.rsplit_once(':') {
        Some((id, rule)) if !id.is_empty() => match rule.parse::<DependOn>() {
            Ok(on) => (id, on),
            Err(_) => (text, DependOn::Success),
        },
        _ => (text, DependOn::Success),
    };
    let id = JobId::parse(id).map_err(|e| Error::invalid(Input::After, format!("--after {text}: {e}")))?;
    Ok(Dependency::new(id, on))
}

/// Flag values that apply to every job of the call (to file lines that do not set them).
struct Defaults {
    queue: Option<String>,
    priority: Option<i32>,
    delay: Option<std::time::Duration>,
    at: Option<jobq::UnixMillis>,
    max_attempts: Option<u32>,
    timeout_ms: Option<u64>,
    expires_in: Option<std::time::Duration>,
    expires_at: Option<jobq::UnixMillis>,
    meta: BTreeMap<String, String>,
    /// `--unique-mode` and its windows.
    unique_mode: Option<UniqueMode>,
    /// What the configured handlers give a job of their type that does not say, after the flags.
    types: TypeDefaults,
}

impl Defaults {
    fn from_args(args: &EnqueueArgs) -> Result<Defaults, Error> {
        let invalid = |input: Input, flag: &str, e: String| Error::invalid(input, format!("{flag}: {e}"));
        let meta = parse_meta(&args.meta)?;
        let timeout = args
            .timeout
            .as_deref()
            .map(parse_duration)
            .transpose()
            .map_err(|e| invalid(Input::Timeout, "--timeout", e))?;
        if timeout.is_some_and(|t| t.as_millis() == 0) {
            return Err(invalid(Input::Timeout, "--timeout", "must be at least 1ms".into()));
        }
        let window = |flag: &str, text: &Option<String>| {
            text.as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| invalid(Input::UniqueMode, flag, e))
        };
        let names_mode = args.unique_mode.is_some()
            || args.debounce.is_some()
            || args.max_wait.is_some()
            || args.throttle.is_some()
            || args.unique_running.is_some();
        let unique_mode = if names_mode {
            Some(
                UniqueMode::from_parts(UniqueModeParts {
                    name: args.unique_mode.as_deref(),
                    debounce: window("--debounce", &args.debounce)?,
                    max_wait: window("--max-wait", &args.max_wait)?,
                    throttle: window("--throttle", &args.throttle)?,
                    running: args.unique_running.as_deref(),
                })
                .map_err(Error::from)?,
            )
        } else {
            None
        };
        Ok(Defaults {
            queue: args.queue.clone(),
            priority: args.priority,
            delay: args
                .delay
                .as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| invalid(Input::RunAt, "--delay", e))?,
            at: args
                .at
                .as_deref()
                .map(parse_instant_str)
                .transpose()
                .map_err(|e| invalid(Input::RunAt, "--at", e))?,
            max_attempts: args.max_attempts,
            timeout_ms: timeout.map(|t| t.as_millis() as u64),
            expires_in: args
                .expires_in
                .as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| invalid(Input::Expiry, "--expires-in", e))?,
            expires_at: args
                .expires_at
                .as_deref()
                .map(parse_instant_str)
                .transpose()
                .map_err(|e| invalid(Input::Expiry, "--expires-at", e))?,
            meta,
            unique_mode,
            types: TypeDefaults::default(),
        })
    }

    fn apply(&self, mut spec: JobSpec, raw: Option<&RawValue>) -> Result<JobSpec, InvalidInput> {
        spec.queue = spec.queue.or_else(|| self.queue.clone());
        spec.priority = spec.priority.or(self.priority);
        if spec.run_at.is_none() {
            spec.run_at = self.at;
            spec.delay = spec.delay.or(self.delay);
        }
        spec.max_attempts = spec.max_attempts.or(self.max_attempts);
        spec.timeout_ms = spec.timeout_ms.or(self.timeout_ms);
        if spec.expires_at.is_none() && spec.expires_in.is_none() {
            spec.expires_at = self.expires_at;
            spec.expires_in = self.expires_in;
        }
        for (k, v) in &self.meta {
            spec.meta.entry(k.clone()).or_insert_with(|| v.clone());
        }
        // A file's lines take the mode when they have a key (one job takes it in `enqueue_one`).
        if spec.unique_key.is_some() {
            spec.unique_mode = spec.unique_mode.or(self.unique_mode);
        }
        // Last: a type's unique key is made from the job as the flags leave it.
        self.types.apply(&mut spec, raw)?;
        Ok(spec)
    }
}

async fn enqueue_one(
    ctx: &Context,
    args: EnqueueArgs,
    defaults: &Defaults,
    format: OutputFormat,
) -> anyhow::Result<Exit> {
    let payload = read_payload(args.payload.as_deref())?;
    let mut spec = JobSpec::new(args.job_type.clone().unwrap_or_default(), payload);
    spec.id = args.id.clone();
    spec.unique_key = args.unique_key.clone();
    spec.unique_mode = defaults.unique_mode;
    spec.after = args.after.iter().map(|a| parse_after(a)).collect::<Result<_, _>>()?;
    spec.join = args.join.unwrap_or_default();
    let spec = defaults.apply(spec, None)?;
    // Validate before connecting: a refused call never touches the store.
    NewJob::check(spec.clone(), jobq::UnixMillis::now(), &ctx.config.limits).map_err(Error::from)?;
    let client = ctx.client().await?;
    let enqueued = client.enqueue(spec).await?;
    match format {
        OutputFormat::Json => print_json(&enqueued)?,
        _ => {
            print(enqueued.id.as_str())?;
            if !ctx.quiet {
                match enqueued.outcome {
                    EnqueueOutcome::Created => {}
                    EnqueueOutcome::Coalesced => {
                        eprintln!("note: a live job with this unique key exists; returned it instead of adding another")
                    }
                    EnqueueOutcome::Duplicate => {
                        eprintln!("note: a job with this id exists already; left it unchanged")
                    }
                    EnqueueOutcome::Replaced => {
                        eprintln!("note: the job holding this unique key had not started; it takes this job's fields")
                    }
                    EnqueueOutcome::Debounced => {
                        eprintln!("note: the job holding this unique key takes this job's fields and runs later")
                    }
                    EnqueueOutcome::Throttled => {
                        eprintln!("note: this unique key's throttle window is not over; returned the job holding it")
                    }
                    EnqueueOutcome::QueuedBehind => {
                        eprintln!("note: the job holding this unique key is running; this job starts once it has ended")
                    }
                    EnqueueOutcome::CancelledPrevious => {
                        eprintln!(
                            "note: the running job holding this unique key is being cancelled; this job starts once it has stopped"
                        )
                    }
                }
            }
        }
    }
    if args.wait {
        return super::wait::wait_for(ctx, &client, &enqueued.id).await;
    }
    Ok(Exit::Success)
}

/// Reads and validates every line of an NDJSON text, on all cores: the text is cut into one run of
/// whole lines per core. The first bad line (by line number) refuses the lot. This runs before the
/// store is opened, so a bad file never touches it: the jobs' default times are the wall clock's.
fn parse_lines(
    text: &str,
    name: &str,
    default_type: Option<&str>,
    defaults: &Defaults,
    limits: &jobq::job::Limits,
) -> Result<Vec<NewJob>, Error> {
    let now = jobq::UnixMillis::now();
    let parse_part = |first_line: usize, part: &str| -> Result<Vec<NewJob>, Error> {
        let mut jobs = Vec::with_capacity(part.len() / 100);
        for (n, line) in part.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |e: InvalidInput| Error::from(e.at(format_args!("{name}:{}", first_line + n + 1)));
            let (spec, raw) = JobSpec::from_json_line_raw(line, default_type).map_err(at)?;
            let spec = defaults.apply(spec, raw.as_deref()).map_err(at)?;
            jobs.push(NewJob::check_with(spec, raw, now, limits).map_err(at)?);
        }
        Ok(jobs)
    };
    let results = in_parallel(text, name, parse_part);
    let mut jobs = Vec::new();
    for part in results {
        jobs.extend(part?);
    }
    Ok(jobs)
}

/// `--meta KEY=VALUE` entries as a map.
pub(crate) fn parse_meta(entries: &[String]) -> Result<BTreeMap<String, String>, Error> {
    let mut meta = BTreeMap::new();
    for entry in entries {
        let Some((k, v)) = entry.split_once('=') else {
            return Err(Error::invalid(
                Input::Meta,
                format!("--meta {entry:?}: expected KEY=VALUE"),
            ));
        };
        if k.is_empty() {
            return Err(Error::invalid(
                Input::Meta,
                format!("--meta {entry:?}: the key is empty"),
            ));
        }
        meta.insert(k.to_string(), v.to_string());
    }
    Ok(meta)
}

pub(crate) fn read_payload(arg: Option<&str>) -> Result<Value, Error> {
    let (text, source) = match arg {
        None => return Ok(json!({})),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::invalid_because(Input::Payload, "cannot read the payload from stdin", e))?;
            (text, "stdin".to_string())
        }
        Some(arg) if arg.starts_with('@') => {
            let path = &arg[1..];
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::invalid_because(Input::Payload, format!("cannot read payload file {path}"), e))?;
            (text, path.to_string())
        }
        Some(text) => (text.to_string(), "the payload argument".to_string()),
    };
    serde_json::from_str(&text).map_err(|e| {
        Error::invalid(
            Input::Payload,
            format!("invalid JSON payload in {source}: {e} (a string needs quotes, e.g. '\"hello\"')"),
        )
    })
}

async fn enqueue_file(
    ctx: &Context,
    args: &EnqueueArgs,
    defaults: &Defaults,
    file: PathBuf,
    format: OutputFormat,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let name = file.display().to_string();
    let text = read_text(&file)?;
    if let Some(t) = &args.default_type {
        jobq::job::validate_type(t).map_err(|e| Error::from(e.at("--type")))?;
    }
    // Every line is read and validated before anything is written: a bad line refuses the whole file.
    let jobs = parse_lines(&text, &name, args.default_type.as_deref(), defaults, &ctx.config.limits)?;
    drop(text);
    let client = ctx.client().await?;
    let bar = progress::counter(jobs.len() as u64, "enqueueing", ctx.quiet);
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    for chunk in jobs.chunks(FILE_BATCH) {
        let created = counts.get("created").copied().unwrap_or(0);
        let done: Vec<Enqueued> = client.enqueue_validated(chunk).await.map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "{created} jobs of {name} were enqueued before this failure; enqueueing the file again skips jobs whose ids exist"
            ))
        })?;
        for e in &done {
            *counts.entry(e.outcome.as_str()).or_default() += 1;
        }
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    let count = |outcome: EnqueueOutcome| counts.get(outcome.as_str()).copied().unwrap_or(0);
    if format == OutputFormat::Json {
        // Every outcome, zero or not, so that a script reads the same keys whatever happened.
        let all = [
            EnqueueOutcome::Created,
            EnqueueOutcome::Coalesced,
            EnqueueOutcome::Duplicate,
            EnqueueOutcome::Replaced,
            EnqueueOutcome::Debounced,
            EnqueueOutcome::Throttled,
            EnqueueOutcome::QueuedBehind,
            EnqueueOutcome::CancelledPrevious,
        ];
        let answer: serde_json::Map<String, serde_json::Value> =
            all.iter().map(|o| (o.as_str().to_string(), json!(count(*o)))).collect();
        print_json(&answer)?;
    } else if !ctx.quiet {
        let rate = (jobs.len() as f64 / elapsed.as_secs_f64().max(1e-9)).round();
        let mut line = format!(
            "enqueued {} from {name} in {:.2}s ({rate}/s)",
            super::output::jobs(count(EnqueueOutcome::Created), ""),
            elapsed.as_secs_f64()
        );
        let others = [
            (EnqueueOutcome::Coalesced, "coalesced into live jobs"),
            (EnqueueOutcome::Duplicate, "already present"),
            (EnqueueOutcome::Replaced, "replaced jobs not yet started"),
            (EnqueueOutcome::Debounced, "debounced"),
            (EnqueueOutcome::Throttled, "throttled"),
            (EnqueueOutcome::QueuedBehind, "queued behind running jobs"),
            (
                EnqueueOutcome::CancelledPrevious,
                "queued behind running jobs they cancel",
            ),
        ];
        for (outcome, said) in others {
            if count(outcome) > 0 {
                line.push_str(&format!("; {} {said}", count(outcome)));
            }
        }
        eprintln!("{line}");
    }
    Ok(())
}
