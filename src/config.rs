//! Configuration: the TOML file of DESIGN §4, `JOBQ_*` environment variables and command-line flags,
//! merged in one place with one precedence: flags > environment > file > defaults.
//!
//! Relative paths in the file (a `sqlite://` URL, an exec handler's program) resolve against the
//! file's folder, so a config works the same from any working directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use jobq::error::{Error, Result};
use jobq::events::Subscriptions;
use jobq::job::{DEFAULT_MAX_PAYLOAD_BYTES, JobStatus, Limits};
use jobq::retry::RetryPolicy;
use jobq::schedule::Schedule;
use jobq::store::StoreUrl;
use jobq::time::parse_duration;

mod flow;
mod handler;
mod handler_flag;
mod serve;
mod timed;

pub use handler::HandlerFile;
use handler::handler_config;
pub use handler_flag::HandlerFlag;
use jobq::doctor::Doctor;
use jobq::handler::HandlerSpec;
use jobq::worker::{Reload, WorkerBuilder, WorkerSettings};

pub use flow::QueueFile;
pub use serve::{DEFAULT_LISTEN, Role, ServeFile, ServeSettings, TokenFile, TokenSpec, parse_listen};
pub use timed::{EventFile, ScheduleFile, SubscriberFile};
use timed::{event_config, schedule_config};

/// The file as written, every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Store URL.
    pub url: Option<String>,
    /// Payload size limit in bytes.
    pub max_payload_bytes: Option<usize>,
    /// Migrate automatically on connect (default true).
    pub auto_migrate: Option<bool>,
    /// Redis inbox: the job type a pushed item that is not an envelope becomes (otherwise it is
    /// rejected). Passed to the store as the URL option `inbox_default_type` unless the URL sets it.
    pub inbox_default_type: Option<String>,
    /// Default retry policy.
    #[serde(default)]
    pub retry: RetryFile,
    /// Worker settings.
    #[serde(default)]
    pub worker: WorkerFile,
    /// `[retention]`: how long finished jobs of each status are kept (over `[worker] retention`).
    #[serde(default)]
    pub retention: RetentionFile,
    /// Handlers by job type (`*` for every other type).
    #[serde(default)]
    pub handlers: BTreeMap<String, HandlerFile>,
    /// Schedules by name.
    #[serde(default)]
    pub schedules: BTreeMap<String, ScheduleFile>,
    /// Events by name: the jobs each becomes.
    #[serde(default)]
    pub events: BTreeMap<String, EventFile>,
    /// `[queues.name]`: cluster-wide limits per queue.
    #[serde(default)]
    pub queues: BTreeMap<String, QueueFile>,
    /// `[serve]`: where `jobq serve` listens and the tokens it accepts.
    #[serde(default)]
    pub serve: ServeFile,
}

/// `[retry]` and the retry keys of a handler.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// Runs allowed, the first included.
    pub max_attempts: Option<u32>,
    /// e.g. `1s`.
    pub base_delay: Option<String>,
    /// e.g. 2.0.
    pub multiplier: Option<f64>,
    /// e.g. `5m`.
    pub max_delay: Option<String>,
    /// e.g. 0.2.
    pub jitter: Option<f64>,
}

/// `[worker]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerFile {
    /// Queues to serve.
    pub queues: Option<Vec<String>>,
    /// Jobs at once.
    pub concurrency: Option<u32>,
    /// Heartbeat interval.
    pub heartbeat: Option<String>,
    /// A running job without heartbeat for this long is rescued.
    pub stale_after: Option<String>,
    /// How long shutdown waits for running jobs.
    pub shutdown_timeout: Option<String>,
    /// Terminal jobs older than this are deleted.
    pub retention: Option<String>,
    /// How often an idle worker looks for work where the store cannot wake it.
    pub poll_interval: Option<String>,
    /// Run the scheduler (default true).
    pub schedules: Option<bool>,
}

/// `[retention]`: how long a worker keeps finished jobs of each terminal status before deleting them;
/// a status not named here is kept for `[worker] retention` (or for good without it).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionFile {
    /// Jobs that succeeded.
    pub succeeded: Option<String>,
    /// Dead letters.
    pub dead: Option<String>,
    /// Cancelled jobs.
    pub cancelled: Option<String>,
    /// Jobs their handler discarded.
    pub discarded: Option<String>,
    /// Jobs not started by their expiry.
    pub expired: Option<String>,
    /// Keep only the newest this many finished jobs of each queue and status.
    pub keep_last: Option<u32>,
}

impl RetentionFile {
    /// The rules of the table, read; an error names the key (`section` and the key) and why.
    fn read(&self, section: &str) -> std::result::Result<jobq::worker::Retention, (String, String)> {
        let mut retention = jobq::worker::Retention::default();
        for (status, keep) in self.named() {
            if let Some(keep) = keep {
                let keep = parse_duration(keep).map_err(|e| (format!("{section} {status}"), e))?;
                retention.by_status.insert(status, keep);
            }
        }
        if self.keep_last == Some(0) {
            return Err((
                format!("{section} keep_last"),
                "must be at least 1 (leave it out to keep jobs by age alone)".into(),
            ));
        }
        retention.keep_last = self.keep_last;
        Ok(retention)
    }

    /// Each status the file names, with its time as written.
    fn named(&self) -> [(JobStatus, &Option<String>); 5] {
        [
            (JobStatus::Succeeded, &self.succeeded),
            (JobStatus::Dead, &self.dead),
            (JobStatus::Cancelled, &self.cancelled),
            (JobStatus::Discarded, &self.discarded),
            (JobStatus::Expired, &self.expired),
        ]
    }
}

/// Where the store URL came from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlSource {
    /// `--url`.
    Flag,
    /// `JOBQ_URL`.
    Env,
    /// The config file.
    File,
    /// The default SQLite file in the user's data directory.
    Default,
}

impl UrlSource {
    /// The key or variable it was read from: `--url`, `JOBQ_URL`, or the file's `url`.
    pub fn key(self) -> &'static str {
        match self {
            UrlSource::Flag => "--url",
            UrlSource::Env => "JOBQ_URL",
            UrlSource::File | UrlSource::Default => "url",
        }
    }

    /// How to name it in an error.
    pub fn describe(self) -> &'static str {
        match self {
            UrlSource::Flag => "--url",
            UrlSource::Env => "JOBQ_URL",
            UrlSource::File => "the config file's url",
            UrlSource::Default => "the default URL",
        }
    }
}

/// Everything resolved.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store.
    pub url: StoreUrl,
    /// Where `url` came from.
    pub url_source: UrlSource,
    /// The config file read, if any.
    pub file: Option<PathBuf>,
    /// Enqueue limits.
    pub limits: Limits,
    /// Migrate on connect.
    pub auto_migrate: bool,
    /// Default retry policy.
    pub retry: RetryPolicy,
    /// Worker settings.
    pub worker: WorkerSettings,
    /// Handlers by type.
    pub handlers: BTreeMap<String, HandlerSpec>,
    /// Schedules, by name.
    pub schedules: Vec<Schedule>,
    /// The jobs each event becomes.
    pub events: Subscriptions,
    /// `jobq serve`'s listen address and tokens.
    pub serve: ServeSettings,
}

/// Inputs from outside the file: flags and the environment.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--url`.
    pub url: Option<String>,
    /// `--config`.
    pub config: Option<PathBuf>,
}

/// The default database: `jobs.db` in the user's data directory (e.g. `~/.local/share/jobq`).
pub fn default_database() -> PathBuf {
    match directories::ProjectDirs::from("", "", "jobq") {
        Some(dirs) => dirs.data_dir().join("jobs.db"),
        None => PathBuf::from("jobq.db"),
    }
}

fn user_config_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "jobq").map(|d| d.config_dir().join("jobq.toml"))
}

impl Config {
    /// Resolves the configuration from flags, the process environment, the file and defaults.
    pub fn load(overrides: &Overrides) -> Result<Config> {
        Config::load_with(overrides, |name| std::env::var(name).ok())
    }

    /// As [`Config::load`], reading variables through `env` (tests pass a map).
    pub fn load_with(overrides: &Overrides, env: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let explicit = overrides
            .config
            .clone()
            .or_else(|| env("JOBQ_CONFIG").map(PathBuf::from));
        let file = match explicit {
            Some(path) => {
                if !path.is_file() {
                    let reason = format!(
                        "config file {} does not exist (from --config or JOBQ_CONFIG)",
                        path.display()
                    );
                    return Err(Error::config_at(Some(path), None, reason, None));
                }
                Some(path)
            }
            None => [Some(PathBuf::from("jobq.toml")), user_config_file()]
                .into_iter()
                .flatten()
                .find(|p| p.is_file()),
        };
        let parsed = match &file {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let base = file
            .as_deref()
            .and_then(Path::parent)
            .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Config::resolve(parsed, file, &base, overrides, &env)
    }

    fn resolve(
        f: FileConfig,
        file: Option<PathBuf>,
        base: &Path,
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config> {
        let in_file = |key: &str, reason: String| bad_key(file.as_deref(), key, reason);
        let (raw_url, url_source) = if let Some(u) = &overrides.url {
            (Some(u.clone()), UrlSource::Flag)
        } else if let Some(u) = env("JOBQ_URL").filter(|u| !u.is_empty()) {
            (Some(u), UrlSource::Env)
        } else if let Some(u) = f.url.clone() {
            (Some(u), UrlSource::File)
        } else {
            (None, UrlSource::Default)
        };
        let url = match raw_url {
            Some(raw) => {
                let url = StoreUrl::parse(&raw).map_err(|e| {
                    Error::config_at(
                        file.clone().filter(|_| url_source == UrlSource::File),
                        Some(url_source.key().to_string()),
                        // The URL's own error leads: it names the value and what was expected, and
                        // this says where the value came from.
                        format!("{e} (from {})", url_source.describe()),
                        None,
                    )
                })?;
                if url_source == UrlSource::File {
                    url.resolved_against(&absolute(base))
                } else {
                    url
                }
            }
            None => StoreUrl::sqlite_file(&default_database()),
        };
        let url = match &f.inbox_default_type {
            Some(t) => {
                jobq::job::validate_type(t).map_err(|e| in_file("inbox_default_type", e.reason))?;
                url.with_inbox_default_type(t)
            }
            None => url,
        };
        let max_payload_bytes = match env("JOBQ_MAX_PAYLOAD_BYTES") {
            Some(v) => v
                .parse()
                .map_err(|_| bad_env("JOBQ_MAX_PAYLOAD_BYTES", format!("{v:?} is not a number of bytes")))?,
            None => f.max_payload_bytes.unwrap_or(DEFAULT_MAX_PAYLOAD_BYTES),
        };
        let retry = retry_policy(&f.retry, RetryPolicy::default()).map_err(|e| in_file("[retry]", e))?;
        let mut worker = WorkerSettings::default();
        let w = &f.worker;
        if let Some(q) = &w.queues {
            worker.queues = q.clone();
        }
        if let Some(c) = w.concurrency {
            worker.concurrency = c;
        }
        let dur = |v: &Option<String>, key: &str| -> Result<Option<Duration>> {
            v.as_deref()
                .map(parse_duration)
                .transpose()
                .map_err(|e| in_file(&format!("[worker] {key}"), e))
        };
        if let Some(d) = dur(&w.heartbeat, "heartbeat")? {
            worker.heartbeat = d;
        }
        if let Some(d) = dur(&w.stale_after, "stale_after")? {
            worker.stale_after = d;
        }
        if let Some(d) = dur(&w.shutdown_timeout, "shutdown_timeout")? {
            worker.shutdown_timeout = d;
        }
        if let Some(d) = dur(&w.poll_interval, "poll_interval")? {
            worker.poll_interval = d;
        }
        worker.retention = dur(&w.retention, "retention")?;
        let retention = f.retention.read("[retention]").map_err(|(key, e)| in_file(&key, e))?;
        worker.retention_by_status = retention.by_status;
        worker.retention_keep_last = retention.keep_last;
        if let Some(on) = w.schedules {
            worker.schedules = on;
        }
        if let Some(q) = env("JOBQ_QUEUES").filter(|q| !q.is_empty()) {
            worker.queues = q
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
        if let Some(c) = env("JOBQ_CONCURRENCY") {
            worker.concurrency = c
                .parse()
                .map_err(|_| bad_env("JOBQ_CONCURRENCY", format!("{c:?} is not a whole number")))?;
        }
        for q in &worker.queues {
            jobq::job::validate_queue(q).map_err(|e| in_file("[worker] queues", e.reason))?;
        }
        if worker.concurrency == 0 {
            return Err(in_file("[worker] concurrency", "must be at least 1".into()));
        }
        worker.queue_limits = flow::queue_limits(&f.queues).map_err(|(what, e)| in_file(&what, e))?;
        let mut handlers = BTreeMap::new();
        for (job_type, mut h) in f.handlers {
            let what = format!("[handlers.{job_type:?}]");
            if let Some(own) = h.retention.take() {
                let retention = own
                    .read(&format!("[handlers.{job_type:?}.retention]"))
                    .map_err(|(key, e)| in_file(&key, e))?;
                worker.retention_by_type.insert(job_type.clone(), retention);
            }
            let handler = handler_config(&job_type, h, base, retry).map_err(|e| in_file(&what, e))?;
            handlers.insert(job_type, handler);
        }
        let mut schedules = Vec::new();
        for (name, file) in f.schedules {
            let schedule = schedule_config(&name, file).map_err(|(key, reason)| {
                let what = format!("[schedules.{name:?}] {key}");
                in_file(what.trim_end(), reason)
            })?;
            schedules.push(schedule);
        }
        let serve = serve::serve_settings(&f.serve).map_err(|(key, reason)| in_file(&key, reason))?;
        let mut events = Subscriptions::default();
        for (name, file) in f.events {
            let subscribers = event_config(&name, file).map_err(|(key, reason)| {
                let what = format!("[events.{name:?}] {key}");
                in_file(what.trim_end(), reason)
            })?;
            events.0.insert(name, subscribers);
        }
        Ok(Config {
            url,
            url_source,
            file,
            limits: Limits {
                max_payload_bytes,
                default_max_attempts: retry.max_attempts,
            },
            auto_migrate: f.auto_migrate.unwrap_or(true),
            retry,
            worker,
            handlers,
            schedules,
            events,
            serve,
        })
    }

    /// A worker builder given everything this config says: worker settings, the default retry
    /// policy, the limits, the schedules, the event subscriptions and the handlers (built now).
    pub fn configure_worker(&self, builder: WorkerBuilder) -> Result<WorkerBuilder> {
        builder
            .settings(&self.worker)
            .retry_policy(self.retry)
            .limits(self.limits)
            .schedules(self.schedules.clone())
            .events(self.events.clone())
            .configured_handlers(&self.handlers)
    }

    /// A reload of a running worker to what this config says: its handlers (built now, so a handler
    /// that cannot be built refuses the reload here), the default retry policy, the worker settings,
    /// the schedules and the event subscriptions.
    pub fn reload(&self) -> Result<Reload> {
        Reload::new()
            .retry_policy(self.retry)
            .settings(&self.worker)
            .schedules(self.schedules.clone())
            .events(self.events.clone())
            .configured_handlers(&self.handlers)
    }

    /// The doctor that judges this config's workers and handlers.
    pub fn doctor(&self) -> Doctor {
        Doctor::new(&self.worker, &self.handlers)
    }

    /// What the configured handlers give a job of their type that does not say (by `enqueue`,
    /// `serve` or a bridge): their `max_attempts`, so that the store's rescue and the worker agree on
    /// when a job is used up, and their `expires_in`.
    pub fn type_defaults(&self) -> jobq::job::TypeDefaults {
        self.handlers
            .iter()
            .map(|(t, h)| {
                let defaults = jobq::job::TypeDefault {
                    max_attempts: Some(h.retry.max_attempts),
                    expires_in: h.expires_in,
                    unique: h.unique.clone(),
                    unique_mode: h.unique_mode,
                };
                (t.clone(), defaults)
            })
            .collect()
    }

    /// True when the store is the default SQLite file (its folder is created on first use).
    pub fn uses_default_database(&self) -> bool {
        self.url_source == UrlSource::Default
    }
}

/// A config error about `key`, with the file it is in (when it is in one) leading the sentence.
fn bad_key(file: Option<&Path>, key: &str, reason: String) -> Error {
    let reason = match file {
        Some(p) => format!("{}: {key}: {reason}", p.display()),
        None => format!("{key}: {reason}"),
    };
    Error::config_at(file.map(Path::to_path_buf), Some(key.to_string()), reason, None)
}

/// A config error about the environment variable `var`, whose value leads `reason`.
fn bad_env(var: &str, reason: String) -> Error {
    Error::config_at(None, Some(var.to_string()), format!("{var}={reason}"), None)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn read_file(path: &Path) -> Result<FileConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::config_at(
            Some(path.to_path_buf()),
            None,
            format!("cannot read config file {}", path.display()),
            Some(e.into()),
        )
    })?;
    toml::from_str(&text).map_err(|e| {
        let msg = e.message();
        let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
        Error::config_at(
            Some(path.to_path_buf()),
            None,
            match line {
                Some(l) => format!("{}:{l}: {msg}", path.display()),
                None => format!("{}: {msg}", path.display()),
            },
            None,
        )
    })
}

fn retry_policy(r: &RetryFile, base: RetryPolicy) -> std::result::Result<RetryPolicy, String> {
    let mut p = base;
    if let Some(n) = r.max_attempts {
        if n == 0 {
            return Err("max_attempts must be at least 1".into());
        }
        p.max_attempts = n;
    }
    if let Some(d) = &r.base_delay {
        p.base_delay = parse_duration(d).map_err(|e| format!("base_delay: {e}"))?;
    }
    if let Some(m) = r.multiplier {
        if !(m >= 1.0 && m.is_finite()) {
            return Err(format!("multiplier must be at least 1.0, got {m}"));
        }
        p.multiplier = m;
    }
    if let Some(d) = &r.max_delay {
        p.max_delay = parse_duration(d).map_err(|e| format!("max_delay: {e}"))?;
    }
    if let Some(j) = r.jitter {
        if !(0.0..=1.0).contains(&j) {
            return Err(format!("jitter must be between 0 and 1, got {j}"));
        }
        p.jitter = j;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobq::handler::HandlerKind;
    use std::collections::HashMap;

    pub(super) fn load(toml_text: &str, overrides: Overrides, env: &[(&str, &str)]) -> Result<Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobq.toml");
        std::fs::write(&path, toml_text).unwrap();
        let env: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let overrides = Overrides {
            config: Some(path),
            ..overrides
        };
        Config::load_with(&overrides, |k| env.get(k).cloned())
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let file = "url = \"sqlite://from-file.db\"\n";
        let c = load(file, Overrides::default(), &[]).unwrap();
        assert_eq!(c.url_source, UrlSource::File);
        assert!(c.url.expose().ends_with("/from-file.db"), "{}", c.url.expose());
        let c = load(file, Overrides::default(), &[("JOBQ_URL", "sqlite:///tmp/env.db")]).unwrap();
        assert_eq!((c.url_source, c.url.expose()), (UrlSource::Env, "sqlite:///tmp/env.db"));
        let flags = Overrides {
            url: Some("sqlite:///tmp/flag.db".into()),
            ..Default::default()
        };
        let c = load(file, flags, &[("JOBQ_URL", "sqlite:///tmp/env.db")]).unwrap();
        assert_eq!(
            (c.url_source, c.url.expose()),
            (UrlSource::Flag, "sqlite:///tmp/flag.db")
        );
    }

    #[test]
    fn design_example_parses() {
        let c = load(
            r#"
url = "sqlite://jobs.db"
[retry]
max_attempts = 5
base_delay = "1s"
multiplier = 2.0
max_delay = "5m"
jitter = 0.2
[worker]
queues = ["default", "mail"]
concurrency = 8
heartbeat = "10s"
stale_after = "60s"
shutdown_timeout = "30s"
retention = "7d"
[retention]
succeeded = "1h"
dead = "30d"
keep_last = 1000
[handlers."order.paid.notify"]
exec = ["./bin/notify", "--fast"]
timeout = "30s"
concurrency = 2
max_attempts = 10
expires_in = "15m"
unique = "{meta.tenantId}:{payload.orderId}"
[handlers."report.build"]
http = "http://127.0.0.1:8080/jobs"
secret_env = "REPORT_WEBHOOK_SECRET"
wait_timeout = "2h"
[handlers."report.build".retention]
dead = "90d"
keep_last = 50
[handlers."bench.noop"]
builtin = "noop"
[handlers."*"]
exec = ["python3", "dispatch.py"]
"#,
            Overrides::default(),
            &[],
        )
        .unwrap();
        assert_eq!(c.worker.queues, vec!["default", "mail"]);
        assert_eq!(c.worker.retention, Some(Duration::from_secs(7 * 86_400)));
        assert_eq!(
            c.worker.retention_by_status,
            BTreeMap::from([
                (JobStatus::Succeeded, Duration::from_secs(3_600)),
                (JobStatus::Dead, Duration::from_secs(30 * 86_400)),
            ])
        );
        assert_eq!(c.worker.retention_keep_last, Some(1000));
        assert_eq!(
            c.worker.retention_by_type,
            BTreeMap::from([(
                "report.build".to_string(),
                jobq::worker::Retention {
                    by_status: BTreeMap::from([(JobStatus::Dead, Duration::from_secs(90 * 86_400))]),
                    keep_last: Some(50),
                }
            )])
        );
        let notify = &c.handlers["order.paid.notify"];
        assert_eq!(notify.expires_in, Some(Duration::from_secs(900)));
        assert_eq!(
            notify.unique.as_ref().map(ToString::to_string).as_deref(),
            Some("{meta.tenantId}:{payload.orderId}")
        );
        assert_eq!(notify.retry.max_attempts, 10);
        assert_eq!(notify.concurrency, Some(2));
        assert_eq!(notify.timeout, Some(Duration::from_secs(30)));
        let HandlerKind::Exec { argv } = &notify.kind else {
            panic!()
        };
        assert!(
            Path::new(&argv[0]).is_absolute() && argv[0].ends_with("/bin/notify"),
            "{argv:?}"
        );
        let HandlerKind::Exec { argv } = &c.handlers["*"].kind else {
            panic!()
        };
        assert_eq!(argv[0], "python3");
        assert_eq!(c.handlers["report.build"].retry.max_attempts, 5);
        assert_eq!(
            c.handlers["report.build"].wait_timeout,
            Some(Duration::from_secs(7_200))
        );
        assert_eq!(notify.wait_timeout, None);
    }

    #[test]
    fn bad_files_name_the_problem() {
        let cases = [
            ("colour = 1", "unknown field"),
            ("[retention]\nrunning = \"1h\"", "unknown field `running`"),
            ("[retention]\ndead = \"a month\"", "[retention] dead"),
            (
                "[retention]\nkeep_last = 0",
                "[retention] keep_last: must be at least 1",
            ),
            (
                "[handlers.x]\nbuiltin = \"noop\"\n[handlers.x.retention]\nsoon = \"1d\"",
                "unknown field `soon`",
            ),
            (
                "[handlers.x]\nbuiltin = \"noop\"\n[handlers.x.retention]\ndead = \"later\"",
                "[handlers.\"x\".retention] dead",
            ),
            (
                "[handlers.x]\nbuiltin = \"noop\"\nexpires_in = \"0s\"",
                "expires_in must be longer",
            ),
            ("[handlers.x]\nbuiltin = \"noop\"\nexpires_in = \"-1m\"", "expires_in"),
            (
                "[handlers.x]\nbuiltin = \"noop\"\nunique = \"{user.id}\"",
                "unique: \"{user.id}\": unknown field",
            ),
            ("[worker]\nheartbeat = \"often\"", "heartbeat"),
            ("[handlers.x]\nexec = [\"a\"]\nbuiltin = \"noop\"", "exactly one"),
            ("[handlers.x]\nbuiltin = \"nope\"", "unknown builtin"),
            ("[retry]\njitter = 3.0", "jitter"),
            (
                "[handlers.x]\nbuiltin = \"noop\"\nwait_timeout = \"soon\"",
                "wait_timeout",
            ),
            (
                "[handlers.x]\nbuiltin = \"noop\"\nwait_timeout = \"0s\"",
                "wait_timeout must be longer",
            ),
            ("url = \"postgress://u:pw@h/db\"", "unknown store scheme"),
            ("[handlers.x]\nexec = [\"a\"]\nin_flight = 2", "need persistent = true"),
            (
                "[handlers.x]\nexec = [\"a\"]\npersistent = false\nprocesses = 2",
                "need persistent = true",
            ),
            (
                "[handlers.x]\nexec = [\"a\"]\npersistent = true\nin_flight = 0",
                "in_flight must be at least 1",
            ),
            (
                "[handlers.x]\nexec = [\"a\"]\npersistent = true\nmax_jobs_per_process = 0",
                "max_jobs_per_process must be at least 1",
            ),
            (
                "[handlers.x]\nexec = [\"a\"]\npersistent = true\nmax_memory_per_process = \"lots\"",
                "max_memory_per_process: invalid size",
            ),
            (
                "[handlers.x]\nhttp = \"http://h/\"\npersistent = true",
                "apply to exec handlers only",
            ),
        ];
        for (text, needle) in cases {
            let err = load(text, Overrides::default(), &[]).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(!err.contains("pw@"), "{err}");
        }
    }

    #[test]
    fn config_errors_name_the_file_and_key() {
        let err = load("[worker]\nheartbeat = \"often\"", Overrides::default(), &[]).unwrap_err();
        let Error::Config { file, key, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(file.as_ref().is_some_and(|f| f.ends_with("jobq.toml")), "{file:?}");
        assert_eq!(key.as_deref(), Some("[worker] heartbeat"));
        let err = load("", Overrides::default(), &[("JOBQ_CONCURRENCY", "many")]).unwrap_err();
        assert!(
            matches!(&err, Error::Config { key: Some(k), .. } if k == "JOBQ_CONCURRENCY"),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "JOBQ_CONCURRENCY=\"many\" is not a whole number");
    }

    #[test]
    fn env_sets_worker_queues_and_concurrency() {
        let c = load(
            "",
            Overrides::default(),
            &[("JOBQ_QUEUES", "a, b"), ("JOBQ_CONCURRENCY", "3")],
        )
        .unwrap();
        assert_eq!(
            (c.worker.queues.clone(), c.worker.concurrency),
            (vec!["a".to_string(), "b".to_string()], 3)
        );
    }
}
