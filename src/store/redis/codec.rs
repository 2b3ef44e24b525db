//! How a job is written into and read back from its Redis hash.
//!
//! A job is one hash, `<prefix>{<queue>}:job:<id>`, with short field names (each field name is stored
//! in every job, so they are kept to a letter or two) and only the fields that are set (a new job has
//! no `s` and `a` yet: pending, attempt 0):
//!
//! | field | meaning | | field | meaning |
//! |---|---|---|---|---|
//! | `q` | queue | | `u` | unique key |
//! | `t` | type | | `to` | time-out (ms) |
//! | `p` | payload (JSON) | | `pg` | progress (JSON) |
//! | `m` | meta (JSON, absent when empty) | | `res` | result (JSON) |
//! | `pr` | priority | | `e`, `ec` | error history (JSON) and its length |
//! | `s` | status | | `c` | created at (ms) |
//! | `a`, `ma` | attempt, max attempts | | `st`, `f`, `hb` | started, finished, heartbeat (ms) |
//! | `r` | run at, as a [`run_key`] | | `w` | worker holding the lease |

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::job::{DEFAULT_MAX_ATTEMPTS, Job, JobError, JobId, JobStatus, Progress};
use crate::store::{StoreError, StoreKind};
use crate::time::UnixMillis;

const KIND: StoreKind = StoreKind::Redis;

/// Sign bit flip that makes an i64's hex spelling sort like the number.
const ORDER_FLIP: u64 = 1 << 63;

/// An instant as 16 hex digits whose byte order is the instants' order, so that a run time and an id
/// joined as `<run key>:<id>` sort by time, then id, inside a lexicographic sorted set.
pub(crate) fn run_key(at: UnixMillis) -> String {
    format!("{:016x}", (at.0 as u64) ^ ORDER_FLIP)
}

/// The instant a [`run_key`] spells.
pub(crate) fn from_run_key(key: &str) -> Option<UnixMillis> {
    let bits = u64::from_str_radix(key.get(..16)?, 16).ok()?;
    Some(UnixMillis((bits ^ ORDER_FLIP) as i64))
}

/// One JSON error-history entry, as the scripts append it.
pub(crate) fn error_entry(attempt: u32, at: UnixMillis, error: &str) -> String {
    serde_json::to_string(&JobError {
        attempt,
        at,
        error: error.to_string(),
    })
    .unwrap_or_default()
}

fn corrupt(id: &str, reason: String) -> StoreError {
    StoreError::Corrupt {
        kind: KIND,
        id: id.to_string(),
        reason,
    }
}

/// A job from its hash's field/value pairs (`HGETALL` order), with its id given or as a last `id`
/// pair, and its queue as a `q` pair that the reader adds (the hash's key names the queue; hashes
/// written before jobq stopped storing it hold it too). An empty worker or progress is none: scripts blank them rather than delete them, which is one
/// command less.
pub(crate) fn job_from_fields(id: Option<String>, fields: Vec<String>) -> Result<Job, StoreError> {
    let mut f: BTreeMap<String, String> = BTreeMap::new();
    let mut it = fields.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        f.insert(k, v);
    }
    let id = match id.or_else(|| f.remove("id")) {
        Some(id) => id,
        None => return Err(corrupt("?", "a job reply without its id".into())),
    };
    f.retain(|k, v| !(v.is_empty() && (k == "w" || k == "pg")));
    let bad = |field: &str, why: String| corrupt(&id, format!("{field}: {why}"));
    let text = |field: &str| f.get(field).cloned();
    let required = |field: &str| text(field).ok_or_else(|| bad(field, "missing".into()));
    let int = |field: &str| -> Result<Option<i64>, StoreError> {
        f.get(field)
            .map(|v| v.parse::<i64>().map_err(|e| bad(field, e.to_string())))
            .transpose()
    };
    let millis = |field: &str| int(field).map(|v| v.map(UnixMillis));
    let raw = |field: &str, v: String| RawValue::from_string(v).map_err(|e| bad(field, e.to_string()));

    let payload = raw("p", required("p")?)?;
    let meta = match text("m") {
        Some(m) => serde_json::from_str(&m).map_err(|e| bad("m", e.to_string()))?,
        None => BTreeMap::new(),
    };
    // A job enqueued and not touched since has no status field: it is pending.
    let status: JobStatus = match text("s") {
        Some(s) => s.parse().map_err(|e: String| bad("s", e))?,
        None => JobStatus::Pending,
    };
    let run_at = from_run_key(&required("r")?).ok_or_else(|| bad("r", "not a run key".into()))?;
    let progress: Option<Progress> = text("pg")
        .map(|p| serde_json::from_str(&p).map_err(|e| bad("pg", e.to_string())))
        .transpose()?;
    let result = text("res").map(|r| raw("res", r)).transpose()?;
    let errors: Vec<JobError> = match text("e") {
        Some(e) => serde_json::from_str(&e).map_err(|err| bad("e", err.to_string()))?,
        None => Vec::new(),
    };
    Ok(Job {
        queue: required("q")?,
        job_type: required("t")?,
        payload,
        meta,
        priority: int("pr")?.unwrap_or(0) as i32,
        status,
        attempt: int("a")?.unwrap_or(0).max(0) as u32,
        max_attempts: int("ma")?.map_or(DEFAULT_MAX_ATTEMPTS, |n| n.max(1) as u32),
        run_at,
        unique_key: text("u"),
        timeout_ms: int("to")?.map(|t| t.max(0) as u64),
        progress,
        result,
        errors,
        created_at: millis("c")?.unwrap_or_default(),
        started_at: millis("st")?,
        finished_at: millis("f")?,
        // A claim writes no heartbeat before the first one: the start is the last sign of life.
        heartbeat_at: millis("hb")?.or(millis("st")?),
        worker_id: text("w"),
        id: JobId::from_stored(id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_default_max_attempts_is_the_jobs() {
        let line = format!("local DEFAULT_MAX_ATTEMPTS = '{DEFAULT_MAX_ATTEMPTS}'\n");
        assert!(
            include_str!("lua/common.lua").contains(&line),
            "common.lua lacks {line:?}"
        );
    }

    #[test]
    fn run_keys_sort_like_instants() {
        let instants = [i64::MIN, -5, -1, 0, 1, 1_700_000_000_000, i64::MAX].map(UnixMillis);
        let keys: Vec<String> = instants.iter().map(|&t| run_key(t)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        for t in instants {
            assert_eq!(from_run_key(&run_key(t)), Some(t));
        }
    }
}
