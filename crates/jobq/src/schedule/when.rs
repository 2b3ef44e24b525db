//! When a schedule ticks: a cron expression in a time zone (parsed and walked by `croner`, whose
//! daylight-saving rules are the ones jobq documents: a fixed wall time the clock skips runs once at
//! the first valid instant after it, one the clock repeats runs once at its first occurrence), or a
//! fixed interval aligned to multiples of itself since the Unix epoch.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};

use crate::time::UnixMillis;

/// A schedule's ticks.
#[derive(Clone, PartialEq)]
pub enum When {
    /// The instants a cron expression names in a time zone.
    Cron {
        /// As written, for display.
        text: String,
        /// Parsed.
        cron: Box<Cron>,
        /// The wall clock it is read on.
        zone: Tz,
    },
    /// Every multiple of this interval since the Unix epoch.
    Every(Duration),
}

impl fmt::Debug for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl When {
    /// A cron expression (5 fields, or 6 with seconds first; `@hourly`, `@daily`, `@weekly`,
    /// `@monthly`, `@yearly`) read in the time zone named (IANA, e.g. `Europe/Berlin`).
    pub fn cron(text: &str, zone: &str) -> Result<When, String> {
        let zone: Tz = zone
            .parse()
            .map_err(|_| format!("unknown time zone {zone:?} (expected an IANA name such as Europe/Berlin)"))?;
        let parser = CronParser::builder().seconds(Seconds::Optional).build();
        let cron = parser
            .parse(text.trim())
            .map_err(|e| format!("cron expression {text:?} does not parse: {e}"))?;
        let when = When::Cron {
            text: text.trim().to_string(),
            cron: Box::new(cron),
            zone,
        };
        // An expression that names no instant at all (February 30th) is refused now, not at run time.
        if when.next_after(UnixMillis(0)).is_none() {
            return Err(format!("cron expression {text:?} never matches"));
        }
        Ok(when)
    }

    /// A fixed interval, at least a second and a whole number of milliseconds.
    pub fn every(interval: Duration) -> Result<When, String> {
        if interval < Duration::from_secs(1) {
            return Err(format!(
                "interval {} is under the smallest, 1s",
                crate::time::format_duration(interval)
            ));
        }
        Ok(When::Every(interval))
    }

    /// How the config spells it, with its time zone.
    pub fn describe(&self) -> String {
        match self {
            When::Cron { text, .. } => text.clone(),
            When::Every(d) => format!("every {}", crate::time::format_duration(*d)),
        }
    }

    /// The time zone its wall times are read in (`UTC` for an interval).
    pub fn zone(&self) -> String {
        match self {
            When::Cron { zone, .. } => zone.name().to_string(),
            When::Every(_) => "UTC".into(),
        }
    }

    /// The first tick strictly after `t`, `None` when there is none before the year 5000.
    pub fn next_after(&self, t: UnixMillis) -> Option<UnixMillis> {
        match self {
            When::Every(interval) => {
                let step = interval.as_millis().min(i64::MAX as u128) as i64;
                Some(UnixMillis((t.0.div_euclid(step) + 1) * step))
            }
            When::Cron { cron, zone, .. } => {
                let start: DateTime<Tz> =
                    zone.from_utc_datetime(&DateTime::<Utc>::from_timestamp_millis(t.0)?.naive_utc());
                let next = cron.find_next_occurrence(&start, false).ok()?;
                Some(UnixMillis(next.timestamp_millis()))
            }
        }
    }

    /// The newest tick at or before `t`, `None` when there is none after the year 1.
    pub fn latest_at_or_before(&self, t: UnixMillis) -> Option<UnixMillis> {
        match self {
            When::Every(interval) => {
                let step = interval.as_millis().min(i64::MAX as u128) as i64;
                Some(UnixMillis(t.0.div_euclid(step) * step))
            }
            When::Cron { cron, zone, .. } => {
                let start: DateTime<Tz> =
                    zone.from_utc_datetime(&DateTime::<Utc>::from_timestamp_millis(t.0)?.naive_utc());
                let previous = cron.find_previous_occurrence(&start, true).ok()?;
                Some(UnixMillis(previous.timestamp_millis()))
            }
        }
    }

    /// The ticks in `(after, until]`, oldest first, at most `limit` of them (the newest are kept when
    /// there are more: a long outage of a frequent schedule must not make an unbounded list).
    pub fn ticks_between(&self, after: UnixMillis, until: UnixMillis, limit: usize) -> Vec<UnixMillis> {
        let mut out = std::collections::VecDeque::new();
        let mut t = after;
        if let When::Every(interval) = self {
            // Start near the end when the span holds more ticks than are kept.
            let step = interval.as_millis().min(i64::MAX as u128) as i64;
            let span = until.0.saturating_sub(after.0) / step;
            if span > limit as i64 {
                t = UnixMillis(until.0 - step * limit as i64);
            }
        }
        while let Some(next) = self.next_after(t) {
            if next > until {
                break;
            }
            if out.len() == limit {
                out.pop_front();
            }
            out.push_back(next);
            t = next;
        }
        out.into()
    }
}
