//! When `jobq autoscale --exec` runs its program: when the figure differs from the last one the
//! program took, and the cool-down since its last run has passed. A pure state machine over
//! instants the caller passes in, so the rules are tested without waiting.
//!
//! One cool-down for both directions: a platform that starts workers slowly should not be asked
//! again before the last change has had its effect, whichever way it went. A run that failed is not
//! taken as applied, so the same figure is tried again once the cool-down has passed.

use std::time::{Duration, Instant};

/// The program's last run and the figure it last took.
#[derive(Debug, Clone)]
pub struct Cooldown {
    period: Duration,
    applied: Option<u32>,
    last_run: Option<Instant>,
}

impl Cooldown {
    /// No run yet: the first figure is applied at once.
    pub fn new(period: Duration) -> Cooldown {
        Cooldown {
            period,
            applied: None,
            last_run: None,
        }
    }

    /// The figure the program last took successfully.
    pub fn applied(&self) -> Option<u32> {
        self.applied
    }

    /// Whether to run the program for `workers` at `now`.
    pub fn due(&self, workers: u32, now: Instant) -> bool {
        if self.applied == Some(workers) {
            return false;
        }
        match self.last_run {
            Some(at) => now.saturating_duration_since(at) >= self.period,
            None => true,
        }
    }

    /// Records a run at `now` for `workers`, and whether it succeeded.
    pub fn ran(&mut self, workers: u32, succeeded: bool, now: Instant) {
        self.last_run = Some(now);
        if succeeded {
            self.applied = Some(workers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_figure_runs_at_once_and_the_same_one_never_again() {
        let t0 = Instant::now();
        let mut c = Cooldown::new(Duration::from_secs(60));
        assert!(c.due(3, t0));
        c.ran(3, true, t0);
        assert!(!c.due(3, t0 + Duration::from_secs(600)));
        assert_eq!(c.applied(), Some(3));
    }

    #[test]
    fn a_change_waits_for_the_cool_down() {
        let t0 = Instant::now();
        let mut c = Cooldown::new(Duration::from_secs(60));
        c.ran(3, true, t0);
        assert!(!c.due(5, t0 + Duration::from_secs(59)));
        assert!(c.due(5, t0 + Duration::from_secs(60)));
        c.ran(5, true, t0 + Duration::from_secs(60));
        assert!(!c.due(3, t0 + Duration::from_secs(90)), "down again: cools down too");
    }

    #[test]
    fn a_failed_run_is_tried_again_after_the_cool_down() {
        let t0 = Instant::now();
        let mut c = Cooldown::new(Duration::from_secs(10));
        c.ran(4, false, t0);
        assert_eq!(c.applied(), None);
        assert!(!c.due(4, t0 + Duration::from_secs(5)));
        assert!(c.due(4, t0 + Duration::from_secs(10)));
    }
}
