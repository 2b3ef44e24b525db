//! The throughput document: the jobs finished per bucket over a window, per queue, as the series a
//! chart draws (a count for every bucket, zeros included, oldest first), and in total.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use jobq::job::JobStatus;
use jobq::store::{FinishedCount, Throughput};
use jobq::time::UnixMillis;

/// One queue's series: every finished status, and each status seen.
type Series = (Vec<u64>, BTreeMap<JobStatus, Vec<u64>>);

/// The document for `counts` over `window`, read at `now`: `since`, `bucketMs`, `buckets`, and per
/// queue its `finished` series (every finished status) and `byStatus` (only the statuses seen).
pub fn throughput(window: &Throughput, counts: &[FinishedCount], now: UnixMillis) -> Value {
    let n = window.buckets as usize;
    let mut queues: BTreeMap<&str, Series> = window
        .queues
        .iter()
        .map(|q| (q.as_str(), (vec![0; n], BTreeMap::new())))
        .collect();
    for c in counts {
        let Some(slot) = usize::try_from(c.bucket).ok().filter(|b| *b < n) else {
            continue;
        };
        let (finished, by_status) = queues
            .entry(c.queue.as_str())
            .or_insert_with(|| (vec![0; n], BTreeMap::new()));
        finished[slot] += c.count;
        by_status.entry(c.status).or_insert_with(|| vec![0; n])[slot] += c.count;
    }
    let queues: Vec<Value> = queues
        .into_iter()
        .map(|(queue, (finished, by_status))| {
            let by_status: serde_json::Map<String, Value> = by_status
                .into_iter()
                .map(|(status, series)| (status.as_str().to_string(), json!(series)))
                .collect();
            json!({
                "queue": queue,
                "total": finished.iter().sum::<u64>(),
                "finished": finished,
                "byStatus": by_status,
            })
        })
        .collect();
    json!({
        "now": now,
        "since": window.since,
        "bucketMs": window.bucket_ms,
        "buckets": window.buckets,
        "queues": queues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bucket_has_a_count_and_statuses_add_up_to_finished() {
        let window = Throughput {
            queues: vec!["idle".into()],
            since: UnixMillis(60_000),
            bucket_ms: 60_000,
            buckets: 3,
        };
        let count = |queue: &str, bucket, status, count| FinishedCount {
            queue: queue.into(),
            bucket,
            status,
            count,
        };
        let counts = [
            count("q", 0, JobStatus::Succeeded, 2),
            count("q", 2, JobStatus::Succeeded, 1),
            count("q", 2, JobStatus::Dead, 4),
            count("q", 9, JobStatus::Dead, 1),
        ];
        let doc = throughput(&window, &counts, UnixMillis(200_000));
        assert_eq!(
            doc,
            json!({
                "now": 200_000,
                "since": 60_000,
                "bucketMs": 60_000,
                "buckets": 3,
                "queues": [
                    {"queue": "idle", "total": 0, "finished": [0, 0, 0], "byStatus": {}},
                    {"queue": "q", "total": 7, "finished": [2, 0, 5],
                     "byStatus": {"succeeded": [2, 0, 1], "dead": [0, 0, 4]}},
                ],
            })
        );
    }
}
