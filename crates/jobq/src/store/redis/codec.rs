//! How a job is written into and read back from its Redis hash.
//!
//! A job is one hash, `<prefix>{<queue>}:job:<id>`, with short field names (each field name is stored
//! in every job, so they are kept to a letter or two) and only the fields that are set and not at
//! their default: a new job has no `s` and `a` yet (pending, attempt 0), no `pr` when its priority is
//! 0, no `ma` when it has the default attempts, and no `hb` until its first heartbeat (its start time
//! stands for it). The queue and the id are in the key, not in the hash:
//!
//! | field | meaning | | field | meaning |
//! |---|---|---|---|---|
//! | `t` | type | | `u` | unique key |
//! | `p` | payload (JSON) | | `to` | time-out (ms) |
//! | `m` | meta (JSON, absent when empty) | | `pg` | progress (JSON) |
//! | `pr` | priority | | `res` | result (JSON) |
//! | `s` | status | | `e`, `ec` | error history (JSON) and its length |
//! | `a`, `ma` | attempt, max attempts | | `c` | created at (ms) |
//! | `r` | run at, as a [`run_key`] | | `st`, `f`, `hb` | started, finished, heartbeat (ms) |
//! | `w` | worker holding the lease | | `ao`, `dn` | its open dependency edges; jobs waiting for it |
//! | `xa` | expiry (ms) | | `um` | unique mode (`UniqueMode::stored`; absent for coalesce) |

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::job::{DEFAULT_MAX_ATTEMPTS, Job, JobError, JobId, JobStatus, Join, Progress, UniqueMode};
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

/// The field/value pairs of one job as `claim.lua` and `list.lua` return it: names and values joined by
/// byte 0xFF, which UTF-8 text never holds. One string per job instead of an array of twenty is much
/// less work for jobq to read (the drain path reads every job this way). None if it does not parse.
pub(crate) fn packed_pairs(bytes: &[u8]) -> Option<Vec<(&str, &str)>> {
    let mut pieces = bytes.split(|b| *b == 0xFF);
    let mut pairs = Vec::with_capacity(16);
    while let Some(name) = pieces.next() {
        let value = pieces.next()?;
        pairs.push((std::str::from_utf8(name).ok()?, std::str::from_utf8(value).ok()?));
    }
    Some(pairs)
}

/// A job from its hash's field/value pairs (as `HGETALL` or [`packed_pairs`] give them) with `q`
/// (queue) and `id` pairs that the reader adds: the hash's key names both, so the hash holds neither
/// (hashes written before jobq stopped storing the queue hold the same queue too). An empty
/// worker or progress is none: scripts blank them rather than delete them, which is one command less.
pub(crate) fn job_from_pairs(pairs: &[(&str, &str)]) -> Result<Job, StoreError> {
    let text = |field: &str| {
        pairs
            .iter()
            .rev()
            .find(|(name, _)| *name == field)
            .map(|(_, value)| *value)
            .filter(|v| !(v.is_empty() && (field == "w" || field == "pg")))
    };
    let Some(id) = text("id") else {
        return Err(corrupt("?", "a job reply without its id".into()));
    };
    let bad = |field: &str, why: String| corrupt(id, format!("{field}: {why}"));
    let required = |field: &str| text(field).ok_or_else(|| bad(field, "missing".into()));
    let int = |field: &str| -> Result<Option<i64>, StoreError> {
        text(field)
            .map(|v| v.parse::<i64>().map_err(|e| bad(field, e.to_string())))
            .transpose()
    };
    let millis = |field: &str| int(field).map(|v| v.map(UnixMillis));
    let raw = |field: &str, v: &str| RawValue::from_string(v.to_string()).map_err(|e| bad(field, e.to_string()));

    let payload = raw("p", required("p")?)?;
    let meta = match text("m") {
        Some(m) => serde_json::from_str(m).map_err(|e| bad("m", e.to_string()))?,
        None => BTreeMap::new(),
    };
    // A job enqueued and not touched since has no status field: it is pending.
    let status: JobStatus = match text("s") {
        Some(s) => s.parse().map_err(|e: String| bad("s", e))?,
        None => JobStatus::Pending,
    };
    let run_at = from_run_key(required("r")?).ok_or_else(|| bad("r", "not a run key".into()))?;
    let progress: Option<Progress> = text("pg")
        .map(|p| serde_json::from_str(p).map_err(|e| bad("pg", e.to_string())))
        .transpose()?;
    let result = text("res").map(|r| raw("res", r)).transpose()?;
    let errors: Vec<JobError> = match text("e") {
        Some(e) => serde_json::from_str(e).map_err(|err| bad("e", err.to_string()))?,
        None => Vec::new(),
    };
    let started_at = millis("st")?;
    Ok(Job {
        queue: required("q")?.to_string(),
        job_type: required("t")?.to_string(),
        payload,
        meta,
        priority: int("pr")?.unwrap_or(0) as i32,
        status,
        attempt: int("a")?.unwrap_or(0).max(0) as u32,
        max_attempts: int("ma")?.map_or(DEFAULT_MAX_ATTEMPTS, |n| n.max(1) as u32),
        run_at,
        unique_key: text("u").map(str::to_string),
        unique_mode: UniqueMode::from_stored(text("um")),
        timeout_ms: int("to")?.map(|t| t.max(0) as u64),
        expires_at: millis("xa")?,
        progress,
        result,
        errors,
        created_at: millis("c")?.unwrap_or_default(),
        started_at,
        finished_at: millis("f")?,
        // A claim writes no heartbeat before the first one: the start is the last sign of life.
        heartbeat_at: millis("hb")?.or(started_at),
        worker_id: text("w").map(str::to_string),
        snoozes: int("sn")?.unwrap_or(0).max(0) as u32,
        has_dependencies: text("af").is_some(),
        join: if text("aj") == Some("1") { Join::Any } else { Join::All },
        deps: Vec::new(),
        id: JobId::from_stored(id.to_string()),
    })
}

/// The fields and values of a job's hash, as [`job_from_pairs`] reads them back and as the scripts
/// write them: fields at their default (pending status, attempt 0, priority 0, no snoozes …) are left
/// out, as `enqueue.lua` leaves them out. For `import.lua`, which writes a job whole.
pub(crate) fn job_fields(job: &Job) -> Vec<(&'static str, String)> {
    let mut f = vec![
        ("t", job.job_type.clone()),
        ("p", job.payload.get().to_string()),
        ("r", run_key(job.run_at)),
        ("c", job.created_at.0.to_string()),
    ];
    let mut opt = |field: &'static str, value: Option<String>| {
        if let Some(v) = value {
            f.push((field, v));
        }
    };
    opt(
        "m",
        (!job.meta.is_empty()).then(|| serde_json::to_string(&job.meta).unwrap_or_default()),
    );
    opt("pr", (job.priority != 0).then(|| job.priority.to_string()));
    opt(
        "ma",
        (job.max_attempts != DEFAULT_MAX_ATTEMPTS).then(|| job.max_attempts.to_string()),
    );
    opt("u", job.unique_key.clone());
    opt("to", job.timeout_ms.map(|t| t.to_string()));
    opt("xa", job.expires_at.map(|t| t.0.to_string()));
    opt("um", job.unique_mode.stored());
    opt(
        "s",
        (job.status != JobStatus::Pending).then(|| job.status.as_str().to_string()),
    );
    opt("a", (job.attempt != 0).then(|| job.attempt.to_string()));
    if !job.errors.is_empty() {
        opt("e", Some(serde_json::to_string(&job.errors).unwrap_or_default()));
        opt("ec", Some(job.errors.len().to_string()));
    }
    opt("res", job.result.as_ref().map(|r| r.get().to_string()));
    opt(
        "pg",
        job.progress
            .as_ref()
            .map(|p| serde_json::to_string(p).unwrap_or_default()),
    );
    opt("st", job.started_at.map(|t| t.0.to_string()));
    opt("f", job.finished_at.map(|t| t.0.to_string()));
    opt("hb", job.heartbeat_at.map(|t| t.0.to_string()));
    opt("w", job.worker_id.clone());
    opt("sn", (job.snoozes != 0).then(|| job.snoozes.to_string()));
    f
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
    fn packed_pairs_split_on_a_byte_that_utf8_never_holds() {
        let bytes = b"q\xffmail\xffid\xff\xc3\xa9a\xffp\xff{\"a\":\"=:\"}\xffw\xff";
        assert_eq!(
            packed_pairs(bytes),
            Some(vec![
                ("q", "mail"),
                ("id", "\u{e9}a"),
                ("p", "{\"a\":\"=:\"}"),
                ("w", "")
            ])
        );
        assert_eq!(packed_pairs(b"q\xffmail\xffid"), None);
        assert_eq!(packed_pairs(b"q\xff\xc3"), None);
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
