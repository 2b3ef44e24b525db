//! [`JobSpec`]: the job a producer asks for, read leniently from an envelope or a legacy message (the
//! PHP runner's rule: an object with `jobType` and `jobId` or `v` is an envelope; anything else is the
//! payload of a job of a default type), with a fast path for compact envelope lines.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{DependOn, Dependency, JobId, Join, UniqueMode};
use crate::input::{Input, InvalidInput};
use crate::time::{UnixMillis, parse_instant};

/// A job a producer asks for: every field but the type optional, nothing validated yet.
/// `Client` turns it into a [`crate::job::NewJob`], filling defaults and refusing bad values.
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
    /// What the enqueue does when a live job holds the key already ([`UniqueMode::Coalesce`] when
    /// absent, unless the job's type says otherwise).
    pub unique_mode: Option<UniqueMode>,
    /// Per-job handler time-out.
    pub timeout_ms: Option<u64>,
    /// Never started at or after this instant: a job not started by then ends `expired`.
    pub expires_at: Option<UnixMillis>,
    /// Expires this long from now (ignored when `expires_at` is set).
    pub expires_in: Option<Duration>,
    /// The producer's creation time; enqueue time when absent.
    pub created_at: Option<UnixMillis>,
    /// Jobs it waits for: it stays `blocked` until they have ended (see [`Dependency`]).
    pub after: Vec<Dependency>,
    /// How `after` combines: every dependency met ([`Join::All`], the default) or the first
    /// ([`Join::Any`]).
    pub join: Join,
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

    /// Sets what the enqueue does when a live job holds the unique key already.
    pub fn unique_mode(mut self, mode: UniqueMode) -> Self {
        self.unique_mode = Some(mode);
        self
    }

    /// Runs after the job `id` succeeded (cancelled if it ends otherwise).
    pub fn after(self, id: JobId) -> Self {
        self.after_on(id, DependOn::Success)
    }

    /// Runs after the job `id` ended the way `on` asks (cancelled if it ends otherwise).
    pub fn after_on(mut self, id: JobId, on: DependOn) -> Self {
        self.after.push(Dependency::new(id, on));
        self
    }

    /// Runs at the first of its dependencies met rather than once all are ([`Join::Any`]).
    pub fn join(mut self, join: Join) -> Self {
        self.join = join;
        self
    }

    /// Gives the job up if it has not started by `at` (it ends `expired`).
    pub fn expires_at(mut self, at: UnixMillis) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Gives the job up if it has not started `within` from its enqueue (it ends `expired`).
    pub fn expires_in(mut self, within: Duration) -> Self {
        self.expires_in = Some(within);
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
    #[serde(rename = "uniqueMode", default, deserialize_with = "present")]
    unique_mode: Option<Value>,
    #[serde(rename = "debounceMs", default, deserialize_with = "present")]
    debounce_ms: Option<Value>,
    #[serde(rename = "maxWaitMs", default, deserialize_with = "present")]
    max_wait_ms: Option<Value>,
    #[serde(rename = "throttleMs", default, deserialize_with = "present")]
    throttle_ms: Option<Value>,
    #[serde(rename = "uniqueRunning", default, deserialize_with = "present")]
    unique_running: Option<Value>,
    #[serde(rename = "timeoutMs", default, deserialize_with = "present")]
    timeout_ms: Option<Value>,
    #[serde(rename = "expiresAt", default, deserialize_with = "present")]
    expires_at: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    meta: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    after: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    join: Option<Value>,
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
        ("uniqueMode", fields.unique_mode),
        ("debounceMs", fields.debounce_ms),
        ("maxWaitMs", fields.max_wait_ms),
        ("throttleMs", fields.throttle_ms),
        ("uniqueRunning", fields.unique_running),
        ("timeoutMs", fields.timeout_ms),
        ("expiresAt", fields.expires_at),
        ("meta", fields.meta),
        ("after", fields.after),
        ("join", fields.join),
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
    // `"v":"1"` is how a producer that keeps its fields as text writes the version.
    if let Some(v) = map.get("v")
        && int_field::<i64>(Input::Envelope, "v", v).ok() != Some(1)
    {
        return Err(InvalidInput::new(
            Input::Envelope,
            format!("unsupported envelope version v={v} (this jobq reads v=1)"),
        ));
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
    let mut mode = ModeFields::default();
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "queue" => spec.queue = Some(string_field(Input::Queue, &key, value)?),
            // A key made of a record's numeric id is often written as that number.
            "uniqueKey" => spec.unique_key = Some(text_field(Input::UniqueKey, &key, value)?),
            "priority" => spec.priority = Some(int_field(Input::Priority, &key, &value)?),
            "maxAttempts" => spec.max_attempts = Some(int_field(Input::MaxAttempts, &key, &value)?),
            "uniqueMode" => mode.name = Some(string_field(Input::UniqueMode, &key, value)?),
            "debounceMs" => mode.debounce = Some(millis_field(&key, &value)?),
            "maxWaitMs" => mode.max_wait = Some(millis_field(&key, &value)?),
            "throttleMs" => mode.throttle = Some(millis_field(&key, &value)?),
            "uniqueRunning" => mode.running = Some(string_field(Input::UniqueMode, &key, value)?),
            "timeoutMs" => spec.timeout_ms = Some(int_field(Input::Timeout, &key, &value)?),
            "runAt" => spec.run_at = Some(instant_field(Input::RunAt, &key, &value)?),
            "expiresAt" => spec.expires_at = Some(instant_field(Input::Expiry, &key, &value)?),
            "createdAt" => spec.created_at = Some(instant_field(Input::CreatedAt, &key, &value)?),
            "meta" => spec.meta = meta_field(value)?,
            "after" => spec.after = after_field(value)?,
            "join" => spec.join = join_field(value)?,
            // The rest of the job JSON (status, attempt, errors, times…) describes a job's past; a new
            // job starts afresh, so reading an exported job back enqueues it again.
            _ => {}
        }
    }
    if mode != ModeFields::default() {
        spec.unique_mode = Some(UniqueMode::from_parts(super::UniqueModeParts {
            name: mode.name.as_deref(),
            debounce: mode.debounce,
            max_wait: mode.max_wait,
            throttle: mode.throttle,
            running: mode.running.as_deref(),
        })?);
    }
    Ok(spec)
}

/// The job JSON's fields of a unique mode, read one by one and judged together.
#[derive(Default, PartialEq)]
struct ModeFields {
    name: Option<String>,
    debounce: Option<Duration>,
    max_wait: Option<Duration>,
    throttle: Option<Duration>,
    running: Option<String>,
}

/// A window of a unique mode, in milliseconds.
fn millis_field(key: &str, value: &Value) -> Result<Duration, InvalidInput> {
    int_field::<u64>(Input::UniqueMode, key, value).map(Duration::from_millis)
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

/// A string, or a number as its JSON text.
fn text_field(input: Input, key: &str, value: Value) -> Result<String, InvalidInput> {
    match value {
        Value::Number(n) => Ok(n.to_string()),
        other => string_field(input, key, other),
    }
}

fn instant_field(input: Input, key: &str, value: &Value) -> Result<UnixMillis, InvalidInput> {
    parse_instant(value).map_err(|e| InvalidInput::new(input, format!("{key}: {e}")))
}

fn int_field<T: TryFrom<i64>>(input: Input, key: &str, value: &Value) -> Result<T, InvalidInput> {
    let n = match value {
        Value::Number(n) => n
            .as_i64()
            // A whole number written as a float, within i64 (`as` would saturate a larger one into range).
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= i64::MIN as f64 && *f < i64::MAX as f64)
                    .map(|f| f as i64)
            }),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    n.and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| InvalidInput::new(input, format!("{key} must be an integer in range, got {value}")))
}

/// `join`: `"all"` or `"any"`.
fn join_field(value: Value) -> Result<Join, InvalidInput> {
    let refused = |what: String| InvalidInput::new(Input::After, what);
    match value {
        Value::String(s) => s.parse().map_err(|e: String| refused(format!("join: {e}"))),
        other => Err(refused(format!("join must be \"all\" or \"any\", got {other}"))),
    }
}

/// `after` as producers write it: a list whose items are a job id (waited for by `success`) or an
/// object `{"id": …, "on": "success" | "finish" | "failure"}`.
fn after_field(value: Value) -> Result<Vec<Dependency>, InvalidInput> {
    let refused = |what: String| InvalidInput::new(Input::After, what);
    let Value::Array(items) = value else {
        return Err(refused(format!("after must be a list of job ids, got {value}")));
    };
    items
        .into_iter()
        .map(|item| {
            let (id, on) = match item {
                Value::String(id) => (id, DependOn::Success),
                Value::Object(mut o) => {
                    let id = match o.remove("id") {
                        Some(Value::String(id)) => id,
                        other => return Err(refused(format!("after[].id must be a job id, got {other:?}"))),
                    };
                    let on = DependOn::of_entry(o.remove("on")).map_err(refused)?;
                    (id, on)
                }
                other => {
                    return Err(refused(format!(
                        "after must list job ids or {{\"id\", \"on\"}} objects, got {other}"
                    )));
                }
            };
            Ok(Dependency::new(JobId::parse(&id)?, on))
        })
        .collect()
}

/// `meta` as producers write it: an object whose numbers and booleans become their text and whose
/// `null`s are left out, or `[]`, which is how PHP's `json_encode` writes an empty array (the PHP
/// envelope's `meta = []`). Any other array, and a nested value, is refused.
fn meta_field(value: Value) -> Result<BTreeMap<String, String>, InvalidInput> {
    let map = match value {
        Value::Object(map) => map,
        Value::Array(items) if items.is_empty() => return Ok(BTreeMap::new()),
        other => {
            return Err(InvalidInput::new(
                Input::Meta,
                format!("meta must be an object of strings, got {other}"),
            ));
        }
    };
    map.into_iter()
        .filter(|(_, v)| !v.is_null())
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
