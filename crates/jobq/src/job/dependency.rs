//! Dependencies between jobs: a job enqueued `after` others stays `blocked` until they have ended,
//! then runs or is cancelled by the rule of each dependency ([`DependOn`]).
//!
//! An edge is resolved once, when its dependency ends (or at enqueue, when it had already ended):
//! *met* when the dependency ended the way the rule asks, *broken* otherwise. A job whose edges are
//! all met becomes `pending`; a job with a broken edge is cancelled, naming that dependency and how it
//! ended. A job that waits for any of its dependencies ([`Join::Any`]) becomes `pending` at its first
//! met edge instead, and is cancelled only once all of them broke. The stores apply this in the same transaction or script as the dependency's end.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{JobId, JobStatus};

/// How a job depends on another: which of the other's ends lets it run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DependOn {
    /// Runs once the dependency succeeded; cancelled if it ended any other way.
    #[default]
    Success,
    /// Runs once the dependency ended, however it ended.
    Finish,
    /// Runs only if the dependency ended dead or discarded; cancelled otherwise.
    Failure,
}

impl DependOn {
    /// The rule an `after` entry's `"on"` names, as every reader of job JSON takes it (absent or
    /// null: `success`), or why it names none.
    pub(crate) fn of_entry(on: Option<serde_json::Value>) -> Result<DependOn, String> {
        match on {
            None | Some(serde_json::Value::Null) => Ok(DependOn::Success),
            Some(serde_json::Value::String(on)) => on.parse().map_err(|e: String| format!("after[].on: {e}")),
            Some(other) => Err(format!("after[].on must be a string, got {other}")),
        }
    }

    /// Every rule.
    pub const ALL: [DependOn; 3] = [DependOn::Success, DependOn::Finish, DependOn::Failure];

    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            DependOn::Success => "success",
            DependOn::Finish => "finish",
            DependOn::Failure => "failure",
        }
    }

    /// Whether a dependency that ended in `status` (a terminal status) lets the dependent run.
    pub fn met_by(self, status: JobStatus) -> bool {
        match self {
            DependOn::Success => status == JobStatus::Succeeded,
            DependOn::Finish => true,
            DependOn::Failure => matches!(status, JobStatus::Dead | JobStatus::Discarded),
        }
    }
}

impl fmt::Display for DependOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DependOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        DependOn::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown dependency rule {s:?} (expected success, finish or failure)"))
    }
}

/// How a job's dependencies combine: which of them must be met before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Join {
    /// Runs once every edge is met; cancelled at the first that breaks.
    #[default]
    All,
    /// Runs at the first edge met, whether or not the others have ended (a batch's `--on-failure`
    /// job runs at the first member that ends dead); cancelled only once every edge has broken.
    Any,
}

impl Join {
    /// Whether it is the default, [`Join::All`].
    pub fn is_all(&self) -> bool {
        *self == Join::All
    }

    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            Join::All => "all",
            Join::Any => "any",
        }
    }
}

impl fmt::Display for Join {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Join {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Join::All),
            "any" => Ok(Join::Any),
            _ => Err(format!("unknown join {s:?} (expected all or any)")),
        }
    }
}

/// One job another waits for, and the rule it waits by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dependency {
    /// The job waited for.
    pub id: JobId,
    /// Which of its ends lets the dependent run.
    #[serde(default)]
    pub on: DependOn,
}

impl Dependency {
    /// Waits for `id` by `on`.
    pub fn new(id: JobId, on: DependOn) -> Dependency {
        Dependency { id, on }
    }
}

/// Where an edge stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeState {
    /// Its dependency has not ended.
    Open,
    /// Its dependency ended the way the rule asks.
    Met,
    /// Its dependency ended against the rule: the dependent was cancelled.
    Broken,
}

impl EdgeState {
    /// The lowercase word used everywhere.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeState::Open => "open",
            EdgeState::Met => "met",
            EdgeState::Broken => "broken",
        }
    }
}

/// One edge seen from one of its ends: the job at the other end, as it is now.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    /// The job at the other end.
    pub job_id: JobId,
    /// Its type, queue and status; `None` once it has been deleted (a dependency deleted before it
    /// ended broke the edge as a cancel would).
    pub job_type: Option<String>,
    /// Its queue.
    pub queue: Option<String>,
    /// Its status.
    pub status: Option<JobStatus>,
    /// The rule the dependent waits by.
    pub on: DependOn,
    /// Where the edge stands.
    pub state: EdgeState,
    /// A dependency's result, when the read asked for results (the store's `ReadEdges::results`).
    #[serde(skip)]
    pub result: Option<Box<RawValue>>,
}

/// The error a job cancelled by a broken dependency carries: names the dependency and its end.
pub fn broken_dependency_error(dependency: &str, ended: JobStatus, on: DependOn) -> String {
    format!("dependency {dependency} ended {ended}, and this job runs only on its {on}")
}

/// The error a job that waits for any of its dependencies ([`Join::Any`]) carries when every one of
/// them ended against its rule.
pub const NO_DEPENDENCY_MET_ERROR: &str =
    "no dependency ended the way this job waits for, and it runs only at the first that does";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_is_met_by_the_ends_it_names() {
        let ends = JobStatus::TERMINAL;
        let met = |on: DependOn| ends.into_iter().filter(|&s| on.met_by(s)).collect::<Vec<_>>();
        assert_eq!(met(DependOn::Success), [JobStatus::Succeeded]);
        assert_eq!(met(DependOn::Finish), ends);
        assert_eq!(met(DependOn::Failure), [JobStatus::Dead, JobStatus::Discarded]);
    }

    #[test]
    fn rules_read_back_as_written() {
        for on in DependOn::ALL {
            assert_eq!(on.as_str().parse::<DependOn>(), Ok(on));
        }
        assert!(
            "later"
                .parse::<DependOn>()
                .unwrap_err()
                .contains("success, finish or failure")
        );
    }
}
