//! Row ↔ Job helpers shared by the sqlx stores: the column list, and decoding of the JSON text columns.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::{StoreError, StoreKind};
use crate::job::{JobError, JobStatus, Progress};

/// Every column of `jobq_jobs`, in the order the row decoders read them.
pub const JOB_COLUMNS: &str = "id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, \
     run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, started_at, \
     finished_at, heartbeat_at, worker_id";

/// The statuses a job can be cancelled from, and that hold a unique key.
pub const LIVE_STATUSES: &str = "('pending', 'running', 'waiting')";

/// The terminal statuses as an SQL list.
pub const TERMINAL_STATUSES: &str = "('succeeded', 'dead', 'cancelled', 'discarded')";

pub(crate) struct Decoder {
    pub kind: StoreKind,
    pub id: String,
}

impl Decoder {
    fn corrupt(&self, reason: String) -> StoreError {
        StoreError::Corrupt {
            kind: self.kind,
            id: self.id.clone(),
            reason,
        }
    }

    pub fn raw(&self, column: &str, text: String) -> Result<Box<RawValue>, StoreError> {
        RawValue::from_string(text).map_err(|e| self.corrupt(format!("{column}: {e}")))
    }

    pub fn meta(&self, text: &str) -> Result<BTreeMap<String, String>, StoreError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(format!("meta: {e}")))
    }

    pub fn errors(&self, text: &str) -> Result<Vec<JobError>, StoreError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(format!("errors: {e}")))
    }

    pub fn status(&self, text: &str) -> Result<JobStatus, StoreError> {
        text.parse().map_err(|e: String| self.corrupt(e))
    }

    pub fn progress(&self, percent: Option<i64>, message: Option<String>) -> Option<Progress> {
        percent.map(|p| Progress {
            percent: p.clamp(0, 100) as u8,
            message,
        })
    }
}

/// A comma-separated list of `n` placeholders `?`.
pub fn placeholders(n: usize) -> String {
    let mut s = String::with_capacity(n * 3);
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('?');
    }
    s
}
