//! Claiming: the dispatcher's loop, the size of each claim (free slots, type limits, the `max_jobs`
//! budget and the prefetch window), the idle wait between claims, and taking claimed jobs on
//! ([`Shared::start`]).
//!
//! A claim asks for as many jobs as the worker can start now, and for fast handlers a few milliseconds
//! of work more, which waits in the local queue. When nothing is ready, the dispatcher sleeps until
//! the store reports a write, a slot frees up or the poll interval passes. It never runs a handler and
//! never records an outcome: each job it takes on gets a task of its own (`run.rs`), and the outcome
//! of a job nobody serves goes to the acknowledger like any other. The only write it makes itself is
//! the release of jobs it claimed but cannot start.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;

use super::ack::{Ack, AckSender};
use super::run::run_job;
use super::{Held, Live, Queued, Shared, State, StopCause, backoff, outcome};
use crate::job::Job;
use crate::store::{Claim, Finish, Lease, WakeOn};
use crate::time::{UnixMillis, format_duration};

/// First re-poll interval after work was found, when no store watch wakes the dispatcher; it doubles
/// up to `poll_interval` while the queue stays empty.
const FAST_POLL: Duration = Duration::from_millis(5);
/// Prefetch is for handlers faster than this on average: the local queue then holds about
/// [`PREFETCH_WINDOW`] of work, at most [`PREFETCH_MAX`] jobs.
const PREFETCH_BELOW: Duration = Duration::from_millis(1);
/// How much work, in time, prefetched jobs may represent.
const PREFETCH_WINDOW: Duration = Duration::from_millis(5);
/// Most jobs waiting in the local queue.
const PREFETCH_MAX: u64 = 1000;
/// Longest wait for more free slots before a claim smaller than a quarter of the concurrency.
const GATHER: Duration = Duration::from_millis(1);
/// Under cluster-wide limits, the shortest time between a claim that fell short and the next one
/// that a store wake-up starts (see [`Dispatcher::idle`]); it doubles with each claim in a row that
/// got nothing, up to [`LIMITED_WAKE_GAP_MAX`] (and never past the poll interval).
const LIMITED_WAKE_GAP: Duration = Duration::from_millis(5);
const LIMITED_WAKE_GAP_MAX: Duration = Duration::from_millis(40);

/// How many jobs to claim, and which types not to.
pub(super) struct Window {
    pub(super) limit: u32,
    exclude: Vec<String>,
    /// The room under cluster-wide concurrency limits is what bounds `limit` (see
    /// [`Shared::limits_room`]): waiting for more free slots would not make the claim larger.
    by_limits: bool,
}

/// Runs the claim loop until the worker stops claiming. Wake-ups come from the store's own source
/// when `watch` is on and it has one (PostgreSQL LISTEN/NOTIFY, a watch on SQLite's files), else from
/// polling alone.
pub(super) async fn dispatch(s: &Arc<Shared>, acks: &AckSender, watch: bool) {
    let subscription = if watch {
        s.store
            .subscribe(&WakeOn::Ready(s.settings.queues.clone()), s.control.wake.clone())
    } else {
        None
    };
    let watched = subscription.is_some();
    let mut dispatcher = Dispatcher {
        s,
        acks,
        watched,
        failures: 0,
        idle_poll: if watched { s.settings.poll_interval } else { FAST_POLL },
        last_claim: Instant::now(),
        empty_claims: 0,
    };
    dispatcher.run().await;
    drop(subscription);
}

/// The claim loop's own state.
struct Dispatcher<'a> {
    s: &'a Arc<Shared>,
    acks: &'a AckSender,
    /// Whether the store wakes an idle dispatcher; otherwise it polls, faster just after finding work.
    watched: bool,
    /// Failed claims in a row.
    failures: u32,
    /// The next idle wait.
    idle_poll: Duration,
    /// When the last claim returned.
    last_claim: Instant,
    /// Claims in a row that got nothing.
    empty_claims: u32,
}

/// What an empty claim means to burst mode ([`Dispatcher::burst_end`]).
enum BurstEnd {
    /// Nothing: the worker goes on as usual.
    No,
    /// Claim again at once to confirm that nothing is left.
    Confirm,
    /// Nothing is left: the worker drains.
    Over,
}

impl Dispatcher<'_> {
    async fn run(&mut self) {
        let s = self.s;
        while !s.control.stop.is_cancelled() {
            // One snapshot per round for the claim's size and exclusions; the jobs it returns start
            // under a snapshot taken after it (below).
            let live = s.live();
            let window = s.window(&live);
            if window.limit == 0 {
                if self.budget_used() {
                    return;
                }
                self.wait_for_slot().await;
                continue;
            }
            let Some(window) = self.gather(&live, window).await else {
                return;
            };
            // The turn to claim (under limits the acknowledger claims too: see `ack.rs`), held from
            // sizing the claim to taking its jobs on, so that the two never claim for the same slots.
            // Taken only for a claim: a wait holding it would make the acknowledger write its
            // outcomes without their replacements.
            let turn = s.claiming.lock().await;
            let window = if s.claims_under_limits() {
                // The acknowledger may have claimed meanwhile.
                let again = s.window(&live);
                if again.limit == 0 {
                    continue;
                }
                again
            } else {
                window
            };
            // Burst mode ends on an empty claim only if the worker held nothing when the claim began: a
            // job it released meanwhile may have been locked (and so skipped) while the claim looked.
            let held_nothing = s.holds_nothing();
            let Some(jobs) = self.claim(&window).await else {
                continue;
            };
            self.last_claim = Instant::now();
            let got = jobs.len();
            self.empty_claims = if got == 0 {
                self.empty_claims.saturating_add(1)
            } else {
                0
            };
            tracing::trace!(worker = %s.id, asked = window.limit, got, "claimed");
            // The jobs start under the setup in force now: a reload that returned while the claim
            // was on its way (so before a job enqueued after it could be claimed) applies to them.
            s.start(&s.live(), jobs, self.acks).await;
            drop(turn);
            if got as u32 >= window.limit {
                // A full batch: more may be ready; claim again as soon as slots free up.
                continue;
            }
            match self.burst_end(&window, got, held_nothing) {
                BurstEnd::Over => return,
                BurstEnd::Confirm => {
                    tokio::time::sleep(FAST_POLL).await;
                    continue;
                }
                BurstEnd::No => {}
            }
            self.idle(&window, got).await;
        }
    }

    /// True, and the worker drains, once the `max_jobs` budget is used up.
    fn budget_used(&self) -> bool {
        let s = self.s;
        let taken = s.taken_on.load(Ordering::Relaxed);
        if s.max_jobs.is_some_and(|max| taken >= max) {
            tracing::info!("took on {taken} jobs (max jobs): draining");
            s.control.drain(StopCause::MaxJobs);
            return true;
        }
        false
    }

    /// Waits until a slot frees up (here, or in the store once this worker's outcomes are written:
    /// its own leases may be what fills its limits), a reload may have added some, or the worker
    /// stops.
    async fn wait_for_slot(&self) {
        let on_written = self.s.claims_under_limits();
        tokio::select! {
            _ = self.s.slot_freed.notified() => {}
            _ = self.s.outcomes_written.notified(), if on_written => {}
            _ = self.s.live.reloaded.notified() => {}
            _ = self.s.control.stop.cancelled() => {}
        }
    }

    /// While handlers are finishing one after another, a moment's wait gathers their slots into one
    /// claim instead of a claim per freed slot. `None` when the worker stops meanwhile.
    async fn gather(&self, live: &Live, mut window: Window) -> Option<Window> {
        let s = self.s;
        // A claim smaller than a quarter of the concurrency waits a moment for more slots.
        let enough = (live.concurrency / 4).max(1);
        if window.limit >= enough || window.by_limits || s.busy() == 0 {
            return Some(window);
        }
        let until = Instant::now() + GATHER;
        loop {
            tokio::select! {
                _ = s.slot_freed.notified() => {}
                _ = tokio::time::sleep_until(until) => break,
                _ = s.control.stop.cancelled() => return None,
            }
            window = s.window(live);
            if window.limit >= enough || window.by_limits || s.busy() == 0 {
                break;
            }
        }
        Some(window)
    }

    /// One claim of `window`'s size; `None` when it failed (logged, and paused for with back-off).
    async fn claim(&mut self, window: &Window) -> Option<Vec<Job>> {
        let s = self.s;
        match s.store.claim(&s.claim_of(window, s.clock.now())).await {
            Ok(jobs) => {
                self.failures = 0;
                s.outage.answered();
                Some(jobs)
            }
            Err(e) => {
                self.failures += 1;
                let pause = backoff(self.failures);
                let then = format!("trying again in {}", format_duration(pause));
                s.outage.failed("claiming jobs", &e, &then);
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = s.control.stop.cancelled() => {}
                }
                None
            }
        }
    }

    /// Whether burst mode has nothing left to do (then the worker drains). A claim that left types
    /// out (at their limit) proves nothing about those types' jobs: burst mode ends only on a claim
    /// that asked for everything, with nothing held (when it began, too). Nor does one empty claim:
    /// a claim passes over rows another transaction holds for a moment (`SKIP LOCKED`: a sweep's
    /// scan, another worker's claim that leaves them), so the first is confirmed by a second, a
    /// moment later.
    fn burst_end(&self, window: &Window, got: usize, held_nothing: bool) -> BurstEnd {
        let s = self.s;
        if !(s.burst && got == 0 && window.exclude.is_empty() && held_nothing && s.holds_nothing()) {
            return BurstEnd::No;
        }
        if self.empty_claims < 2 {
            return BurstEnd::Confirm;
        }
        tracing::info!("no ready job left: burst mode ends");
        s.control.drain(StopCause::Burst);
        BurstEnd::Over
    }

    /// Nothing more is ready for now. Waits for a write to the store, the poll interval (delayed jobs
    /// and back-offs become ready silently), a reload (which may serve types nobody served), or, when
    /// a type limit or burst mode held the claim back, for a slot to free up.
    async fn idle(&mut self, window: &Window, got: usize) {
        let s = self.s;
        if !self.watched {
            self.idle_poll = if got > 0 {
                FAST_POLL
            } else {
                (self.idle_poll * 2).min(s.settings.poll_interval)
            };
        }
        let on_slot = s.burst || !window.exclude.is_empty();
        // A limit shared with other workers may be what held the claim back. The store counts a
        // slot until the job's outcome is written, so a slot this worker frees is one it can take
        // again once the acknowledger has written it; a claim when the handler ends, before that,
        // would find the limit as full as before (slots other workers free are seen at the next
        // poll or store wake-up).
        let on_written = s.claims_under_limits();
        // Burst mode ends on an empty claim made holding nothing: the claim that can end it is the
        // one right after this worker's last outcomes are written, not the next poll's (which left
        // a burst's last 100–200 ms idle on the server stores). Listened for even when the worker
        // holds nothing now: outcomes written since the empty claim began left a permit, and the
        // claim that ends the burst follows at once.
        let burst_ends_on_written = s.burst;
        let store_woke = tokio::select! {
            biased;
            _ = s.control.stop.cancelled() => false,
            _ = s.control.wake.notified() => true,
            _ = s.live.reloaded.notified() => false,
            _ = s.slot_freed.notified(), if on_slot => false,
            _ = s.outcomes_written.notified(), if on_written || burst_ends_on_written => false,
            _ = tokio::time::sleep(self.idle_poll) => false,
        };
        // Under limits, a claim falls short mostly because the limits are full, and a store wake-up
        // says only that something was written: on SQLite every commit of every worker is one,
        // including this worker's own claim. Claiming at each would make the workers that hold no
        // slot read the limits over and over while the one that holds them cycles, on the same
        // cores and (on SQLite) the same file. So such a wake-up starts a claim no sooner than
        // LIMITED_WAKE_GAP after the last one, longer while claims keep getting nothing (another
        // worker is cycling through the slots, and claims its own freed ones at once), unless this
        // worker's own outcomes come first: those free slots for certain.
        if store_woke && on_written {
            let gap = crate::time::doubling(LIMITED_WAKE_GAP, self.empty_claims, LIMITED_WAKE_GAP_MAX)
                .min(s.settings.poll_interval.max(LIMITED_WAKE_GAP));
            tokio::select! {
                biased;
                _ = s.control.stop.cancelled() => {}
                _ = s.outcomes_written.notified() => {}
                _ = s.live.reloaded.notified() => {}
                _ = tokio::time::sleep_until(self.last_claim + gap) => {}
            }
        }
    }
}

impl Shared {
    /// How many jobs may wait in the local queue. Claiming only for free slots costs a claim and an
    /// acknowledgement per handful of jobs when handlers take microseconds, and those round trips
    /// then bound the rate; so for handlers that average under [`PREFETCH_BELOW`] the worker also
    /// claims about [`PREFETCH_WINDOW`] of work ahead. Slower handlers get none: a prefetched job
    /// waits holding its lease while other workers might have run it.
    fn prefetch_room(&self, live: &Live) -> u32 {
        let mean = self.mean_run_us.load(Ordering::Relaxed);
        if !live.may_prefetch || self.control.stop.is_cancelled() || mean >= PREFETCH_BELOW.as_micros() as u64 {
            return 0;
        }
        let per_slot = PREFETCH_WINDOW.as_micros() as u64 / mean.max(1);
        (u64::from(live.concurrency) * per_slot).min(PREFETCH_MAX) as u32
    }

    /// True when handlers take clearly longer than prefetching is for (a single hiccup of a fast
    /// handler does not count).
    pub(super) fn turned_slow(&self) -> bool {
        let mean = self.mean_run_us.load(Ordering::Relaxed);
        mean != u64::MAX && mean >= 4 * PREFETCH_BELOW.as_micros() as u64
    }

    /// Folds one run's duration into the moving average (weight 1/8) that sizes the prefetch window.
    pub(super) fn record_run(&self, took: Duration) {
        let us = took.as_micros().min(u128::from(u64::MAX - 1)) as u64;
        let old = self.mean_run_us.load(Ordering::Relaxed);
        let new = if old == u64::MAX { us } else { old - old / 8 + us / 8 };
        self.mean_run_us.store(new, Ordering::Relaxed);
    }

    /// The next claim's size: free slots, the rest of the `max_jobs` budget, when every type this
    /// worker serves has a limit, the room left under those limits, and the room under cluster-wide
    /// concurrency limits that bound every job ([`Shared::limits_room`]); types at their limit are
    /// excluded.
    pub(super) fn window(&self, live: &Live) -> Window {
        self.window_freeing(live, &[])
    }

    /// [`Shared::window`] as it will be once `freeing`, outcomes being written, no longer hold their
    /// slots in the store: the size of the claim that goes with them.
    pub(super) fn window_freeing(&self, live: &Live, freeing: &[Finish]) -> Window {
        let claimed = self.taken_on.load(Ordering::Relaxed);
        let st = self.lock();
        let mut limit = live.concurrency.saturating_sub(st.busy);
        let prefetch = self.prefetch_room(live).saturating_sub(st.queued.len() as u32);
        limit = limit.saturating_add(prefetch);
        if let Some(max) = self.max_jobs {
            limit = limit.min(u32::try_from(max.saturating_sub(claimed)).unwrap_or(u32::MAX));
        }
        let exclude: Vec<String> = st
            .by_type
            .iter()
            .filter(|(t, n)| {
                live.handler_for(t)
                    .and_then(|h| h.concurrency)
                    .is_some_and(|max| **n >= max)
            })
            .map(|(t, _)| t.clone())
            .collect();
        if live.fallback.is_none() && live.handlers.values().all(|h| h.concurrency.is_some()) {
            let room: u32 = live
                .handlers
                .iter()
                .map(|(t, h)| {
                    h.concurrency
                        .unwrap_or(0)
                        .saturating_sub(st.by_type.get(t).copied().unwrap_or(0))
                })
                .sum();
            limit = limit.min(room.max(1));
        }
        let limits_room = self.limits_room(live, &st, limit, freeing);
        if let Some(room) = limits_room {
            limit = room;
        }
        Window {
            limit,
            exclude,
            by_limits: limits_room.is_some(),
        }
    }

    /// The claim of `window`'s size at `now`.
    pub(super) fn claim_of(&self, window: &Window, now: UnixMillis) -> Claim {
        Claim {
            queues: self.settings.queues.clone(),
            exclude_types: window.exclude.clone(),
            worker: self.id.clone(),
            limit: window.limit,
            now,
            flow: self.claim_flow(),
        }
    }

    /// Takes claimed jobs on: spawns a task per job within the limits, answers unregistered types at
    /// once, and releases what it cannot start (over a type's limit, or claimed as shutdown began).
    /// Counts those it took on against `max_jobs`.
    pub(super) async fn start(self: &Arc<Self>, live: &Live, jobs: Vec<Job>, acks: &AckSender) {
        let stopping = self.control.stop.is_cancelled();
        let mut excess = Vec::new();
        let mut taken = 0;
        {
            let mut st = self.lock();
            for job in jobs {
                if stopping {
                    excess.push(Lease::of(&job));
                    continue;
                }
                match self.take_on(live, &mut st, job, acks) {
                    Ok(()) => taken += 1,
                    Err(lease) => excess.push(lease),
                }
            }
        }
        self.taken_on.fetch_add(taken, Ordering::Relaxed);
        if !excess.is_empty() {
            self.release_excess(&excess).await;
        }
    }

    /// Takes one claimed job on: holds its lease, and runs it in a free slot or queues it for the next
    /// one. Gives its lease back as the error when its type is at its limit.
    fn take_on(self: &Arc<Self>, live: &Live, st: &mut State, job: Job, acks: &AckSender) -> Result<(), Lease> {
        let lease = Lease::of(&job);
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let Some(reg) = live.handler_for(&job.job_type).cloned() else {
            self.answer_unregistered(st, job, lease, seq, acks);
            return Ok(());
        };
        if let Some(max) = reg.concurrency {
            let n = st.by_type.entry(job.job_type.clone()).or_insert(0);
            if *n >= max {
                return Err(lease);
            }
            *n += 1;
        }
        let cx = self.new_context();
        st.leases.insert(
            job.id.clone(),
            Held {
                lease,
                cx: cx.clone(),
                done: false,
                seq,
            },
        );
        if st.busy < live.concurrency {
            st.busy += 1;
            tokio::spawn(run_job(self.clone(), job, reg, cx, acks.clone(), seq));
        } else {
            st.queued.push_back(Queued { job, reg, cx, seq });
        }
        Ok(())
    }

    /// A job of a type nobody serves goes dead at once, through the acknowledger like any outcome.
    fn answer_unregistered(&self, st: &mut State, job: Job, lease: Lease, seq: u64, acks: &AckSender) {
        let finish = Finish {
            progress: None,
            lease: lease.clone(),
            outcome: outcome::unregistered(&job.job_type),
            spawn: Vec::new(),
        };
        let held = Held {
            lease,
            cx: self.new_context(),
            done: true,
            seq,
        };
        st.leases.insert(job.id.clone(), held);
        let _ = acks.send(Ack::Finish { finish, seq });
    }

    /// Gives back jobs claimed but not started, without using an attempt.
    async fn release_excess(&self, excess: &[Lease]) {
        tracing::debug!("releasing {} claimed jobs this worker cannot start now", excess.len());
        if let Err(e) = self.store.release(excess).await {
            // They stay running without heartbeats; the rescue sweep returns them to pending.
            tracing::warn!(
                "could not release {} jobs over their type's limit: {}",
                excess.len(),
                crate::error::causes(&e)
            );
        }
    }
}
