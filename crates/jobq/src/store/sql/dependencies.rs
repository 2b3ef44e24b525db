//! Jobs that wait for other jobs, written once for the three SQL stores (see the contract of
//! [`crate::store::Store::enqueue`]).
//!
//! An edge is a row of `jobq_deps`; a job counts the open edges that wait for it in its `dependents`
//! column, and those it waits by in its `waiting_for` column. Writing an edge locks its dependency's
//! row first, and a job's end writes that row, so the two are ordered: either the edge is written
//! before the end, which then resolves it, or the enqueue finds the dependency ended and resolves
//! the edge itself. [`Sql::release_dependents`] runs in the transaction of whatever ended the jobs,
//! and resolves each open edge once: only a job's first end (a lease's outcome, a cancel or deletion
//! of a live job) releases, and it zeroes the job's count of dependents.
//!
//! The row of an edge its dependency's end meets is not written: that end, stored in the
//! dependency's row in the same transaction, is the edge's record, and the dependent's count drops.
//! An edge's state therefore reads as: `broken` or `met` when its `resolved` column says so (an
//! end that breaks an edge marks it, as do an import and a reopen), otherwise open while its
//! dependency is live and met once that has ended or is gone (a live job's deletion breaks or meets
//! its edges as its cancel would). Whatever makes an ended job live again (a replay, a retry, a
//! reopen, an import over it) first marks its unmarked edges `met` ([`Sql::settle_edges`]), so that
//! they keep reading as they did. A flow's ten thousand children thus write their parent's row once
//! per batch of ends, not ten thousand edge rows.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::in_transaction::{self, SqlTables};
use super::manage::errors_text;
use super::{Exec, IDS_PER_STATEMENT, LIVE_STATUSES, LimitedDelete, Sql, Stmt};
use crate::job::{DependOn, JobError, JobStatus, Join, NO_DEPENDENCY_MET_ERROR, NewJob, broken_dependency_error};
use crate::store::manage::push_to_history;
use crate::store::{EnqueueOutcome, Enqueued, StoreError};
use crate::time::UnixMillis;

mod imported;
mod outcomes;

pub(crate) use outcomes::DYING_LEFT_TO_SHARED;

/// A job that has just ended, whose dependents are to be resolved.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// Its id.
    pub id: String,
    /// How it ended.
    pub status: JobStatus,
}

/// What an enqueue with dependencies could not do.
enum Refused {
    Unknown(Vec<String>),
    Store(StoreError),
    Sql(sqlx::Error),
}

impl From<sqlx::Error> for Refused {
    fn from(e: sqlx::Error) -> Refused {
        Refused::Sql(e)
    }
}

impl Refused {
    /// A refusal where every dependency is known (children, which name none) as the driver's error.
    fn into_sql(self) -> sqlx::Error {
        match self {
            Refused::Sql(e) => e,
            Refused::Store(e) => sqlx::Error::Protocol(e.to_string()),
            Refused::Unknown(ids) => sqlx::Error::Protocol(format!("unknown dependencies {ids:?}")),
        }
    }
}

impl Sql {
    /// [`crate::store::Store::enqueue`] of a batch in which some job names dependencies: one
    /// transaction inserts the jobs (as an application's transaction would, `tables` naming them),
    /// then writes their edges, resolving at once those whose dependency has ended.
    pub(crate) async fn enqueue_after(&self, tables: &SqlTables, jobs: &[NewJob]) -> Result<Vec<Enqueued>, StoreError> {
        // A deadlock with outcomes that lock the same running dependencies in another order (an
        // outcome statement locks its rows in its plan's order) is tried again, whole: a failed
        // attempt wrote nothing.
        let decided = self
            .retrying(
                "enqueue",
                |_| false,
                || async {
                    let mut tx = self.connections.begin(self.dialect.begin_write).await?;
                    match self.enqueue_after_in(&mut tx, tables, jobs).await {
                        Ok(answers) => {
                            tx.commit().await?;
                            Ok(Ok(answers))
                        }
                        Err(Refused::Sql(e)) => Err(e),
                        // Nothing of the batch is written; rolled back at once, so that the rows it
                        // locked are free.
                        Err(refused) => {
                            tx.rollback().await?;
                            Ok(Err(refused))
                        }
                    }
                },
            )
            .await?;
        match decided {
            Ok(answers) => Ok(answers),
            Err(Refused::Unknown(ids)) => Err(StoreError::UnknownDependency { ids }),
            Err(Refused::Store(e)) => Err(e),
            Err(Refused::Sql(e)) => Err(self.fail("enqueue")(e)),
        }
    }

    async fn enqueue_after_in(
        &self,
        tx: &mut dyn Exec,
        tables: &SqlTables,
        jobs: &[NewJob],
    ) -> Result<Vec<Enqueued>, Refused> {
        let in_batch: HashSet<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        let named: BTreeSet<&str> = jobs
            .iter()
            .flat_map(|j| j.after.iter().map(|d| d.id.as_str()))
            .filter(|id| !in_batch.contains(id))
            .collect();
        let found = self.existing(tx, named.iter().copied()).await?;
        let unknown: Vec<String> = named
            .iter()
            .filter(|id| !found.contains(**id))
            .map(|id| id.to_string())
            .collect();
        if !unknown.is_empty() {
            return Err(Refused::Unknown(unknown));
        }
        let answers = self.enqueue_all(tx, tables, jobs).await?;
        // A job of the batch that coalesced stands for its holder.
        let stands_for: HashMap<&str, &str> = jobs
            .iter()
            .zip(&answers)
            .map(|(job, answer)| (job.id.as_str(), answer.id.as_str()))
            .collect();
        let mut edges: Vec<(String, String, DependOn)> = Vec::new();
        let mut any: BTreeSet<&str> = BTreeSet::new();
        for (job, answer) in jobs.iter().zip(&answers) {
            if answer.outcome != EnqueueOutcome::Created {
                continue;
            }
            if job.join == Join::Any && !job.after.is_empty() {
                any.insert(job.id.as_str());
            }
            let mut seen = HashSet::new();
            for dependency in &job.after {
                let target = stands_for
                    .get(dependency.id.as_str())
                    .copied()
                    .unwrap_or(dependency.id.as_str());
                if target != job.id.as_str() && seen.insert(target) {
                    edges.push((target.to_string(), job.id.to_string(), dependency.on));
                }
            }
        }
        // Lock the dependencies (in id order) before reading how they stand: one that ends meanwhile
        // waits for this transaction, and then finds the edges.
        let targets: BTreeSet<&str> = edges.iter().map(|(d, _, _)| d.as_str()).collect();
        let statuses = self.locked_statuses(tx, targets.iter().copied()).await?;
        let mut open: BTreeMap<&str, i64> = BTreeMap::new();
        let mut waiting: BTreeMap<&str, i64> = BTreeMap::new();
        let mut blocked: BTreeSet<&str> = BTreeSet::new();
        let mut broken: BTreeMap<&str, (&str, JobStatus, DependOn)> = BTreeMap::new();
        let mut met: BTreeSet<&str> = BTreeSet::new();
        let mut rows: Vec<(&str, &str, DependOn, Option<&'static str>)> = Vec::with_capacity(edges.len());
        for (dependency, dependent, on) in &edges {
            let status = statuses.get(dependency.as_str()).copied().unwrap_or(JobStatus::Pending);
            let resolved = if status.is_terminal() {
                if on.met_by(status) {
                    met.insert(dependent.as_str());
                    Some("met")
                } else {
                    broken
                        .entry(dependent.as_str())
                        .or_insert((dependency.as_str(), status, *on));
                    Some("broken")
                }
            } else {
                *open.entry(dependency.as_str()).or_default() += 1;
                *waiting.entry(dependent.as_str()).or_default() += 1;
                blocked.insert(dependent.as_str());
                None
            };
            rows.push((dependency, dependent, *on, resolved));
        }
        self.insert_edges(tx, &rows).await?;
        let waiting_jobs: BTreeSet<&str> = rows.iter().map(|(_, dependent, _, _)| *dependent).collect();
        self.mark(tx, "waits", &waiting_jobs).await?;
        self.add_to_counts(tx, "dependents", &open).await?;
        self.add_to_counts(tx, "waiting_for", &waiting).await?;
        self.mark(tx, "wait_any", &any).await?;
        // A job that waits for all of its dependencies runs once none is open, unless one broke; one
        // that waits for any runs at once if one was met, and is cancelled if none was and none is
        // open.
        let waiting: Vec<&str> = blocked
            .iter()
            .copied()
            .filter(|id| match any.contains(id) {
                true => !met.contains(id),
                false => !broken.contains_key(id),
            })
            .collect();
        self.set_blocked(tx, &waiting).await?;
        broken.retain(|id, _| !any.contains(id) || (!met.contains(id) && !blocked.contains(id)));
        let created_at: HashMap<&str, UnixMillis> = jobs.iter().map(|j| (j.id.as_str(), j.created_at)).collect();
        let mut ended = Vec::new();
        for (dependent, (dependency, status, on)) in &broken {
            // A job cancelled as it is made ends at its creation.
            let at = created_at.get(dependent).copied().unwrap_or_default();
            let error = match any.contains(dependent) {
                true => NO_DEPENDENCY_MET_ERROR.to_string(),
                false => broken_dependency_error(dependency, *status, *on),
            };
            self.cancel_broken(tx, dependent, &[], &error, at).await?;
            ended.push(Ended {
                id: dependent.to_string(),
                status: JobStatus::Cancelled,
            });
        }
        // A job of the batch cancelled at once may be another's dependency.
        if let Some(at) = jobs.iter().map(|j| j.created_at).max() {
            self.release_dependents(tx, ended, at).await?;
        }
        Ok(answers)
    }

    /// Resolves the open edges that wait for `ended` (jobs that just ended, in the caller's
    /// transaction, which holds their rows): each met or broken by its rule; a blocked dependent
    /// with a broken edge is cancelled at `now`, which resolves its own dependents in turn; one with
    /// no open edge left becomes `pending`, and its queue's workers are told.
    pub(crate) async fn release_dependents(
        &self,
        tx: &mut dyn Exec,
        ended: Vec<Ended>,
        now: UnixMillis,
    ) -> Result<(), sqlx::Error> {
        self.release(tx, ended, now, false).await
    }

    /// [`Sql::release_dependents`], told whether the counts of dependents of `ended` are zero
    /// already (an outcome's own path set them aside): then they are not set again.
    async fn release(
        &self,
        tx: &mut dyn Exec,
        ended: Vec<Ended>,
        now: UnixMillis,
        counts_cleared: bool,
    ) -> Result<(), sqlx::Error> {
        self.cascade(tx, ended, now, counts_cleared, BTreeSet::new()).await
    }

    /// Decides the blocked jobs among `ids` whose edges were written or changed other than by a
    /// dependency's end (an import's, [`crate::store::Store::import_edges`]): each runs, is
    /// cancelled (and its own dependents resolved), or stays blocked, by its rules and every edge it
    /// has, as [`Sql::release_dependents`] decides a job whose dependency ended.
    pub(crate) async fn recheck_blocked(
        &self,
        tx: &mut dyn Exec,
        ids: &BTreeSet<String>,
        now: UnixMillis,
    ) -> Result<(), sqlx::Error> {
        let mut ready = BTreeSet::new();
        let ended = self.decide_blocked(tx, ids, ids, now, &mut ready).await?;
        self.cascade(tx, ended, now, false, ready).await
    }

    /// The release's rounds: the edges waiting for `ended` resolved, their blocked dependents
    /// decided, those cancelled resolved in turn; then the queues in `ready` (with those where jobs
    /// became pending) told.
    async fn cascade(
        &self,
        tx: &mut dyn Exec,
        mut ended: Vec<Ended>,
        now: UnixMillis,
        mut counts_cleared: bool,
        mut ready: BTreeSet<String>,
    ) -> Result<(), sqlx::Error> {
        while !ended.is_empty() {
            let how: HashMap<String, JobStatus> = ended.into_iter().map(|e| (e.id, e.status)).collect();
            let (dependents, broke) = self.resolve_edges(tx, &how, counts_cleared).await?;
            // The jobs the cascade cancels next have their counts still.
            counts_cleared = false;
            if dependents.is_empty() {
                break;
            }
            ended = self.decide_blocked(tx, &dependents, &broke, now, &mut ready).await?;
        }
        self.notify_ready(tx, ready.iter().map(String::as_str)).await
    }

    /// Of `dependents`, the blocked jobs, locked: each with no open edge left (or, waiting for any,
    /// with one met) becomes `pending`, its queue into `ready`; one that can never run is cancelled
    /// at `now` with the reason. Only the jobs of `broke` are looked at for a broken edge. Returns
    /// the cancelled jobs that others wait for, whose edges are resolved next.
    async fn decide_blocked(
        &self,
        tx: &mut dyn Exec,
        dependents: &BTreeSet<String>,
        broke: &BTreeSet<String>,
        now: UnixMillis,
        ready: &mut BTreeSet<String>,
    ) -> Result<Vec<Ended>, sqlx::Error> {
        let mut ended = Vec::new();
        let still_blocked = self.blocked_of(tx, dependents).await?;
        // A blocked job had no broken edge before this round (one cancels a job that waits for
        // all, and one that waits for any is not asked): only the jobs with an edge broken now
        // are looked at (none, as children succeed into a join by `finish` or `success`).
        let broke: Vec<&String> = still_blocked.keys().filter(|id| broke.contains(*id)).collect();
        let broken = self.first_broken_edges(tx, &broke).await?;
        let met = self.with_met_edges(tx, &still_blocked).await?;
        let mut released = Vec::new();
        for (id, job) in &still_blocked {
            let open = job.waiting_for > 0;
            // Why it can never run, if it cannot.
            let unmet = match job.any {
                true => (!met.contains(id) && !open).then(|| NO_DEPENDENCY_MET_ERROR.to_string()),
                false => broken
                    .get(id)
                    .map(|(dependency, status, on)| broken_dependency_error(dependency, *status, *on)),
            };
            let runs = match job.any {
                true => met.contains(id),
                false => !open,
            };
            if let Some(error) = unmet {
                self.cancel_broken(tx, id, &job.errors, &error, now).await?;
                if job.dependents > 0 {
                    ended.push(Ended {
                        id: id.clone(),
                        status: JobStatus::Cancelled,
                    });
                }
            } else if runs {
                released.push(id.as_str());
                ready.insert(job.queue.clone());
            }
        }
        for chunk in released.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt("UPDATE jobq_jobs SET status = 'pending' WHERE status = 'blocked'");
            update.any_of("id", chunk.iter().map(|id| id.to_string()));
            tx.execute(&update).await?;
        }
        Ok(ended)
    }

    /// Resolves the open edges that wait for the jobs of `ended` (each job's first end), by their
    /// rules and how each job ended: an edge the end meets is left unwritten (it reads as met from
    /// now on), one it breaks is marked `broken`; each dependent's count of the edges it waits by
    /// drops by those resolved, and the ended jobs' counts of dependents go to zero (unless
    /// `counts_cleared`). Returns the dependents, and those of them with an edge that broke.
    async fn resolve_edges(
        &self,
        tx: &mut dyn Exec,
        ended: &HashMap<String, JobStatus>,
        counts_cleared: bool,
    ) -> Result<(BTreeSet<String>, BTreeSet<String>), sqlx::Error> {
        let ids: Vec<&String> = ended.keys().collect();
        let mut dependents = BTreeSet::new();
        let mut broke = BTreeSet::new();
        let mut resolved: BTreeMap<String, i64> = BTreeMap::new();
        let mut breaking: BTreeMap<JobStatus, BTreeSet<String>> = BTreeMap::new();
        let mut waited_for: Vec<String> = Vec::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select =
                self.stmt("SELECT d.dependency, d.dependent, d.rule FROM jobq_deps AS d WHERE d.resolved IS NULL");
            select.any_of("d.dependency", chunk.iter().map(|id| id.to_string()));
            let mut seen: HashSet<String> = HashSet::new();
            for row in tx.fetch_all(&select).await? {
                let dependency: String = row.try_get_unchecked(0)?;
                let dependent: String = row.try_get_unchecked(1)?;
                let on: DependOn = row
                    .try_get_unchecked::<String>(2)?
                    .parse()
                    .map_err(|e: String| sqlx::Error::Decode(e.into()))?;
                let status = ended[&dependency];
                if !on.met_by(status) {
                    broke.insert(dependent.clone());
                    breaking.entry(status).or_default().insert(dependency.clone());
                }
                *resolved.entry(dependent.clone()).or_default() += 1;
                dependents.insert(dependent);
                if seen.insert(dependency.clone()) {
                    waited_for.push(dependency);
                }
            }
        }
        for (status, ids) in breaking {
            let ids: Vec<String> = ids.into_iter().collect();
            for chunk in ids.chunks(IDS_PER_STATEMENT) {
                tx.execute(&self.breaking(status, chunk.iter().cloned())).await?;
            }
        }
        let lowered: BTreeMap<&str, i64> = resolved.iter().map(|(id, n)| (id.as_str(), -n)).collect();
        self.add_to_counts(tx, "waiting_for", &lowered).await?;
        if !counts_cleared {
            for chunk in waited_for.chunks(IDS_PER_STATEMENT) {
                self.clear_counts(tx, chunk.iter().cloned()).await?;
            }
        }
        Ok((dependents, broke))
    }

    /// The statement that marks `broken` the open edges waiting for `ids` (jobs that ended in
    /// `status`) whose rules that end does not meet.
    fn breaking(&self, status: JobStatus, ids: impl IntoIterator<Item = String>) -> Stmt {
        let unmet = DependOn::ALL
            .into_iter()
            .filter(|on| !on.met_by(status))
            .map(|on| on.as_str().to_string());
        let mut update = self.stmt("UPDATE jobq_deps SET resolved = 'broken' WHERE resolved IS NULL AND rule IN ");
        update.list(unmet).any_of("dependency", ids);
        update
    }

    /// Marks `met` the unmarked edges that wait for those of `ids` that have ended (or for nothing
    /// the store holds): read until now as met by that end, they would read as open once the job
    /// is live again. Called by whatever brings an ended job back (a replay, a retry, a reopen, an
    /// import that replaces it) before it does.
    pub(crate) async fn settle_edges(&self, tx: &mut dyn Exec, ids: &[String]) -> Result<(), sqlx::Error> {
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt(format!(
                "UPDATE jobq_deps SET resolved = 'met' WHERE resolved IS NULL AND NOT EXISTS (SELECT 1 \
                 FROM jobq_jobs AS k WHERE k.id = jobq_deps.dependency AND k.status IN {LIVE_STATUSES})"
            ));
            update.any_of("dependency", chunk.iter().cloned());
            tx.execute(&update).await?;
        }
        Ok(())
    }

    /// Sets the counts of dependents of `ids` (jobs that ended) to zero.
    async fn clear_counts(&self, tx: &mut dyn Exec, ids: impl IntoIterator<Item = String>) -> Result<(), sqlx::Error> {
        let mut update = self.stmt("UPDATE jobq_jobs SET dependents = 0 WHERE 1 = 1");
        update.any_of("id", ids);
        tx.execute(&update).await?;
        Ok(())
    }

    /// Of `ids`, the jobs that are blocked, locked in id order: their queue, errors and dependents.
    async fn blocked_of(
        &self,
        tx: &mut dyn Exec,
        ids: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, BlockedJob>, sqlx::Error> {
        let all: Vec<&String> = ids.iter().collect();
        let mut found = BTreeMap::new();
        for chunk in all.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(format!(
                "SELECT j.id, j.queue, {}, j.dependents, CASE WHEN j.wait_any THEN 1 ELSE 0 END, j.waiting_for \
                 FROM jobq_jobs AS j WHERE j.status = 'blocked'",
                self.dialect.errors_text
            ));
            select.any_of("j.id", chunk.iter().map(|id| id.to_string()));
            super::lock_in_id_order(self.dialect, &mut select);
            for row in tx.fetch_all(&select).await? {
                let id: String = row.try_get_unchecked(0)?;
                let errors: String = row.try_get_unchecked(2)?;
                let errors: Vec<JobError> =
                    serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
                let job = BlockedJob {
                    queue: row.try_get_unchecked(1)?,
                    errors,
                    dependents: i64::from(row.try_get_unchecked::<i32>(3)?),
                    any: row.try_get_unchecked::<i32>(4)? != 0,
                    waiting_for: i64::from(row.try_get_unchecked::<i32>(5)?),
                };
                found.insert(id, job);
            }
        }
        Ok(found)
    }

    /// For each of the jobs `ids` with a broken edge, the first one (by the dependency's id): the dependency,
    /// how it ended, and the rule.
    async fn first_broken_edges(
        &self,
        tx: &mut dyn Exec,
        ids: &[&String],
    ) -> Result<HashMap<String, (String, JobStatus, DependOn)>, sqlx::Error> {
        let mut first = HashMap::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(
                "SELECT d.dependent, d.dependency, d.rule, j.status FROM jobq_deps AS d \
                 LEFT JOIN jobq_jobs AS j ON j.id = d.dependency WHERE d.resolved = 'broken'",
            );
            select
                .any_of("d.dependent", chunk.iter().map(|id| id.to_string()))
                .push(" ORDER BY d.dependent, d.dependency");
            for row in tx.fetch_all(&select).await? {
                let dependent: String = row.try_get_unchecked(0)?;
                if first.contains_key(&dependent) {
                    continue;
                }
                let dependency: String = row.try_get_unchecked(1)?;
                let decode = |e: String| sqlx::Error::Decode(e.into());
                let on: DependOn = row.try_get_unchecked::<String>(2)?.parse().map_err(decode)?;
                // A dependency deleted since counts as cancelled, as its deletion did.
                let status = match row.try_get_unchecked::<Option<String>>(3)? {
                    Some(s) => s.parse().map_err(decode)?,
                    None => JobStatus::Cancelled,
                };
                first.insert(dependent, (dependency, status, on));
            }
        }
        Ok(first)
    }

    /// Which of `jobs` that wait for any of their dependencies ([`Join::Any`]) have one met: those
    /// run. Asked of none when no such job is among them. An unmarked edge whose dependency has
    /// ended or is gone is met (see the module's doc).
    async fn with_met_edges(
        &self,
        tx: &mut dyn Exec,
        jobs: &BTreeMap<String, BlockedJob>,
    ) -> Result<HashSet<String>, sqlx::Error> {
        let ids: Vec<&str> = jobs
            .iter()
            .filter(|(_, job)| job.any)
            .map(|(id, _)| id.as_str())
            .collect();
        let head = format!(
            "SELECT j.id FROM jobq_jobs AS j WHERE EXISTS (SELECT 1 FROM jobq_deps AS d \
             LEFT JOIN jobq_jobs AS k ON k.id = d.dependency WHERE d.dependent = j.id AND (d.resolved = 'met' \
             OR (d.resolved IS NULL AND (k.id IS NULL OR k.status NOT IN {LIVE_STATUSES}))))"
        );
        self.texts_among(tx, &head, "j.id", &ids).await
    }

    /// The text of the first column of `head` (a selection ending in a condition), run over `ids` a
    /// bounded number at a time with `AND column IN (…)`.
    async fn texts_among(
        &self,
        tx: &mut dyn Exec,
        head: &str,
        column: &str,
        ids: &[&str],
    ) -> Result<HashSet<String>, sqlx::Error> {
        let mut found = HashSet::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(head);
            select.any_of(column, chunk.iter().map(|id| id.to_string()));
            for row in tx.fetch_all(&select).await? {
                found.insert(row.try_get_unchecked::<String>(0)?);
            }
        }
        Ok(found)
    }

    /// Cancels a job that a broken edge will never let run, appending `error` to its history.
    async fn cancel_broken(
        &self,
        tx: &mut dyn Exec,
        id: &str,
        errors: &[JobError],
        error: &str,
        at: UnixMillis,
    ) -> Result<(), sqlx::Error> {
        let mut history = errors.to_vec();
        push_to_history(&mut history, 0, at, error);
        let errors = errors_text(&mut history)?;
        let (json_open, json_close) = self.dialect.json_in;
        let mut update = self.stmt("UPDATE jobq_jobs SET status = 'cancelled', finished_at = ");
        update
            .bind(at.0)
            .push(", errors = ")
            .push(json_open)
            .bind(errors)
            .push(json_close)
            .push(" WHERE id = ")
            .bind(id)
            .push(" AND status IN ('blocked', 'pending')");
        tx.execute(&update).await?;
        Ok(())
    }

    /// The condition that keeps, out of a cleanup of `table`, a job that a job which has not ended
    /// waits or waited for: its result is still to be handed over (the dependent's envelope), and
    /// one still blocked needs it named. A probe of `jobq_deps`'s primary key per job. MySQL's
    /// `DELETE` names `jobq_jobs` itself (`LimitedDelete::Inline`), which a subquery may not read
    /// unless it is materialized first (MariaDB would allow the plain one).
    pub(crate) fn not_awaited(&self, table: &str) -> String {
        let live = format!(
            "SELECT kd.dependency FROM jobq_deps AS kd JOIN jobq_jobs AS kj ON kj.id = kd.dependent \
             WHERE kj.status IN {LIVE_STATUSES}"
        );
        match self.dialect.limited_delete {
            LimitedDelete::Inline => {
                format!(" AND {table}.id NOT IN (SELECT /*+ NO_MERGE(keep) */ keep.dependency FROM ({live}) AS keep)")
            }
            LimitedDelete::BySubquery => format!(" AND NOT EXISTS ({live} AND kd.dependency = {table}.id)"),
        }
    }

    /// Which of `ids` exist.
    async fn existing<'a>(
        &self,
        tx: &mut dyn Exec,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<HashSet<String>, sqlx::Error> {
        let ids: Vec<&str> = ids.collect();
        self.texts_among(tx, "SELECT j.id FROM jobq_jobs AS j WHERE 1 = 1", "j.id", &ids)
            .await
    }

    /// How the jobs of `ids` stand, their rows locked in id order.
    pub(super) async fn locked_statuses<'a>(
        &self,
        tx: &mut dyn Exec,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<HashMap<String, JobStatus>, sqlx::Error> {
        let ids: Vec<&str> = ids.collect();
        let mut statuses = HashMap::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT j.id, j.status FROM jobq_jobs AS j WHERE 1 = 1");
            select.any_of("j.id", chunk.iter().map(|id| id.to_string()));
            super::lock_in_id_order(self.dialect, &mut select);
            statuses.extend(self.read_statuses(&select, tx).await?);
        }
        Ok(statuses)
    }

    async fn insert_edges(
        &self,
        tx: &mut dyn Exec,
        rows: &[(&str, &str, DependOn, Option<&'static str>)],
    ) -> Result<(), sqlx::Error> {
        // Four values a row: well inside every database's limit on placeholders.
        for chunk in rows.chunks(IDS_PER_STATEMENT / 4) {
            let mut insert = self.stmt("INSERT INTO jobq_deps (dependency, dependent, rule, resolved) VALUES ");
            for (i, (dependency, dependent, on, resolved)) in chunk.iter().enumerate() {
                insert
                    .push(if i == 0 { "(" } else { ", (" })
                    .bind(*dependency)
                    .push(", ")
                    .bind(*dependent)
                    .push(", ")
                    .bind(on.as_str())
                    .push(", ")
                    .bind(resolved.map(str::to_string))
                    .push(")");
            }
            tx.execute(&insert).await?;
        }
        Ok(())
    }

    /// Sets the flag `column` of the jobs of `ids`: `waits`, for the jobs that have edges of their own
    /// (whose deletion deletes them: the migration's trigger, or MySQL's foreign key), or
    /// `wait_any`, for those that wait for any of their dependencies rather than all ([`Join::Any`]).
    async fn mark(&self, tx: &mut dyn Exec, column: &str, ids: &BTreeSet<&str>) -> Result<(), sqlx::Error> {
        let ids: Vec<&str> = ids.iter().copied().collect();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt(format!("UPDATE jobq_jobs SET {column} = TRUE WHERE 1 = 1"));
            update.any_of("id", chunk.iter().map(|id| id.to_string()));
            tx.execute(&update).await?;
        }
        Ok(())
    }

    /// Adds to a count of open edges of each job of `by_job` (`dependents`, the edges that wait for
    /// it; `waiting_for`, those it waits by; a negative number lowers it): one statement per number
    /// and bounded number of ids (a join of ten thousand jobs counts one on each).
    async fn add_to_counts(
        &self,
        tx: &mut dyn Exec,
        column: &str,
        by_job: &BTreeMap<&str, i64>,
    ) -> Result<(), sqlx::Error> {
        let mut by_count: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
        for (id, n) in by_job.iter().filter(|(_, n)| **n != 0) {
            by_count.entry(*n).or_default().push(id);
        }
        for (n, ids) in by_count {
            for chunk in ids.chunks(IDS_PER_STATEMENT) {
                let mut update = self.stmt(format!("UPDATE jobq_jobs SET {column} = {column} + "));
                update
                    .bind(n)
                    .push(" WHERE 1 = 1")
                    .any_of("id", chunk.iter().map(|id| id.to_string()));
                tx.execute(&update).await?;
            }
        }
        Ok(())
    }

    /// Inserts a batch's jobs, with the answers of [`crate::store::Store::enqueue`]: an id taken is a
    /// duplicate, a unique key held coalesces. The jobs whose answer depends on nothing but their id
    /// (no unique key, the first of the batch with it) go in a few hundred a statement, as the
    /// plain enqueue writes them (a flow of ten thousand jobs made ten thousand round trips one by
    /// one); the others one by one, as an application's transaction enqueues them, after those
    /// before them. (An id that another transaction takes between the check and the insert fails the
    /// statement, and with it the whole batch: nothing is written.)
    async fn enqueue_all(
        &self,
        tx: &mut dyn Exec,
        tables: &SqlTables,
        jobs: &[NewJob],
    ) -> Result<Vec<Enqueued>, Refused> {
        let taken = in_transaction::taken_ids(tx, tables, jobs.iter().map(|j| j.id.as_str())).await?;
        let mut first = HashSet::new();
        let mut answers = Vec::with_capacity(jobs.len());
        let mut plain: Vec<&NewJob> = Vec::new();
        for job in jobs {
            if first.insert(job.id.as_str()) && job.unique_key.is_none() {
                let outcome = if taken.contains(job.id.as_str()) {
                    EnqueueOutcome::Duplicate
                } else {
                    plain.push(job);
                    EnqueueOutcome::Created
                };
                answers.push(Enqueued {
                    id: job.id.clone(),
                    outcome,
                });
                continue;
            }
            self.insert_all_jobs(tx, &plain).await?;
            plain.clear();
            answers.push(in_transaction::enqueue(tx, tables, job).await.map_err(Refused::Store)?);
        }
        self.insert_all_jobs(tx, &plain).await?;
        Ok(answers)
    }

    async fn set_blocked(&self, tx: &mut dyn Exec, ids: &[&str]) -> Result<(), sqlx::Error> {
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt("UPDATE jobq_jobs SET status = 'blocked' WHERE status = 'pending'");
            update.any_of("id", chunk.iter().map(|id| id.to_string()));
            tx.execute(&update).await?;
        }
        Ok(())
    }
}

/// A blocked job as the release reads it.
struct BlockedJob {
    queue: String,
    errors: Vec<JobError>,
    dependents: i64,
    /// Whether it waits for any of its dependencies rather than all ([`Join::Any`]).
    any: bool,
    /// How many of its edges are open.
    waiting_for: i64,
}
