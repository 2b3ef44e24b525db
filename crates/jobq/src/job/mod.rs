//! The job model and its one JSON shape.
//!
//! [`Job`] is a job as a store holds it; [`JobSpec`] is what a producer asks for (lenient, unvalidated,
//! `spec.rs`); [`NewJob`] is a `JobSpec` that the client has validated and completed, the only input
//! stores accept (`new.rs`). The wire *envelope* (DESIGN §1) is read leniently by
//! [`JobSpec::from_value`] and written exactly by `Job`'s `Serialize`: the same shape for
//! `list`/`show --output json`, for handlers' stdin and for `enqueue --file`. Nothing here touches a
//! store.

mod defaults;
mod dependency;
mod exported;
mod graph;
mod key_template;
mod new;
mod spawn;
mod spec;
#[cfg(test)]
mod tests;
mod typed;
mod unique_mode;

pub use defaults::{TypeDefault, TypeDefaults};
pub use dependency::{DependOn, Dependency, Edge, EdgeState, Join, NO_DEPENDENCY_MET_ERROR, broken_dependency_error};
pub use exported::{ExportLine, JOB_JSON_VERSION};
pub use graph::{Flow, FlowDependency, FlowJob, ids_by_ref};
pub use key_template::KeyTemplate;
pub use new::{Limits, NewJob, validate_queue, validate_type};
pub use spawn::{MAX_SPAWN_KEY_BYTES, Spawn, children};
pub use spec::JobSpec;
pub(crate) use typed::decode as decode_typed;
pub use typed::{IntoJobSpec, JobType};
pub use unique_mode::{UniqueMode, UniqueModeParts};

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::input::{Input, InvalidInput};
use crate::time::UnixMillis;

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
///
/// Exhaustive on purpose: a new status changes what every caller that matches on it must handle, so
/// it comes with a new minor version before 1.0 (a major one after), and the compiler points each
/// `match` at it. The answers and kinds that may grow without that (`StoreKind`, `LeaseState`,
/// `TickOutcome`, …) are `#[non_exhaustive]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting for other jobs to end (its dependencies); never claimed until they have.
    Blocked,
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
    /// Not started before its expiry (`expires_at`): never run.
    Expired,
}

impl JobStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [JobStatus; 9] = [
        JobStatus::Blocked,
        JobStatus::Pending,
        JobStatus::Running,
        JobStatus::Waiting,
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
        JobStatus::Expired,
    ];

    /// The statuses a job never leaves by itself (only `replay-dead` brings a dead job back).
    pub const TERMINAL: [JobStatus; 5] = [
        JobStatus::Succeeded,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Discarded,
        JobStatus::Expired,
    ];

    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Blocked => "blocked",
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Waiting => "waiting",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Dead => "dead",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Discarded => "discarded",
            JobStatus::Expired => "expired",
        }
    }

    /// True for succeeded, dead, cancelled, discarded and expired.
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
                    "unknown status {s:?} (expected one of blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired)"
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
    /// What an enqueue of its key does while it holds the key (as it was enqueued).
    pub unique_mode: UniqueMode,
    /// Overrides the handler's time-out for this job.
    pub timeout_ms: Option<u64>,
    /// Not to be started at or after this instant, by the store's clock: a job still unstarted then
    /// ends `expired`.
    pub expires_at: Option<UnixMillis>,
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
    /// Times its handler snoozed it (put it back without spending an attempt).
    pub snoozes: u32,
    /// It was enqueued after other jobs (`after`): its envelope carries how they ended.
    pub has_dependencies: bool,
    /// How its dependencies combine ([`Join::All`] for a job without).
    pub join: Join,
    /// How its dependencies ended, as the worker read them before running it (what the envelope
    /// hands its handler as `deps`); empty as a store returns a job.
    pub deps: Vec<Edge>,
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
        let mut m = s.serialize_struct("Job", 24)?;
        write_job_fields(self, &mut m)?;
        m.end()
    }
}

/// The fields of the job JSON, envelope then state (what an export line adds to).
fn write_job_fields<M: SerializeStruct>(job: &Job, m: &mut M) -> Result<(), M::Error> {
    write_envelope_fields(job, m)?;
    m.serialize_field("status", &job.status)?;
    m.serialize_field("progress", &job.progress)?;
    m.serialize_field("result", &job.result)?;
    m.serialize_field("errors", &job.errors)?;
    m.serialize_field("startedAt", &job.started_at)?;
    m.serialize_field("finishedAt", &job.finished_at)?;
    m.serialize_field("heartbeatAt", &job.heartbeat_at)?;
    m.serialize_field("workerId", &job.worker_id)?;
    m.serialize_field("snoozes", &job.snoozes)
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
    write_unique_mode(&job.unique_mode, m)?;
    m.serialize_field("timeoutMs", &job.timeout_ms)?;
    m.serialize_field("expiresAt", &job.expires_at)?;
    m.serialize_field("createdAt", &job.created_at)
}

/// A job's unique mode, when it has one other than `coalesce`: `uniqueMode` and its windows
/// (`debounceMs`, `maxWaitMs`, `throttleMs`), as a producer writes them.
fn write_unique_mode<M: SerializeStruct>(mode: &UniqueMode, m: &mut M) -> Result<(), M::Error> {
    if *mode == UniqueMode::Coalesce {
        return Ok(());
    }
    m.serialize_field("uniqueMode", mode.name())?;
    if let Some(ms) = mode.debounce_ms() {
        m.serialize_field("debounceMs", &ms)?;
    }
    if let Some(ms) = mode.max_wait_ms() {
        m.serialize_field("maxWaitMs", &ms)?;
    }
    if let Some(ms) = mode.throttle_ms() {
        m.serialize_field("throttleMs", &ms)?;
    }
    // `keep-last` says it by its name.
    if let UniqueMode::Debounce { queue_behind: true, .. } = mode {
        m.serialize_field("uniqueRunning", "queue-behind")?;
    }
    Ok(())
}

/// The envelope alone, as handlers receive it on stdin or in an HTTP body. A job enqueued after
/// others also carries `deps`: how each of them ended ([`DependencyEnd`]).
pub struct Envelope<'a>(&'a Job);

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let job = self.0;
        let mut m = s.serialize_struct("Envelope", 14)?;
        write_envelope_fields(job, &mut m)?;
        if job.has_dependencies {
            let deps: Vec<DependencyEnd<'_>> = job.deps.iter().map(DependencyEnd).collect();
            m.serialize_field("deps", &deps)?;
        }
        m.end()
    }
}

/// The largest result of a dependency that a dependent's envelope carries inline; a larger one is
/// named by its size (`resultBytes`, `result` null), for the handler to read with `jobq show`.
pub const DEPENDENCY_RESULT_CAP: usize = 64 * 1024;

/// One dependency in a dependent's envelope: `jobId`, `jobType`, `queue`, `status` (null once it
/// has been deleted), `on` (the rule), `state` (`met` for each dependency of a job that runs: a
/// broken one cancels it), and `result` (up to [`DEPENDENCY_RESULT_CAP`] bytes, else `resultBytes`).
pub struct DependencyEnd<'a>(&'a Edge);

impl Serialize for DependencyEnd<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let edge = self.0;
        let too_large = edge
            .result
            .as_ref()
            .map(|r| r.get().len())
            .filter(|&n| n > DEPENDENCY_RESULT_CAP);
        let mut m = s.serialize_struct("DependencyEnd", 7)?;
        m.serialize_field("jobId", &edge.job_id)?;
        m.serialize_field("jobType", &edge.job_type)?;
        m.serialize_field("queue", &edge.queue)?;
        m.serialize_field("status", &edge.status)?;
        m.serialize_field("on", &edge.on)?;
        m.serialize_field("state", &edge.state)?;
        match too_large {
            None => m.serialize_field("result", &edge.result)?,
            Some(bytes) => {
                m.serialize_field("result", &None::<()>)?;
                m.serialize_field("resultBytes", &bytes)?;
            }
        }
        m.end()
    }
}

/// A running job as a store would hand it out, for unit tests of handlers and the worker.
#[cfg(test)]
pub(crate) fn test_job(job_type: &str, payload: &str) -> Job {
    use crate::time::UnixMillis;
    Job {
        id: crate::job::JobId::from_stored("j-1".into()),
        queue: "default".into(),
        job_type: job_type.into(),
        payload: serde_json::value::RawValue::from_string(payload.into()).expect("test payload is JSON"),
        meta: Default::default(),
        priority: 0,
        status: crate::job::JobStatus::Running,
        attempt: 1,
        max_attempts: 5,
        run_at: UnixMillis(1_800_000_000_000),
        unique_key: None,
        unique_mode: UniqueMode::Coalesce,
        timeout_ms: None,
        expires_at: None,
        progress: None,
        result: None,
        errors: Vec::new(),
        created_at: UnixMillis(1_800_000_000_000),
        started_at: Some(UnixMillis(1_800_000_000_000)),
        finished_at: None,
        heartbeat_at: Some(UnixMillis(1_800_000_000_000)),
        worker_id: Some("w-1".into()),
        snoozes: 0,
        has_dependencies: false,
        join: Join::All,
        deps: Vec::new(),
    }
}
