//! The flow-control keys of the config: `global_concurrency`, `rate` and `partition` in a
//! `[handlers."type"]` table or a `[queues.name]` table, and a type's `max_snoozes`. Each table's
//! keys become one [`Limit`] (see `store/flow.rs` for what a limit does).

use serde::Deserialize;

use jobq::store::{FieldPath, Limit, Rate, Scope};

/// `[queues.name]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueFile {
    /// At most this many of the queue's jobs running at once, across every worker.
    pub global_concurrency: Option<u32>,
    /// At most this many of the queue's jobs started per window, across every worker: `"100/1m"`.
    pub rate: Option<String>,
    /// Count the limits per value of this field: `"meta.tenantId"` or `"payload.accountId"`.
    pub partition: Option<String>,
}

/// The limit a table's keys set, if any; the error names the key.
pub(crate) fn limit_of(
    scope: Scope,
    global_concurrency: Option<u32>,
    rate: Option<&str>,
    partition: Option<&str>,
) -> Result<Option<Limit>, String> {
    if global_concurrency == Some(0) {
        return Err("global_concurrency must be at least 1".into());
    }
    // Their errors name the key and its value already.
    let rate = rate.map(|r| r.parse::<Rate>()).transpose()?;
    let partition = partition.map(|p| p.parse::<FieldPath>()).transpose()?;
    if global_concurrency.is_none() && rate.is_none() && partition.is_none() {
        return Ok(None);
    }
    if matches!(&scope, Scope::Type(t) if t == "*") {
        return Err("global_concurrency, rate and partition need a job type of their own, not *".into());
    }
    Ok(Some(Limit {
        scope,
        global_concurrency,
        rate,
        partition,
    }))
}

/// The limits of the `[queues]` tables, by queue name.
pub(crate) fn queue_limits(
    queues: &std::collections::BTreeMap<String, QueueFile>,
) -> Result<Vec<Limit>, (String, String)> {
    let mut out = Vec::new();
    for (name, q) in queues {
        let what = format!("[queues.{name:?}]");
        jobq::job::validate_queue(name).map_err(|e| (what.clone(), e.reason))?;
        let limit = limit_of(
            Scope::Queue(name.clone()),
            q.global_concurrency,
            q.rate.as_deref(),
            q.partition.as_deref(),
        )
        .map_err(|e| (what, e))?;
        out.extend(limit);
    }
    Ok(out)
}
