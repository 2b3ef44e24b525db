//! Percentiles of measured times: nearest rank, over every sample (no sampling, no histogram buckets).

use serde::Serialize;

/// The spread of a set of times, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Samples.
    pub count: usize,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl Summary {
    /// The summary of `samples` (milliseconds); `None` when there are none.
    pub fn of(mut samples: Vec<f64>) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let n = samples.len();
            let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
            samples[i]
        };
        Some(Summary {
            count: samples.len(),
            p50: rank(0.50),
            p99: rank(0.99),
            max: samples[samples.len() - 1],
            mean: samples.iter().sum::<f64>() / samples.len() as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = Summary::of((1..=100).rev().map(f64::from).collect()).unwrap();
        assert_eq!((s.count, s.p50, s.p99, s.max, s.mean), (100, 50.0, 99.0, 100.0, 50.5));
        let one = Summary::of(vec![3.0]).unwrap();
        assert_eq!((one.p50, one.p99, one.max), (3.0, 3.0, 3.0));
        assert_eq!(Summary::of(Vec::new()), None);
    }
}
