//! Typed jobs: a Rust type that is a job's payload and names its job type ([`JobType`]), so a
//! producer enqueues the value itself and a handler receives it decoded (see
//! [`crate::worker::WorkerBuilder::handle`]). The payload is the type's serde JSON; producers in other
//! languages write the same JSON.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::JobSpec;
use crate::input::{Input, InvalidInput};

/// A job's payload as a Rust type, and the job type it is the payload of.
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct SendEmail {
///     to: String,
///     subject: String,
/// }
///
/// impl jobq::JobType for SendEmail {
///     const NAME: &'static str = "mail.send";
/// }
/// ```
pub trait JobType: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The job type, as `jobq enqueue TYPE` and a config's `[handlers."TYPE"]` name it.
    const NAME: &'static str;
}

/// What [`crate::Client::enqueue`] takes: a [`JobSpec`], or a [`JobType`] value (a job of its type
/// with the value as payload and every option defaulted; [`JobSpec::of`] sets options too).
pub trait IntoJobSpec {
    /// The spec; a payload that cannot be written as JSON is refused.
    fn into_job_spec(self) -> Result<JobSpec, InvalidInput>;
}

impl IntoJobSpec for JobSpec {
    fn into_job_spec(self) -> Result<JobSpec, InvalidInput> {
        Ok(self)
    }
}

impl<T: JobType> IntoJobSpec for T {
    fn into_job_spec(self) -> Result<JobSpec, InvalidInput> {
        JobSpec::of(&self)
    }
}

impl JobSpec {
    /// A job of `T::NAME` whose payload is `job` as JSON, for options set after it:
    /// `JobSpec::of(&mail)?.queue("mail").delay(…)`.
    pub fn of<T: JobType>(job: &T) -> Result<JobSpec, InvalidInput> {
        let payload = serde_json::to_value(job).map_err(|e| {
            InvalidInput::new(
                Input::Payload,
                format!("the payload of {} cannot be written as JSON: {e}", T::NAME),
            )
        })?;
        Ok(JobSpec::new(T::NAME, payload))
    }
}

/// Decodes a job's payload as `T`; the error names the type and says what serde found.
pub(crate) fn decode<T: JobType>(payload: &str) -> Result<T, String> {
    serde_json::from_str(payload).map_err(|e| format!("the payload of {} does not decode: {e}", T::NAME))
}
