//! The part of a worker's setup that a reload may replace while the worker runs ([`Live`]): the
//! handlers with their per-type settings, the default retry policy, the total concurrency and the
//! schedules; and the one swappable pointer it sits behind ([`LiveCell`]), beside the event
//! subscriptions the expander follows.
//!
//! A reload never reaches into what already runs. The dispatcher takes one snapshot per claim round
//! (an `Arc` clone under a read lock held for nanoseconds), and every job keeps the `Arc<Registered>`
//! it was taken on with, so a running or prefetched job finishes with the handler, time-out and
//! retry policy it started with; only jobs claimed after the swap see the new ones. This module
//! resolves and checks a set of handlers; deciding what a reload changed is `reload.rs`'s, and
//! nothing here touches the store.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockWriteGuard};

use tokio::sync::{Notify, watch};

use super::HandlerOptions;
use super::WorkerSettings;
use crate::error::{Error, Input, Result};
use crate::events::Subscriptions;
use crate::handler::{self, DEFAULT_MAX_SNOOZES, Handler, HandlerKind, HandlerSpec};
use crate::retry::RetryPolicy;
use crate::schedule::Schedule;
use crate::store::{Limit, Scope};

/// A handler as given to a builder or a reload, before its retry policy is resolved.
#[derive(Clone)]
pub(super) struct Given {
    pub(super) handler: Arc<dyn Handler>,
    pub(super) options: HandlerOptions,
    /// How the config file describes it, for config-made handlers: a reload compares these to tell a
    /// changed handler from the same one built again (code handlers are compared by identity).
    pub(super) kind: Option<HandlerKind>,
}

/// Handlers by job type (`*` for every type without its own), as given.
#[derive(Clone, Default)]
pub(super) struct HandlerSet(pub(super) HashMap<String, Given>);

impl Given {
    /// A handler given in code (compared by identity on a reload).
    pub(super) fn code(handler: impl Handler + 'static, options: HandlerOptions) -> Given {
        Given {
            handler: Arc::new(handler),
            options,
            kind: None,
        }
    }
}

impl HandlerSet {
    /// Adds (or replaces) the handler of `job_type`.
    pub(super) fn insert(&mut self, job_type: String, given: Given) {
        self.0.insert(job_type, given);
    }

    /// Builds and adds the handlers of a config's `[handlers]` table. Fails on the first that cannot be
    /// built (an exec program that does not exist, an http handler's unset `secret_env`), adding none.
    pub(super) fn insert_configured<'a>(
        &mut self,
        handlers: impl IntoIterator<Item = (&'a String, &'a HandlerSpec)>,
    ) -> Result<()> {
        let mut built = Vec::new();
        for (job_type, config) in handlers {
            let given = Given {
                handler: handler::build(job_type, &config.kind)?,
                options: HandlerOptions::from(config),
                kind: Some(config.kind.clone()),
            };
            built.push((job_type.clone(), given));
        }
        self.0.extend(built);
        Ok(())
    }

    /// The job types, sorted, for `Debug`.
    pub(super) fn types(&self) -> Vec<&String> {
        let mut types: Vec<&String> = self.0.keys().collect();
        types.sort();
        types
    }
}

/// A handler as the runtime uses it: its options resolved against the worker's defaults.
#[derive(Clone)]
pub(super) struct Registered {
    pub(super) handler: Arc<dyn Handler>,
    pub(super) timeout: Option<std::time::Duration>,
    pub(super) concurrency: Option<u32>,
    pub(super) retry: RetryPolicy,
    /// How long its jobs may wait on a third party (see `waits.rs`).
    pub(super) wait_timeout: Option<std::time::Duration>,
    /// The worker's default policy when this was resolved: a job's attempts are judged against the
    /// default it started under (`outcome::max_attempts`), even if a reload changes it meanwhile.
    pub(super) default_retry: RetryPolicy,
    /// Cluster-wide limits on the type; its partition also scopes the type's back-pressure.
    pub(super) limit: Option<Limit>,
    /// Snoozes before a snooze counts as a retry.
    pub(super) max_snoozes: u32,
    /// The expiry each retry gets, this long after its run time (`expires_per_attempt`).
    pub(super) expires_per_attempt: Option<std::time::Duration>,
}

/// The reloadable setup, resolved and checked. Never changed in place: a reload makes a new one.
pub(crate) struct Live {
    /// The handlers as given, kept so a reload that changes only the default retry policy can
    /// resolve them again.
    pub(super) given: HandlerSet,
    pub(super) handlers: HashMap<String, Arc<Registered>>,
    pub(super) fallback: Option<Arc<Registered>>,
    pub(super) default_retry: RetryPolicy,
    /// Jobs run at once.
    pub(super) concurrency: u32,
    /// True when no handler has a per-type limit, which prefetching would have to respect.
    pub(super) may_prefetch: bool,
    /// The schedules as given (the scheduler gets them with `tick_attempts` filled in).
    pub(super) schedules: Arc<Vec<Schedule>>,
    /// The attempts of a tick's job whose schedule names none: the enqueue limits' default at build,
    /// then the default retry policy's once a reload changes that, as a restart would.
    pub(super) tick_attempts: u32,
    /// The cluster-wide limits of the handlers' types, by scope.
    pub(super) limits: Vec<Limit>,
}

impl Live {
    /// The most jobs a claim can get under the handlers' cluster-wide concurrency limits, when they
    /// bound every job it could take: each type served has a `global_concurrency` without a
    /// partition, and there is no fallback handler. It is the sum of what each leaves free after the
    /// slots this worker itself still holds (`held`: its leases of that type whose outcomes are not
    /// yet written, which the store counts as running). `None` otherwise.
    pub(super) fn room_under_type_limits(&self, held: impl Fn(&str) -> u32) -> Option<u32> {
        if self.fallback.is_some() || self.handlers.is_empty() {
            return None;
        }
        self.handlers
            .iter()
            .map(|(t, reg)| {
                let gc = reg
                    .limit
                    .as_ref()
                    .filter(|l| l.partition.is_none())?
                    .global_concurrency?;
                Some(gc.saturating_sub(held(t)))
            })
            .try_fold(0u32, |sum, room| Some(sum.saturating_add(room?)))
    }

    /// Resolves `given` against `default_retry` and checks the limits.
    pub(super) fn new(
        given: HandlerSet,
        default_retry: RetryPolicy,
        concurrency: u32,
        schedules: Arc<Vec<Schedule>>,
        tick_attempts: u32,
    ) -> Result<Live> {
        if concurrency == 0 {
            return Err(Error::invalid(Input::Concurrency, "concurrency must be at least 1"));
        }
        let mut handlers = HashMap::new();
        for (job_type, g) in &given.0 {
            if g.options.concurrency == Some(0) {
                return Err(Error::invalid(
                    Input::Concurrency,
                    format!("the concurrency of {job_type:?} must be at least 1"),
                ));
            }
            let registered = Registered {
                handler: g.handler.clone(),
                timeout: g.options.timeout,
                concurrency: g.options.concurrency,
                retry: g.options.retry.unwrap_or(default_retry),
                wait_timeout: g.options.wait_timeout,
                default_retry,
                limit: g.options.limit.clone().map(|limit| Limit {
                    scope: Scope::Type(job_type.clone()),
                    ..limit
                }),
                max_snoozes: g.options.max_snoozes.unwrap_or(DEFAULT_MAX_SNOOZES),
                expires_per_attempt: g.options.expires_per_attempt,
            };
            handlers.insert(job_type.clone(), Arc::new(registered));
        }
        let mut fallback = handlers.remove("*");
        // A limit needs a type of its own: the fallback's would name no jobs.
        if let Some(f) = fallback.as_mut().filter(|f| f.limit.is_some()) {
            let mut unlimited = Registered::clone(f);
            unlimited.limit = None;
            *f = Arc::new(unlimited);
        }
        let mut limits: Vec<Limit> = handlers.values().filter_map(|h| h.limit.clone()).collect();
        limits.sort_by_key(|l| l.scope.key());
        let may_prefetch = handlers
            .values()
            .chain(fallback.iter())
            .all(|h| h.concurrency.is_none());
        Ok(Live {
            given,
            handlers,
            fallback,
            default_retry,
            concurrency,
            may_prefetch,
            schedules,
            tick_attempts,
            limits,
        })
    }

    pub(super) fn handler_for(&self, job_type: &str) -> Option<&Arc<Registered>> {
        self.handlers.get(job_type).or(self.fallback.as_ref())
    }

    /// The job types served, sorted, `*` last.
    pub(super) fn handler_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.handlers.keys().cloned().collect();
        names.sort();
        if self.fallback.is_some() {
            names.push("*".into());
        }
        names
    }

    /// The schedules as the scheduler runs them: a tick's job without attempts of its own gets
    /// `tick_attempts`, which is what the scheduler's enqueue limits would have given it at build.
    pub(super) fn scheduled(&self) -> Arc<Vec<Schedule>> {
        let mut schedules = self.schedules.as_ref().clone();
        for s in &mut schedules {
            s.max_attempts.get_or_insert(self.tick_attempts);
        }
        Arc::new(schedules)
    }
}

/// Where the current [`Live`] sits, shared by the worker and its handles.
pub(crate) struct LiveCell {
    current: RwLock<Arc<Live>>,
    /// The schedules the scheduler runs; it subscribes, a reload sends.
    pub(super) scheduled: watch::Sender<Arc<Vec<Schedule>>>,
    /// The event subscriptions the expander runs with; it subscribes, a reload sends.
    pub(super) events: watch::Sender<Arc<Subscriptions>>,
    /// Signalled after a swap, so a dispatcher waiting for a slot or for work looks again with the
    /// new concurrency and handlers.
    pub(super) reloaded: Notify,
    /// The settings the worker started with, which only a restart changes (a reload compares them).
    pub(super) fixed: WorkerSettings,
}

impl std::fmt::Debug for LiveCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCell")
            .field("handlers", &self.snapshot().handler_names())
            .finish_non_exhaustive()
    }
}

impl LiveCell {
    pub(super) fn new(live: Live, events: Subscriptions, fixed: WorkerSettings) -> LiveCell {
        LiveCell {
            scheduled: watch::channel(live.scheduled()).0,
            events: watch::channel(Arc::new(events)).0,
            current: RwLock::new(Arc::new(live)),
            reloaded: Notify::new(),
            fixed,
        }
    }

    /// The setup as it is now. Cheap: one read lock around an `Arc` clone.
    pub(super) fn snapshot(&self) -> Arc<Live> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The slot a reload swaps; holding it keeps two reloads from interleaving.
    pub(super) fn slot(&self) -> RwLockWriteGuard<'_, Arc<Live>> {
        self.current.write().unwrap_or_else(|e| e.into_inner())
    }
}
