//! The config's tables of jobs that come from time and events: `[schedules.NAME]` and
//! `[events."NAME"]`, as written and as resolved (each refusal names the key at fault; the caller
//! puts the table's name and the file in front).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use jobq::events::Subscriber;
use jobq::schedule::{CatchUp, Schedule, When};
use jobq::store::Overlap;
use jobq::time::parse_duration;

/// `[events."NAME"]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventFile {
    /// The jobs the event becomes.
    #[serde(default)]
    pub jobs: Vec<SubscriberFile>,
}

/// One entry of an event's `jobs`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriberFile {
    /// The job type.
    #[serde(rename = "type")]
    pub job_type: Option<String>,
    /// The queue (default `default`).
    pub queue: Option<String>,
    /// The priority.
    pub priority: Option<i32>,
    /// The attempts.
    pub max_attempts: Option<u32>,
    /// The time-out.
    pub timeout: Option<String>,
    /// Meta added to the job.
    pub meta: Option<BTreeMap<String, String>>,
}

/// `[schedules.NAME]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleFile {
    /// A cron expression: 5 fields, 6 with seconds first, or `@hourly`, `@daily`, `@weekly`, `@monthly`.
    pub cron: Option<String>,
    /// A fixed interval, aligned to multiples of itself since the Unix epoch.
    pub every: Option<String>,
    /// The job type.
    #[serde(rename = "type")]
    pub job_type: Option<String>,
    /// The payload: inline TOML, or a string of JSON.
    pub payload: Option<toml::Value>,
    /// The queue (default `default`).
    pub queue: Option<String>,
    /// Meta added to each tick's job.
    pub meta: Option<BTreeMap<String, String>>,
    /// The job's priority.
    pub priority: Option<i32>,
    /// The job's attempts.
    pub max_attempts: Option<u32>,
    /// The job's time-out.
    pub timeout: Option<String>,
    /// IANA time zone the cron expression is read in (default UTC).
    pub timezone: Option<String>,
    /// Each tick's job runs up to this much after the tick.
    pub jitter: Option<String>,
    /// Missed ticks enqueued within this window (default: only the newest; `0s`: none).
    pub catch_up: Option<String>,
    /// `allow`, `skip` or `one-pending`.
    pub overlap: Option<String>,
    /// Paused in this config.
    pub paused: Option<bool>,
}

/// An event's subscribers from its table; a refusal names the key at fault.
pub(super) fn event_config(name: &str, f: EventFile) -> std::result::Result<Vec<Subscriber>, (String, String)> {
    jobq::job::validate_type(name).map_err(|e| (String::new(), format!("event name: {}", e.reason)))?;
    if f.jobs.is_empty() {
        return Err((
            "jobs".into(),
            "is empty: list the jobs the event becomes, e.g. jobs = [{ type = \"mail.welcome\" }]".into(),
        ));
    }
    let mut out = Vec::with_capacity(f.jobs.len());
    for (n, job) in f.jobs.into_iter().enumerate() {
        let at = |key: &str| format!("jobs[{n}] {key}");
        let job_type = job
            .job_type
            .ok_or_else(|| (at("type"), "missing: the type of the job".to_string()))?;
        jobq::job::validate_type(&job_type).map_err(|e| (at("type"), e.reason))?;
        let mut subscriber = Subscriber::new(job_type);
        if let Some(queue) = job.queue {
            jobq::job::validate_queue(&queue).map_err(|e| (at("queue"), e.reason))?;
            subscriber.queue = queue;
        }
        subscriber.priority = job.priority.unwrap_or(0);
        if job.max_attempts == Some(0) {
            return Err((at("max_attempts"), "must be at least 1".into()));
        }
        subscriber.max_attempts = job.max_attempts;
        subscriber.timeout = job
            .timeout
            .as_deref()
            .map(parse_duration)
            .transpose()
            .map_err(|e| (at("timeout"), e))?;
        if subscriber.timeout.is_some_and(|t| t.is_zero()) {
            return Err((at("timeout"), "must be longer than zero".into()));
        }
        subscriber.meta = job.meta.unwrap_or_default();
        out.push(subscriber);
    }
    Ok(out)
}

/// A schedule from its table; a refusal names the key at fault (empty for the table as a whole).
pub(super) fn schedule_config(name: &str, f: ScheduleFile) -> std::result::Result<Schedule, (&'static str, String)> {
    jobq::job::validate_type(name).map_err(|e| ("", format!("schedule name: {}", e.reason)))?;
    let duration =
        |key: &'static str, v: &Option<String>| -> std::result::Result<Option<Duration>, (&'static str, String)> {
            v.as_deref().map(parse_duration).transpose().map_err(|e| (key, e))
        };
    let when = match (&f.cron, &f.every) {
        (Some(cron), None) => When::cron(cron, f.timezone.as_deref().unwrap_or("UTC")).map_err(|e| {
            let key = if e.starts_with("unknown time zone") {
                "timezone"
            } else {
                "cron"
            };
            (key, e)
        })?,
        (None, Some(_)) => {
            if f.timezone.is_some() {
                return Err((
                    "timezone",
                    "applies to cron only; an interval counts from the Unix epoch".into(),
                ));
            }
            let every = duration("every", &f.every)?.unwrap_or_default();
            When::every(every).map_err(|e| ("every", e))?
        }
        (Some(_), Some(_)) => return Err(("", "give cron or every, not both".into())),
        (None, None) => return Err(("", "needs cron or every".into())),
    };
    let job_type = f
        .job_type
        .ok_or(("type", "missing: the type of the job each tick enqueues".to_string()))?;
    jobq::job::validate_type(&job_type).map_err(|e| ("type", e.reason))?;
    let payload = match &f.payload {
        None => serde_json::Value::Null,
        Some(toml::Value::String(text)) => {
            serde_json::from_str(text).map_err(|e| ("payload", format!("is not JSON: {e}")))?
        }
        Some(other) => serde_json::to_value(other).map_err(|e| ("payload", e.to_string()))?,
    };
    let payload = serde_json::value::to_raw_value(&payload).map_err(|e| ("payload", e.to_string()))?;
    let queue = f.queue.unwrap_or_else(|| jobq::job::DEFAULT_QUEUE.to_string());
    jobq::job::validate_queue(&queue).map_err(|e| ("queue", e.reason))?;
    if f.max_attempts == Some(0) {
        return Err(("max_attempts", "must be at least 1".into()));
    }
    let timeout = duration("timeout", &f.timeout)?;
    if timeout.is_some_and(|t| t.is_zero()) {
        return Err(("timeout", "must be longer than zero".into()));
    }
    let catch_up = match duration("catch_up", &f.catch_up)? {
        Some(window) => CatchUp::Within(window),
        None => CatchUp::Latest,
    };
    let overlap = match f.overlap.as_deref() {
        None => Overlap::Allow,
        Some(text) => {
            Overlap::parse(text).ok_or(("overlap", format!("{text:?} is not one of allow, skip, one-pending")))?
        }
    };
    Ok(Schedule {
        name: name.to_string(),
        when,
        job_type,
        payload,
        queue,
        meta: f.meta.unwrap_or_default(),
        priority: f.priority.unwrap_or(0),
        max_attempts: f.max_attempts,
        timeout,
        jitter: duration("jitter", &f.jitter)?,
        catch_up,
        overlap,
        paused: f.paused.unwrap_or(false),
    })
}
