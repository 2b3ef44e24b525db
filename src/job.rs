//! The job model and its one JSON shape.
//!
//! [`Job`] is a job as a store holds it; [`JobSpec`] is what a producer asks for (lenient, unvalidated);
//! [`NewJob`] is a `JobSpec` that the client has validated and completed, the only input stores accept.
//! The wire *envelope* (DESIGN §1) is read leniently by [`JobSpec::from_value`] and written exactly by
//! `Job`'s `Serialize`: the same shape for `list`/`show --output json`, for handlers' stdin and for
//! `enqueue --file`. Nothing here touches a store.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{Input, InvalidInput};
use crate::time::{UnixMillis, parse_instant};

/// Largest payload accepted unless configured otherwise: 1 MiB of compact JSON.
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Attempts a job gets (including the first run) unless told otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// The queue a job goes to unless told otherwise.
pub const DEFAULT_QUEUE: &str = "default";
/// How many entries of error history a job keeps; older ones are dropped first.
pub const ERROR_HISTORY_CAP: usize = 25;

const MAX_ID_BYTES: usize = 128;
const MAX_TYPE_BYTES: usize = 128;
const MAX_UNIQUE_KEY_BYTES: usize = 255;

/// A job's id: a UUIDv7 by default (time-ordered), or any non-empty string of at most 128 bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(String);

impl JobId {
    /// A fresh time-ordered id.
    pub fn generate() -> Self {
        JobId(uuid::Uuid::now_v7().to_string())
    }

    /// Checks a caller-supplied id.
    pub fn parse(id: &str) -> Result<Self, InvalidInput> {
        let refuse = |reason: String| Err(InvalidInput::new(Input::JobId, reason));
        if id.is_empty() {
            return refuse("job id must not be empty".into());
        }
        if id.len() > MAX_ID_BYTES {
            return refuse(format!("job id is {} bytes long (at most {MAX_ID_BYTES})", id.len()));
        }
        if id.chars().any(char::is_control) {
            return refuse(format!("job id {id:?} contains control characters"));
        }
        Ok(JobId(id.to_string()))
    }

    /// Wraps an id read back from a store, which only holds ids that were valid when written.
    pub fn from_stored(id: String) -> Self {
        JobId(id)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a job is in its lifecycle (DESIGN §2). The same lowercase words are used in every store, in
/// JSON and in tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting to be claimed once `run_at` has passed.
    Pending,
    /// Leased by a worker.
    Running,
    /// Handed to a third party; finished by `resolve` or cancelled.
    Waiting,
    /// Done.
    Succeeded,
    /// Failed for good: a permanent failure, attempts used up, or no handler for its type.
    Dead,
    /// Cancelled by an operator.
    Cancelled,
    /// Dropped by its handler.
    Discarded,
}

impl JobStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [JobStatus; 7] = [
        JobStatus::Pending,
        JobStatus::Running,
        JobStatus::Waiting,
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
    ];

    /// The statuses a job never leaves by itself (only `replay-dead` brings a dead job back).
    pub const TERMINAL: [JobStatus; 4] = [
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
    ];

    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Waiting => "waiting",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Dead => "dead",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Discarded => "discarded",
        }
    }

    /// True for succeeded, dead, cancelled and discarded.
    pub fn is_terminal(self) -> bool {
        Self::TERMINAL.contains(&self)
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error is the sentence alone: stores read statuses back as text and report a bad one as
/// corrupt data, and the CLI says which flag it came from (as [`Input::Status`]).
impl FromStr for JobStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        JobStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown status {s:?} (expected one of pending, running, waiting, succeeded, dead, cancelled, discarded)"
                )
            })
    }
}

/// How far a running job has got, as its handler last reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// 0 to 100.
    pub percent: u8,
    /// A short note such as `resizing 3/8`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message: Option<String>,
}

/// One entry of a job's error history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobError {
    /// The attempt that produced the error.
    pub attempt: u32,
    /// When it was recorded.
    pub at: UnixMillis,
    /// What went wrong.
    pub error: String,
}

/// A job as a store holds it.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its id.
    pub id: JobId,
    /// The queue it waits in.
    pub queue: String,
    /// The type that picks its handler.
    pub job_type: String,
    /// Any JSON value, kept as the compact text it was stored as.
    pub payload: Box<RawValue>,
    /// String → string map for tenant ids, idempotency keys, trace parents…
    pub meta: BTreeMap<String, String>,
    /// Smaller runs first.
    pub priority: i32,
    /// Where it is in its lifecycle.
    pub status: JobStatus,
    /// How many times it has been started.
    pub attempt: u32,
    /// Runs allowed, the first included.
    pub max_attempts: u32,
    /// Not to be started before this instant.
    pub run_at: UnixMillis,
    /// While a non-terminal job with this key exists in the queue, enqueueing again returns it.
    pub unique_key: Option<String>,
    /// Overrides the handler's time-out for this job.
    pub timeout_ms: Option<u64>,
    /// Last progress reported while running.
    pub progress: Option<Progress>,
    /// What the handler returned on success.
    pub result: Option<Box<RawValue>>,
    /// Error history, newest last, at most [`ERROR_HISTORY_CAP`] entries.
    pub errors: Vec<JobError>,
    /// When it was enqueued (or the producer's own creation time).
    pub created_at: UnixMillis,
    /// When the current or last attempt started.
    pub started_at: Option<UnixMillis>,
    /// When it reached a terminal status (or `waiting`).
    pub finished_at: Option<UnixMillis>,
    /// Last sign of life of the worker running it.
    pub heartbeat_at: Option<UnixMillis>,
    /// The worker holding its lease while running.
    pub worker_id: Option<String>,
}

impl Job {
    /// The payload deserialized into `T`.
    pub fn payload_as<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.payload.get())
    }

    /// The key handlers should use to make their side effects idempotent: `meta.idempotencyKey`,
    /// else the job id.
    pub fn idempotency_key(&self) -> &str {
        self.meta
            .get("idempotencyKey")
            .map(String::as_str)
            .unwrap_or(self.id.as_str())
    }

    /// The envelope a handler receives: the producer's fields plus this run's attempt number.
    pub fn envelope(&self) -> Envelope<'_> {
        Envelope(self)
    }
}

/// The job JSON (DESIGN §1): envelope fields first, then state. Times are integer Unix milliseconds;
/// absent values are `null`, so every key is always present.
impl Serialize for Job {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Job", 22)?;
        write_envelope_fields(self, &mut m)?;
        m.serialize_field("status", &self.status)?;
        m.serialize_field("progress", &self.progress)?;
        m.serialize_field("result", &self.result)?;
        m.serialize_field("errors", &self.errors)?;
        m.serialize_field("startedAt", &self.started_at)?;
        m.serialize_field("finishedAt", &self.finished_at)?;
        m.serialize_field("heartbeatAt", &self.heartbeat_at)?;
        m.serialize_field("workerId", &self.worker_id)?;
        m.end()
    }
}

fn write_envelope_fields<M: SerializeStruct>(job: &Job, m: &mut M) -> Result<(), M::Error> {
    m.serialize_field("v", &1)?;
    m.serialize_field("jobId", &job.id)?;
    m.serialize_field("jobType", &job.job_type)?;
    m.serialize_field("queue", &job.queue)?;
    m.serialize_field("payload", &job.payload)?;
    m.serialize_field("meta", &job.meta)?;
    m.serialize_field("priority", &job.priority)?;
    m.serialize_field("attempt", &job.attempt)?;
    m.serialize_field("maxAttempts", &job.max_attempts)?;
    m.serialize_field("runAt", &job.run_at)?;
    m.serialize_field("uniqueKey", &job.unique_key)?;
    m.serialize_field("timeoutMs", &job.timeout_ms)?;
    m.serialize_field("createdAt", &job.created_at)
}

/// The envelope alone, as handlers receive it on stdin or in an HTTP body.
pub struct Envelope<'a>(&'a Job);

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Envelope", 13)?;
        write_envelope_fields(self.0, &mut m)?;
        m.end()
    }
}

/// A job a producer asks for: every field but the type optional, nothing validated yet.
/// `Client` turns it into a [`NewJob`], filling defaults and refusing bad values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobSpec {
    /// Caller-chosen id; a UUIDv7 is generated when absent.
    pub id: Option<String>,
    /// Queue; `default` when absent.
    pub queue: Option<String>,
    /// The job type (required, non-empty).
    pub job_type: String,
    /// Any JSON value.
    pub payload: Value,
    /// String → string map.
    pub meta: BTreeMap<String, String>,
    /// Smaller runs first; 0 when absent.
    pub priority: Option<i32>,
    /// Runs allowed, the first included.
    pub max_attempts: Option<u32>,
    /// Not before this instant.
    pub run_at: Option<UnixMillis>,
    /// Not before this long from now (ignored when `run_at` is set).
    pub delay: Option<Duration>,
    /// Coalescing key.
    pub unique_key: Option<String>,
    /// Per-job handler time-out.
    pub timeout_ms: Option<u64>,
    /// The producer's creation time; enqueue time when absent.
    pub created_at: Option<UnixMillis>,
}

impl JobSpec {
    /// A job of `job_type` carrying `payload`, everything else defaulted.
    pub fn new(job_type: impl Into<String>, payload: Value) -> Self {
        JobSpec {
            job_type: job_type.into(),
            payload,
            ..Default::default()
        }
    }

    /// Sets the queue.
    pub fn queue(mut self, queue: impl Into<String>) -> Self {
        self.queue = Some(queue.into());
        self
    }

    /// Sets the priority (smaller runs first).
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets the id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Delays the first run.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Schedules the first run.
    pub fn run_at(mut self, at: UnixMillis) -> Self {
        self.run_at = Some(at);
        self
    }

    /// Sets how many runs the job gets.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(n);
        self
    }

    /// Sets the coalescing key.
    pub fn unique_key(mut self, key: impl Into<String>) -> Self {
        self.unique_key = Some(key.into());
        self
    }

    /// Sets the per-job time-out.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout_ms = Some(timeout.as_millis() as u64);
        self
    }

    /// Adds a meta entry.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.insert(key.into(), value.into());
        self
    }

    /// Reads one NDJSON line: an envelope, or (with `default_type`) a legacy message.
    pub fn from_json_line(line: &str, default_type: Option<&str>) -> Result<JobSpec, InvalidInput> {
        let value: Value =
            serde_json::from_str(line).map_err(|e| InvalidInput::new(Input::Envelope, format!("invalid JSON: {e}")))?;
        JobSpec::from_value(value, default_type)
    }

    /// As [`JobSpec::from_json_line`], but an envelope's payload comes back as the line's own compact
    /// JSON text rather than in `payload`: bulk enqueue then never builds and re-serializes a value tree
    /// for it. Lines that are not compact envelopes take the general path (the payload is then `None`
    /// and in the spec).
    pub fn from_json_line_raw(
        line: &str,
        default_type: Option<&str>,
    ) -> Result<(JobSpec, Option<Box<RawValue>>), InvalidInput> {
        if let Some(fast) = envelope_line_fast(line) {
            return Ok(fast);
        }
        JobSpec::from_json_line(line, default_type).map(|spec| (spec, None))
    }

    /// Reads a JSON value leniently (DESIGN §1). An object with `jobType` and either `jobId` or `v` is
    /// an envelope; anything else is a legacy message that becomes the payload of a job of
    /// `default_type`, or is refused when there is none.
    pub fn from_value(value: Value, default_type: Option<&str>) -> Result<JobSpec, InvalidInput> {
        let is_envelope = matches!(&value, Value::Object(o)
            if o.contains_key("jobType") && (o.contains_key("jobId") || o.contains_key("v")));
        if is_envelope {
            let Value::Object(map) = value else { unreachable!() };
            return envelope_from_map(map);
        }
        match default_type {
            Some(t) => Ok(JobSpec::new(t, value)),
            None => {
                let hint = match &value {
                    Value::Object(o) if o.contains_key("jobType") => {
                        "it has jobType but neither jobId nor v; add \"v\":1 to make it an envelope, or pass --type"
                    }
                    _ => {
                        "an envelope needs jobType with jobId or v; pass --type TYPE to enqueue such lines as payloads"
                    }
                };
                Err(InvalidInput::new(
                    Input::Envelope,
                    format!("not a jobq envelope: {hint}"),
                ))
            }
        }
    }
}

/// The top-level fields of an envelope line, the payload borrowed as raw text. A field that is
/// present with `null` is `Some(Value::Null)`, as the general path sees it.
#[derive(Deserialize)]
struct LineFields<'a> {
    #[serde(rename = "jobType", default, deserialize_with = "present")]
    job_type: Option<Value>,
    #[serde(rename = "jobId", default, deserialize_with = "present")]
    job_id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    v: Option<Value>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    queue: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    priority: Option<Value>,
    #[serde(rename = "runAt", default, deserialize_with = "present")]
    run_at: Option<Value>,
    #[serde(rename = "createdAt", default, deserialize_with = "present")]
    created_at: Option<Value>,
    #[serde(rename = "maxAttempts", default, deserialize_with = "present")]
    max_attempts: Option<Value>,
    #[serde(rename = "uniqueKey", default, deserialize_with = "present")]
    unique_key: Option<Value>,
    #[serde(rename = "timeoutMs", default, deserialize_with = "present")]
    timeout_ms: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    meta: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The fast path of [`JobSpec::from_json_line_raw`]: `None` sends the line down the general path
/// (not an object, not an envelope, a payload with whitespace to compact, or any error to report).
fn envelope_line_fast(line: &str) -> Option<(JobSpec, Option<Box<RawValue>>)> {
    if !line.trim_start().starts_with('{') {
        return None;
    }
    let fields: LineFields = serde_json::from_str(line).ok()?;
    if fields.job_type.is_none() || (fields.job_id.is_none() && fields.v.is_none()) {
        return None;
    }
    let payload = match fields.payload {
        // Whitespace (even inside strings, to keep this check cheap) sends the payload through a parse
        // so it is stored compact, exactly as the general path would store it.
        Some(raw) if raw.get().bytes().any(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r')) => return None,
        Some(raw) => raw.to_owned(),
        None => RawValue::from_string("null".into()).ok()?,
    };
    let mut map = serde_json::Map::new();
    let named = [
        ("jobType", fields.job_type),
        ("jobId", fields.job_id),
        ("v", fields.v),
        ("queue", fields.queue),
        ("priority", fields.priority),
        ("runAt", fields.run_at),
        ("createdAt", fields.created_at),
        ("maxAttempts", fields.max_attempts),
        ("uniqueKey", fields.unique_key),
        ("timeoutMs", fields.timeout_ms),
        ("meta", fields.meta),
    ];
    for (key, value) in named {
        if let Some(value) = value {
            map.insert(key.to_string(), value);
        }
    }
    let spec = envelope_from_map(map).ok()?;
    Some((spec, Some(payload)))
}

fn envelope_from_map(mut map: serde_json::Map<String, Value>) -> Result<JobSpec, InvalidInput> {
    if let Some(v) = map.get("v") {
        if v != &Value::from(1) {
            return Err(InvalidInput::new(
                Input::Envelope,
                format!("unsupported envelope version v={v} (this jobq reads v=1)"),
            ));
        }
    }
    let job_type = match map.remove("jobType") {
        Some(Value::String(s)) => s,
        other => {
            return Err(InvalidInput::new(
                Input::JobType,
                format!("jobType must be a string, got {}", shown(&other)),
            ));
        }
    };
    let id = match map.remove("jobId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        other => {
            return Err(InvalidInput::new(
                Input::JobId,
                format!("jobId must be a string, got {}", shown(&other)),
            ));
        }
    };
    let mut spec = JobSpec {
        id,
        job_type,
        payload: map.remove("payload").unwrap_or(Value::Null),
        ..Default::default()
    };
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "queue" => spec.queue = Some(string_field(Input::Queue, &key, value)?),
            "uniqueKey" => spec.unique_key = Some(string_field(Input::UniqueKey, &key, value)?),
            "priority" => spec.priority = Some(int_field(Input::Priority, &key, &value)?),
            "maxAttempts" => spec.max_attempts = Some(int_field(Input::MaxAttempts, &key, &value)?),
            "timeoutMs" => spec.timeout_ms = Some(int_field(Input::Timeout, &key, &value)?),
            "runAt" => spec.run_at = Some(instant_field(Input::RunAt, &key, &value)?),
            "createdAt" => spec.created_at = Some(instant_field(Input::CreatedAt, &key, &value)?),
            "meta" => spec.meta = meta_field(value)?,
            // The rest of the job JSON (status, attempt, errors, times…) describes a job's past; a new
            // job starts afresh, so reading an exported job back enqueues it again.
            _ => {}
        }
    }
    Ok(spec)
}

fn shown(v: &Option<Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(v) => v.to_string(),
    }
}

fn string_field(input: Input, key: &str, value: Value) -> Result<String, InvalidInput> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(InvalidInput::new(input, format!("{key} must be a string, got {other}"))),
    }
}

fn instant_field(input: Input, key: &str, value: &Value) -> Result<UnixMillis, InvalidInput> {
    parse_instant(value).map_err(|e| InvalidInput::new(input, format!("{key}: {e}")))
}

fn int_field<T: TryFrom<i64>>(input: Input, key: &str, value: &Value) -> Result<T, InvalidInput> {
    let n = match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    n.and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| InvalidInput::new(input, format!("{key} must be an integer in range, got {value}")))
}

fn meta_field(value: Value) -> Result<BTreeMap<String, String>, InvalidInput> {
    let Value::Object(map) = value else {
        return Err(InvalidInput::new(
            Input::Meta,
            format!("meta must be an object of strings, got {value}"),
        ));
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            Value::Number(_) | Value::Bool(_) => Ok((k, v.to_string())),
            other => Err(InvalidInput::new(
                Input::Meta,
                format!("meta.{k} must be a string, got {other}"),
            )),
        })
        .collect()
}

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
    /// Per-job time-out, positive.
    pub timeout_ms: Option<u64>,
    /// Creation time.
    pub created_at: UnixMillis,
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
        if let Some(key) = &spec.unique_key {
            if key.is_empty() || key.len() > MAX_UNIQUE_KEY_BYTES {
                return Err(InvalidInput::new(
                    Input::UniqueKey,
                    format!("unique key must be 1 to {MAX_UNIQUE_KEY_BYTES} bytes long"),
                ));
            }
        }
        if spec.timeout_ms == Some(0) {
            return Err(InvalidInput::new(Input::Timeout, "timeout must be greater than zero"));
        }
        if spec.meta.keys().any(String::is_empty) {
            return Err(InvalidInput::new(Input::Meta, "meta keys must not be empty"));
        }
        let run_at = spec.run_at.or_else(|| spec.delay.map(|d| now.plus(d))).unwrap_or(now);
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
            timeout_ms: spec.timeout_ms,
            created_at: spec.created_at.unwrap_or(now),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: UnixMillis = UnixMillis(1_800_000_000_000);

    fn valid(spec: JobSpec) -> NewJob {
        NewJob::validate(spec, NOW, &Limits::default()).unwrap()
    }

    #[test]
    fn php_style_envelope_is_read_with_seconds() {
        let line = r#"{"v":1,"jobId":"a1","jobType":"mail.send","payload":{"to":"x@y"},"meta":{"tenantId":"t9"},"attempt":2,"maxAttempts":7,"createdAt":1700000000}"#;
        let spec = JobSpec::from_json_line(line, None).unwrap();
        assert_eq!(spec.id.as_deref(), Some("a1"));
        assert_eq!(spec.job_type, "mail.send");
        assert_eq!(spec.payload, json!({"to":"x@y"}));
        assert_eq!(spec.meta.get("tenantId").map(String::as_str), Some("t9"));
        assert_eq!(spec.max_attempts, Some(7));
        assert_eq!(spec.created_at, Some(UnixMillis(1_700_000_000_000)));
    }

    #[test]
    fn envelope_times_accept_millis_and_rfc3339() {
        let spec = JobSpec::from_json_line(
            r#"{"v":1,"jobType":"t","runAt":"2023-11-14T22:13:20Z","createdAt":1700000000123}"#,
            None,
        )
        .unwrap();
        assert_eq!(spec.run_at, Some(UnixMillis(1_700_000_000_000)));
        assert_eq!(spec.created_at, Some(UnixMillis(1_700_000_000_123)));
    }

    #[test]
    fn envelope_without_job_id_gets_a_uuid_v7() {
        let spec = JobSpec::from_json_line(r#"{"v":1,"jobType":"t","payload":null}"#, None).unwrap();
        assert_eq!(spec.id, None);
        let job = valid(spec);
        let uuid = uuid::Uuid::parse_str(job.id.as_str()).unwrap();
        assert_eq!(uuid.get_version_num(), 7);
    }

    #[test]
    fn job_type_with_job_id_but_no_v_is_an_envelope() {
        let spec = JobSpec::from_json_line(r#"{"jobId":"k","jobType":"t","payload":3}"#, None).unwrap();
        assert_eq!((spec.id.as_deref(), spec.payload), (Some("k"), json!(3)));
    }

    #[test]
    fn non_envelope_becomes_payload_of_default_type() {
        for line in [r#"{"user":5}"#, "42", r#""hello""#, "[1,2]", r#"{"jobType":"x"}"#] {
            let spec = JobSpec::from_json_line(line, Some("legacy")).unwrap();
            assert_eq!(spec.job_type, "legacy");
            assert_eq!(spec.payload, serde_json::from_str::<Value>(line).unwrap());
        }
    }

    #[test]
    fn non_envelope_without_default_type_is_refused_with_a_hint() {
        let err = JobSpec::from_json_line(r#"{"user":5}"#, None).unwrap_err().reason;
        assert!(err.contains("--type"), "{err}");
        let err = JobSpec::from_json_line(r#"{"jobType":"x"}"#, None).unwrap_err().reason;
        assert!(err.contains("\"v\":1"), "{err}");
    }

    #[test]
    fn bad_envelope_fields_are_named() {
        let cases = [
            (r#"{"v":2,"jobType":"t"}"#, "version"),
            (r#"{"v":1,"jobType":5}"#, "jobType"),
            (r#"{"v":1,"jobType":"t","priority":"high"}"#, "priority"),
            (r#"{"v":1,"jobType":"t","meta":{"a":{"b":1}}}"#, "meta.a"),
            (r#"{"v":1,"jobType":"t","runAt":"tomorrow"}"#, "runAt"),
            ("{not json", "invalid JSON"),
        ];
        for (line, needle) in cases {
            let err = JobSpec::from_json_line(line, None).unwrap_err().reason;
            assert!(err.contains(needle), "{line}: {err}");
        }
    }

    #[test]
    fn meta_numbers_and_bools_become_strings() {
        let spec = JobSpec::from_json_line(r#"{"v":1,"jobType":"t","meta":{"n":5,"b":true}}"#, None).unwrap();
        assert_eq!(spec.meta.get("n").map(String::as_str), Some("5"));
        assert_eq!(spec.meta.get("b").map(String::as_str), Some("true"));
    }

    #[test]
    fn validation_fills_defaults() {
        let job = valid(JobSpec::new("t", json!({"a": [1, 2]})));
        assert_eq!(job.queue, "default");
        assert_eq!(job.priority, 0);
        assert_eq!(job.max_attempts, DEFAULT_MAX_ATTEMPTS);
        assert_eq!(job.run_at, NOW);
        assert_eq!(job.created_at, NOW);
        assert_eq!(job.payload.get(), r#"{"a":[1,2]}"#);
        let delayed = valid(JobSpec::new("t", json!(null)).delay(Duration::from_secs(30)));
        assert_eq!(delayed.run_at, UnixMillis(NOW.0 + 30_000));
    }

    #[test]
    fn validation_refuses_bad_values() {
        let limits = Limits {
            max_payload_bytes: 10,
            ..Limits::default()
        };
        let cases: Vec<(JobSpec, &str)> = vec![
            (JobSpec::new("", json!(1)), "type must not be empty"),
            (JobSpec::new("t".repeat(129), json!(1)), "at most 128"),
            (JobSpec::new("t", json!(1)).queue("bad queue"), "invalid queue name"),
            (JobSpec::new("t", json!(1)).queue("q".repeat(65)), "invalid queue name"),
            (JobSpec::new("t", json!("0123456789")), "over the limit"),
            (JobSpec::new("t", json!(1)).id(""), "must not be empty"),
            (JobSpec::new("t", json!(1)).id("x".repeat(129)), "at most 128"),
            (JobSpec::new("t", json!(1)).max_attempts(0), "at least 1"),
            (JobSpec::new("t", json!(1)).unique_key(""), "unique key"),
        ];
        for (spec, needle) in cases {
            let err = NewJob::validate(spec.clone(), NOW, &limits).unwrap_err();
            assert!(err.contains(needle), "{spec:?}: {err}");
        }
        assert!(validate_queue("mail.high:eu-1_b").is_ok());
    }

    #[test]
    fn job_json_round_trips_through_the_lenient_reader() {
        let new = valid(
            JobSpec::new("img.resize", json!({"w": 100}))
                .id("j1")
                .queue("media")
                .priority(-3)
                .max_attempts(9)
                .unique_key("u1")
                .timeout(Duration::from_secs(5))
                .meta("tenantId", "t1")
                .run_at(UnixMillis(1_800_000_060_000)),
        );
        let job = Job {
            id: new.id.clone(),
            queue: new.queue.clone(),
            job_type: new.job_type.clone(),
            payload: new.payload.clone(),
            meta: new.meta.clone(),
            priority: new.priority,
            status: JobStatus::Dead,
            attempt: 9,
            max_attempts: new.max_attempts,
            run_at: new.run_at,
            unique_key: new.unique_key.clone(),
            timeout_ms: new.timeout_ms,
            progress: Some(Progress {
                percent: 40,
                message: Some("half".into()),
            }),
            result: None,
            errors: vec![JobError {
                attempt: 9,
                at: NOW,
                error: "boom".into(),
            }],
            created_at: new.created_at,
            started_at: Some(NOW),
            finished_at: Some(NOW),
            heartbeat_at: None,
            worker_id: None,
        };
        let text = serde_json::to_string(&job).unwrap();
        assert!(
            text.starts_with(r#"{"v":1,"jobId":"j1","jobType":"img.resize","queue":"media""#),
            "{text}"
        );
        let back = valid(JobSpec::from_json_line(&text, None).unwrap());
        assert_eq!(back.id, new.id);
        assert_eq!(back.queue, new.queue);
        assert_eq!(back.payload.get(), new.payload.get());
        assert_eq!(back.meta, new.meta);
        assert_eq!(back.priority, new.priority);
        assert_eq!(back.max_attempts, new.max_attempts);
        assert_eq!(back.run_at, new.run_at);
        assert_eq!(back.unique_key, new.unique_key);
        assert_eq!(back.timeout_ms, new.timeout_ms);
        assert_eq!(back.created_at, new.created_at);
        let envelope = serde_json::to_value(job.envelope()).unwrap();
        assert_eq!(envelope["attempt"], json!(9));
        assert!(envelope.get("status").is_none());
    }

    #[test]
    fn raw_line_reading_matches_the_general_path() {
        let lines = [
            r#"{"v":1,"jobId":"a1","jobType":"mail.send","payload":{"to":"x@y","n":[1,2]},"meta":{"tenantId":"t9"},"maxAttempts":7,"createdAt":1700000000}"#,
            r#"{"v":1,"jobType":"t","payload":{"msg":"hello world"}}"#,
            r#"{"jobId":"k","jobType":"t"}"#,
            r#"{"v":1,"jobType":"t","queue":"q1","priority":-2,"runAt":"2023-11-14T22:13:20Z","uniqueKey":"u","timeoutMs":500}"#,
            r#"{"user":5}"#,
            "42",
        ];
        for line in lines {
            let general = valid(JobSpec::from_json_line(line, Some("legacy")).unwrap());
            let (spec, raw) = JobSpec::from_json_line_raw(line, Some("legacy")).unwrap();
            let fast = NewJob::check_with(spec, raw, NOW, &Limits::default()).unwrap();
            assert_eq!(fast.payload.get(), general.payload.get(), "{line}");
            assert_eq!(
                (
                    &fast.queue,
                    &fast.job_type,
                    &fast.meta,
                    fast.priority,
                    fast.max_attempts
                ),
                (
                    &general.queue,
                    &general.job_type,
                    &general.meta,
                    general.priority,
                    general.max_attempts
                ),
                "{line}"
            );
            assert_eq!(
                (fast.run_at, fast.created_at, &fast.unique_key),
                (general.run_at, general.created_at, &general.unique_key)
            );
        }
        // Errors come from the general path, with its messages.
        assert!(
            JobSpec::from_json_line_raw(r#"{"v":2,"jobType":"t"}"#, None)
                .unwrap_err()
                .reason
                .contains("version")
        );
        assert!(
            JobSpec::from_json_line_raw(r#"{"v":null,"jobType":"t"}"#, None)
                .unwrap_err()
                .reason
                .contains("version")
        );
        // The raw payload counts against the size limit like any other.
        let (spec, raw) = JobSpec::from_json_line_raw(r#"{"v":1,"jobType":"t","payload":"0123456789"}"#, None).unwrap();
        let limits = Limits {
            max_payload_bytes: 10,
            ..Limits::default()
        };
        assert!(
            NewJob::check_with(spec, raw, NOW, &limits)
                .unwrap_err()
                .reason
                .contains("over the limit")
        );
    }

    #[test]
    fn status_words_round_trip() {
        for st in JobStatus::ALL {
            assert_eq!(st.as_str().parse::<JobStatus>().unwrap(), st);
        }
        assert!("done".parse::<JobStatus>().unwrap_err().contains("unknown status"));
    }
}
