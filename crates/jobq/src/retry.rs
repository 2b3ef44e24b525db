//! Back-off: when a failed attempt runs again. Pure arithmetic, no I/O.
//!
//! `min(max_delay, base_delay × multiplier^(attempt-1))`, then spread by ± `jitter` so that jobs that
//! failed together do not come back together.

use std::time::Duration;

use serde::Deserialize;

use crate::job::DEFAULT_MAX_ATTEMPTS;

/// Retry settings, from `[retry]` in the config and per handler.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct RetryPolicy {
    /// Runs allowed, the first included.
    pub max_attempts: u32,
    /// Delay after the first failure.
    pub base_delay: Duration,
    /// Growth per further failure.
    pub multiplier: f64,
    /// Ceiling on the delay.
    pub max_delay: Duration,
    /// Spread as a ratio: 0.2 means ±20 %.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_delay: Duration::from_secs(1),
            multiplier: 2.0,
            max_delay: Duration::from_secs(300),
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// The delay before the run after failed attempt `attempt` (1 = the first run), without jitter.
    pub fn base_delay_after(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(1000) as i32;
        let secs = self.base_delay.as_secs_f64() * self.multiplier.max(1.0).powi(exp);
        let capped = secs.min(self.max_delay.as_secs_f64());
        Duration::from_secs_f64(capped.max(0.0))
    }

    /// The delay with jitter applied; `unit` is a random number in [0, 1).
    pub fn delay_after(&self, attempt: u32, unit: f64) -> Duration {
        let base = self.base_delay_after(attempt).as_secs_f64();
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = 1.0 + jitter * (2.0 * unit.clamp(0.0, 1.0) - 1.0);
        Duration::from_secs_f64((base * factor).max(0.0))
    }

    /// The delay with jitter from the thread's random generator.
    pub fn random_delay_after(&self, attempt: u32) -> Duration {
        self.delay_after(attempt, rand::random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_geometrically_up_to_the_cap() {
        let p = RetryPolicy::default();
        let secs: Vec<u64> = (1..=10).map(|a| p.base_delay_after(a).as_secs()).collect();
        assert_eq!(secs, vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
    }

    #[test]
    fn jitter_spreads_within_the_ratio() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay_after(3, 0.0), Duration::from_secs_f64(3.2));
        assert_eq!(p.delay_after(3, 0.5), Duration::from_secs(4));
        assert!(p.delay_after(3, 0.999_999) <= Duration::from_secs_f64(4.8));
        for _ in 0..1000 {
            let d = p.random_delay_after(2).as_secs_f64();
            assert!((1.6..=2.4).contains(&d), "{d}");
        }
    }

    #[test]
    fn no_jitter_means_exact_delays() {
        let p = RetryPolicy {
            jitter: 0.0,
            base_delay: Duration::from_millis(100),
            multiplier: 3.0,
            ..Default::default()
        };
        assert_eq!(p.delay_after(3, 0.9), Duration::from_millis(900));
    }

    #[test]
    fn huge_attempt_numbers_do_not_overflow() {
        let p = RetryPolicy::default();
        assert_eq!(p.base_delay_after(u32::MAX), Duration::from_secs(300));
    }
}
