//! How many workers a queue needs: a pure function of its demand and the operator's policy.
//!
//! The work a queue asks for is measured in *slots* (one slot runs one job at a time; a worker has
//! `concurrency` of them):
//!
//! ```text
//! slots   = arrival_rate × mean_run_time                        keep pace with what arrives
//!         + backlog × mean_run_time / target_latency            and work off what waits, in time
//! workers = ceil(slots / concurrency), clamped to [min, max]
//! ```
//!
//! The first term is Little's law: jobs arriving at λ per second that each take S seconds keep
//! λ × S slots busy on average, so fewer slots than that and the queue grows without end. The second
//! is the backlog: B ready jobs hold B × S slot-seconds of work, which must be done within the
//! target latency T for the last of them to start within it, so B × S / T slots more. A queue with no
//! backlog gets just what keeps pace (and queueing jitter is absorbed by the backlog term at the next
//! evaluation); a queue behind gets enough to catch up within T, and no more.
//!
//! When no job finished in the window the run time is unknown, and the formula cannot be used: the
//! answer is then the slots running now plus one when jobs wait, so workers = ceil((running + 1) /
//! concurrency). A queue with work and no workers gets one, and once jobs finish the next evaluation
//! has a run time to go by.

use std::time::Duration;

use serde::Serialize;

/// What a queue asks for, measured over a recent window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Demand {
    /// Jobs coming due per second.
    pub arrival_rate: f64,
    /// The mean run time of the jobs that finished in the window; `None` when none did.
    #[serde(serialize_with = "millis")]
    pub mean_run_time: Option<Duration>,
    /// Jobs ready now.
    pub backlog: u64,
    /// Jobs running now.
    pub running: u64,
}

fn millis<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_millis() as u64)),
        None => s.serialize_none(),
    }
}

/// The operator's bounds and goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Never fewer workers than this.
    pub min: u32,
    /// Never more.
    pub max: u32,
    /// How long a ready job may wait before it starts.
    pub target_latency: Duration,
    /// Jobs one worker runs at once (its `--concurrency`).
    pub concurrency: u32,
    /// How far back arrivals and run times are measured.
    pub window: Duration,
}

/// Slots' worth of rounding error ignored before rounding up, so that 2.0000000001 slots of a
/// computed 2 stay 2.
const EPSILON: f64 = 1e-9;

/// The workers `demand` needs under `policy` (see the module's text).
pub fn workers_for(demand: &Demand, policy: &Policy) -> u32 {
    let slots = match demand.mean_run_time {
        Some(run) => {
            let run = run.as_secs_f64();
            let target = policy.target_latency.as_secs_f64().max(0.001);
            demand.arrival_rate.max(0.0) * run + demand.backlog as f64 * run / target
        }
        None if demand.backlog > 0 => demand.running as f64 + 1.0,
        None => demand.running as f64,
    };
    let workers = (slots / f64::from(policy.concurrency.max(1)) - EPSILON).ceil();
    let workers = if workers.is_finite() && workers > 0.0 {
        workers.min(f64::from(u32::MAX)) as u32
    } else {
        0
    };
    workers.clamp(policy.min, policy.max.max(policy.min))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(min: u32, max: u32, concurrency: u32) -> Policy {
        Policy {
            min,
            max,
            target_latency: Duration::from_secs(30),
            concurrency,
            window: Duration::from_secs(300),
        }
    }

    fn demand(rate: f64, run_ms: Option<u64>, backlog: u64, running: u64) -> Demand {
        Demand {
            arrival_rate: rate,
            mean_run_time: run_ms.map(Duration::from_millis),
            backlog,
            running,
        }
    }

    #[test]
    fn arrivals_alone_need_their_offered_load() {
        // 10 jobs/s × 2 s = 20 slots; 8 per worker → 3 workers.
        assert_eq!(workers_for(&demand(10.0, Some(2000), 0, 0), &policy(0, 100, 8)), 3);
        // Exactly 16 slots is 2 workers, not 3.
        assert_eq!(workers_for(&demand(8.0, Some(2000), 0, 0), &policy(0, 100, 8)), 2);
    }

    #[test]
    fn a_backlog_adds_what_works_it_off_within_the_target() {
        // 600 ready × 1 s / 30 s = 20 slots, + 1 job/s × 1 s = 21 slots; 4 per worker → 6.
        assert_eq!(workers_for(&demand(1.0, Some(1000), 600, 0), &policy(0, 100, 4)), 6);
    }

    #[test]
    fn the_answer_stays_within_min_and_max() {
        assert_eq!(workers_for(&demand(0.0, Some(1000), 0, 0), &policy(1, 20, 8)), 1);
        assert_eq!(workers_for(&demand(0.0, Some(1000), 0, 0), &policy(0, 20, 8)), 0);
        assert_eq!(
            workers_for(&demand(1000.0, Some(5000), 1_000_000, 0), &policy(1, 20, 8)),
            20
        );
    }

    #[test]
    fn without_a_run_time_a_waiting_queue_gets_one_more_worker_than_it_runs() {
        assert_eq!(workers_for(&demand(0.0, None, 50, 0), &policy(0, 20, 8)), 1);
        assert_eq!(workers_for(&demand(0.0, None, 50, 8), &policy(0, 20, 8)), 2);
        assert_eq!(workers_for(&demand(0.0, None, 0, 0), &policy(0, 20, 8)), 0);
        assert_eq!(workers_for(&demand(0.0, None, 0, 9), &policy(0, 20, 8)), 2);
    }

    #[test]
    fn odd_inputs_do_not_break_it() {
        assert_eq!(workers_for(&demand(f64::NAN, Some(1000), 0, 0), &policy(2, 5, 1)), 2);
        assert_eq!(workers_for(&demand(-3.0, Some(1000), 0, 0), &policy(0, 5, 1)), 0);
        assert_eq!(workers_for(&demand(1.0, Some(1000), 10, 0), &policy(0, 5, 0)), 2);
    }
}
