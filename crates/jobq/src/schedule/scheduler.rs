//! The loop every worker runs beside its dispatcher (unless `[worker] schedules = false`): read what
//! the store recorded of each schedule, fire the ticks that are due, sleep until the next tick or for
//! [`SCHEDULER_POLL`], whichever comes first. Idle, that is one store read a second, which is also how
//! soon a `jobq schedules pause` is obeyed.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use std::collections::HashMap;

use super::{Schedule, due_ticks, missed_ticks};
use crate::job::Limits;
use crate::store::{DynStore, ScheduleKey, StoreError, Tick, TickOutcome};
use crate::time::{Clock, UnixMillis};

/// Longest sleep between two reads of the schedules' records.
pub const SCHEDULER_POLL: Duration = Duration::from_secs(1);

/// Ticks per store call.
const TICKS_PER_CALL: usize = 500;

/// What one scheduler remembers between rounds.
struct Scheduler {
    store: DynStore,
    clock: Arc<dyn Clock>,
    limits: Limits,
    /// Since when the store has answered every round (see [`due_ticks`]); `None` after a failure.
    watching_since: Option<UnixMillis>,
    /// The last store failure was logged; the next is not, until a round succeeds.
    failing: bool,
    /// Per schedule, the handled tick after which missed ticks were last reported: each gap is
    /// reported once, not every round until a tick is handled.
    reported_gaps: HashMap<String, UnixMillis>,
}

/// Runs the schedules `schedules` holds (a reload sends new ones) until `stop` fires.
pub async fn run(
    store: DynStore,
    clock: Arc<dyn Clock>,
    limits: Limits,
    mut schedules: watch::Receiver<Arc<Vec<Schedule>>>,
    stop: CancellationToken,
) {
    let mut scheduler = Scheduler {
        store,
        clock,
        limits,
        watching_since: None,
        failing: false,
        reported_gaps: HashMap::new(),
    };
    loop {
        let current = schedules.borrow_and_update().clone();
        let pause = match scheduler.round(&current).await {
            Ok(next) => {
                scheduler.failing = false;
                let now = scheduler.clock.now();
                next.map_or(SCHEDULER_POLL, |at| at.since(now).min(SCHEDULER_POLL))
            }
            Err(e) => {
                if !scheduler.failing {
                    tracing::warn!(
                        "scheduler: {}; ticks due meanwhile count as missed (see catch_up)",
                        crate::error::causes(&e)
                    );
                }
                scheduler.failing = true;
                scheduler.watching_since = None;
                SCHEDULER_POLL
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
            changed = schedules.changed() => if changed.is_err() { return },
        }
    }
}

impl Scheduler {
    /// Reads the records, fires what is due; returns when the next tick of any schedule falls.
    async fn round(&mut self, schedules: &[Schedule]) -> Result<Option<UnixMillis>, StoreError> {
        let active: Vec<&Schedule> = schedules.iter().filter(|s| !s.paused).collect();
        if active.is_empty() {
            return Ok(None);
        }
        let keys: Vec<ScheduleKey> = active.iter().map(|s| s.key()).collect();
        let mut states = self.store.schedules(&keys).await?;
        let unrecorded: Vec<ScheduleKey> = keys
            .iter()
            .zip(&states)
            .filter(|(_, state)| state.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        if !unrecorded.is_empty() {
            self.store.register_schedules(&unrecorded, self.clock.now()).await?;
            states = self.store.schedules(&keys).await?;
        }
        let now = self.clock.now();
        let since = *self.watching_since.get_or_insert(now);
        let mut ticks: Vec<Tick> = Vec::new();
        for (schedule, state) in active.iter().zip(&states) {
            let Some(state) = state.as_ref().filter(|s| !s.paused) else {
                continue;
            };
            let due = due_ticks(schedule, state, now, since);
            self.report_gap(schedule, state, now, since, &due);
            for at in due {
                ticks.push(schedule.tick(at, now, &self.limits));
            }
        }
        for batch in ticks.chunks(TICKS_PER_CALL) {
            let outcomes = self.store.fire_ticks(batch).await?;
            for (tick, outcome) in batch.iter().zip(outcomes) {
                log_outcome(tick, &outcome);
            }
        }
        let after = self.clock.now();
        Ok(active.iter().filter_map(|s| s.when.next_after(after)).min())
    }
}

impl Scheduler {
    /// Says once per gap how many ticks of a schedule were missed (every worker down, or the store
    /// unreachable) and how many of them its catch-up rule enqueues.
    fn report_gap(
        &mut self,
        schedule: &Schedule,
        state: &crate::store::ScheduleState,
        now: UnixMillis,
        since: UnixMillis,
        due: &[UnixMillis],
    ) {
        let missed = missed_ticks(schedule, state, now, since);
        let handled = state.handled_until();
        if missed == 0 || self.reported_gaps.get(&schedule.name) == Some(&handled) {
            return;
        }
        self.reported_gaps.insert(schedule.name.clone(), handled);
        let enqueued = due.iter().filter(|&&t| t <= since).count();
        tracing::info!(
            schedule = %schedule.name,
            missed,
            enqueued,
            "schedule: ticks were missed while no worker watched; catch_up = {} enqueues {enqueued}",
            schedule.catch_up.describe()
        );
    }
}

fn log_outcome(tick: &Tick, outcome: &TickOutcome) {
    let (schedule, at) = (&tick.schedule, tick.at);
    match outcome {
        TickOutcome::Enqueued(id) => tracing::debug!(%schedule, tick = %at, job = %id, "schedule: enqueued its tick"),
        TickOutcome::Skipped => tracing::info!(
            %schedule, tick = %at,
            "schedule: skipped a tick, its previous tick's job is still alive (overlap = {})",
            tick.overlap.as_str()
        ),
        TickOutcome::AlreadyHandled | TickOutcome::Paused => {}
        TickOutcome::Unknown => tracing::debug!(%schedule, "schedule: not recorded yet; next round"),
    }
}
