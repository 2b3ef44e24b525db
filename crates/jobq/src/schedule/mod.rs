//! Schedules: jobs enqueued at the ticks of a cron expression or a fixed interval, by every worker's
//! scheduler at once, each tick exactly once.
//!
//! No worker leads. A tick is an instant and a job with an id made from the schedule's name and that
//! instant; every scheduler that sees the tick due asks the store to fire it, and the store, which
//! records the newest tick each schedule has handled, lets exactly one of them enqueue it
//! ([`crate::store::Store::fire_ticks`]). What is here is the part that needs no store: when the ticks
//! fall (`when.rs`), which of them are due given what the store recorded (`plan.rs`), the job a tick
//! becomes, and the loop each worker runs (`scheduler.rs`).

mod plan;
mod scheduler;
mod when;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::value::RawValue;

pub use plan::{due_ticks, missed_ticks};
pub use scheduler::{SCHEDULER_POLL, run as run_scheduler};
pub use when::When;

use crate::job::{JobId, Join, Limits, NewJob, UniqueMode};
use crate::store::{Overlap, ScheduleKey, Tick};
use crate::time::UnixMillis;

/// Which missed ticks a schedule enqueues when its scheduler comes back (every worker was down, or the
/// store unreachable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatchUp {
    /// Only the most recent missed tick, once (the default).
    #[default]
    Latest,
    /// Every missed tick within this window before now, oldest first (`0s`: none).
    Within(Duration),
}

/// A schedule, resolved from the config: when it ticks and the job each tick enqueues.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Its name, unique in the store.
    pub name: String,
    /// When it ticks.
    pub when: When,
    /// The job's type.
    pub job_type: String,
    /// The job's payload, compact JSON.
    pub payload: Box<RawValue>,
    /// The job's queue.
    pub queue: String,
    /// Meta added to every tick's job (beside `schedule` and `scheduledFor`).
    pub meta: BTreeMap<String, String>,
    /// The job's priority.
    pub priority: i32,
    /// The job's attempts, `None` for the default.
    pub max_attempts: Option<u32>,
    /// The job's time-out.
    pub timeout: Option<Duration>,
    /// Each tick's job runs up to this much after the tick (the same delay for a tick on every worker).
    pub jitter: Option<Duration>,
    /// Which missed ticks are enqueued.
    pub catch_up: CatchUp,
    /// What a tick does while the previous tick's job is alive.
    pub overlap: Overlap,
    /// Paused by the config (`jobq schedules resume` cannot override it).
    pub paused: bool,
}

impl CatchUp {
    /// How the config spells it.
    pub fn describe(self) -> String {
        match self {
            CatchUp::Latest => "the newest missed tick (default)".into(),
            CatchUp::Within(window) => format!("\"{}\"", crate::time::format_duration(window)),
        }
    }
}

impl Schedule {
    /// Where the store files it.
    pub fn key(&self) -> ScheduleKey {
        ScheduleKey {
            name: self.name.clone(),
            queue: self.queue.clone(),
        }
    }

    /// The id of a tick's job: the same on every worker, so the store can tell a tick enqueued twice.
    pub fn tick_id(&self, at: UnixMillis) -> JobId {
        JobId::from_stored(format!("sched:{}@{}", self.name, at.to_rfc3339()))
    }

    /// The job a tick enqueues, created `now`, with `meta.schedule` and `meta.scheduledFor`.
    pub fn tick_job(&self, at: UnixMillis, now: UnixMillis, limits: &Limits) -> NewJob {
        self.job(self.tick_id(at), at, at.plus(self.jitter_of(at)), now, limits)
    }

    /// The job of a run outside the tick sequence (`jobq schedules trigger`): a fresh id, runnable now.
    pub fn triggered_job(&self, now: UnixMillis, limits: &Limits) -> NewJob {
        let mut job = self.job(JobId::generate(), now, now, now, limits);
        job.meta.insert("trigger".into(), "manual".into());
        job
    }

    /// The tick for the store.
    pub fn tick(&self, at: UnixMillis, now: UnixMillis, limits: &Limits) -> Tick {
        Tick {
            schedule: self.name.clone(),
            at,
            job: self.tick_job(at, now, limits),
            overlap: self.overlap,
        }
    }

    fn job(&self, id: JobId, at: UnixMillis, run_at: UnixMillis, now: UnixMillis, limits: &Limits) -> NewJob {
        let mut meta = self.meta.clone();
        meta.insert("schedule".into(), self.name.clone());
        meta.insert("scheduledFor".into(), at.to_rfc3339());
        NewJob {
            id,
            queue: self.queue.clone(),
            job_type: self.job_type.clone(),
            payload: self.payload.clone(),
            meta,
            priority: self.priority,
            max_attempts: self.max_attempts.unwrap_or(limits.default_max_attempts),
            run_at,
            unique_key: None,
            unique_mode: UniqueMode::Coalesce,
            timeout_ms: self.timeout.map(|t| t.as_millis().min(u128::from(u64::MAX)) as u64),
            expires_at: None,
            created_at: now,
            after: Vec::new(),
            join: Join::All,
        }
    }

    /// A tick's share of the jitter: the same on every worker (a hash of the name and the instant), so
    /// that racing schedulers enqueue the same job.
    fn jitter_of(&self, at: UnixMillis) -> Duration {
        let Some(jitter) = self.jitter.filter(|j| !j.is_zero()) else {
            return Duration::ZERO;
        };
        // FNV-1a: stable across builds and machines, unlike the standard library's hasher.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in self.name.bytes().chain(at.0.to_le_bytes()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        let span = jitter.as_millis().min(u128::from(u64::MAX)) as u64;
        Duration::from_millis(hash % span.max(1))
    }
}

#[cfg(test)]
mod tests;
