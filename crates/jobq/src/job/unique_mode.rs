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
    /// dropped as under [`UniqueMode::Coalesce`] (the running rule `coalesce`; with `queue-behind`
    /// the mode is [`UniqueMode::KeepLast`]).
    Replace,
    /// At most one started and one waiting job per key: a holder that has not started is replaced
    /// as under [`UniqueMode::Replace`]; while the holder runs, the new job is created `blocked`
    /// behind it (`queued-behind`) and takes the key, so that the next enqueue replaces it, and it
    /// starts only once the running job has ended, however it ended.
    KeepLast,
    /// As [`UniqueMode::KeepLast`], and a running holder the new job queues behind is asked to stop
    /// (`cancelled-previous`): its worker stops it at its next heartbeat, as `jobq cancel` does, and
    /// records it `cancelled`; the new job starts once it has.
    CancelRunning,
    /// As [`UniqueMode::Replace`], and the holder's run time moves to `window` from now (a new job
    /// is created to run `window` from now): the job runs once its key has been quiet for `window`,
    /// but never later than `max_wait` after the holder was first enqueued (`debounced`).
    Debounce {
        /// The quiet period, in milliseconds (positive).
        window_ms: u64,
        /// The longest a holder's run is put off, from its first enqueue (at least `window_ms`).
        max_wait_ms: Option<u64>,
        /// The running rule `queue-behind`: while the holder runs, the new job waits behind it as
        /// under [`UniqueMode::KeepLast`] (its run time a window from now), instead of coalescing.
        queue_behind: bool,
    },
    /// The key stays held for `window` after the holder was created, whether or not it has
    /// finished: a job in that window is dropped, naming the holder (`throttled`). After the window
    /// a live holder still coalesces the new job, as under [`UniqueMode::Coalesce`].
    Throttle {
        /// The window, in milliseconds (positive).
        window_ms: u64,
    },
}

/// A unique mode's parts as a producer gives them (flags, job JSON fields, config keys), judged
/// together by [`UniqueMode::from_parts`].
#[derive(Debug, Clone, Copy, Default)]
pub struct UniqueModeParts<'a> {
    /// The mode's name (`--unique-mode`, `uniqueMode`, `unique_mode`).
    pub name: Option<&'a str>,
    /// The debounce window.
    pub debounce: Option<Duration>,
    /// A debounce's longest wait.
    pub max_wait: Option<Duration>,
    /// The throttle window.
    pub throttle: Option<Duration>,
    /// The running rule of `replace` or `debounce`: `coalesce` (the default) or `queue-behind`.
    pub running: Option<&'a str>,
}

impl UniqueMode {
    /// The mode's name: `coalesce`, `replace`, `keep-last`, `cancel-running`, `debounce` or
    /// `throttle`.
    pub fn name(&self) -> &'static str {
        match self {
            UniqueMode::Coalesce => "coalesce",
            UniqueMode::Replace => "replace",
            UniqueMode::KeepLast => "keep-last",
            UniqueMode::CancelRunning => "cancel-running",
            UniqueMode::Debounce { .. } => "debounce",
            UniqueMode::Throttle { .. } => "throttle",
        }
    }

    /// The mode from its parts as producers give them ([`UniqueModeParts`]). A window alone names
    /// its mode (`debounce = "30s"`); a name that needs a window must have one; a window of another
    /// mode, a zero window, a longest wait shorter than the debounce window, or a running rule for a
    /// mode that never meets a running holder is refused, naming the input.
    pub fn from_parts(parts: UniqueModeParts<'_>) -> Result<UniqueMode, InvalidInput> {
        let UniqueModeParts {
            name,
            debounce,
            max_wait,
            throttle,
            running,
        } = parts;
        let refuse = |what: String| Err(InvalidInput::new(Input::UniqueMode, what));
        let queue_behind = match running {
            None | Some("coalesce") => false,
            Some("queue-behind") => true,
            Some(other) => {
                return refuse(format!(
                    "unknown running rule {other:?} (expected coalesce or queue-behind)"
                ));
            }
        };
        let name = match (name, debounce, throttle) {
            (Some(name), _, _) => name,
            (None, Some(_), None) => "debounce",
            (None, None, Some(_)) => "throttle",
            (None, Some(_), Some(_)) => return refuse("a job is either debounced or throttled, not both".into()),
            (None, None, None) if max_wait.is_some() => return refuse("max wait is for debounce only".into()),
            (None, None, None) if running.is_some() => {
                return refuse("a running rule is for unique modes replace and debounce".into());
            }
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
            "replace" if queue_behind => UniqueMode::KeepLast,
            "replace" => UniqueMode::Replace,
            "keep-last" => UniqueMode::KeepLast,
            "cancel-running" => UniqueMode::CancelRunning,
            "debounce" => {
                let Some(window) = debounce else {
                    return refuse("unique mode debounce needs a window (debounce, e.g. 30s)".into());
                };
                let window_ms = ms(window, "the debounce window")?;
                let max_wait_ms = max_wait.map(|w| ms(w, "max wait")).transpose()?;
                if max_wait_ms.is_some_and(|w| w < window_ms) {
                    return refuse("max wait must be at least the debounce window".into());
                }
                UniqueMode::Debounce {
                    window_ms,
                    max_wait_ms,
                    queue_behind,
                }
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
                    "unknown unique mode {other:?} (expected coalesce, replace, keep-last, cancel-running, debounce or throttle)"
                ));
            }
        };
        let strays = [
            ("debounce", debounce.is_some() && mode.name() != "debounce"),
            ("max wait", max_wait.is_some() && mode.name() != "debounce"),
            ("throttle", throttle.is_some() && mode.name() != "throttle"),
            (
                "a running rule",
                running.is_some() && !matches!(name, "replace" | "debounce"),
            ),
        ];
        if let Some((what, _)) = strays.iter().find(|(_, stray)| *stray) {
            return refuse(format!("{what} does not apply to unique mode {name}"));
        }
        Ok(mode)
    }

    /// Whether a job of this mode waits behind a running holder of its key (`queued-behind`)
    /// instead of coalescing into it.
    pub fn queues_behind(&self) -> bool {
        matches!(
            self,
            UniqueMode::KeepLast | UniqueMode::CancelRunning | UniqueMode::Debounce { queue_behind: true, .. }
        )
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
    /// 300000`), then `queue-behind` for a debounce with that running rule; the Redis scripts read
    /// it too.
    pub fn stored(&self) -> Option<String> {
        match self {
            UniqueMode::Coalesce => None,
            UniqueMode::Replace => Some("replace".into()),
            UniqueMode::KeepLast => Some("keep-last".into()),
            UniqueMode::CancelRunning => Some("cancel-running".into()),
            UniqueMode::Debounce {
                window_ms,
                max_wait_ms,
                queue_behind,
            } => {
                let mut text = format!("debounce {window_ms}");
                if let Some(max) = max_wait_ms {
                    text.push_str(&format!(" {max}"));
                }
                if *queue_behind {
                    text.push_str(" queue-behind");
                }
                Some(text)
            }
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
        let rest: Vec<&str> = words.collect();
        let mut numbers = rest.iter().filter_map(|w| w.parse::<u64>().ok());
        let mut number = || numbers.next();
        match name {
            Some("replace") => UniqueMode::Replace,
            Some("keep-last") => UniqueMode::KeepLast,
            Some("cancel-running") => UniqueMode::CancelRunning,
            Some("debounce") => match number() {
                Some(window_ms) => UniqueMode::Debounce {
                    window_ms,
                    max_wait_ms: number(),
                    queue_behind: rest.contains(&"queue-behind"),
                },
                None => UniqueMode::Coalesce,
            },
            Some("throttle") => number().map_or(UniqueMode::Coalesce, |window_ms| UniqueMode::Throttle { window_ms }),
            _ => UniqueMode::Coalesce,
        }
    }
}

/// For people: `debounce 30s (max wait 5m)`, `debounce 30s, queue-behind`, `throttle 1m`.
impl fmt::Display for UniqueMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let human = |ms: u64| format_duration(Duration::from_millis(ms));
        match self {
            UniqueMode::Debounce {
                window_ms,
                max_wait_ms,
                queue_behind,
            } => {
                write!(f, "debounce {}", human(*window_ms))?;
                if let Some(max) = max_wait_ms {
                    write!(f, " (max wait {})", human(*max))?;
                }
                if *queue_behind {
                    f.write_str(", queue-behind")?;
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

    fn parts(
        name: Option<&'static str>,
        debounce: Option<Duration>,
        max_wait: Option<Duration>,
        throttle: Option<Duration>,
    ) -> UniqueModeParts<'static> {
        UniqueModeParts {
            name,
            debounce,
            max_wait,
            throttle,
            running: None,
        }
    }

    #[test]
    fn a_window_alone_names_its_mode_and_a_name_needs_its_window() {
        assert_eq!(
            UniqueMode::from_parts(parts(None, secs(30), secs(300), None)).unwrap(),
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000),
                queue_behind: false,
            }
        );
        assert_eq!(
            UniqueMode::from_parts(parts(None, None, None, secs(60))).unwrap(),
            UniqueMode::Throttle { window_ms: 60_000 }
        );
        assert_eq!(
            UniqueMode::from_parts(parts(None, None, None, None)).unwrap(),
            UniqueMode::Coalesce
        );
        assert_eq!(
            UniqueMode::from_parts(parts(Some("replace"), None, None, None)).unwrap(),
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
            let refused = UniqueMode::from_parts(parts(name, debounce, max_wait, throttle)).unwrap_err();
            assert_eq!(refused.input, Input::UniqueMode);
            assert!(refused.to_string().contains(says), "{refused} should say {says}");
        }
    }

    #[test]
    fn the_running_rule_queue_behind_makes_replace_keep_last_and_applies_to_replace_and_debounce_only() {
        let with = |name, debounce, running| {
            UniqueMode::from_parts(UniqueModeParts {
                name,
                debounce,
                running,
                ..Default::default()
            })
        };
        assert_eq!(
            with(Some("replace"), None, Some("queue-behind")).unwrap(),
            UniqueMode::KeepLast
        );
        assert_eq!(
            with(Some("replace"), None, Some("coalesce")).unwrap(),
            UniqueMode::Replace
        );
        assert_eq!(with(Some("keep-last"), None, None).unwrap(), UniqueMode::KeepLast);
        assert!(with(None, secs(30), Some("queue-behind")).unwrap().queues_behind());
        for (name, running, says) in [
            (
                Some("coalesce"),
                Some("queue-behind"),
                "does not apply to unique mode coalesce",
            ),
            (
                Some("keep-last"),
                Some("coalesce"),
                "does not apply to unique mode keep-last",
            ),
            (Some("replace"), Some("later"), "unknown running rule \"later\""),
            (None, Some("queue-behind"), "for unique modes replace and debounce"),
        ] {
            let refused = with(name, None, running).unwrap_err();
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
                queue_behind: false,
            },
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000),
                queue_behind: false,
            },
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: None,
                queue_behind: true,
            },
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000),
                queue_behind: true,
            },
            UniqueMode::KeepLast,
            UniqueMode::CancelRunning,
            UniqueMode::Throttle { window_ms: 60_000 },
        ] {
            assert_eq!(UniqueMode::from_stored(mode.stored().as_deref()), mode);
        }
        assert_eq!(
            UniqueMode::Debounce {
                window_ms: 30_000,
                max_wait_ms: Some(300_000),
                queue_behind: false,
            }
            .to_string(),
            "debounce 30s (max wait 5m)"
        );
    }
}
