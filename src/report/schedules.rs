//! The schedules listing: each configured schedule with what the store recorded of it, as `jobq
//! schedules -o json` prints it and `GET /api/v1/schedules` answers.

use serde::Serialize;

use jobq::job::JobStatus;
use jobq::schedule::Schedule;
use jobq::store::ScheduleState;
use jobq::time::UnixMillis;

/// One schedule of the listing.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRow {
    /// Its name in the config.
    pub name: String,
    /// When it ticks, as people read it (`cron 0 3 * * *`, `every 5m`).
    pub when: String,
    /// The time zone its ticks are computed in.
    pub timezone: String,
    /// The queue its jobs go to.
    pub queue: String,
    /// The type of its jobs.
    #[serde(rename = "type")]
    pub job_type: String,
    /// Its next tick after now.
    pub next_run: Option<UnixMillis>,
    /// Its next ticks after now, [`NEXT_RUNS`] of them (fewer when it ends sooner), the first
    /// being `next_run`.
    pub next_runs: Vec<UnixMillis>,
    /// The newest tick handled.
    pub last_tick: Option<UnixMillis>,
    /// The job of the newest tick enqueued.
    pub last_job: Option<String>,
    /// That job's status, when it still exists.
    pub last_job_status: Option<JobStatus>,
    /// Paused by the config or in the store.
    pub paused: bool,
    /// What a tick does while the previous tick's job is live.
    pub overlap: &'static str,
}

/// How many upcoming ticks a row lists: enough to see a schedule's rhythm (and a cron expression
/// that does not tick when its author meant), computed by arithmetic on the expression alone.
pub const NEXT_RUNS: usize = 5;

/// The rows of `schedules`, each with its recorded state (`states` in the same order), as of `now`.
pub fn schedule_rows(schedules: &[Schedule], states: Vec<Option<ScheduleState>>, now: UnixMillis) -> Vec<ScheduleRow> {
    schedules
        .iter()
        .zip(states)
        .map(|(s, state)| ScheduleRow {
            name: s.name.clone(),
            when: s.when.describe(),
            timezone: s.when.zone(),
            queue: s.queue.clone(),
            job_type: s.job_type.clone(),
            next_run: s.when.next_after(now),
            next_runs: std::iter::successors(s.when.next_after(now), |t| s.when.next_after(*t))
                .take(NEXT_RUNS)
                .collect(),
            last_tick: state.as_ref().and_then(|st| st.last_tick),
            last_job: state
                .as_ref()
                .and_then(|st| st.last_job.as_ref().map(|j| j.to_string())),
            last_job_status: state.as_ref().and_then(|st| st.last_job_status),
            paused: s.paused || state.as_ref().is_some_and(|st| st.paused),
            overlap: s.overlap.as_str(),
        })
        .collect()
}
