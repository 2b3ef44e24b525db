//! [`NewJob`]: a job validated and completed, the only input a store accepts, and the checks that make
//! one (queue names, job types, ids, sizes, attempts).

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::input::{Input, InvalidInput};
use crate::time::UnixMillis;

use super::{
    DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_QUEUE, DependOn, Dependency, JobId, JobSpec, Join,
    MAX_TYPE_BYTES, MAX_UNIQUE_KEY_BYTES, UniqueMode,
};

/// A validated job, ready for a store. Validation is the only way to one: the type is
/// `#[non_exhaustive]`, so code outside jobq cannot write a struct literal of it, and makes one with
/// [`Client::validate`](crate::Client::validate) or [`NewJob::check`] (or its variants
/// [`NewJob::validate`] and [`NewJob::check_with`]). A store can rely on every value in it.
///
/// ```compile_fail,E0639
/// # use jobq::job::{Limits, NewJob};
/// # use jobq::{JobSpec, UnixMillis};
/// let valid = NewJob::check(JobSpec::new("email", serde_json::json!({})), UnixMillis::now(), &Limits::default())?;
/// let forged = NewJob { max_attempts: 0, ..valid };
/// # Ok::<(), jobq::error::InvalidInput>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NewJob {
    /// Its id.
    pub id: JobId,
    /// A valid queue name.
    pub queue: String,
    /// A valid type.
    pub job_type: String,
    /// Compact JSON within the size limit.
    pub payload: Box<RawValue>,
    /// Meta map.
    pub meta: BTreeMap<String, String>,
    /// Priority.
    pub priority: i32,
    /// At least 1.
    pub max_attempts: u32,
    /// Not before.
    pub run_at: UnixMillis,
    /// Coalescing key.
    pub unique_key: Option<String>,
    /// What the enqueue does when a live job holds the key (anything but `Coalesce` only with a
    /// key, and never with `after`).
    pub unique_mode: UniqueMode,
    /// Per-job time-out, positive.
    pub timeout_ms: Option<u64>,
    /// Never started at or after this instant (after `run_at` and the enqueue time).
    pub expires_at: Option<UnixMillis>,
    /// Creation time.
    pub created_at: UnixMillis,
    /// Jobs it waits for, each named once and none of them itself: it is created `blocked` while
    /// any has not ended.
    pub after: Vec<Dependency>,
    /// How its dependencies combine (ignored without any).
    pub join: Join,
}

/// Limits checked when a job is enqueued.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest payload in bytes of compact JSON.
    pub max_payload_bytes: usize,
    /// Attempts given to jobs that do not say.
    pub default_max_attempts: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_payload_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
            default_max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

impl NewJob {
    /// Checks `spec` and fills in its defaults as of `now`; a refusal names the input at fault.
    pub fn check(spec: JobSpec, now: UnixMillis, limits: &Limits) -> Result<NewJob, InvalidInput> {
        NewJob::check_with(spec, None, now, limits)
    }

    /// As [`NewJob::check`], with the refusal as its sentence alone: what the Redis inbox records
    /// for an item it rejects.
    pub fn validate(spec: JobSpec, now: UnixMillis, limits: &Limits) -> Result<NewJob, String> {
        NewJob::check(spec, now, limits).map_err(String::from)
    }

    /// As [`NewJob::check`], with the payload given as compact JSON text (`spec.payload` is ignored):
    /// what [`JobSpec::from_json_line_raw`] returns.
    pub fn check_with(
        spec: JobSpec,
        raw_payload: Option<Box<RawValue>>,
        now: UnixMillis,
        limits: &Limits,
    ) -> Result<NewJob, InvalidInput> {
        validate_type(&spec.job_type)?;
        let queue = spec.queue.unwrap_or_else(|| DEFAULT_QUEUE.to_string());
        validate_queue(&queue)?;
        let id = match spec.id {
            Some(id) => JobId::parse(&id)?,
            None => JobId::generate(),
        };
        let payload = match raw_payload {
            Some(raw) => raw,
            None => serde_json::value::to_raw_value(&spec.payload)
                .map_err(|e| InvalidInput::new(Input::Payload, format!("payload: {e}")))?,
        };
        if payload.get().len() > limits.max_payload_bytes {
            return Err(InvalidInput::new(
                Input::Payload,
                format!(
                    "payload is {} bytes, over the limit of {} bytes (max_payload_bytes in the config)",
                    payload.get().len(),
                    limits.max_payload_bytes
                ),
            ));
        }
        let max_attempts = spec.max_attempts.unwrap_or(limits.default_max_attempts);
        if max_attempts == 0 {
            return Err(InvalidInput::new(Input::MaxAttempts, "max attempts must be at least 1"));
        }
        if let Some(key) = &spec.unique_key
            && (key.is_empty() || key.len() > MAX_UNIQUE_KEY_BYTES)
        {
            return Err(InvalidInput::new(
                Input::UniqueKey,
                format!("unique key must be 1 to {MAX_UNIQUE_KEY_BYTES} bytes long"),
            ));
        }
        if spec.timeout_ms == Some(0) {
            return Err(InvalidInput::new(Input::Timeout, "timeout must be greater than zero"));
        }
        if spec.meta.keys().any(String::is_empty) {
            return Err(InvalidInput::new(Input::Meta, "meta keys must not be empty"));
        }
        let unique_mode = spec.unique_mode.unwrap_or_default();
        let run_at = spec.run_at.or_else(|| spec.delay.map(|d| now.plus(d))).unwrap_or(now);
        let named_run_at = spec.run_at.is_some() || spec.delay.is_some();
        let run_at = unique_run_at(&spec.unique_key, &spec.after, named_run_at, unique_mode, now, run_at)?;
        let expires_at = expiry(spec.expires_at, spec.expires_in, now, run_at)?;
        let after = dependencies(spec.after, &id)?;
        Ok(NewJob {
            id,
            queue,
            job_type: spec.job_type,
            payload,
            meta: spec.meta,
            priority: spec.priority.unwrap_or(0),
            max_attempts,
            run_at,
            unique_key: spec.unique_key,
            unique_mode,
            timeout_ms: spec.timeout_ms,
            expires_at,
            created_at: spec.created_at.unwrap_or(now),
            after,
            join: spec.join,
        })
    }
}

/// A job's run time under its unique mode: a debounced job runs its window from now (and a debounce
/// sets the run time, so one named too is refused). A mode other than `coalesce` needs a unique key,
/// and a job that waits for others has none (a holder replaced or throttled could not keep its
/// dependencies' meaning).
fn unique_run_at(
    key: &Option<String>,
    after: &[Dependency],
    named_run_at: bool,
    mode: UniqueMode,
    now: UnixMillis,
    run_at: UnixMillis,
) -> Result<UnixMillis, InvalidInput> {
    let refuse = |what: &str| Err(InvalidInput::new(Input::UniqueMode, what.to_string()));
    if mode == UniqueMode::Coalesce {
        return Ok(run_at);
    }
    if key.is_none() {
        return refuse(&format!("unique mode {} needs a unique key", mode.name()));
    }
    if !after.is_empty() {
        return refuse(&format!(
            "unique mode {} cannot be given to a job that waits for others (after)",
            mode.name()
        ));
    }
    match mode.debounce_ms() {
        Some(_) if named_run_at => refuse("a debounced job runs its window from now: it takes no run time or delay"),
        Some(window) => Ok(now.plus(std::time::Duration::from_millis(window))),
        None => Ok(run_at),
    }
}

/// A job's expiry: `expires_at`, else `expires_in` from `now`. One that has passed, or that comes no
/// later than the job's first run, is refused: such a job could never start.
fn expiry(
    expires_at: Option<UnixMillis>,
    expires_in: Option<std::time::Duration>,
    now: UnixMillis,
    run_at: UnixMillis,
) -> Result<Option<UnixMillis>, InvalidInput> {
    let Some(at) = expires_at.or_else(|| expires_in.map(|d| now.plus(d))) else {
        return Ok(None);
    };
    let refuse = |reason: String| Err(InvalidInput::new(Input::Expiry, reason));
    if at <= now {
        return refuse(format!("expiry {at} has already passed (now is {now})"));
    }
    if at <= run_at {
        return refuse(format!(
            "expiry {at} is not after the job's run time {run_at}: it could never start"
        ));
    }
    Ok(Some(at))
}

/// A job's dependencies, each named once (a second naming of one job must not ask another rule) and
/// none of them the job itself.
fn dependencies(after: Vec<Dependency>, id: &JobId) -> Result<Vec<Dependency>, InvalidInput> {
    let mut kept: Vec<Dependency> = Vec::with_capacity(after.len());
    // The rule each id was first named with: a join of ten thousand jobs checks in linear time.
    let mut named: std::collections::HashMap<JobId, DependOn> = std::collections::HashMap::with_capacity(after.len());
    for dependency in after {
        if &dependency.id == id {
            return Err(InvalidInput::new(
                Input::After,
                format!("job {id} cannot run after itself"),
            ));
        }
        match named.get(&dependency.id) {
            Some(&on) if on != dependency.on => {
                return Err(InvalidInput::new(
                    Input::After,
                    format!(
                        "job {} is named twice as a dependency, on {on} and on {}",
                        dependency.id, dependency.on
                    ),
                ));
            }
            Some(_) => {}
            None => {
                named.insert(dependency.id.clone(), dependency.on);
                kept.push(dependency);
            }
        }
    }
    Ok(kept)
}

/// Checks a queue name: 1 to 64 of `A-Z a-z 0-9 . _ : -`.
pub fn validate_queue(queue: &str) -> Result<(), InvalidInput> {
    let ok = !queue.is_empty()
        && queue.len() <= 64
        && queue
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(InvalidInput::new(
            Input::Queue,
            format!("invalid queue name {queue:?} (use 1-64 of A-Z a-z 0-9 . _ : -)"),
        ))
    }
}

/// Checks a job type: non-empty, at most 128 bytes, no control characters.
pub fn validate_type(job_type: &str) -> Result<(), InvalidInput> {
    let refuse = |reason: String| Err(InvalidInput::new(Input::JobType, reason));
    if job_type.trim().is_empty() {
        return refuse("job type must not be empty".into());
    }
    if job_type.len() > MAX_TYPE_BYTES {
        return refuse(format!(
            "job type is {} bytes long (at most {MAX_TYPE_BYTES})",
            job_type.len()
        ));
    }
    if job_type.chars().any(char::is_control) {
        return refuse(format!("job type {job_type:?} contains control characters"));
    }
    Ok(())
}
