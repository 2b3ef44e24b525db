//! [`UniqueMode`]: what an enqueue does when a job of its queue already holds its unique key, and
//! the one text form every producer spells it in (the CLI, the job JSON, the config) and the stores
//! keep it in.

use std::fmt;
use std::time::Duration;

use crate::input::{Input, InvalidInput};
use crate::time::format_duration;

/// What an enqueue with a unique key does when a live job of its queue holds that key already (the
/// *holder*). The decision is made by the store, atomically with the insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UniqueMode {
    /// The new job is dropped; the answer names the holder (`coalesced`).
    #[default]
    Coalesce,
    /// A holder that has not started (pending or blocked) takes the new job's payload, meta,
    /// priority, run time, attempts, time-out and expiry, and keeps its id, attempt count and error
    /// history (`replaced`). A holder already running or waiting is not touched: the new job is
    /// dropped as under [`UniqueMode::Coalesce`].
    Replace,
    /// As [`UniqueMode::Replace`], and the holder's run time moves to `window` from now (a new job
    /// is created to run `window` from now): the job runs once its key has been quiet for `window`,
    /// but never later than `max_wait` after the holder was first enqueued (`debounced`).
    Debounce {
        /// The quiet period, in milliseconds (positive).
        window_ms: u64,
        /// The longest a holder's run is put off, from its first enqueue (at least `window_ms`).
        max_wait_ms: Option<u64>,
    },
    /// The key stays held for `window` after the holder was created, whether or not it has
    /// finished: a job in that window is dropped, naming the holder (`throttled`). After the window
    /// a live holder still coalesces the new job, as under [`UniqueMode::Coalesce`].
    Throttle {
        /// The window, in milliseconds (positive).
        window_ms: u64,
    },
}

impl UniqueMode {
    /// The mode's name: `coalesce`, `replace`, `debounce` or `throttle`.
    pub fn name(&self) -> &'static str {
        match self {
            UniqueMode::Coalesce => "coalesce",
            UniqueMode::Replace => "replace",
            UniqueMode::Debounce { .. } => "debounce",
            UniqueMode::Throttle { .. } => "throttle",
        }
    }

    /// The mode from its parts as producers give them: a name (or none), a debounce window with its
    /// longest wait, and a throttle window. A window alone names its mode (`debounce = "30s"`); a
    /// name that needs a window must have one; a window of another mode, a zero window, or a longest
    /// wait shorter than the debounce window is refused, naming the input.
    pub fn from_parts(
        name: Option<&str>,
        debounce: Option<Duration>,
        max_wait: Option<Duration>,
        throttle: Option<Duration>,
    ) -> Result<UniqueMode, InvalidInput> {
        let refuse = |what: String| Err(InvalidInput::new(Input::UniqueMode, what));
        let name = match (name, debounce, throttle) {
            (Some(name), _, _) => name,
            (None, Some(_), None) => "debounce",
            (None, None, Some(_)) => "throttle",
            (None, Some(_), Some(_)) => return refuse("a job is either debounced or throttled, not both".into()),
            (None, None, None) if max_wait.is_some() => return refuse("max wait is for debounce only".into()),
            (None, None, None) => return Ok(UniqueMode::Coalesce),
        };
        let ms = |d: Duration, what: &str| -> Result<u64, InvalidInput> {
            match u64::try_from(d.as_millis()) {
                Ok(0) | Err(_) => Err(InvalidInput::new(
                    Input::UniqueMode,
                    format!("{what} must be at least 1ms"),
                )),
                Ok(ms) => Ok(ms),
            }
        };
        let mode = match name {
            "coalesce" => UniqueMode::Coalesce,
            "replace" => UniqueMode::Replace,
            "debounce" => {
                let Some(window) = debounce else {
                    return refuse("unique mode debounce needs a window (debounce, e.g. 30s)".into());
                };
                let window_ms = ms(window, "the debounce window")?;
                let max_wait_ms = max_wait.map(|w| ms(w, "max wait")).transpose()?;
                if max_wait_ms.is_some_and(|w| w < window_ms) {
                    return refuse("max wait must be at least the debounce window".into());
                }
                UniqueMode::Debounce { window_ms, max_wait_ms }
            }
            "throttle" => {
                let Some(window) = throttle else {
                    return refuse("unique mode throttle needs a window (throttle, e.g. 1m)".into());
                };
                UniqueMode::Throttle {
                    window_ms: ms(window, "the throttle window")?,
                }
            }
            other => {
                return refuse(format!(
                    "unknown unique mode {other:?} (expected coalesce, replace, debounce or throttle)"
                ));
            }
        };
        let strays = [
            ("debounce", debounce.is_some() && mode.name() != "debounce"),
            ("max wait", max_wait.is_some() && mode.name() != "debounce"),
            ("throttle", throttle.is_some() && mode.name() != "throttle"),
        ];
        if let Some((what, _)) = strays.iter().find(|(_, stray)| *stray) {
            return refuse(format!("{what} does not apply to unique mode {}", mode.name()));
        }
        Ok(mode)
    }

    /// The debounce window, in milliseconds.
    pub fn debounce_ms(&self) -> Option<u64> {
        match self {
            UniqueMode::Debounce { window_ms, .. } => Some(*window_ms),
            _ => None,
        }
    }

    /// A debounce's longest wait, in milliseconds.
    pub fn max_wait_ms(&self) -> Option<u64> {
        match self {
            UniqueMode::Debounce { max_wait_ms, .. } => *max_wait_ms,
            _ => None,
        }
    }

    /// The throttle window, in milliseconds.
    pub fn throttle_ms(&self) -> Option<u64> {
        match self {
            UniqueMode::Throttle { window_ms } => Some(*window_ms),
            _ => None,
        }
    }

    /// The mode as the stores keep it: `None` for [`UniqueMode::Coalesce`] (every job without a
    /// mode), else its name and its windows in milliseconds, separated by spaces (`debounce 30000
    /// 300000`), which the Redis scripts read too.
    pub fn stored(&self) -> Option<String> {
        match self {
            UniqueMode::Coalesce => None,
            UniqueMode::Replace => Some("replace".into()),
            UniqueMode::Debounce {
                window_ms,
                max_wait_ms: None,
            } => Some(format!("debounce {window_ms}")),
            UniqueMode::Debounce {
                window_ms,
                max_wait_ms: Some(max),
            } => Some(format!("debounce {window_ms} {max}")),
            UniqueMode::Throttle { window_ms } => Some(format!("throttle {window_ms}")),
        }
    }

    /// The mode [`UniqueMode::stored`] wrote (anything else reads as `Coalesce`, the mode that
    /// changes nothing).
    pub fn from_stored(text: Option<&str>) -> UniqueMode {
        let Some(text) = text else {
            return UniqueMode::Coalesce;
        };
        let mut words = text.split(' ');
        let name = words.next();
        let mut number = || words.next().and_then(|w| w.parse::<u64>().ok());
        match name {
            Some("replace") => UniqueMode::Replace,
            Some("debounce") => match number() {
                Some(window_ms) => UniqueMode::Debounce {
                    window_ms,
                    max_wait_ms: number(),
                },
                None => UniqueMode::Coalesce,
            },
            Some("throttle") => number().map_or(UniqueMode::Coalesce, |window_ms| UniqueMode::Throttle { window_ms }),
            _ => UniqueMode::Coalesce,
        }
    }
}

/// For people: `debounce 30s (max wait 5m)`, `throttle 1m`.
impl fmt::Display for UniqueMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let human = |ms: u64| format_duration(Duration::from_millis(ms));
        match self {
            UniqueMode::Debounce { window_ms, max_wait_ms } => {
                write!(f, "debounce {}", human(*window_ms))?;
                if let Some(max) = max_wait_ms {
                    write!(f, " (max wait {})", human(*max))?;
                }
                Ok(())
            }
            UniqueMode::Throttle { window_ms } => write!(f, "throttle {}", human(*window_ms)),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Option<Duration> {
        Some(Duration::from_secs(s))
    }

    #[test]
    fn a_window_alone_names_its_mode_and_a_name_needs_its_window() {
        assert_eq!(
            UniqueMode::from_parts(None, secs(30), secs(300), None).unwrap(),
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000)
            }
        );
        assert_eq!(
            UniqueMode::from_parts(None, None, None, secs(60)).unwrap(),
            UniqueMode::Throttle { window_ms: 60_000 }
        );
        assert_eq!(
            UniqueMode::from_parts(None, None, None, None).unwrap(),
            UniqueMode::Coalesce
        );
        assert_eq!(
            UniqueMode::from_parts(Some("replace"), None, None, None).unwrap(),
            UniqueMode::Replace
        );
        for (name, debounce, max_wait, throttle, says) in [
            (Some("debounce"), None, None, None, "needs a window"),
            (Some("throttle"), None, None, None, "needs a window"),
            (Some("sometimes"), None, None, None, "unknown unique mode \"sometimes\""),
            (
                Some("replace"),
                secs(30),
                None,
                None,
                "debounce does not apply to unique mode replace",
            ),
            (None, secs(30), None, secs(30), "not both"),
            (None, None, secs(30), None, "max wait is for debounce only"),
            (None, secs(60), secs(30), None, "at least the debounce window"),
            (None, Some(Duration::ZERO), None, None, "at least 1ms"),
        ] {
            let refused = UniqueMode::from_parts(name, debounce, max_wait, throttle).unwrap_err();
            assert_eq!(refused.input, Input::UniqueMode);
            assert!(refused.to_string().contains(says), "{refused} should say {says}");
        }
    }

    #[test]
    fn the_stored_form_reads_back_as_the_same_mode() {
        for mode in [
            UniqueMode::Coalesce,
            UniqueMode::Replace,
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: None,
            },
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000),
            },
            UniqueMode::Throttle { window_ms: 60_000 },
        ] {
            assert_eq!(UniqueMode::from_stored(mode.stored().as_deref()), mode);
        }
        assert_eq!(
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000)
            }
            .to_string(),
            "debounce 30s (max wait 5m)"
        );
    }
}
