//! Which ticks of a schedule are due now, given what the store recorded of it: the part of the
//! scheduler that is pure arithmetic, so that catch-up and its edges are tested without a clock.

use super::{CatchUp, Schedule};
use crate::store::ScheduleState;
use crate::time::UnixMillis;

/// Most ticks of one schedule fired in one round: a frequent schedule back from a long outage with a
/// wide catch-up window fires the newest this many (and the rest of the window is lost, as if it were
/// narrower).
pub const MAX_TICKS_PER_ROUND: usize = 10_000;

/// The ticks of `schedule` to fire now, oldest first.
///
/// `watching_since` is when this scheduler last began watching without a gap (it started, or the
/// store came back): a tick after that instant came due while it watched, and is fired however late
/// it is seen (a busy machine, a slow store). A tick at or before it was missed (every worker was down,
/// or the store unreachable) and the schedule's catch-up rule decides: only the newest missed tick
/// (the default), each missed tick within the window before now (`catch_up = "1h"`), or none
/// (`catch_up = "0s"`). Nothing at or before what the store handled (`handled_until`) comes back.
pub fn due_ticks(
    schedule: &Schedule,
    state: &ScheduleState,
    now: UnixMillis,
    watching_since: UnixMillis,
) -> Vec<UnixMillis> {
    let handled = state.handled_until();
    if handled >= now {
        return Vec::new();
    }
    let when = &schedule.when;
    let missed_until = watching_since.min(now);
    let mut due = Vec::new();
    if handled < missed_until {
        match schedule.catch_up {
            CatchUp::Latest => due.extend(when.latest_at_or_before(missed_until).filter(|&t| t > handled)),
            CatchUp::Within(window) => {
                let window_start = UnixMillis(now.minus(window).0 - 1);
                due = when.ticks_between(handled.max(window_start), missed_until, MAX_TICKS_PER_ROUND);
            }
        }
    }
    let seen = when.ticks_between(handled.max(missed_until), now, MAX_TICKS_PER_ROUND);
    due.extend(seen);
    if due.len() > MAX_TICKS_PER_ROUND {
        due.drain(..due.len() - MAX_TICKS_PER_ROUND);
    }
    due
}

/// How many ticks of `schedule` were missed: those after what the store handled and at or before
/// `watching_since` (or `now`, if earlier), counted up to `MAX_TICKS_PER_ROUND`.
pub fn missed_ticks(schedule: &Schedule, state: &ScheduleState, now: UnixMillis, watching_since: UnixMillis) -> usize {
    let handled = state.handled_until();
    let until = watching_since.min(now);
    if handled >= until {
        return 0;
    }
    schedule.when.ticks_between(handled, until, MAX_TICKS_PER_ROUND).len()
}
