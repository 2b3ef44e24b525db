//! `Client`'s operator calls for health and capacity: [`Client::doctor`] (what is wrong and what to
//! do, `jobq doctor`), [`Client::queue_load`] and [`Client::desired_workers`] (the autoscaling
//! signal, `jobq autoscale` and `jobq_queue_desired_workers`), and [`Client::throughput`] (the jobs
//! finished per bucket, which the dashboard charts). They validate, take the time from the
//! client's clock, and leave the judging to `crate::doctor` and `crate::autoscale`. None writes.

use std::time::Duration;

use super::Client;
use crate::autoscale::{Estimate, Policy, demand_of, workers_for};
use crate::doctor::{Doctor, Report};
use crate::error::{Error, Input, Result};
use crate::job::validate_queue;
use crate::store::{FinishedCount, Load, QueueLoad, Throughput};
use crate::time::UnixMillis;

impl Client {
    /// Examines the store: stuck, overdue, late and often rescued jobs, long pauses, dead letters
    /// piling up, and what the store can tell of its own health. Only reads.
    pub async fn doctor(&self, doctor: &Doctor) -> Result<Report> {
        Ok(crate::doctor::examine(self.store(), doctor, self.now()).await?)
    }

    /// `queue`'s load over the last `window`.
    pub async fn queue_load(&self, queue: &str, window: Duration) -> Result<Load> {
        validate_queue(queue)?;
        if window.is_zero() {
            return Err(Error::invalid(Input::Duration, "the window must be longer than 0s"));
        }
        let now = self.now();
        Ok(self
            .store()
            .queue_load(&QueueLoad {
                queue: queue.to_string(),
                since: now.minus(window),
                now,
            })
            .await?)
    }

    /// How many workers `queue` needs under `policy`, from its load over the policy's window.
    pub async fn desired_workers(&self, queue: &str, policy: &Policy) -> Result<Estimate> {
        policy.check()?;
        let load = self.queue_load(queue, policy.window).await?;
        let demand = demand_of(&load, policy.window);
        Ok(Estimate {
            queue: queue.to_string(),
            workers: workers_for(&demand, policy),
            demand,
            load,
            window_ms: policy.window.as_millis() as u64,
        })
    }

    /// The jobs of `queues` (every queue when empty) finished per `bucket` over the last `window`:
    /// buckets aligned to whole multiples of `bucket` since the epoch, the last one the bucket
    /// under way now (so a chart's bars keep their place from one refresh to the next). At most
    /// [`MAX_BUCKETS`] buckets.
    pub async fn throughput(
        &self,
        queues: &[String],
        window: Duration,
        bucket: Duration,
    ) -> Result<(Throughput, Vec<FinishedCount>)> {
        for q in queues {
            validate_queue(q)?;
        }
        let bucket_ms = i64::try_from(bucket.as_millis()).unwrap_or(i64::MAX);
        if bucket_ms < 1_000 {
            return Err(Error::invalid(Input::Duration, "the bucket must be at least 1s"));
        }
        let buckets = window.as_millis().div_ceil(bucket.as_millis()).max(1);
        if buckets > u128::from(MAX_BUCKETS) {
            return Err(Error::invalid(
                Input::Duration,
                format!(
                    "a window of {buckets} buckets: at most {MAX_BUCKETS} (widen the bucket or shorten the window)"
                ),
            ));
        }
        let buckets = buckets as u32;
        let current = self.now().0.div_euclid(bucket_ms) * bucket_ms;
        let throughput = Throughput {
            queues: queues.to_vec(),
            since: UnixMillis(current - bucket_ms * (i64::from(buckets) - 1)),
            bucket_ms,
            buckets,
        };
        let counts = self.store().throughput(&throughput).await?;
        Ok((throughput, counts))
    }
}

/// The most buckets [`Client::throughput`] counts in one call (a day of minutes).
pub const MAX_BUCKETS: u32 = 1_440;
