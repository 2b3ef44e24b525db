//! What a refusal of input names: [`Input`], the input, and [`InvalidInput`], the job model's own
//! refusal of it. They sit below everything else so that the job model and the stores can refuse
//! input without depending on [`crate::Error`], which wraps them at the library's edge.

/// The input a refusal is about. Names are those of the job JSON where the input is a job field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Input {
    /// A job's JSON as a whole: not JSON, not an envelope, an unknown version.
    Envelope,
    /// A file of jobs, one JSON line each.
    JobsFile,
    /// A job id.
    JobId,
    /// A job type.
    JobType,
    /// A queue name.
    Queue,
    /// A job's payload: not JSON, too large, unreadable.
    Payload,
    /// A job's meta map.
    Meta,
    /// A job's priority.
    Priority,
    /// A job's attempts.
    MaxAttempts,
    /// When a job may first run: its run time or its delay.
    RunAt,
    /// A job's creation time.
    CreatedAt,
    /// A job's coalescing key.
    UniqueKey,
    /// What an enqueue does when a job holds its unique key already, and the mode's windows.
    UniqueMode,
    /// A job's own time-out.
    Timeout,
    /// When a job that has not started is given up: its expiry or the time to it.
    Expiry,
    /// The jobs a job waits for.
    After,
    /// A graph of jobs as a whole: its refs and the edges between them.
    Flow,
    /// A job status.
    Status,
    /// A point in time a filter starts or ends at.
    Time,
    /// A duration, such as how old finished jobs must be to be deleted, or a refresh interval.
    Duration,
    /// How many jobs a call may touch or return.
    Limit,
    /// The output format.
    OutputFormat,
    /// The store URL.
    Url,
    /// A worker's concurrency, overall or per job type.
    Concurrency,
    /// A worker's heartbeat interval.
    Heartbeat,
    /// How long a worker's job may go without a heartbeat.
    StaleAfter,
    /// How often an idle worker looks for work.
    PollInterval,
    /// How many jobs a worker takes on before it stops.
    MaxJobs,
    /// A worker's CPU priority.
    Nice,
    /// The go-ahead for a bulk operation (`--yes`).
    Confirmation,
    /// A benchmark's plan.
    Bench,
    /// An event's name or id.
    Event,
    /// How a waiting job is resolved: its result, error or reason.
    Resolution,
    /// An autoscaling policy (its bounds, target latency, window or cool-down) or the program it runs.
    Scaling,
    /// The address a server listens on.
    Listen,
    /// A message broker's URL, or what a bridge consumes there.
    Broker,
}

impl Input {
    /// A stable name for the input, the job JSON's field name where there is one (`jobType`,
    /// `maxAttempts`), for callers that report it in their own format.
    pub fn as_str(self) -> &'static str {
        match self {
            Input::Envelope => "envelope",
            Input::JobsFile => "jobsFile",
            Input::JobId => "jobId",
            Input::JobType => "jobType",
            Input::Event => "event",
            Input::Queue => "queue",
            Input::Payload => "payload",
            Input::Meta => "meta",
            Input::Priority => "priority",
            Input::MaxAttempts => "maxAttempts",
            Input::RunAt => "runAt",
            Input::CreatedAt => "createdAt",
            Input::UniqueKey => "uniqueKey",
            Input::UniqueMode => "uniqueMode",
            Input::Timeout => "timeoutMs",
            Input::Expiry => "expiresAt",
            Input::After => "after",
            Input::Flow => "flow",
            Input::Status => "status",
            Input::Time => "time",
            Input::Duration => "duration",
            Input::Limit => "limit",
            Input::OutputFormat => "output",
            Input::Url => "url",
            Input::Concurrency => "concurrency",
            Input::Heartbeat => "heartbeat",
            Input::StaleAfter => "staleAfter",
            Input::PollInterval => "pollInterval",
            Input::MaxJobs => "maxJobs",
            Input::Nice => "nice",
            Input::Broker => "broker",
            Input::Confirmation => "confirmation",
            Input::Bench => "bench",
            Input::Resolution => "resolution",
            Input::Scaling => "scaling",
            Input::Listen => "listen",
        }
    }
}

/// A refusal from the job model's own checks (`job.rs`, `JobStatus::from_str`): which input, and
/// why. It becomes [`crate::Error::Invalid`] at the library's edge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
#[non_exhaustive]
pub struct InvalidInput {
    /// Which input was refused.
    pub input: Input,
    /// What is wrong with it, as the sentence shown to people.
    pub reason: String,
}

impl InvalidInput {
    /// `input` refused, for `reason`.
    pub fn new(input: Input, reason: impl Into<String>) -> InvalidInput {
        InvalidInput {
            input,
            reason: reason.into(),
        }
    }

    /// The same refusal, its sentence led by where the input came from (`--status: …`,
    /// `jobs.ndjson:3: …`).
    pub fn at(self, place: impl std::fmt::Display) -> InvalidInput {
        InvalidInput {
            input: self.input,
            reason: format!("{place}: {}", self.reason),
        }
    }
}

/// For callers that keep a refusal as text (the Redis inbox records it beside the rejected item).
impl From<InvalidInput> for String {
    fn from(e: InvalidInput) -> String {
        e.reason
    }
}
