//! A worker's outcomes and the claim of their replacements in one transaction
//! (`Store::finish_and_claim`), for a worker under cluster-wide limits.
//!
//! While limits bind, a claim that finds room is one that follows outcomes: slots free only when a
//! job leaves `running`. Written apart, each cycle was a transaction for the outcomes and then a
//! limited claim that locked the limits' rows, counted, leased and committed while every other
//! worker's claim waited on those rows; the workers' cycles formed one chain (a link every 2.5–4 ms
//! on PostgreSQL), and three workers under `global_concurrency = 50` drained at a fifth of the
//! unlimited rate.
//!
//! Here the outcomes are written in the claim's transaction, and the slots they free are handed
//! over to it: in each scope of an unpartitioned concurrency limit, the claim admits at most as many
//! jobs as this transaction's outcomes took out of `running` there, and no more than the limit has
//! room for by the count it reads (so a limit lowered meanwhile still binds). Counted together, the
//! scope's running jobs do not grow, however many such transactions run at once and whatever a
//! locking claim does beside them (it counts under the lock, and a hand-over only ever lowers the
//! count it may see), so the hand-over takes no lock on the limits and the workers' cycles run side
//! by side. Jobs beyond what was handed over are left to the worker's next claim. A claim under a
//! limit with a partition (slots per partition, which the finished jobs' payloads would have to
//! name) or a rate (a bucket every start moves) locks the limits and admits as any limited claim
//! does, still in the one transaction.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::Locking;
use crate::job::Job;
use crate::store::sql::{Exec, Outcomes, Sql, SqlBackend};
use crate::store::{Admission, Candidate, Claim, Finish, Scope, StoreError};

impl Sql {
    /// Writes `finishes` with `backend`'s statements and claims for `claim` (a limited claim) in one
    /// transaction, run again when it loses a race for a row lock; what applied, and the jobs.
    pub async fn finish_and_claim<B: SqlBackend + ?Sized>(
        &self,
        backend: &B,
        finishes: &[Finish],
        claim: &Claim,
    ) -> Result<(Vec<bool>, Vec<Job>), StoreError> {
        self.retrying(
            "finish and claim",
            |_| false,
            || self.finish_and_claim_once(backend, finishes, claim),
        )
        .await
    }

    async fn finish_and_claim_once<B: SqlBackend + ?Sized>(
        &self,
        backend: &B,
        finishes: &[Finish],
        claim: &Claim,
    ) -> Result<(Vec<bool>, Vec<Job>), sqlx::Error> {
        let scopes = Admission::limited_scopes(claim);
        let mut tx = self.connections.begin(self.dialect.begin_outcomes_and_claim()).await?;
        let applied = backend
            .finish_in(&mut *tx, finishes, claim.now, Outcomes::OfFreeJobs)
            .await?;
        let jobs = if self.hands_over(claim, &scopes) {
            let freed = freed_slots(claim, finishes, &applied);
            let jobs = self.hand_over(&mut *tx, claim, &scopes, &freed).await?;
            tx.commit().await?;
            // Slots freed and not taken again here: the worker's next limited claim may find room.
            if jobs.len() < freed.values().copied().max().unwrap_or(0) as usize {
                self.slots_freed_here();
            }
            jobs
        } else {
            let (taken, admission) = self.admitted(&mut *tx, claim, &scopes, Locking::Yes).await?;
            let jobs = self.lease(&mut *tx, claim, &taken).await?;
            if !jobs.is_empty() {
                self.record_starts(&mut *tx, &admission).await?;
            }
            tx.commit().await?;
            self.limited_claim_fell_short
                .store(jobs.len() < claim.limit as usize, Ordering::Relaxed);
            jobs
        };
        Ok((applied, jobs))
    }

    /// Whether the claim can take the freed slots over without locking the limits: no limit of its
    /// scopes has a partition or a rate.
    fn hands_over(&self, claim: &Claim, scopes: &[String]) -> bool {
        claim
            .flow
            .limits
            .iter()
            .filter(|l| scopes.contains(&l.scope.key()))
            .all(|l| l.partition.is_none() && l.rate.is_none())
    }

    /// Leases, in claim order, the jobs that the slots `freed` (per scope key) admit: each limit's
    /// room is the smaller of what was freed in its scope and what its count leaves.
    async fn hand_over(
        &self,
        tx: &mut dyn Exec,
        claim: &Claim,
        scopes: &[String],
        freed: &HashMap<String, u32>,
    ) -> Result<Vec<Job>, sqlx::Error> {
        let (counted, _) = self.limits_in_force(tx, claim, scopes, Locking::No).await?;
        let mut running = HashMap::new();
        for limit in claim.flow.limits.iter().filter(|l| scopes.contains(&l.scope.key())) {
            let Some(max) = limit.global_concurrency else {
                continue;
            };
            let key = (limit.scope.key(), String::new());
            let now_running = counted.get(&key).copied().unwrap_or(0);
            let handed = freed.get(&key.0).copied().unwrap_or(0);
            let held = now_running.max(max.saturating_sub(handed));
            // Two limits of one scope: the larger count, which holds for both.
            let entry = running.entry(key).or_insert(held);
            *entry = (*entry).max(held);
        }
        let mut admission = Admission::new(claim, running, HashMap::new());
        let room = admission.headroom().jobs;
        if room == 0 {
            return Ok(Vec::new());
        }
        // Jobs of one queue with nothing to pass over: its first ready ones, as many as are sure to
        // be admitted (fewer than the claim wants is fine: the rest is the next claim's).
        if self.may_lease_wholesale(claim, scopes) && admission.closed_keys().is_empty() {
            let narrowed = Claim {
                limit: claim.limit.min(room),
                ..claim.clone()
            };
            let jobs = self.lease_first_ready(tx, &narrowed).await?;
            for job in &jobs {
                let admitted = admission.admit_with(Candidate::leased(job), &[]);
                debug_assert!(admitted, "the headroom admits every job of a wholesale lease");
            }
            return Ok(jobs);
        }
        let taken = self.admit_candidates(tx, claim, &mut admission, Locking::Yes).await?;
        self.lease(tx, claim, &taken).await
    }
}

/// The slots that the applied outcomes freed, per scope key of the claim's concurrency limits.
fn freed_slots(claim: &Claim, finishes: &[Finish], applied: &[bool]) -> HashMap<String, u32> {
    let mut scopes: Vec<&Scope> = claim
        .flow
        .limits
        .iter()
        .filter(|l| l.global_concurrency.is_some())
        .map(|l| &l.scope)
        .collect();
    scopes.sort_by_key(|s| s.key());
    scopes.dedup_by_key(|s| s.key());
    let mut freed: HashMap<String, u32> = HashMap::new();
    for finish in finishes.iter().zip(applied).filter(|(_, ok)| **ok).map(|(f, _)| f) {
        let lease = &finish.lease;
        for scope in scopes.iter().filter(|s| s.covers(&lease.job_type, &lease.queue)) {
            *freed.entry(scope.key()).or_default() += 1;
        }
    }
    freed
}
