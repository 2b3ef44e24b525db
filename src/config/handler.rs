//! `[handlers."TYPE"]`: what a table may say (`HandlerFile`), and the one function that resolves it
//! into the library's `HandlerSpec` (with its `HandlerKind`), which `--handler` flags go through
//! too.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use jobq::handler::{BUILTINS, DEFAULT_MAX_SNOOZES, HandlerKind, HandlerSpec};

use super::{RetryFile, absolute, flow, retry_policy};
use jobq::retry::RetryPolicy;
use jobq::time::parse_duration;

/// `[handlers."type"]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandlerFile {
    /// Program and arguments.
    pub exec: Option<Vec<String>>,
    /// Keep the exec program running and hand it jobs as lines (a persistent handler).
    pub persistent: Option<bool>,
    /// Jobs one copy of a persistent program holds at once.
    pub in_flight: Option<u32>,
    /// Copies of a persistent program.
    pub processes: Option<u32>,
    /// Jobs a copy of a persistent program is handed before it is replaced.
    pub max_jobs_per_process: Option<u64>,
    /// Resident memory past which a copy of a persistent program is replaced: `"512MiB"`.
    pub max_memory_per_process: Option<String>,
    /// URL to POST to.
    pub http: Option<String>,
    /// `noop`, `sleep`, `echo` or `fail`.
    pub builtin: Option<String>,
    /// Broker to publish the envelope to: `amqp://…/VHOST/EXCHANGE?routing_key=…` or
    /// `kafka://HOST:PORT/TOPIC`.
    pub publish: Option<String>,
    /// Environment variable holding the HMAC key of an http handler.
    pub secret_env: Option<String>,
    /// Time-out per run.
    pub timeout: Option<String>,
    /// At most this many of this type at once in one worker.
    pub concurrency: Option<u32>,
    /// At most this many of this type running at once across every worker.
    pub global_concurrency: Option<u32>,
    /// At most this many of this type started per window across every worker: `"100/1m"`.
    pub rate: Option<String>,
    /// Count the cluster-wide limits per value of this field: `"meta.tenantId"`.
    pub partition: Option<String>,
    /// Snoozes before a snooze counts as a retry (default 100).
    pub max_snoozes: Option<u32>,
    /// How long a job of this type may wait on a third party before the worker gives up on it.
    pub wait_timeout: Option<String>,
    /// The expiry a job of this type gets when its producer gives none: this long after it is
    /// enqueued.
    pub expires_in: Option<String>,
    /// Each retry of a job of this type gets an expiry `expires_in` after its run time, instead of
    /// keeping the one it was enqueued with.
    pub expires_per_attempt: Option<bool>,
    /// The unique key a job of this type gets when its producer gives none, made from its fields:
    /// `"{payload.accountId}"`, `"{type}:{meta.tenantId}:{payload.order.id}"`.
    pub unique: Option<String>,
    /// What an enqueue of a job of this type does when a live job holds its unique key:
    /// `coalesce` (the default), `replace`, `keep-last`, `debounce` or `throttle`.
    pub unique_mode: Option<String>,
    /// What `replace` or `debounce` does while the key's holder runs: `coalesce` (the default) or
    /// `queue-behind` (the new job waits for the running one to end).
    pub unique_running: Option<String>,
    /// Debounce window: `"30s"` (names the mode by itself).
    pub debounce: Option<String>,
    /// The longest a debounced job is put off from its first enqueue: `"5m"`.
    pub max_wait: Option<String>,
    /// Throttle window: `"1m"` (names the mode by itself).
    pub throttle: Option<String>,
    /// The type's own retention (`[handlers."TYPE".retention]`), over `[retention]`; the worker's
    /// settings take it, not the handler's.
    pub retention: Option<super::RetentionFile>,
    /// Retry overrides.
    #[serde(flatten)]
    pub retry: RetryFile,
}

/// True when the entry sets any key of a persistent handler.
fn has_persistent_keys(h: &HandlerFile) -> bool {
    h.persistent.is_some() || tunes_persistence(h)
}

/// True when the entry sets a key that only a persistent handler takes (besides `persistent`).
fn tunes_persistence(h: &HandlerFile) -> bool {
    h.in_flight.is_some()
        || h.processes.is_some()
        || h.max_jobs_per_process.is_some()
        || h.max_memory_per_process.is_some()
}

/// A persistent exec handler's options, when `persistent = true`; its other keys need it.
fn persistent_options(h: &HandlerFile) -> std::result::Result<Option<jobq::handler::PersistentOptions>, String> {
    if h.persistent != Some(true) {
        if tunes_persistence(h) {
            return Err(
                "in_flight, processes, max_jobs_per_process and max_memory_per_process need persistent = true".into(),
            );
        }
        return Ok(None);
    }
    let at_least_one = |key: &str, v: Option<u64>| match v {
        Some(0) => Err(format!("{key} must be at least 1")),
        _ => Ok(()),
    };
    at_least_one("in_flight", h.in_flight.map(u64::from))?;
    at_least_one("processes", h.processes.map(u64::from))?;
    at_least_one("max_jobs_per_process", h.max_jobs_per_process)?;
    let defaults = jobq::handler::PersistentOptions::default();
    Ok(Some(jobq::handler::PersistentOptions {
        in_flight: h.in_flight.unwrap_or(defaults.in_flight),
        processes: h.processes.unwrap_or(defaults.processes),
        max_jobs_per_process: h.max_jobs_per_process,
        max_memory_per_process: h
            .max_memory_per_process
            .as_deref()
            .map(jobq::memory::parse_size)
            .transpose()
            .map_err(|e| format!("max_memory_per_process: {e}"))?,
    }))
}

/// A duration key of a table, if set; the error names the key.
fn optional_duration(key: &str, value: Option<&str>) -> std::result::Result<Option<Duration>, String> {
    value.map(parse_duration).transpose().map_err(|e| format!("{key}: {e}"))
}

pub(super) fn handler_config(
    job_type: &str,
    h: HandlerFile,
    base: &Path,
    default_retry: RetryPolicy,
) -> std::result::Result<HandlerSpec, String> {
    let kinds = [
        h.exec.is_some(),
        h.http.is_some(),
        h.builtin.is_some(),
        h.publish.is_some(),
    ]
    .iter()
    .filter(|k| **k)
    .count();
    if kinds != 1 {
        return Err("set exactly one of exec, http, builtin or publish".into());
    }
    if h.exec.is_none() && has_persistent_keys(&h) {
        return Err("persistent, in_flight, processes, max_jobs_per_process and max_memory_per_process apply to exec handlers only".into());
    }
    let kind = if let Some(argv) = h.exec.clone() {
        let Some(program) = argv.first() else {
            return Err("exec needs a program: exec = [\"./bin/run\", \"--flag\"]".into());
        };
        // A program named with a path (./bin/run, ../x, bin/run) resolves against the config folder;
        // a bare name (python3) is looked up on PATH when run.
        let program = if program.contains('/') && Path::new(program).is_relative() {
            absolute(&base.join(program)).display().to_string()
        } else {
            program.clone()
        };
        let mut argv = argv;
        argv[0] = program;
        match persistent_options(&h)? {
            Some(options) => HandlerKind::Persistent { argv, options },
            None => HandlerKind::Exec { argv },
        }
    } else if let Some(url) = h.http {
        let parsed = url::Url::parse(&url).map_err(|e| format!("http = {url:?}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("http = {url:?}: expected an http:// or https:// URL"));
        }
        HandlerKind::Http {
            url,
            secret_env: h.secret_env.clone(),
        }
    } else if let Some(url) = h.publish {
        crate::bridge::publish::kind(&url).map_err(|e| format!("publish = {e}"))?
    } else {
        let name = h.builtin.unwrap_or_default();
        if !BUILTINS.contains(&name.as_str()) {
            return Err(format!("unknown builtin {name:?} (expected noop, sleep, echo or fail)"));
        }
        HandlerKind::Builtin { name }
    };
    if h.secret_env.is_some() && !matches!(kind, HandlerKind::Http { .. }) {
        return Err("secret_env applies to http handlers only".into());
    }
    let timeout = optional_duration("timeout", h.timeout.as_deref())?;
    if h.concurrency == Some(0) {
        return Err("concurrency must be at least 1".into());
    }
    let wait_timeout = optional_duration("wait_timeout", h.wait_timeout.as_deref())?;
    if wait_timeout == Some(Duration::ZERO) {
        return Err("wait_timeout must be longer than 0s (leave it out to wait without a limit)".into());
    }
    let mut spec = HandlerSpec::new(kind, retry_policy(&h.retry, default_retry)?);
    spec.timeout = timeout;
    spec.concurrency = h.concurrency;
    spec.wait_timeout = wait_timeout;
    spec.limit = flow::limit_of(
        jobq::store::Scope::Type(job_type.to_string()),
        h.global_concurrency,
        h.rate.as_deref(),
        h.partition.as_deref(),
    )?;
    spec.max_snoozes = h.max_snoozes.unwrap_or(DEFAULT_MAX_SNOOZES);
    spec.expires_in = optional_duration("expires_in", h.expires_in.as_deref())?;
    spec.unique = h
        .unique
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e| format!("unique: {e}"))?;
    let mode = jobq::job::UniqueMode::from_parts(jobq::job::UniqueModeParts {
        name: h.unique_mode.as_deref(),
        debounce: optional_duration("debounce", h.debounce.as_deref())?,
        max_wait: optional_duration("max_wait", h.max_wait.as_deref())?,
        throttle: optional_duration("throttle", h.throttle.as_deref())?,
        running: h.unique_running.as_deref(),
    })
    .map_err(|e| format!("unique_mode: {}", e.reason))?;
    let names_mode = h.unique_mode.is_some()
        || h.debounce.is_some()
        || h.throttle.is_some()
        || h.max_wait.is_some()
        || h.unique_running.is_some();
    spec.unique_mode = names_mode.then_some(mode);
    spec.expires_per_attempt = h.expires_per_attempt.unwrap_or(false);
    if spec.expires_per_attempt && spec.expires_in.is_none() {
        return Err("expires_per_attempt needs expires_in (how long each attempt has to start)".into());
    }
    if spec.expires_in == Some(Duration::ZERO) {
        return Err("expires_in must be longer than 0s (leave it out for jobs that never expire)".into());
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;
    use crate::config::tests::load;

    #[test]
    fn persistent_handlers_take_their_options() {
        let c = load(
            r#"
[handlers."report.build"]
exec = ["./handlers/report.py"]
persistent = true
in_flight = 8
processes = 4
max_jobs_per_process = 10000
max_memory_per_process = "512MiB"
[handlers.plain]
exec = ["python3", "plain.py"]
persistent = true
"#,
            Overrides::default(),
            &[],
        )
        .unwrap();
        let HandlerKind::Persistent { argv, options } = &c.handlers["report.build"].kind else {
            panic!("{:?}", c.handlers["report.build"].kind)
        };
        assert!(argv[0].ends_with("/handlers/report.py") && Path::new(&argv[0]).is_absolute());
        assert_eq!(
            options,
            &jobq::handler::PersistentOptions {
                in_flight: 8,
                processes: 4,
                max_jobs_per_process: Some(10_000),
                max_memory_per_process: Some(512 << 20),
            }
        );
        assert_eq!(options.capacity(), 32);
        let HandlerKind::Persistent { options, .. } = &c.handlers["plain"].kind else {
            panic!()
        };
        assert_eq!(options, &jobq::handler::PersistentOptions::default());
        let c = load(
            "[handlers.x]
exec = [\"sh\"]
persistent = false
",
            Overrides::default(),
            &[],
        )
        .unwrap();
        assert!(matches!(c.handlers["x"].kind, HandlerKind::Exec { .. }));
    }
}
