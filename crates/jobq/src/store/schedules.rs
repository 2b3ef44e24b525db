//! What the store keeps of each schedule, and the ticks it is asked to fire (see the schedule methods
//! of [`super::Store`]). The store knows nothing of cron or time zones: a tick is an instant and a job,
//! and the store's part is to let exactly one enqueue of each tick win, however many workers race.

use serde::Serialize;

use crate::job::{JobId, JobStatus, NewJob};
use crate::time::UnixMillis;

/// A schedule as the store files it: its name, and the queue its jobs go to (a store that keeps each
/// queue apart, Redis, keeps the schedule's state beside the queue's jobs so one script can change
/// both).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScheduleKey {
    /// The schedule's name, unique in the store.
    pub name: String,
    /// The queue its jobs are enqueued to.
    pub queue: String,
}

/// What [`super::Store::set_schedule_paused`] changes: one schedule's pause.
#[derive(Debug, Clone, Copy)]
pub struct SetSchedulePaused<'a> {
    /// The schedule.
    pub key: &'a ScheduleKey,
    /// Pause (true) or resume.
    pub paused: bool,
    /// The present.
    pub now: UnixMillis,
    /// On a resume: never enqueue the ticks missed while paused.
    pub skip_missed: bool,
}

/// What the store recorded of one schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleState {
    /// The schedule's name.
    pub name: String,
    /// The newest tick handled (enqueued, or skipped by the overlap rule); `None` before the first.
    pub last_tick: Option<UnixMillis>,
    /// No tick before this instant is ever enqueued: when the schedule was first seen, or resumed
    /// without catching up.
    pub not_before: UnixMillis,
    /// Paused ticks are not enqueued.
    pub paused: bool,
    /// The job of the newest tick enqueued.
    pub last_job: Option<JobId>,
    /// That job's status, `None` when there is no such job (never enqueued, or cleaned up since).
    pub last_job_status: Option<JobStatus>,
}

impl ScheduleState {
    /// Ticks at or before this instant are done with: the later of the last tick handled and the
    /// instant before `not_before`.
    pub fn handled_until(&self) -> UnixMillis {
        let before_start = UnixMillis(self.not_before.0 - 1);
        self.last_tick.map_or(before_start, |t| t.max(before_start))
    }
}

/// What a tick does while the previous tick's job is still alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Overlap {
    /// Every tick enqueues.
    #[default]
    Allow,
    /// No tick enqueues while the previous tick's job is pending, running or waiting.
    Skip,
    /// No tick enqueues while the previous tick's job has not started (pending).
    OnePending,
}

impl Overlap {
    /// The spelling of the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Allow => "allow",
            Overlap::Skip => "skip",
            Overlap::OnePending => "one-pending",
        }
    }

    /// Reads the config file's spelling.
    pub fn parse(text: &str) -> Option<Overlap> {
        match text {
            "allow" => Some(Overlap::Allow),
            "skip" => Some(Overlap::Skip),
            "one-pending" => Some(Overlap::OnePending),
            _ => None,
        }
    }

    /// Whether a tick must leave its job out while the previous tick's job is in `status`.
    pub fn holds_back(self, status: Option<JobStatus>) -> bool {
        match (self, status) {
            (Overlap::Allow, _) | (_, None) => false,
            (Overlap::Skip, Some(s)) => !s.is_terminal(),
            (Overlap::OnePending, Some(s)) => s == JobStatus::Pending,
        }
    }
}

/// One tick for [`super::Store::fire_ticks`].
#[derive(Debug, Clone)]
pub struct Tick {
    /// The schedule; `job.queue` is its queue.
    pub schedule: String,
    /// The tick's instant.
    pub at: UnixMillis,
    /// The job it enqueues, with the tick's deterministic id.
    pub job: NewJob,
    /// The schedule's overlap rule.
    pub overlap: Overlap,
}

/// What [`super::Store::fire_ticks`] did with one tick.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TickOutcome {
    /// Its job was enqueued, with this id.
    Enqueued(JobId),
    /// An earlier call handled it (or a later tick), or it falls before the schedule's start: nothing
    /// changed.
    AlreadyHandled,
    /// The previous tick's job is still alive and the overlap rule holds this one back; the tick is
    /// recorded as handled.
    Skipped,
    /// The schedule is paused: nothing changed.
    Paused,
    /// The store has no record of the schedule (see [`super::Store::register_schedules`]): nothing
    /// changed.
    Unknown,
}

/// What the store decides for one tick given the schedule's state, and the state after it: written
/// once for every store (the SQL stores decide in Rust under the schedule's row lock; the Redis
/// script keeps the same rules, and the conformance suite holds both to them).
pub(crate) fn decide(state: &mut ScheduleState, tick: &Tick) -> TickOutcome {
    if state.paused {
        return TickOutcome::Paused;
    }
    if tick.at <= state.handled_until() {
        return TickOutcome::AlreadyHandled;
    }
    state.last_tick = Some(tick.at);
    if tick.overlap.holds_back(state.last_job_status) {
        return TickOutcome::Skipped;
    }
    state.last_job = Some(tick.job.id.clone());
    state.last_job_status = Some(JobStatus::Pending);
    TickOutcome::Enqueued(tick.job.id.clone())
}
