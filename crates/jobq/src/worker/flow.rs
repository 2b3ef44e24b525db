//! The worker's side of flow control (see `store/flow.rs`): what it knows of the pauses and blocks in
//! the store, the limits it claims under, and the back-pressure its handlers report.
//!
//! Pauses and blocks are read from the store once per poll interval (at most once a second), so an
//! operator's `jobq pause` reaches every worker within one poll interval; a change that lets work
//! through (a resume, a block that ran out) wakes the dispatcher at once. Every claim carries the
//! limits of the worker's config with what it last read ([`Shared::claim_flow`]); the store enforces
//! them atomically. A handler's "too many requests" blocks its type (or partition) in the store for
//! every worker, and in this worker's own view at once.
//!
//! The limits are recorded in the store when the worker starts and whenever a reload changes them,
//! so `jobq queues` shows what is in force; a recorded limit that another worker set differently is
//! logged once, naming both.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Live, Registered, Shared, State};
use crate::job::Job;
use crate::store::{Block, Finish, Flow, FlowState, Limit, RecordLimits, Scope};
use crate::time::format_duration;

/// Longest time between two reads of the pauses and blocks, whatever the poll interval.
const MAX_REFRESH: Duration = Duration::from_secs(1);

/// What this worker knows: the flow its claims carry, and the limits it last recorded.
#[derive(Debug, Default)]
pub(super) struct FlowView {
    current: RwLock<Arc<Flow>>,
    recorded: RwLock<Option<Vec<Limit>>>,
}

impl FlowView {
    fn get(&self) -> Arc<Flow> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, flow: Flow) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(flow);
    }
}

impl Shared {
    /// The limits this worker claims under now: its handlers' and its queues'.
    fn limits_now(&self) -> Vec<Limit> {
        let mut limits = self.live().limits.clone();
        limits.extend(self.settings.queue_limits.iter().cloned());
        limits
    }

    /// Whether this worker's claims carry cluster-wide limits.
    pub(super) fn claims_under_limits(&self) -> bool {
        !self.flow.get().limits.is_empty() || !self.live().limits.is_empty() || !self.settings.queue_limits.is_empty()
    }

    /// The most jobs a claim can get when cluster-wide concurrency limits bound every job it could
    /// take ([`Live::room_under_type_limits`], [`room_under_queue_limits`]). The store admits no more
    /// than those limits' free slots, so a larger claim (a prefetching one asks for up to a thousand)
    /// would only read candidates it must turn away. `None` when no such bound applies.
    /// Only a bound below `wanted` is returned. The leases of `freeing` (outcomes being written with
    /// the claim) are not counted: their slots are the claim's.
    pub(super) fn limits_room(&self, live: &Live, st: &State, wanted: u32, freeing: &[Finish]) -> Option<u32> {
        // Counting this worker's leases by type is a pass over all of them, under the state's lock,
        // and the window is worked out each time a slot frees: first make sure the bound could bind
        // even if every lease held counted against it (a limit that never binds costs no pass).
        let held = u32::try_from(st.leases.len().saturating_sub(freeing.len())).unwrap_or(u32::MAX);
        let by_types = live
            .room_under_type_limits(|_| 0)
            .filter(|most| most.saturating_sub(held) < wanted)
            .and_then(|_| {
                let mut of_type: HashMap<&str, u32> = HashMap::new();
                for h in st.leases.values() {
                    *of_type.entry(h.lease.job_type.as_str()).or_default() += 1;
                }
                for f in freeing {
                    if let Some(n) = of_type.get_mut(f.lease.job_type.as_str()) {
                        *n = n.saturating_sub(1);
                    }
                }
                live.room_under_type_limits(|t| of_type.get(t).copied().unwrap_or(0))
            });
        let by_queues = room_under_queue_limits(&self.settings.queues, &self.settings.queue_limits);
        let room = match (by_types, by_queues) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        room.filter(|room| *room < wanted)
    }

    /// The flow a claim carries now. Cheap: the view is rebuilt when it changes, not per claim
    /// (only between a reload that changed the limits and the next refresh is one built per claim).
    pub(super) fn claim_flow(&self) -> Arc<Flow> {
        let flow = self.flow.get();
        let live = self.live();
        let current = live.limits.iter().chain(&self.settings.queue_limits);
        if flow.limits.iter().eq(current) {
            return flow;
        }
        Arc::new(Flow {
            limits: self.limits_now(),
            ..Flow::clone(&flow)
        })
    }

    /// A handler reported upstream back-pressure for `job`: nothing of its type (or of its
    /// partition) starts for `delay`, in this worker at once and, once written, on every worker.
    pub(super) fn back_pressure(self: &Shared, job: &Job, reg: &Registered, delay: Duration) {
        let partition = reg
            .limit
            .as_ref()
            .filter(|l| l.partition.is_some())
            .map(|l| l.partition_of(job));
        let block = Block {
            job_type: job.job_type.clone(),
            partition,
            until: self.clock.now().plus(delay),
        };
        let scope = block_scope(&block);
        tracing::warn!(
            job_id = %job.id,
            "upstream rate limit: no {scope} job starts for {}", format_duration(delay)
        );
        let mut flow = Flow::clone(&self.flow.get());
        flow.blocks.push(block.clone());
        self.flow.set(flow);
        let store = self.store.clone();
        let now = self.clock.now();
        tokio::spawn(async move {
            if let Err(e) = store.block(&block, now).await {
                tracing::warn!(
                    "could not record the rate limit of {scope} for the other workers: {}",
                    crate::error::causes(&e)
                );
            }
        });
    }
}

/// The most jobs the queues' own cluster-wide concurrency limits let a claim of `queues` take: the
/// sum of their `global_concurrency`, when each queue has one without a partition. `None` otherwise.
fn room_under_queue_limits(queues: &[String], queue_limits: &[Limit]) -> Option<u32> {
    if queues.is_empty() {
        return None;
    }
    queues
        .iter()
        .map(|q| {
            let limit = queue_limits
                .iter()
                .find(|l| matches!(&l.scope, Scope::Queue(name) if name == q))?;
            limit.partition.is_none().then_some(limit.global_concurrency?)
        })
        .try_fold(0u32, |sum, gc| Some(sum.saturating_add(gc?)))
}

/// Reads the pauses and blocks and records the limits once, before the first claim.
pub(super) async fn start(s: &Arc<Shared>) {
    refresh(s).await;
}

/// Reads the pauses and blocks every poll interval (at most a second apart) until `stop`.
pub(super) async fn run(s: Arc<Shared>, stop: CancellationToken) {
    let every = s.settings.poll_interval.min(MAX_REFRESH);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        refresh(&s).await;
    }
}

/// One read: the view is replaced, the dispatcher woken when something it was held back by is gone,
/// and changed limits are recorded.
async fn refresh(s: &Arc<Shared>) {
    let now = s.clock.now();
    let state = match s.store.flow_state(now).await {
        Ok(state) => {
            s.outage.answered();
            state
        }
        Err(e) => {
            s.outage
                .failed("reading pauses and blocks", &e, "keeping the last known ones");
            return;
        }
    };
    let limits = s.limits_now();
    let old = s.flow.get();
    let FlowState { pauses, mut blocks } = state;
    // A block ends only when its time is up. One this worker raised may not be written yet when the
    // read above ran (its write is on its way), so a block still in force stays in the view.
    let unwritten: Vec<Block> = old
        .blocks
        .iter()
        .filter(|b| {
            b.until > now
                && !blocks
                    .iter()
                    .any(|n| n.job_type == b.job_type && n.partition == b.partition)
        })
        .cloned()
        .collect();
    blocks.extend(unwritten);
    let freed = old.pauses.iter().any(|p| !pauses.contains(p))
        || old.blocks.iter().any(|b| {
            b.until <= now
                || !blocks
                    .iter()
                    .any(|n| n.job_type == b.job_type && n.partition == b.partition)
        });
    if old.pauses != pauses {
        log_pauses(&old.pauses, &pauses);
    }
    for b in blocks.iter().filter(|b| {
        !old.blocks
            .iter()
            .any(|o| o.job_type == b.job_type && o.partition == b.partition)
    }) {
        tracing::info!(
            "upstream rate limit reported by another worker: no {} job starts for {}",
            block_scope(b),
            format_duration(b.until.since(now))
        );
    }
    s.flow.set(Flow {
        limits: limits.clone(),
        pauses,
        blocks,
    });
    if freed {
        s.control.wake.notify_one();
    }
    record_limits(s, limits).await;
}

/// Logs the pauses that came and went since the last read.
fn log_pauses(before: &[crate::store::Pause], after: &[crate::store::Pause]) {
    let name = |p: &crate::store::Pause| match &p.job_type {
        Some(t) => format!("{t} in queue {}", p.queue),
        None => format!("queue {}", p.queue),
    };
    for p in after.iter().filter(|p| !before.contains(p)) {
        tracing::info!("paused: {} (no new job of it starts)", name(p));
    }
    for p in before.iter().filter(|p| !after.contains(p)) {
        tracing::info!("resumed: {}", name(p));
    }
}

/// Records the limits if they changed since last recorded, after one warning per scope whose
/// recorded limit another worker set differently.
async fn record_limits(s: &Arc<Shared>, limits: Vec<Limit>) {
    if s.flow.recorded.read().unwrap_or_else(|e| e.into_inner()).as_ref() == Some(&limits) {
        return;
    }
    if !limits.is_empty() {
        match s.store.limits().await {
            Ok(recorded) => {
                for mine in &limits {
                    let theirs = recorded.iter().find(|r| r.limit.scope == mine.scope);
                    if let Some(theirs) = theirs.filter(|r| r.limit != *mine && r.recorded_by != s.id) {
                        tracing::warn!(
                            "the limits of {} differ: this worker's config says {}; {} recorded {} (this worker's now apply to its own claims)",
                            describe_scope(&mine.scope),
                            mine.describe(),
                            theirs.recorded_by,
                            theirs.limit.describe(),
                        );
                    }
                }
            }
            Err(e) => s
                .outage
                .failed("reading the recorded limits", &e, "recording this worker's anyway"),
        }
        if let Err(e) = s
            .store
            .record_limits(&RecordLimits {
                limits: &limits,
                worker: &s.id,
                now: s.clock.now(),
            })
            .await
        {
            s.outage
                .failed("recording this worker's limits", &e, "trying again later");
            return;
        }
    }
    *s.flow.recorded.write().unwrap_or_else(|e| e.into_inner()) = Some(limits);
}

/// `crm.sync`, or `crm.sync (partition "7")`.
fn block_scope(block: &Block) -> String {
    match &block.partition {
        Some(p) => format!("{} (partition {p:?})", block.job_type),
        None => block.job_type.clone(),
    }
}

fn describe_scope(scope: &Scope) -> String {
    match scope {
        Scope::Type(t) => format!("[handlers.{t:?}]"),
        Scope::Queue(q) => format!("[queues.{q:?}]"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::handler::Builtin;
    use crate::retry::RetryPolicy;
    use crate::store::FieldPath;
    use crate::worker::HandlerOptions;
    use crate::worker::live::{Given, HandlerSet};

    fn limit(scope: Scope, gc: Option<u32>, partition: Option<&str>) -> Limit {
        Limit {
            scope,
            global_concurrency: gc,
            rate: None,
            partition: partition.map(|p| p.parse::<FieldPath>().unwrap()),
        }
    }

    /// A worker serving `types`, each with the limit given (`*` is the fallback).
    fn live(types: &[(&str, Option<Limit>)]) -> Live {
        let mut set = HandlerSet::default();
        for (t, l) in types {
            let options = HandlerOptions {
                limit: l.clone(),
                ..HandlerOptions::default()
            };
            let given = Given {
                handler: Arc::new(Builtin::from_name("noop").unwrap()),
                options,
                kind: None,
            };
            set.insert(t.to_string(), given);
        }
        let retry = RetryPolicy::default();
        Live::new(set, retry, 16, Arc::new(Vec::new()), retry.max_attempts).unwrap()
    }

    #[test]
    fn type_limits_bound_a_claim_only_when_they_cover_every_type_served() {
        let a = || limit(Scope::Type("a".into()), Some(50), None);
        let b = || limit(Scope::Type("b".into()), Some(3), None);
        let held = |t: &str| if t == "a" { 20 } else { 5 };
        // Every type under a plain concurrency limit: their free slots, less this worker's own.
        assert_eq!(
            live(&[("a", Some(a())), ("b", Some(b()))]).room_under_type_limits(held),
            Some(30)
        );
        // A type without one, a partitioned one (lanes: no total), a rate alone, or a fallback
        // handler (any type at all): no bound.
        assert_eq!(
            live(&[("a", Some(a())), ("b", None)]).room_under_type_limits(held),
            None
        );
        let lanes = limit(Scope::Type("b".into()), Some(1), Some("meta.tenantId"));
        assert_eq!(
            live(&[("a", Some(a())), ("b", Some(lanes))]).room_under_type_limits(held),
            None
        );
        let rate_only = limit(Scope::Type("b".into()), None, None);
        assert_eq!(
            live(&[("a", Some(a())), ("b", Some(rate_only))]).room_under_type_limits(held),
            None
        );
        assert_eq!(
            live(&[("a", Some(a())), ("*", None)]).room_under_type_limits(held),
            None
        );
    }

    #[test]
    fn queue_limits_bound_a_claim_only_when_every_queue_has_one() {
        let q = |name: &str, gc| limit(Scope::Queue(name.into()), Some(gc), None);
        let queues = ["mail".to_string(), "sms".to_string()];
        assert_eq!(room_under_queue_limits(&queues, &[q("mail", 5), q("sms", 2)]), Some(7));
        assert_eq!(room_under_queue_limits(&queues, &[q("mail", 5)]), None);
        let lanes = limit(Scope::Queue("sms".into()), Some(1), Some("payload.to"));
        assert_eq!(room_under_queue_limits(&queues, &[q("mail", 5), lanes]), None);
        assert_eq!(room_under_queue_limits(&[], &[q("mail", 5)]), None);
    }
}
