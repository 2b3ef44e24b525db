//! Reloading a running worker: [`Reload`] gathers new handlers and settings (from a config, or in
//! code), [`WorkerHandle::reload`] checks them, swaps them in at once (`live.rs`) and answers with
//! what changed ([`ReloadReport`]).
//!
//! A reload is all or nothing: anything refused (a concurrency of 0) leaves the worker as it was.
//! It only affects jobs claimed after it; running and prefetched jobs keep what they started with.
//! Some settings shape tasks that started with the worker (its queues, heartbeat, rescue threshold,
//! shutdown time-out, retention, poll interval, whether it runs the scheduler): a reload does not
//! change them, and the report names those that differ so the caller can say a restart is needed.
//! Nothing here reads files, logs or touches the store: the caller (`jobq worker`) does the reading
//! and the telling.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::HandlerOptions;
use super::WorkerSettings;
use super::live::{Given, HandlerSet, Live};
use super::shutdown::WorkerHandle;
use crate::error::Result;
use crate::events::Subscriptions;
use crate::handler::{Handler, HandlerSpec};
use crate::retry::RetryPolicy;
use crate::schedule::Schedule;

/// New handlers and settings for a running worker, applied by [`WorkerHandle::reload`]. Whatever
/// is not set stays as it is.
///
/// ```no_run
/// # fn demo(handle: jobq::worker::WorkerHandle) -> jobq::Result<()> {
/// use jobq::handler::Builtin;
/// use jobq::worker::Reload;
/// let report = handle.reload(Reload::new().handler("cache.warm", Builtin::Noop).concurrency(16))?;
/// println!("reloaded: {report}");
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct Reload {
    /// The full set of handlers, replacing the current one; `None` keeps it.
    handlers: Option<HandlerSet>,
    retry: Option<RetryPolicy>,
    concurrency: Option<u32>,
    /// Settings only a restart applies, compared with the worker's to report which differ.
    settings: Option<WorkerSettings>,
    schedules: Option<Vec<Schedule>>,
    events: Option<Subscriptions>,
}

impl fmt::Debug for Reload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reload")
            .field("handlers", &self.handlers.as_ref().map(HandlerSet::types))
            .field("retry", &self.retry)
            .field("concurrency", &self.concurrency)
            .field("schedules", &self.schedules.as_ref().map(Vec::len))
            .finish_non_exhaustive()
    }
}

impl Reload {
    /// A reload that changes nothing until told what to.
    pub fn new() -> Reload {
        Reload::default()
    }

    /// Handlers described by specs (a config's `[handlers]` table), built now so that a handler that
    /// cannot be built refuses the reload here, added to those given so far. The first handler
    /// given replaces the worker's whole set: a type not given again is no longer served.
    pub fn configured_handlers(mut self, handlers: &BTreeMap<String, HandlerSpec>) -> Result<Reload> {
        self.handlers.get_or_insert_default().insert_configured(handlers)?;
        Ok(self)
    }

    /// A handler for a job type (`*` for every type without its own), with default options. See
    /// [`Reload::configured_handlers`] for what happens to the types not given.
    pub fn handler(self, job_type: impl Into<String>, handler: impl Handler + 'static) -> Reload {
        self.handler_with(job_type, handler, HandlerOptions::default())
    }

    /// A handler with a time-out, a per-type concurrency limit or a retry policy.
    pub fn handler_with(
        mut self,
        job_type: impl Into<String>,
        handler: impl Handler + 'static,
        options: HandlerOptions,
    ) -> Reload {
        self.handlers
            .get_or_insert_default()
            .insert(job_type.into(), Given::code(handler, options));
        self
    }

    /// The retry policy of types that have none of their own.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Reload {
        self.retry = Some(policy);
        self
    }

    /// Jobs run at once.
    pub fn concurrency(mut self, n: u32) -> Reload {
        self.concurrency = Some(n);
        self
    }

    /// Worker settings: the concurrency applies; the rest cannot change without a restart, and
    /// those that differ from the worker's are named in [`ReloadReport::needs_restart`].
    pub fn settings(mut self, settings: &WorkerSettings) -> Reload {
        self.concurrency = Some(settings.concurrency);
        self.settings = Some(settings.clone());
        self
    }

    /// The schedules the worker's scheduler runs (if it runs one), replacing the current ones.
    pub fn schedules(mut self, schedules: Vec<Schedule>) -> Reload {
        self.schedules = Some(schedules);
        self
    }

    /// The event subscriptions the worker expands stored events with, replacing the current ones.
    pub fn events(mut self, events: Subscriptions) -> Reload {
        self.events = Some(events);
        self
    }
}

/// What a reload changed. Its `Display` is one phrase for a log line: `handlers added report.build;
/// removed x; changed y; concurrency 8 -> 16; schedules added nightly`, or `nothing changed`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadReport {
    /// Job types served now that were not before (`*` for the fallback).
    pub handlers_added: Vec<String>,
    /// Job types no longer served: their jobs go dead as unregistered from now on.
    pub handlers_removed: Vec<String>,
    /// Job types whose handler or per-type settings changed.
    pub handlers_changed: Vec<String>,
    /// Whether the default retry policy changed.
    pub retry_changed: bool,
    /// The concurrency before and after, when it changed.
    pub concurrency: Option<(u32, u32)>,
    /// Schedules added, by name.
    pub schedules_added: Vec<String>,
    /// Schedules removed, by name.
    pub schedules_removed: Vec<String>,
    /// Schedules whose settings changed, by name.
    pub schedules_changed: Vec<String>,
    /// Events subscribed to now that were not before.
    pub events_added: Vec<String>,
    /// Events no longer subscribed to.
    pub events_removed: Vec<String>,
    /// Events whose jobs changed.
    pub events_changed: Vec<String>,
    /// Settings that differ from the running worker's but need a restart to apply, by config key
    /// (`[worker] queues`, …). Not part of the `Display`: they did not change.
    pub needs_restart: Vec<String>,
}

impl ReloadReport {
    /// True when the reload changed nothing that runs.
    pub fn changed_nothing(&self) -> bool {
        self.phrases().is_empty()
    }

    fn phrases(&self) -> Vec<String> {
        let mut phrases = Vec::new();
        let listed = |what: &str, names: &[String]| (!names.is_empty()).then(|| format!("{what} {}", names.join(", ")));
        let handlers: Vec<String> = [
            listed("added", &self.handlers_added),
            listed("removed", &self.handlers_removed),
            listed("changed", &self.handlers_changed),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !handlers.is_empty() {
            phrases.push(format!("handlers {}", handlers.join("; ")));
        }
        if self.retry_changed {
            phrases.push("default retry policy changed".into());
        }
        if let Some((before, after)) = self.concurrency {
            phrases.push(format!("concurrency {before} -> {after}"));
        }
        let schedules: Vec<String> = [
            listed("added", &self.schedules_added),
            listed("removed", &self.schedules_removed),
            listed("changed", &self.schedules_changed),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !schedules.is_empty() {
            phrases.push(format!("schedules {}", schedules.join("; ")));
        }
        let events: Vec<String> = [
            listed("added", &self.events_added),
            listed("removed", &self.events_removed),
            listed("changed", &self.events_changed),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !events.is_empty() {
            phrases.push(format!("events {}", events.join("; ")));
        }
        phrases
    }
}

impl fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let phrases = self.phrases();
        if phrases.is_empty() {
            f.write_str("nothing changed")
        } else {
            f.write_str(&phrases.join("; "))
        }
    }
}

impl WorkerHandle {
    /// Swaps in new handlers and settings while the worker runs. Jobs claimed from now on use them;
    /// running and prefetched jobs finish with the handler and options they started with (so a
    /// per-type limit a reload adds counts only the jobs started after it). Refused, and nothing
    /// changes, when a concurrency is 0. Reloading a worker that has stopped changes nothing that
    /// runs.
    pub fn reload(&self, reload: Reload) -> Result<ReloadReport> {
        let cell = &self.live;
        // Held to the end, so two reloads at once apply one after the other and each reports against
        // the setup it replaced.
        let mut slot = cell.slot();
        let old = slot.clone();
        let default_retry = reload.retry.unwrap_or(old.default_retry);
        let tick_attempts = if default_retry.max_attempts == old.default_retry.max_attempts {
            old.tick_attempts
        } else {
            default_retry.max_attempts
        };
        let new = Live::new(
            reload.handlers.unwrap_or_else(|| old.given.clone()),
            default_retry,
            reload.concurrency.unwrap_or(old.concurrency),
            reload.schedules.map_or_else(|| old.schedules.clone(), Arc::new),
            tick_attempts,
        )?;
        let mut report = compare(&old, &new);
        if let Some(settings) = &reload.settings {
            report.needs_restart = restart_only(&cell.fixed, settings);
        }
        if !same_schedules(&old.schedules, &new.schedules) || tick_attempts != old.tick_attempts {
            // `send_replace`, not `send`: the value must change even when no scheduler listens.
            cell.scheduled.send_replace(new.scheduled());
        }
        if let Some(events) = reload.events {
            let old_events = cell.events.borrow().clone();
            compare_events(&old_events, &events, &mut report);
            if *old_events != events {
                cell.events.send_replace(Arc::new(events));
            }
        }
        *slot = Arc::new(new);
        drop(slot);
        cell.reloaded.notify_one();
        Ok(report)
    }
}

/// Which events' subscriptions a reload adds, removes and changes, names sorted (the maps are).
fn compare_events(old: &Subscriptions, new: &Subscriptions, report: &mut ReloadReport) {
    for (name, jobs) in &new.0 {
        match old.0.get(name) {
            None => report.events_added.push(name.clone()),
            Some(before) if before != jobs => report.events_changed.push(name.clone()),
            Some(_) => {}
        }
    }
    report.events_removed = old.0.keys().filter(|n| !new.0.contains_key(*n)).cloned().collect();
}

/// What differs between two setups, names sorted.
fn compare(old: &Live, new: &Live) -> ReloadReport {
    let mut report = ReloadReport {
        retry_changed: old.default_retry != new.default_retry,
        concurrency: (old.concurrency != new.concurrency).then_some((old.concurrency, new.concurrency)),
        ..ReloadReport::default()
    };
    for (job_type, given) in &new.given.0 {
        match old.given.0.get(job_type) {
            None => report.handlers_added.push(job_type.clone()),
            Some(before) if handler_changed(old, before, new, given, job_type) => {
                report.handlers_changed.push(job_type.clone())
            }
            Some(_) => {}
        }
    }
    report.handlers_removed = old
        .given
        .0
        .keys()
        .filter(|t| !new.given.0.contains_key(*t))
        .cloned()
        .collect();
    for schedule in new.schedules.iter() {
        match old.schedules.iter().find(|s| s.name == schedule.name) {
            None => report.schedules_added.push(schedule.name.clone()),
            Some(before) if !same_schedule(before, schedule) => report.schedules_changed.push(schedule.name.clone()),
            Some(_) => {}
        }
    }
    report.schedules_removed = old
        .schedules
        .iter()
        .filter(|s| !new.schedules.iter().any(|n| n.name == s.name))
        .map(|s| s.name.clone())
        .collect();
    for names in [
        &mut report.handlers_added,
        &mut report.handlers_removed,
        &mut report.handlers_changed,
        &mut report.schedules_added,
        &mut report.schedules_removed,
        &mut report.schedules_changed,
    ] {
        names.sort();
    }
    report
}

/// Whether a type's handler changed: what runs (the config's description, or the very handler for
/// one given in code), its time-out, limit or wait time-out, or its retry policy. A policy that only
/// followed the default from the old one to the new one counts as the default's change, not the
/// type's.
fn handler_changed(old: &Live, before: &Given, new: &Live, after: &Given, job_type: &str) -> bool {
    let runs_the_same = match (&before.kind, &after.kind) {
        (Some(a), Some(b)) => a == b,
        _ => Arc::ptr_eq(&before.handler, &after.handler),
    };
    let policy = |live: &Live| live.handler_for(job_type).map(|r| r.retry);
    let (retry_before, retry_after) = (policy(old), policy(new));
    let followed_default = retry_before == Some(old.default_retry) && retry_after == Some(new.default_retry);
    !runs_the_same
        || before.options.timeout != after.options.timeout
        || before.options.concurrency != after.options.concurrency
        || before.options.limit != after.options.limit
        || before.options.max_snoozes != after.options.max_snoozes
        || before.options.wait_timeout != after.options.wait_timeout
        || (retry_before != retry_after && !followed_default)
}

/// The config keys of the settings in `wanted` that differ from those the worker runs with and that
/// only a restart applies.
fn restart_only(running: &WorkerSettings, wanted: &WorkerSettings) -> Vec<String> {
    // Spelled out field by field, so a new setting cannot be forgotten here.
    let WorkerSettings {
        queues,
        concurrency: _,
        heartbeat,
        stale_after,
        shutdown_timeout,
        retention,
        retention_by_status,
        retention_keep_last,
        retention_by_type,
        poll_interval,
        schedules,
        queue_limits,
    } = wanted;
    [
        ("[worker] queues", *queues != running.queues),
        ("[worker] heartbeat", *heartbeat != running.heartbeat),
        ("[worker] stale_after", *stale_after != running.stale_after),
        (
            "[worker] shutdown_timeout",
            *shutdown_timeout != running.shutdown_timeout,
        ),
        ("[worker] retention", *retention != running.retention),
        (
            "[retention]",
            *retention_by_status != running.retention_by_status || *retention_keep_last != running.retention_keep_last,
        ),
        (
            "[handlers.*.retention]",
            *retention_by_type != running.retention_by_type,
        ),
        ("[worker] poll_interval", *poll_interval != running.poll_interval),
        ("[worker] schedules", *schedules != running.schedules),
        ("[queues]", *queue_limits != running.queue_limits),
    ]
    .into_iter()
    .filter(|(_, differs)| *differs)
    .map(|(key, _)| key.to_string())
    .collect()
}

fn same_schedules(a: &[Schedule], b: &[Schedule]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_schedule(a, b))
}

/// Whether two schedules enqueue the same jobs at the same ticks.
fn same_schedule(a: &Schedule, b: &Schedule) -> bool {
    // Spelled out field by field, so a new field cannot be forgotten here.
    let Schedule {
        name,
        when,
        job_type,
        payload,
        queue,
        meta,
        priority,
        max_attempts,
        timeout,
        jitter,
        catch_up,
        overlap,
        paused,
    } = a;
    *name == b.name
        && *when == b.when
        && *job_type == b.job_type
        && payload.get() == b.payload.get()
        && *queue == b.queue
        && *meta == b.meta
        && *priority == b.priority
        && *max_attempts == b.max_attempts
        && *timeout == b.timeout
        && *jitter == b.jitter
        && *catch_up == b.catch_up
        && *overlap == b.overlap
        && *paused == b.paused
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::handler::Builtin;
    use crate::handler::HandlerKind;

    fn noop() -> Arc<dyn Handler> {
        Arc::new(Builtin::from_name("noop").unwrap())
    }

    fn configured(name: &str, timeout: Option<Duration>, retry: Option<RetryPolicy>) -> Given {
        Given {
            handler: noop(),
            options: HandlerOptions {
                timeout,
                concurrency: None,
                retry,
                wait_timeout: None,
                ..HandlerOptions::default()
            },
            kind: Some(HandlerKind::Builtin { name: name.into() }),
        }
    }

    fn live(handlers: &[(&str, Given)], retry: RetryPolicy, concurrency: u32) -> Live {
        let mut set = HandlerSet::default();
        for (t, g) in handlers {
            set.insert(t.to_string(), g.clone());
        }
        Live::new(set, retry, concurrency, Arc::new(Vec::new()), retry.max_attempts).unwrap()
    }

    #[test]
    fn the_report_names_added_removed_and_changed_handlers_and_the_concurrency() {
        let retry = RetryPolicy::default();
        let old = live(
            &[
                ("same", configured("noop", None, None)),
                ("gone", configured("noop", None, None)),
                ("slower", configured("noop", None, None)),
                ("other", configured("noop", None, None)),
            ],
            retry,
            8,
        );
        let new = live(
            &[
                ("same", configured("noop", None, None)),
                ("slower", configured("noop", Some(Duration::from_secs(5)), None)),
                ("other", configured("echo", None, None)),
                ("report.build", configured("noop", None, None)),
            ],
            retry,
            16,
        );
        let report = compare(&old, &new);
        assert_eq!(
            report.to_string(),
            "handlers added report.build; removed gone; changed other, slower; concurrency 8 -> 16"
        );
        assert!(!report.changed_nothing());
    }

    #[test]
    fn a_default_policy_followed_by_every_type_is_one_change_not_one_per_type() {
        let old_default = RetryPolicy::default();
        let new_default = RetryPolicy {
            max_attempts: old_default.max_attempts + 3,
            ..old_default
        };
        let own = RetryPolicy {
            max_attempts: 10,
            ..old_default
        };
        let own_after = RetryPolicy {
            base_delay: Duration::from_secs(9),
            ..own
        };
        // Config handlers carry the default resolved into their options; code handlers carry none.
        let code = Given {
            handler: noop(),
            options: HandlerOptions::default(),
            kind: None,
        };
        let old = live(
            &[
                ("follows", configured("noop", None, Some(old_default))),
                ("in.code", code.clone()),
                ("own", configured("noop", None, Some(own))),
            ],
            old_default,
            8,
        );
        let new = live(
            &[
                ("follows", configured("noop", None, Some(new_default))),
                ("in.code", code),
                ("own", configured("noop", None, Some(own_after))),
            ],
            new_default,
            8,
        );
        assert_eq!(
            compare(&old, &new).to_string(),
            "handlers changed own; default retry policy changed"
        );
    }

    #[test]
    fn the_same_setup_built_again_changes_nothing() {
        let retry = RetryPolicy::default();
        let a = live(&[("t", configured("noop", None, None))], retry, 8);
        let b = live(&[("t", configured("noop", None, None))], retry, 8);
        let report = compare(&a, &b);
        assert!(report.changed_nothing(), "{report:?}");
        assert_eq!(report.to_string(), "nothing changed");
    }

    #[test]
    fn settings_a_reload_cannot_apply_are_named_by_their_keys() {
        let running = WorkerSettings::default();
        let wanted = WorkerSettings {
            queues: vec!["mail".into()],
            concurrency: 99,
            poll_interval: Duration::from_secs(3),
            ..WorkerSettings::default()
        };
        assert_eq!(
            restart_only(&running, &wanted),
            vec!["[worker] queues", "[worker] poll_interval"]
        );
        assert!(restart_only(&running, &running).is_empty());
    }
}
