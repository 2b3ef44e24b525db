//! The autoscaling signal behind `jobq autoscale` and `jobq_queue_desired_workers`: how many workers
//! a queue needs, from what its store says about the recent past.
//!
//! [`Client::desired_workers`] reads the queue's load over the policy's window
//! ([`crate::store::Store::queue_load`]: the jobs that came due, the runs that finished and how long
//! they took, the ready and running jobs now), turns it into a [`Demand`] ([`demand_of`]) and asks
//! [`workers_for`] (`formula.rs`, pure, with the formula and its reasons) for the figure.
//! [`Cooldown`] (`cooldown.rs`) decides when a changed figure is handed to the platform. Nothing here
//! writes to the store or runs a program: the CLI does that.
//!
//! [`Client::desired_workers`]: crate::client::Client::desired_workers

mod cooldown;
mod formula;

use std::time::Duration;

use serde::Serialize;

pub use cooldown::Cooldown;
pub use formula::{Demand, Policy, workers_for};

use crate::error::{Error, Input, Result};
use crate::store::Load;

/// One evaluation: the queue, what its store said, the demand read from it, and the figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// The queue.
    pub queue: String,
    /// The workers it needs.
    pub workers: u32,
    /// The demand the figure comes from.
    pub demand: Demand,
    /// The store's counts over the window.
    pub load: Load,
    /// The window, in milliseconds.
    pub window_ms: u64,
}

/// The demand a load over `window` shows: arrivals per second over the window, the mean run time of
/// the runs that finished in it, the ready and running jobs now.
pub fn demand_of(load: &Load, window: Duration) -> Demand {
    let seconds = window.as_secs_f64().max(0.001);
    Demand {
        arrival_rate: load.arrived as f64 / seconds,
        mean_run_time: (load.finished > 0).then(|| Duration::from_millis(load.busy_ms / load.finished)),
        backlog: load.ready,
        running: load.running,
    }
}

impl Policy {
    /// Refuses a policy the formula cannot honour, naming the flag at fault.
    pub fn check(&self) -> Result<()> {
        let refuse = |why: String| Err(Error::invalid(Input::Scaling, why));
        if self.min > self.max {
            return refuse(format!(
                "--min {} is more than --max {} (the fewest workers cannot exceed the most)",
                self.min, self.max
            ));
        }
        if self.max == 0 {
            return refuse("--max must be at least 1".into());
        }
        if self.concurrency == 0 {
            return refuse("--concurrency must be at least 1 (the jobs one worker runs at once)".into());
        }
        if self.target_latency.is_zero() {
            return refuse("--target-latency must be longer than 0s".into());
        }
        if self.window.is_zero() {
            return refuse("--window must be longer than 0s".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_becomes_rates_and_means() {
        let load = Load {
            arrived: 600,
            finished: 4,
            busy_ms: 10_000,
            ready: 7,
            running: 2,
        };
        let d = demand_of(&load, Duration::from_secs(300));
        assert_eq!(d.arrival_rate, 2.0);
        assert_eq!(d.mean_run_time, Some(Duration::from_millis(2500)));
        assert_eq!((d.backlog, d.running), (7, 2));
        assert_eq!(demand_of(&Load::default(), Duration::from_secs(60)).mean_run_time, None);
    }
}
