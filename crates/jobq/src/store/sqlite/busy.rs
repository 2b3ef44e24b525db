//! How a writer waits for another connection's write lock: SQLite's busy handler, replaced.
//!
//! Within one store the write gate keeps this process's writers apart, but two stores on one file (two
//! workers in one process) or two processes meet in SQLite's lock, and its own handler
//! (`busy_timeout`) sleeps 1, 2, 5, 10, 15, 20, 25 … ms between tries. A write transaction of a few
//! jobs holds the lock for well under a millisecond, so the waiter sleeps far longer than the holder
//! needs, and with several workers taking turns on a claim and its outcomes, those sleeps are most of
//! the time a job takes. This handler tries again after 50 µs, doubling up to 2 ms, and gives up after
//! `busy_timeout` as SQLite's does.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

use rusqlite::ffi;

/// The first pause before trying the lock again.
const FIRST_PAUSE: Duration = Duration::from_micros(50);
/// The longest pause between two tries.
const LONGEST_PAUSE: Duration = Duration::from_millis(2);

thread_local! {
    /// When the current wait for the lock began. SQLite calls the handler on the thread that runs the
    /// statement, with a count of 0 at the start of each wait.
    static WAITING_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Set while this thread runs statements that must not wait for the lock (see [`without_waiting`]).
    static NOT_WAITING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with every connection's handler on this thread giving up at once where another
/// connection holds the lock (`SQLITE_BUSY`), instead of waiting: for statements run on an async
/// runtime's own thread, which must not sleep (see `direct.rs`).
pub(super) fn without_waiting<T>(work: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            NOT_WAITING.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(NOT_WAITING.with(|flag| flag.replace(true)));
    work()
}

/// Installs the handler on a connection, replacing its `busy_timeout`.
///
/// # Safety
/// `db` must be an open connection that no other thread uses during the call.
pub(super) unsafe fn install(db: *mut ffi::sqlite3, timeout: Duration) {
    // The time-out travels as the handler's argument (an address that points nowhere): nothing to free.
    let millis = usize::try_from(timeout.as_millis()).unwrap_or(usize::MAX);
    unsafe {
        ffi::sqlite3_busy_handler(db, Some(on_busy), std::ptr::without_provenance_mut(millis));
    }
}

/// SQLite's callback: 1 to try again, 0 to give up with `SQLITE_BUSY`.
unsafe extern "C" fn on_busy(timeout_ms: *mut c_void, count: c_int) -> c_int {
    if NOT_WAITING.with(Cell::get) {
        return 0;
    }
    let timeout = Duration::from_millis(timeout_ms.addr() as u64);
    let now = Instant::now();
    let since = WAITING_SINCE.with(|since| match since.get() {
        Some(start) if count > 0 => start,
        _ => {
            since.set(Some(now));
            now
        }
    });
    match pause(count, now.duration_since(since), timeout) {
        Some(pause) => {
            std::thread::sleep(pause);
            1
        }
        None => 0,
    }
}

/// The pause before the try after `count` failed ones, `waited` into a wait of at most `timeout`;
/// `None` when the wait is over.
pub(super) fn pause(count: c_int, waited: Duration, timeout: Duration) -> Option<Duration> {
    let left = timeout.checked_sub(waited).filter(|left| !left.is_zero())?;
    let doublings = count.clamp(0, 16) as u32;
    Some(FIRST_PAUSE.saturating_mul(1 << doublings).min(LONGEST_PAUSE).min(left))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_from_fifty_microseconds_up_to_two_milliseconds() {
        let long = Duration::from_secs(30);
        let pauses: Vec<u128> = (0..8)
            .map(|n| pause(n, Duration::ZERO, long).unwrap().as_micros())
            .collect();
        assert_eq!(pauses, [50, 100, 200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(pause(10_000, Duration::ZERO, long), Some(LONGEST_PAUSE));
    }

    #[test]
    fn the_wait_ends_at_the_time_out_and_never_sleeps_past_it() {
        let timeout = Duration::from_millis(10);
        assert_eq!(
            pause(9, Duration::from_millis(9), timeout),
            Some(Duration::from_millis(1))
        );
        assert_eq!(pause(9, timeout, timeout), None);
        assert_eq!(pause(0, Duration::ZERO, Duration::ZERO), None);
    }
}
