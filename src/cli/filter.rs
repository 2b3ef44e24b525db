//! Parsing of the filter flags shared by list, cancel and replay-dead: statuses and times. A time is
//! checked as soon as it is read, and placed against the client's clock only once there is one.

use crate::Error;
use crate::error::Input;
use crate::job::JobStatus;
use crate::time::{UnixMillis, parse_duration, parse_instant_str};

/// Statuses from `--status a,b --status c`.
pub fn statuses(values: &[String]) -> Result<Vec<JobStatus>, Error> {
    let mut out = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let v = v.trim();
        if v.is_empty() {
            continue;
        }
        let status: JobStatus = v
            .parse()
            .map_err(|e: String| Error::invalid(Input::Status, format!("--status: {e}")))?;
        if !out.contains(&status) {
            out.push(status);
        }
    }
    Ok(out)
}

/// A point in time from `--since`/`--until`, as given: a duration ago or a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// This long before now.
    Ago(std::time::Duration),
    /// This instant.
    At(UnixMillis),
}

impl When {
    /// The instant this names, as of `now`.
    pub fn at(self, now: UnixMillis) -> UnixMillis {
        match self {
            When::Ago(d) => now.minus(d),
            When::At(t) => t,
        }
    }
}

/// A point in time from `--since`/`--until`: a duration ago (`1h`, `7d`) or a time (RFC 3339, Unix seconds).
pub fn when(flag: &str, text: &str) -> Result<When, Error> {
    if let Ok(d) = parse_duration(text) {
        return Ok(When::Ago(d));
    }
    parse_instant_str(text).map(When::At).map_err(|_| {
        Error::invalid(
            Input::Time,
            format!("{flag} {text:?}: expected a duration ago (30m, 7d) or a time (2026-01-31T09:00:00Z)"),
        )
    })
}

/// Values from repeatable, comma-separable flags.
pub fn list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}
