//! Flow control for the three SQL stores, written once (see `store/flow.rs` for the rules): pauses,
//! blocks and recorded limits are small tables read and written with one statement each; a limited
//! claim is one transaction.
//!
//! The limited claim locks its scopes' rows in `jobq_limits` in scope order (SQLite's immediate
//! transaction holds the whole file instead), so two claims that could take the same slot or the same
//! start of a rate run one after the other, and the second sees the first's jobs running. Under the
//! lock it counts each concurrency limit's running jobs per partition (a slot is a running job: every
//! exit from `running` frees it, and nothing is written to hold it), reads the rate buckets, selects
//! candidates in claim order with their partitions read by the same expression (locking them,
//! skipping rows other claimers hold, and leaving out the partitions that are already full), decides
//! each with [`Admission`], leases the admitted jobs, records the buckets they moved, and commits.
//!
//! A limit that never binds still makes every claim a limited one, so the transaction is kept to
//! what the limits need: SQLite locks no limit rows (its write transaction holds the file), the lease
//! hands back the leased jobs where `UPDATE … RETURNING` can (SQLite, PostgreSQL), and spent rate
//! buckets, which no claim reads, are deleted at most once a second rather than by every claim.
//! A claim of one queue with no partitioned limit, whose limits have room for all it wants, skips
//! the candidates: it leases the queue's first ready jobs as a claim without limits does (one
//! `UPDATE … RETURNING`; on MySQL a locking read of them and the lease by id), and admission counts
//! them afterwards. On the servers that lock rows (PostgreSQL, MySQL) such a claim, while the limits
//! last had room to spare, even leases before it locks the limits' rows, and checks under the lock
//! that they admit what it leased (rolling back if not), so that workers' leases run side by side.
//! The pages of candidates are in `flow/candidates.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

mod candidates;
mod handover;

use super::{Exec, IDS_PER_STATEMENT, JsonText, Sql, Stmt, job_from_row};
use crate::job::Job;
use crate::store::batch::sort_in_claim_order;
use crate::store::{
    Admission, Block, Candidate, Claim, FieldPath, FlowState, Limit, Pause, Rate, RecordLimits, RecordedLimit, Scope,
    SetPaused, SlotKey, StoreError,
};
use crate::time::UnixMillis;

/// Whether a limited claim's reads lock what they read (the claim itself) or only look (the look
/// before a claim while limits bind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Locking {
    Yes,
    No,
}

/// How often a pool's limited claims delete spent rate buckets, in milliseconds.
const RATES_SWEEP_EVERY_MS: i64 = 1000;

impl Sql {
    /// The pauses, and the blocks that have not run out.
    pub async fn flow_state(&self, now: UnixMillis) -> Result<FlowState, StoreError> {
        let operation = "reading pauses and blocks";
        let mut pauses_sql = self.stmt("SELECT queue, job_type, paused_at FROM jobq_pauses ORDER BY queue, job_type");
        pauses_sql.keep();
        let mut pauses = Vec::new();
        for row in self.fetch_all(&pauses_sql, operation).await? {
            let (queue, job_type, since) = (|| -> Result<(String, String, i64), sqlx::Error> {
                Ok((row.try_get_unchecked(0)?, row.try_get_unchecked(1)?, row.try_get(2)?))
            })()
            .map_err(self.fail(operation))?;
            pauses.push(Pause {
                queue,
                job_type: (!job_type.is_empty()).then_some(job_type),
                since: UnixMillis(since),
            });
        }
        let mut blocks_sql = self
            .stmt("SELECT job_type, whole_type, partition_key, blocked_until FROM jobq_blocks WHERE blocked_until > ");
        blocks_sql
            .bind(now.0)
            .push(" ORDER BY job_type, whole_type DESC, partition_key")
            .keep();
        let mut blocks = Vec::new();
        for row in self.fetch_all(&blocks_sql, operation).await? {
            let (job_type, whole, partition, until) = (|| -> Result<(String, i32, String, i64), sqlx::Error> {
                Ok((
                    row.try_get_unchecked(0)?,
                    row.try_get(1)?,
                    row.try_get_unchecked(2)?,
                    row.try_get(3)?,
                ))
            })()
            .map_err(self.fail(operation))?;
            blocks.push(Block {
                job_type,
                partition: (whole == 0).then_some(partition),
                until: UnixMillis(until),
            });
        }
        Ok(FlowState { pauses, blocks })
    }

    /// Pauses or resumes a queue or a type in it; whether anything changed.
    pub async fn set_paused(&self, pause: &SetPaused<'_>) -> Result<bool, StoreError> {
        let SetPaused {
            queue,
            job_type,
            paused,
            now,
        } = *pause;
        let job_type = job_type.unwrap_or("").to_string();
        let stmt = if paused {
            // An existing pause is kept and counted as no change (MySQL's upsert would count a row
            // "updated" to its own values as changed, so it ignores the duplicate instead).
            let (insert, on_conflict) = match self.dialect.upsert {
                super::Upsert::OnConflict => ("INSERT INTO", " ON CONFLICT (queue, job_type) DO NOTHING"),
                super::Upsert::OnDuplicateKey => ("INSERT IGNORE INTO", ""),
            };
            let mut s = self.stmt(format!("{insert} jobq_pauses (queue, job_type, paused_at) VALUES ("));
            s.bind(queue.to_string())
                .push(", ")
                .bind(job_type)
                .push(", ")
                .bind(now.0)
                .push(")")
                .push(on_conflict);
            s
        } else {
            let mut s = self.stmt("DELETE FROM jobq_pauses WHERE queue = ");
            s.bind(queue.to_string()).push(" AND job_type = ").bind(job_type);
            s
        };
        let operation = if paused { "pausing" } else { "resuming" };
        Ok(self.execute(&stmt, operation).await? > 0)
    }

    /// Records a block, keeping a later one, and forgets those that ran out.
    pub async fn block(&self, block: &Block, now: UnixMillis) -> Result<(), StoreError> {
        let mut forget = self.stmt("DELETE FROM jobq_blocks WHERE blocked_until <= ");
        forget.bind(now.0).keep();
        self.execute(&forget, "recording a block").await?;
        let mut s = self.stmt("INSERT INTO jobq_blocks (job_type, whole_type, partition_key, blocked_until) VALUES (");
        s.bind(block.job_type.clone())
            .push(", ")
            .bind(i32::from(block.partition.is_none()))
            .push(", ")
            .bind(block.partition.clone().unwrap_or_default())
            .push(", ")
            .bind(block.until.0)
            .push(")");
        let greatest = self.dialect.greatest;
        match self.dialect.upsert {
            super::Upsert::OnConflict => s.push(&format!(
                " ON CONFLICT (job_type, whole_type, partition_key) DO UPDATE SET \
                 blocked_until = {greatest}(jobq_blocks.blocked_until, excluded.blocked_until)"
            )),
            super::Upsert::OnDuplicateKey => s.push(&format!(
                " ON DUPLICATE KEY UPDATE blocked_until = {greatest}(blocked_until, VALUES(blocked_until))"
            )),
        };
        self.execute(&s, "recording a block").await.map(drop)
    }

    /// Records limits, replacing what their scopes had.
    pub async fn record_limits(&self, record: &RecordLimits<'_>) -> Result<(), StoreError> {
        let RecordLimits { limits, worker, now } = *record;
        for limit in limits {
            let mut s = self.stmt(
                "INSERT INTO jobq_limits (scope, global_concurrency, rate_count, rate_per_ms, partition_by, \
                 recorded_by, recorded_at) VALUES (",
            );
            s.bind(limit.scope.key())
                .push(", ")
                .bind(limit.global_concurrency.map(i64::from))
                .push(", ")
                .bind(limit.rate.map(|r| i64::from(r.count)))
                .push(", ")
                .bind(limit.rate.map(|r| r.per_ms as i64))
                .push(", ")
                .bind(limit.partition.as_ref().map(|p| p.to_string()))
                .push(", ")
                .bind(worker.to_string())
                .push(", ")
                .bind(now.0)
                .push(")")
                .push(&self.dialect.upsert(
                    "scope",
                    &[
                        "global_concurrency",
                        "rate_count",
                        "rate_per_ms",
                        "partition_by",
                        "recorded_by",
                        "recorded_at",
                    ],
                ));
            self.execute(&s, "recording limits").await?;
        }
        Ok(())
    }

    /// The recorded limits, by scope.
    pub async fn limits(&self) -> Result<Vec<RecordedLimit>, StoreError> {
        let operation = "reading limits";
        let mut s = self.stmt(
            "SELECT scope, global_concurrency, rate_count, rate_per_ms, partition_by, recorded_by, recorded_at \
             FROM jobq_limits ORDER BY scope",
        );
        s.keep();
        let mut out = Vec::new();
        for row in self.fetch_all(&s, operation).await? {
            type Cols = (
                String,
                Option<i64>,
                Option<i64>,
                Option<i64>,
                Option<String>,
                String,
                i64,
            );
            let cols = (|| -> Result<Cols, sqlx::Error> {
                Ok((
                    row.try_get_unchecked(0)?,
                    row.try_get(1)?,
                    row.try_get(2)?,
                    row.try_get(3)?,
                    row.try_get_unchecked(4)?,
                    row.try_get_unchecked(5)?,
                    row.try_get(6)?,
                ))
            })()
            .map_err(self.fail(operation))?;
            let (scope, concurrency, count, per_ms, partition, by, at) = cols;
            // A row a claim made for a scope nobody recorded (or written by hand badly) is skipped.
            let Some(scope) = Scope::from_key(&scope) else { continue };
            out.push(RecordedLimit {
                limit: Limit {
                    scope,
                    global_concurrency: concurrency.map(|n| n.clamp(0, i64::from(u32::MAX)) as u32),
                    rate: count.zip(per_ms).map(|(count, per_ms)| Rate {
                        count: count.clamp(1, i64::from(u32::MAX)) as u32,
                        per_ms: per_ms.max(1) as u64,
                    }),
                    partition: partition.and_then(|p| p.parse::<FieldPath>().ok()),
                },
                recorded_by: by,
                recorded_at: UnixMillis(at),
            });
        }
        Ok(out)
    }

    /// A limited claim (see the module documentation): one transaction, run again when it loses a
    /// race for a row lock.
    pub async fn claim_limited(&self, claim: &Claim) -> Result<Vec<Job>, StoreError> {
        self.retrying("claim", |_| false, || self.claim_limited_once(claim))
            .await
    }

    /// This process has just freed slots (written outcomes or released jobs): its next limited claim
    /// may find room, so it locks at once instead of looking first; its look would only delay it.
    pub fn slots_freed_here(&self) {
        self.limited_claim_fell_short.store(false, Ordering::Relaxed);
    }

    async fn claim_limited_once(&self, claim: &Claim) -> Result<Vec<Job>, sqlx::Error> {
        let scopes = Admission::limited_scopes(claim);
        // While limits bind, most claims find them full. Such a claim would still lock the limits'
        // rows (on SQLite: the whole file) and wait for every other claim; so after a claim that fell
        // short, the next one first decides its candidates without locking anything, and only locks
        // when that look admits some.
        if self.limited_claim_fell_short.load(Ordering::Relaxed) {
            let look = match self.dialect.begin_look() {
                Some(begin) => {
                    let mut tx = self.connections.begin(begin).await?;
                    let (look, _) = self.admitted(&mut tx, claim, &scopes, Locking::No).await?;
                    tx.rollback().await?;
                    look
                }
                None => {
                    let mut conn = self.connections.acquire().await?;
                    self.admitted(&mut conn, claim, &scopes, Locking::No).await?.0
                }
            };
            if look.is_empty() {
                return Ok(Vec::new());
            }
        }
        let wholesale = self.may_lease_wholesale(claim, &scopes);
        // Where claims lock rows rather than the whole store, one that the limits had room for
        // leases first and checks after (see `claim_before_locking`).
        if wholesale
            && self.dialect.locks_rows()
            && self.limits_had_room.load(Ordering::Relaxed)
            && let Some(jobs) = self.claim_before_locking(claim, &scopes).await?
        {
            self.limited_claim_fell_short
                .store(jobs.len() < claim.limit as usize, Ordering::Relaxed);
            return Ok(jobs);
        }
        let mut tx = self.connections.begin(self.dialect.begin_claim()).await?;
        let (jobs, admission) = if wholesale {
            self.lease_wholesale(&mut tx, claim, &scopes).await?
        } else {
            let (taken, admission) = self.admitted(&mut tx, claim, &scopes, Locking::Yes).await?;
            (self.lease(&mut tx, claim, &taken).await?, admission)
        };
        if !jobs.is_empty() {
            self.record_starts(&mut tx, &admission).await?;
        }
        tx.commit().await?;
        self.limited_claim_fell_short
            .store(jobs.len() < claim.limit as usize, Ordering::Relaxed);
        Ok(jobs)
    }

    /// Writes the rate buckets that a claim's admitted jobs moved.
    async fn record_starts(&self, tx: &mut dyn Exec, admission: &Admission<'_>) -> Result<(), sqlx::Error> {
        for (scope, partition, tat) in admission.rate_updates() {
            let mut upsert = self.stmt("INSERT INTO jobq_rates (scope, partition_key, tat_us) VALUES (");
            upsert
                .bind(scope)
                .push(", ")
                .bind(partition)
                .push(", ")
                .bind(tat)
                .push(")")
                .push(&self.dialect.upsert("scope, partition_key", &["tat_us"]));
            tx.execute(&upsert).await?;
        }
        Ok(())
    }

    /// A wholesale claim on a server with row locks while the limits had room: it leases first and
    /// only then locks the limits' rows and checks that they admit what it leased, so that the
    /// leases of several workers run side by side and only the short check waits for the others'.
    /// Two claims cannot both take the last slot: each checks under the lock, counting the running
    /// jobs that claims before it committed and its own uncommitted ones. `None`, with nothing
    /// changed, when the limits turn some of the jobs away; the caller then claims the careful way.
    async fn claim_before_locking(&self, claim: &Claim, scopes: &[String]) -> Result<Option<Vec<Job>>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_claim()).await?;
        let jobs = self.lease_first_ready(&mut tx, claim).await?;
        let (mut running, buckets) = self.limits_in_force(&mut tx, claim, scopes, Locking::Yes).await?;
        // The count includes this claim's own leases, which admission is about to decide.
        for limit in claim.flow.limits.iter().filter(|l| l.global_concurrency.is_some()) {
            let own = jobs
                .iter()
                .filter(|j| limit.scope.covers(&j.job_type, &j.queue))
                .count() as u32;
            if let Some(n) = running.get_mut(&(limit.scope.key(), String::new())) {
                *n = n.saturating_sub(own);
            }
        }
        let mut admission = Admission::new(claim, running, buckets);
        if !jobs.iter().all(|job| admission.admit_with(Candidate::leased(job), &[])) {
            tx.rollback().await?;
            self.limits_had_room.store(false, Ordering::Relaxed);
            return Ok(None);
        }
        if !jobs.is_empty() {
            self.record_starts(&mut tx, &admission).await?;
        }
        tx.commit().await?;
        Ok(Some(jobs))
    }

    /// Whether a claim may skip admission job by job: one queue, no partitioned limit (whose slots
    /// and buckets depend on each job's field), and nothing its selection would leave out (types at
    /// their limit, paused, blocked or excluded). Such a claim takes the queue's first ready jobs if
    /// the limits are sure to admit as many as it wants, which [`Self::lease_wholesale`] finds out
    /// once it has read the limits.
    fn may_lease_wholesale(&self, claim: &Claim, scopes: &[String]) -> bool {
        if claim.queues.len() != 1 {
            return false;
        }
        let partitioned = claim
            .flow
            .limits
            .iter()
            .any(|l| l.partition.is_some() && scopes.contains(&l.scope.key()));
        let partition_blocked = claim
            .flow
            .blocks
            .iter()
            .any(|b| b.until > claim.now && b.partition.is_some());
        !partitioned
            && !partition_blocked
            && self
                .page_filter(claim, &claim.queues[0], &[])
                .is_some_and(|filter| !filter.leaves_out())
    }

    /// A limited claim whose limits never hold a job back (most claims under a limit that does not
    /// bind): when the limits' state shows room for the whole claim, one `UPDATE … RETURNING`
    /// leases the queue's first ready jobs, as a claim without limits does, and admission counts
    /// them afterwards; otherwise the candidates are read and decided page by page. The jobs in
    /// claim order, and the admission that counted them.
    async fn lease_wholesale<'c>(
        &self,
        tx: &mut dyn Exec,
        claim: &'c Claim,
        scopes: &[String],
    ) -> Result<(Vec<Job>, Admission<'c>), sqlx::Error> {
        let (running, buckets) = self.limits_in_force(tx, claim, scopes, Locking::Yes).await?;
        let mut admission = Admission::new(claim, running, buckets);
        // The headroom counts only the limits that are open (a full one would leave its jobs out
        // of a selection, which this lease has none of). No partitioned limit bounds it here (see
        // `may_lease_wholesale`).
        let headroom = admission.headroom();
        if headroom.jobs < claim.limit || !admission.closed_keys().is_empty() {
            let taken = self.admit_candidates(tx, claim, &mut admission, Locking::Yes).await?;
            return Ok((self.lease(tx, claim, &taken).await?, admission));
        }
        // Room for claims as large as this one from other workers too: the next claim may lease
        // before it locks.
        self.limits_had_room
            .store(headroom.jobs / 2 >= claim.limit, Ordering::Relaxed);
        let jobs = self.lease_first_ready(tx, claim).await?;
        for job in &jobs {
            let admitted = admission.admit_with(Candidate::leased(job), &[]);
            debug_assert!(admitted, "the headroom admits every job of a wholesale lease");
        }
        Ok((jobs, admission))
    }

    /// Leases the first ready jobs of the claim's one queue, as many as it wants, with one `UPDATE
    /// … RETURNING` (where the server has none, MySQL's: a read of those jobs, locking them and
    /// skipping rows other claims hold, then the lease by id); the jobs in claim order.
    async fn lease_first_ready(&self, tx: &mut dyn Exec, claim: &Claim) -> Result<Vec<Job>, sqlx::Error> {
        if !self.dialect.update_returning {
            let mut select = self.stmt(format!(
                "SELECT {} FROM jobq_jobs AS j WHERE ",
                self.dialect.job_columns
            ));
            self.push_first_ready(&mut select, claim);
            let jobs = self.fetch_jobs(tx, &select).await?;
            return self.lease_read(tx, claim, jobs).await;
        }
        let mut lease = self.lease_head(claim);
        let (open, close) = self.dialect.in_selected;
        lease.push(open).push("SELECT j.id FROM jobq_jobs AS j WHERE ");
        self.push_first_ready(&mut lease, claim);
        lease
            .push(close)
            .push(" RETURNING ")
            .push(&self.dialect.returned_job_columns());
        let mut jobs = self.fetch_jobs(tx, &lease).await?;
        // RETURNING gives no order.
        sort_in_claim_order(&mut jobs);
        Ok(jobs)
    }

    /// Appends the condition, order and limit that select the claim's one queue's first ready jobs
    /// (as many as it wants), locking them and skipping rows other claims hold.
    fn push_first_ready(&self, s: &mut Stmt, claim: &Claim) {
        self.push_ready(s, "j", &claim.queues[0], claim.now, None);
        s.push(" ORDER BY j.priority, j.run_at, j.id LIMIT ")
            .bind(i64::from(claim.limit))
            .push(self.dialect.lock_skipping);
    }

    /// Leases the admitted jobs, `ids` in claim order, and returns them leased, in that order: one
    /// `UPDATE … RETURNING` per chunk where the server has it, else a read of the jobs and then the
    /// update.
    async fn lease(&self, tx: &mut dyn Exec, claim: &Claim, ids: &[String]) -> Result<Vec<Job>, sqlx::Error> {
        if !self.dialect.update_returning {
            let jobs = self.read_jobs(tx, ids).await?;
            return self.lease_read(tx, claim, jobs).await;
        }
        // RETURNING gives no order.
        self.fetch_jobs_in_order(tx, ids, |chunk| {
            let mut lease = self.lease_statement(claim, chunk);
            lease.push(" RETURNING ").push(&self.dialect.returned_job_columns());
            lease
        })
        .await
    }

    /// Where the server has no `UPDATE … RETURNING`: leases `jobs`, which this transaction read and
    /// holds, by id, and returns them as the lease made them.
    async fn lease_read(&self, tx: &mut dyn Exec, claim: &Claim, mut jobs: Vec<Job>) -> Result<Vec<Job>, sqlx::Error> {
        let ids: Vec<String> = jobs.iter().map(|j| j.id.to_string()).collect();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let lease = self.lease_statement(claim, chunk);
            tx.execute(&lease).await?;
        }
        for job in &mut jobs {
            claim.lease(job);
        }
        Ok(jobs)
    }

    /// The `UPDATE` that leases the pending jobs of `ids` to the claiming worker.
    fn lease_statement(&self, claim: &Claim, ids: &[String]) -> Stmt {
        let mut lease = self.lease_head(claim);
        lease.push(" IN ").list(ids.iter().cloned());
        lease
    }

    /// The `UPDATE` that leases jobs to the claiming worker, up to its `WHERE id`: the caller adds
    /// which. Every caller names jobs that this transaction read as pending and holds (locked
    /// `FOR UPDATE`, or the whole file on SQLite), so they are pending still, and the statement
    /// repeats no `status = 'pending'`: PostgreSQL's planner, whose statistics of a queue are
    /// always out of date, answered that condition by reading the whole ready index (every
    /// pending job) and intersecting it with the ids' primary-key look-ups, which made a lease of
    /// 34 jobs out of 20,000 pending take 1.9 ms instead of 0.7 (by `EXPLAIN ANALYZE`).
    fn lease_head(&self, claim: &Claim) -> Stmt {
        let mut lease = self.stmt(
            "UPDATE jobq_jobs SET status = 'running', attempt = attempt + 1, progress = NULL, \
             progress_message = NULL, worker_id = ",
        );
        lease
            .bind(claim.worker.clone())
            .push(", started_at = ")
            .bind(claim.now.0)
            .push(", heartbeat_at = ")
            .bind(claim.now.0)
            .push(" WHERE id");
        lease
    }

    /// The ids a limited claim admits, in claim order, and the admission that decided them (what it
    /// moved): the limits' state, then the candidates page by page. With [`Locking::Yes`] it holds
    /// the limits' rows and the candidates it read until `tx` ends; with [`Locking::No`] it only
    /// reads, and its answer may be out of date by the time it is used.
    async fn admitted<'c>(
        &self,
        tx: &mut dyn Exec,
        claim: &'c Claim,
        scopes: &[String],
        locking: Locking,
    ) -> Result<(Vec<String>, Admission<'c>), sqlx::Error> {
        let (running, buckets) = if scopes.is_empty() {
            Default::default()
        } else {
            self.limits_in_force(tx, claim, scopes, locking).await?
        };
        let mut admission = Admission::new(claim, running, buckets);
        let taken = self.admit_candidates(tx, claim, &mut admission, locking).await?;
        Ok((taken, admission))
    }

    /// Locks the scopes' limits and reads what holds them: the running jobs of each concurrency limit
    /// per partition, and the rate buckets still filling (spent ones are deleted: a bucket that has
    /// run dry is the same as none).
    async fn limits_in_force(
        &self,
        tx: &mut dyn Exec,
        claim: &Claim,
        scopes: &[String],
        locking: Locking,
    ) -> Result<(HashMap<SlotKey, u32>, HashMap<SlotKey, i64>), sqlx::Error> {
        let now_us = claim.now.0.saturating_mul(1000);
        let mut running: HashMap<SlotKey, u32> = HashMap::new();
        let mut buckets: HashMap<SlotKey, i64> = HashMap::new();
        // SQLite's write transaction already holds the whole file.
        if locking == Locking::Yes && self.dialect.locks_rows() {
            self.lock_scopes(tx, scopes, claim.now).await?;
        }
        for limit in claim.flow.limits.iter().filter(|l| l.global_concurrency.is_some()) {
            if !scopes.contains(&limit.scope.key()) {
                continue;
            }
            let count = self.running_by_partition(limit);
            for row in tx.fetch_all(&count).await? {
                let n: i64 = row.try_get(1)?;
                running.insert(
                    (limit.scope.key(), row.try_get_unchecked(0)?),
                    n.clamp(0, i64::from(u32::MAX)) as u32,
                );
            }
        }
        if claim.flow.limits.iter().any(|l| l.rate.is_some()) {
            if locking == Locking::Yes && self.rates_sweep_due(claim.now) {
                let mut spent = self.stmt("DELETE FROM jobq_rates WHERE tat_us <= ");
                spent.bind(now_us).any_of("scope", scopes.iter().cloned());
                tx.execute(&spent).await?;
            }
            let mut rates = self.stmt("SELECT scope, partition_key, tat_us FROM jobq_rates WHERE tat_us > ");
            rates.bind(now_us).any_of("scope", scopes.iter().cloned());
            for row in tx.fetch_all(&rates).await? {
                buckets.insert((row.try_get_unchecked(0)?, row.try_get_unchecked(1)?), row.try_get(2)?);
            }
        }
        Ok((running, buckets))
    }

    /// Whether this claim deletes the spent rate buckets: the first limited claim of each second. A
    /// spent bucket is the same as none to every claim (they read only buckets still filling, and an
    /// admitted start writes its bucket whole), so deleting them only keeps the table small.
    fn rates_sweep_due(&self, now: UnixMillis) -> bool {
        let last = self.rates_swept_at.load(Ordering::Relaxed);
        now.0.saturating_sub(last) >= RATES_SWEEP_EVERY_MS
            && self
                .rates_swept_at
                .compare_exchange(last, now.0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Runs a statement that returns whole jobs (in the order of `job_columns`) in the claim's
    /// transaction; the jobs in the rows' order.
    async fn fetch_jobs(&self, tx: &mut dyn Exec, stmt: &Stmt) -> Result<Vec<Job>, sqlx::Error> {
        let rows = tx.fetch_all(stmt).await?;
        rows.iter()
            .map(|row| job_from_row(row, self.dialect.kind).map_err(|e| sqlx::Error::Decode(Box::new(e))))
            .collect()
    }

    /// The whole jobs of `ids`, in that order.
    pub(super) async fn read_jobs(&self, tx: &mut dyn Exec, ids: &[String]) -> Result<Vec<Job>, sqlx::Error> {
        self.fetch_jobs_in_order(tx, ids, |chunk| {
            let mut select = self.stmt(format!(
                "SELECT {} FROM jobq_jobs AS j WHERE 1 = 1",
                self.dialect.job_columns
            ));
            select.any_of("j.id", chunk.iter().cloned());
            select
        })
        .await
    }

    /// Runs `statement_for` each chunk of `ids` (a statement that returns whole jobs, in any order)
    /// and returns the jobs in the order of `ids`, leaving out ids no row came back for.
    async fn fetch_jobs_in_order(
        &self,
        tx: &mut dyn Exec,
        ids: &[String],
        statement_for: impl Fn(&[String]) -> Stmt,
    ) -> Result<Vec<Job>, sqlx::Error> {
        let mut by_id: HashMap<String, Job> = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            for job in self.fetch_jobs(tx, &statement_for(chunk)).await? {
                by_id.insert(job.id.to_string(), job);
            }
        }
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    /// Locks the limits' rows of `scopes` in scope order, making the missing ones first (a scope whose
    /// worker has not recorded it yet, or a row deleted by hand).
    async fn lock_scopes(&self, tx: &mut dyn Exec, scopes: &[String], now: UnixMillis) -> Result<(), sqlx::Error> {
        let mut lock = self.stmt("SELECT scope FROM jobq_limits WHERE 1 = 1");
        lock.any_of("scope", scopes.iter().cloned())
            .push(" ORDER BY scope")
            .push(self.dialect.for_update);
        let found: HashSet<String> = tx
            .fetch_all(&lock)
            .await?
            .iter()
            .map(|r| r.try_get_unchecked::<String>(0))
            .collect::<Result<_, _>>()?;
        let missing: Vec<&String> = scopes.iter().filter(|s| !found.contains(*s)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        for scope in missing {
            let mut insert = self.stmt("INSERT INTO jobq_limits (scope, recorded_at) VALUES (");
            insert
                .bind(scope.clone())
                .push(", ")
                .bind(now.0)
                .push(")")
                .push(&self.dialect.insert_ignoring("scope"));
            tx.execute(&insert).await?;
        }
        tx.fetch_all(&lock).await?;
        Ok(())
    }

    /// The running jobs under `limit` per partition (`''` without one): the slots held, read from the
    /// jobs themselves.
    fn running_by_partition(&self, limit: &Limit) -> Stmt {
        let mut s = self.stmt("SELECT ");
        match &limit.partition {
            Some(path) => {
                s.push("COALESCE(");
                self.json_text(&mut s, path);
                s.push(", '') AS p");
            }
            None => {
                s.push("'' AS p");
            }
        }
        s.push(", COUNT(*) FROM jobq_jobs AS j WHERE j.status = 'running'");
        match &limit.scope {
            Scope::Type(t) => s.push(" AND j.job_type = ").bind(t.clone()),
            Scope::Queue(q) => s.push(" AND j.queue = ").bind(q.clone()),
        };
        if limit.partition.is_some() {
            s.push(" GROUP BY p");
        }
        s
    }

    /// Appends the text of a job's field at `path` (NULL when missing).
    fn json_text(&self, s: &mut Stmt, path: &FieldPath) {
        let (column, keys) = path.column_and_keys();
        let json_path = || {
            let quoted: Vec<String> = keys.iter().map(|k| format!("\"{k}\"")).collect();
            format!("$.{}", quoted.join("."))
        };
        match self.dialect.json_text {
            JsonText::CastJsonExtract => {
                s.push(&format!("CAST(json_extract(j.{column}, "))
                    .bind(json_path())
                    .push(") AS TEXT)");
            }
            JsonText::ExtractPathText => {
                s.push(&format!("json_extract_path_text(j.{column}"));
                for key in &keys {
                    s.push(", ").bind(key.to_string());
                }
                s.push(")");
            }
            JsonText::UnquoteJsonExtract => {
                s.push(&format!("JSON_UNQUOTE(JSON_EXTRACT(j.{column}, "))
                    .bind(json_path())
                    .push("))");
            }
        }
    }
}
