//! `Client`'s operator calls for health and capacity: [`Client::doctor`] (what is wrong and what to
//! do, `jobq doctor`), [`Client::queue_load`] and [`Client::desired_workers`] (the autoscaling
//! signal, `jobq autoscale` and `jobq_queue_desired_workers`). They validate, take the time from the
//! client's clock, and leave the judging to `crate::doctor` and `crate::autoscale`. None writes.

use std::time::Duration;

use super::Client;
use crate::autoscale::{Estimate, Policy, demand_of, workers_for};
use crate::doctor::{Doctor, Report};
use crate::error::{Error, Input, Result};
use crate::job::validate_queue;
use crate::store::{Load, QueueLoad};

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
}
