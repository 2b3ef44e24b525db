//! What an attempt's outcome writes beyond its own row, for the three SQL stores: the outcomes the
//! store's statements pass over (of jobs that others wait for, and of those that spawn children or
//! await them), each with the release of what waited for its job, and the rescue of such jobs whose
//! attempts are used up. The release itself is the parent module's.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::super::exec::Transaction;
use super::super::manage::errors_text;
use super::super::{Exec, Outcomes, Sql, SqlBackend};
use super::{Ended, Refused};
use crate::job::{DependOn, JobError, JobStatus};
use crate::store::manage::push_to_history;
use crate::store::{Enqueued, Finish, RESCUE_ERROR, Rescue, Rescued, Transition};
use crate::time::UnixMillis;

impl Sql {
    /// Applies the outcomes the store's own statements do not take — those of jobs that others wait
    /// for, and those that spawn children or await them ([`Finish::spawns`]) — in one transaction.
    /// Where none spawns, the store's statements take them at once ([`Sql::finish_releasing`]).
    /// Otherwise each job's row is locked and its lease checked; its children are inserted as an enqueue
    /// inserts them; the store's statements apply the outcome whoever waits for the job
    /// (`Outcomes::OfAnyJob`: one that ends the job also zeroes its count of dependents; a retry, a
    /// snooze or `waiting` keeps them waiting), or, for an await, its row goes back to `pending`
    /// with the attempt given back and then waits on its children; the jobs that waited for a job
    /// that ended are resolved. Answers per input whether it applied; one whose
    /// lease no longer holds did not, and wrote nothing.
    pub(crate) async fn finish_with_dependents<B: SqlBackend + ?Sized>(
        &self,
        backend: &B,
        finishes: &[Finish],
        now: UnixMillis,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        if !finishes.iter().any(Finish::spawns) {
            return self.finish_releasing(backend, tx, finishes, now).await;
        }
        let mut select = self.stmt(
            "SELECT j.id, j.status, j.attempt, j.worker_id, j.dependents, j.queue FROM jobq_jobs AS j WHERE 1 = 1",
        );
        let ids: BTreeSet<&str> = finishes.iter().map(|f| f.lease.id.as_str()).collect();
        select.any_of("j.id", ids.iter().map(|id| id.to_string()));
        super::super::lock_in_id_order(self.dialect, &mut select);
        // The first outcome of each lease: a later one of the same lease is the same outcome sent
        // again, and one of an older lease of the job is stale.
        let mut by_lease: HashMap<(&str, i64, &str), usize> = HashMap::with_capacity(finishes.len());
        for (i, f) in finishes.iter().enumerate() {
            let lease = (f.lease.id.as_str(), i64::from(f.lease.attempt), f.lease.worker.as_str());
            by_lease.entry(lease).or_insert(i);
        }
        let mut queues: HashMap<String, String> = HashMap::new();
        let mut held: Vec<usize> = Vec::new();
        for row in tx.fetch_all(&select).await? {
            let id: String = row.try_get_unchecked(0)?;
            let status: String = row.try_get_unchecked(1)?;
            let attempt = i64::from(row.try_get_unchecked::<i32>(2)?);
            let worker: Option<String> = row.try_get_unchecked(3)?;
            let dependents = i64::from(row.try_get_unchecked::<i32>(4)?);
            let holding = worker
                .as_deref()
                .and_then(|w| by_lease.get(&(id.as_str(), attempt, w)))
                .copied();
            if status == "running"
                && let Some(i) = holding
                && (dependents > 0 || finishes[i].spawns())
            {
                held.push(i);
                queues.insert(id, row.try_get_unchecked(5)?);
            }
        }
        if held.is_empty() {
            // At once: the select locked the rows, which other writers are waiting for.
            tx.rollback().await?;
            return Ok(vec![false; finishes.len()]);
        }
        held.sort_unstable();
        let tables = backend.sql_tables();
        let mut awaited: Vec<(&Finish, Vec<Enqueued>)> = Vec::new();
        for &i in &held {
            let finish = &finishes[i];
            // Children that wait for their siblings are written with their edges, as a flow is.
            let answers = if finish.spawn.iter().any(|child| !child.after.is_empty()) {
                self.enqueue_after_in(&mut *tx, &tables, &finish.spawn).await
            } else {
                self.enqueue_all(&mut *tx, &tables, &finish.spawn).await
            }
            .map_err(Refused::into_sql)?;
            if matches!(finish.outcome, Transition::AwaitChildren) {
                awaited.push((finish, answers));
            }
        }
        // A held await applies (its row is locked, its lease checked); the store's statements take
        // the other outcomes.
        let (mine_at, awaits_at): (Vec<usize>, Vec<usize>) = held
            .iter()
            .partition(|&&i| !matches!(finishes[i].outcome, Transition::AwaitChildren));
        let mine: Vec<Finish> = mine_at.iter().map(|&i| finishes[i].clone()).collect();
        let applied_mine = backend.finish_in(&mut *tx, &mine, now, Outcomes::OfAnyJob).await?;
        let mut applied = vec![false; finishes.len()];
        for i in awaits_at {
            applied[i] = true;
        }
        let mut ended = Vec::new();
        for (&i, ok) in mine_at.iter().zip(&applied_mine) {
            applied[i] = *ok;
            let id = finishes[i].lease.id.as_str();
            // Not ended: the edges stay open, and the count with them.
            if let (true, Some(status)) = (ok, ended_as(&finishes[i].outcome)) {
                ended.push(Ended {
                    id: id.to_string(),
                    status,
                });
            }
        }
        for (finish, answers) in awaited {
            let queue = &queues[finish.lease.id.as_str()];
            self.await_children(&mut *tx, finish, queue, &answers, now).await?;
        }
        // Their counts were zeroed by the outcomes' statements.
        self.release(&mut *tx, ended, now, true).await?;
        tx.commit().await?;
        Ok(applied)
    }

    /// [`Sql::finish_with_dependents`] of outcomes that write nothing but their jobs: the store's
    /// statements check each lease as they apply it (`Outcomes::OfAnyJob`), with no read before
    /// them, and the jobs that ended release what waited for them.
    async fn finish_releasing<B: SqlBackend + ?Sized>(
        &self,
        backend: &B,
        mut tx: Box<dyn Transaction>,
        finishes: &[Finish],
        now: UnixMillis,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let applied = backend.finish_in(&mut *tx, finishes, now, Outcomes::OfAnyJob).await?;
        let ended: Vec<Ended> = finishes
            .iter()
            .zip(&applied)
            .filter(|(_, ok)| **ok)
            .filter_map(|(f, _)| {
                ended_as(&f.outcome).map(|status| Ended {
                    id: f.lease.id.to_string(),
                    status,
                })
            })
            .collect();
        // Their counts were zeroed by the outcomes' statements.
        self.release(&mut *tx, ended, now, true).await?;
        tx.commit().await?;
        Ok(applied)
    }

    /// Puts a job whose attempt awaits its children (its row locked, its lease checked) back to
    /// `pending` with the attempt given back, then makes it wait for each child it has no edge to
    /// yet (`answers`: a child coalesced onto a holder stands for it), with the rule `finish`:
    /// `blocked` while any has not ended, or told to its queue's workers at once.
    async fn await_children(
        &self,
        tx: &mut dyn Exec,
        finish: &Finish,
        queue: &str,
        answers: &[Enqueued],
        now: UnixMillis,
    ) -> Result<(), sqlx::Error> {
        let id = finish.lease.id.as_str();
        let mut update = self.stmt(
            "UPDATE jobq_jobs SET status = 'pending', attempt = attempt - 1, worker_id = NULL, heartbeat_at = NULL, \
             run_at = ",
        );
        update.bind(now.0);
        if let Some(progress) = &finish.progress {
            update
                .push(", progress = ")
                .bind(i32::from(progress.percent))
                .push(", progress_message = ")
                .bind(progress.message.clone());
        }
        update.push(" WHERE id = ").bind(id).push(" AND status = 'running'");
        tx.execute(&update).await?;
        let mut before = self.stmt("SELECT d.dependency FROM jobq_deps AS d WHERE d.dependent = ");
        before.bind(id);
        let mut awaited: HashSet<String> = HashSet::new();
        for row in tx.fetch_all(&before).await? {
            awaited.insert(row.try_get_unchecked(0)?);
        }
        let targets: BTreeSet<&str> = answers
            .iter()
            .map(|a| a.id.as_str())
            .filter(|child| *child != id && !awaited.contains(*child))
            .collect();
        let statuses = self.locked_statuses(tx, targets.iter().copied()).await?;
        let mut open: BTreeMap<&str, i64> = BTreeMap::new();
        let mut rows = Vec::with_capacity(targets.len());
        for child in &targets {
            let status = statuses.get(*child).copied().unwrap_or(JobStatus::Pending);
            let resolved = if status.is_terminal() {
                Some("met")
            } else {
                open.insert(child, 1);
                None
            };
            rows.push((*child, id, DependOn::Finish, resolved));
        }
        self.insert_edges(tx, &rows).await?;
        self.mark(tx, "waits", &BTreeSet::from([id])).await?;
        self.add_to_counts(tx, "dependents", &open).await?;
        let waiting = open.len() as i64;
        self.add_to_counts(tx, "waiting_for", &BTreeMap::from([(id, waiting)]))
            .await?;
        if open.is_empty() {
            self.notify_ready(tx, std::iter::once(queue)).await
        } else {
            self.set_blocked(tx, &[id]).await
        }
    }
}

/// The status an outcome ends its job in; `None` for those after which it runs again or waits.
fn ended_as(outcome: &Transition) -> Option<JobStatus> {
    match outcome {
        Transition::Succeeded { .. } => Some(JobStatus::Succeeded),
        Transition::Dead { .. } => Some(JobStatus::Dead),
        Transition::Discarded { .. } => Some(JobStatus::Discarded),
        Transition::Cancelled { .. } => Some(JobStatus::Cancelled),
        Transition::Retry { .. } | Transition::Waiting | Transition::Snooze { .. } | Transition::AwaitChildren => None,
    }
}

/// The rescue statements' guard: a lost job that others wait for and whose attempts are used up
/// dies in [`Sql::rescue_dying_dependencies`], which resolves the jobs waiting for it; the store's
/// own statement takes the rest.
pub(crate) const DYING_LEFT_TO_SHARED: &str = "(dependents = 0 OR attempt < max_attempts)";

impl Sql {
    /// Rescues, as [`crate::store::Store::rescue`] does, the stale running jobs that others wait for
    /// and that have no attempt left: each dies (`worker lost`), and its dependents are resolved in
    /// the same transaction.
    pub(crate) async fn rescue_dying_dependencies(&self, rescue: &Rescue) -> Result<Vec<Rescued>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut select = self.stmt(format!(
            "SELECT j.id, j.job_type, j.attempt, {} FROM jobq_jobs AS j WHERE j.status = 'running' \
             AND j.heartbeat_at < ",
            self.dialect.errors_text
        ));
        select
            .bind(rescue.stale_before.0)
            .push(" AND j.dependents > 0 AND j.attempt >= j.max_attempts ORDER BY j.id LIMIT ")
            .bind(i64::from(rescue.limit))
            .push(self.dialect.lock_skipping);
        let rows = tx.fetch_all(&select).await?;
        if rows.is_empty() {
            // At once, not when the connection is next used: MySQL's select locked the rows it
            // scanned, and the store's own rescue, next, skips locked rows.
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let mut rescued = Vec::with_capacity(rows.len());
        let mut ended = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get_unchecked(0)?;
            let attempt = row.try_get_unchecked::<i32>(2)?.max(0) as u32;
            let errors: String = row.try_get_unchecked(3)?;
            let mut history: Vec<JobError> =
                serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            push_to_history(&mut history, attempt, rescue.now, RESCUE_ERROR);
            let errors = errors_text(&mut history)?;
            let (json_open, json_close) = self.dialect.json_in;
            let mut update = self.stmt("UPDATE jobq_jobs SET status = 'dead', finished_at = ");
            update
                .bind(rescue.now.0)
                .push(", run_at = ")
                .bind(rescue.now.0)
                .push(", worker_id = NULL, heartbeat_at = NULL, errors = ")
                .push(json_open)
                .bind(errors)
                .push(json_close)
                .push(" WHERE id = ")
                .bind(id.as_str())
                .push(" AND status = 'running'");
            tx.execute(&update).await?;
            rescued.push(Rescued {
                id: crate::job::JobId::from_stored(id.clone()),
                job_type: row.try_get_unchecked(1)?,
                attempt,
                status: JobStatus::Dead,
            });
            ended.push(Ended {
                id,
                status: JobStatus::Dead,
            });
        }
        self.release_dependents(&mut *tx, ended, rescue.now).await?;
        tx.commit().await?;
        Ok(rescued)
    }
}
