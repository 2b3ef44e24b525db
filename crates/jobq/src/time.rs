//! Instants and clocks.
//!
//! Every time jobq stores is an integer count of Unix milliseconds ([`UnixMillis`]). Stores never read
//! the wall clock: callers pass `now` in, taken from a [`Clock`], so back-off, rescue and cleanup can be
//! tested exactly with a clock a test moves by hand (any type implementing [`Clock`]).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// An instant as whole milliseconds since the Unix epoch, the one time representation of every store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct UnixMillis(pub i64);

impl UnixMillis {
    /// The current wall-clock time.
    pub fn now() -> Self {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        UnixMillis(since.as_millis() as i64)
    }

    /// This instant moved later by `d` (saturating).
    pub fn plus(self, d: Duration) -> Self {
        UnixMillis(self.0.saturating_add(d.as_millis().min(i64::MAX as u128) as i64))
    }

    /// This instant moved earlier by `d` (saturating).
    pub fn minus(self, d: Duration) -> Self {
        UnixMillis(self.0.saturating_sub(d.as_millis().min(i64::MAX as u128) as i64))
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: UnixMillis) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0).max(0) as u64)
    }

    /// RFC 3339 in UTC with millisecond precision, e.g. `2026-11-29T08:25:39.123Z`.
    pub fn to_rfc3339(self) -> String {
        match chrono::DateTime::from_timestamp_millis(self.0) {
            Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            None => self.0.to_string(),
        }
    }
}

impl fmt::Display for UnixMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// A source of the current time. Stores get time from their callers, who get it from a `Clock`.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> UnixMillis;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixMillis {
        UnixMillis::now()
    }
}

/// Parses a duration such as `30s`, `5m`, `7d`, `250ms` or `1h30m`; a bare number means seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration (expected e.g. 30s, 5m, 7d)".into());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(t).map_err(|_| format!("invalid duration {t:?} (expected e.g. 500ms, 30s, 5m, 2h, 7d)"))
}

/// Formats a duration compactly for people: `850ms`, `12s`, `3m20s`, `2h5m`, `4d3h`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    let (d_, h, m, s) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d_, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) if s == 0 => format!("{m}m"),
        (0, 0, _) => format!("{m}m{s}s"),
        (0, _, 0) => format!("{h}h"),
        (0, _, _) => format!("{h}h{m}m"),
        (_, 0, _) => format!("{d_}d"),
        _ => format!("{d_}d{h}h"),
    }
}

/// Says how far `at` is from `now` for people: `3m ago`, `in 20s`, `now`.
pub fn relative(at: UnixMillis, now: UnixMillis) -> String {
    let delta = now.0 - at.0;
    if delta.abs() < 1000 {
        "now".to_string()
    } else if delta > 0 {
        format!("{} ago", format_duration(Duration::from_millis(delta as u64)))
    } else {
        format!("in {}", format_duration(Duration::from_millis((-delta) as u64)))
    }
}

/// Reads a point in time leniently: Unix seconds or milliseconds (numbers below 10^11 are seconds,
/// which covers every date before the year 5138), fractional seconds, or RFC 3339 text.
pub fn parse_instant(value: &serde_json::Value) -> Result<UnixMillis, String> {
    match value {
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(from_number(i as f64))
            } else if let Some(f) = n.as_f64() {
                Ok(from_number(f))
            } else {
                Err(format!("time {n} is out of range"))
            }
        }
        serde_json::Value::String(s) => parse_instant_str(s),
        other => Err(format!(
            "expected a time (Unix seconds, milliseconds or RFC 3339), got {other}"
        )),
    }
}

/// Text form of [`parse_instant`]: digits are a Unix time, anything else must be RFC 3339.
pub fn parse_instant_str(s: &str) -> Result<UnixMillis, String> {
    let t = s.trim();
    if let Ok(f) = t.parse::<f64>() {
        return Ok(from_number(f));
    }
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| UnixMillis(d.timestamp_millis()))
        .map_err(|_| format!("invalid time {t:?} (expected RFC 3339 like 2026-01-31T09:00:00Z, or Unix seconds)"))
}

fn from_number(f: f64) -> UnixMillis {
    const SECONDS_BELOW: f64 = 100_000_000_000.0;
    if f.abs() < SECONDS_BELOW {
        UnixMillis((f * 1000.0).round() as i64)
    } else {
        UnixMillis(f.round() as i64)
    }
}

/// The `nth` (from 1) of pauses in a row that start at `first` and double up to `most`: the back-off
/// of retried store calls, restarted programs and empty claims.
pub(crate) fn doubling(first: Duration, nth: u32, most: Duration) -> Duration {
    first.saturating_mul(1 << nth.saturating_sub(1).min(20)).min(most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn doubling_pauses_start_at_the_first_and_stop_at_the_most() {
        let ms = |n| doubling(Duration::from_millis(5), n, Duration::from_millis(40)).as_millis();
        assert_eq!((0..=6).map(ms).collect::<Vec<_>>(), vec![5, 5, 10, 20, 40, 40, 40]);
        assert_eq!(ms(u32::MAX), 40);
    }

    #[test]
    fn instants_accept_seconds_millis_and_rfc3339() {
        assert_eq!(
            parse_instant(&json!(1_700_000_000)).unwrap(),
            UnixMillis(1_700_000_000_000)
        );
        assert_eq!(
            parse_instant(&json!(1_700_000_000_123i64)).unwrap(),
            UnixMillis(1_700_000_000_123)
        );
        assert_eq!(
            parse_instant(&json!(1_700_000_000.5)).unwrap(),
            UnixMillis(1_700_000_000_500)
        );
        assert_eq!(
            parse_instant(&json!("1700000000")).unwrap(),
            UnixMillis(1_700_000_000_000)
        );
        assert_eq!(
            parse_instant(&json!("2023-11-14T22:13:20Z")).unwrap(),
            UnixMillis(1_700_000_000_000)
        );
        assert_eq!(
            parse_instant(&json!("2023-11-15T00:13:20.250+02:00")).unwrap(),
            UnixMillis(1_700_000_000_250)
        );
        assert!(parse_instant(&json!("yesterday")).is_err());
        assert!(parse_instant(&json!(true)).is_err());
    }

    #[test]
    fn rfc3339_round_trips() {
        let t = UnixMillis(1_700_000_000_123);
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123Z");
        assert_eq!(parse_instant_str(&t.to_rfc3339()).unwrap(), t);
    }

    #[test]
    fn durations_parse_and_format() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(format_duration(Duration::from_secs(200)), "3m20s");
        assert_eq!(format_duration(Duration::from_secs(7200 + 300)), "2h5m");
        assert_eq!(format_duration(Duration::from_secs(86_400 * 4 + 3 * 3600)), "4d3h");
    }

    #[test]
    fn relative_times_read_naturally() {
        let now = UnixMillis(1_000_000);
        assert_eq!(relative(UnixMillis(1_000_000 - 180_000), now), "3m ago");
        assert_eq!(relative(UnixMillis(1_000_000 + 20_000), now), "in 20s");
        assert_eq!(relative(now, now), "now");
    }
}
