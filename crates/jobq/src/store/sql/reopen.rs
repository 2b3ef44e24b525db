//! `replay_dead`'s cascade on the three SQL stores (see [`crate::store::ReplayDead::cascade`]): the
//! jobs that a replayed job's failure cancelled come back `blocked`, and so on down the chain, in
//! the replay's transaction.
//!
//! A cancelled job comes back when its edge to a job that came back is broken and its last error
//! names that job (it was cancelled by that failure, not by an operator), when each of its other
//! dependencies is live or ended the way its rule asks (one deleted, or ended against its rule,
//! would cancel it again), and when no live job holds its unique key. Its edges are recounted: open
//! again to each live dependency (whose row is locked first, in id order, as an enqueue locks it, so
//! that its end sees the edge), met to the others; and the edges that wait for it, which its cancel
//! left reading as met, are marked so before it is live again.

use std::collections::{BTreeMap, HashSet};

use super::{Exec, IDS_PER_STATEMENT, LIVE_STATUSES, Sql};
use crate::job::{DependOn, JobError, JobStatus};

/// A cancelled job that may come back.
struct Candidate {
    queue: String,
    unique_key: Option<String>,
    /// Its dependencies: id → rule.
    edges: BTreeMap<String, DependOn>,
}

impl Sql {
    /// Brings back the jobs that the failure of `replayed` (jobs the replay has just made pending)
    /// cancelled, and theirs in turn. Returns their ids, in the order they came back.
    pub(crate) async fn reopen_dependents(
        &self,
        tx: &mut dyn Exec,
        replayed: &[String],
    ) -> Result<Vec<String>, sqlx::Error> {
        let mut back = Vec::new();
        let mut seen: HashSet<String> = replayed.iter().cloned().collect();
        let mut level: Vec<String> = replayed.to_vec();
        while !level.is_empty() {
            let mut candidates = self.cancelled_by(tx, &level).await?;
            candidates.retain(|id, _| seen.insert(id.clone()));
            self.read_edges_of(tx, &mut candidates).await?;
            let dependencies: Vec<&str> = candidates
                .values()
                .flat_map(|c| c.edges.keys().map(String::as_str))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let statuses = self.locked_statuses(tx, dependencies.into_iter()).await?;
            level = Vec::new();
            for (id, candidate) in &candidates {
                if self.reopen(tx, id, candidate, &statuses).await? {
                    level.push(id.clone());
                }
            }
            back.extend(level.iter().cloned());
        }
        Ok(back)
    }

    /// The cancelled jobs whose edge to one of `ids` broke and whose last error names it.
    async fn cancelled_by(
        &self,
        tx: &mut dyn Exec,
        ids: &[String],
    ) -> Result<BTreeMap<String, Candidate>, sqlx::Error> {
        let mut found = BTreeMap::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt(format!(
                "SELECT d.dependency, j.id, j.queue, j.unique_key, {} FROM jobq_deps AS d \
                 JOIN jobq_jobs AS j ON j.id = d.dependent WHERE d.resolved = 'broken' AND j.status = 'cancelled'",
                self.dialect.errors_text
            ));
            select.any_of("d.dependency", chunk.iter().cloned());
            for row in tx.fetch_all(&select).await? {
                let dependency: String = row.try_get_unchecked(0)?;
                let errors: String = row.try_get_unchecked(4)?;
                let errors: Vec<JobError> =
                    serde_json::from_str(&errors).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
                if !errors.last().is_some_and(|e| names(&e.error, &dependency)) {
                    continue;
                }
                found.insert(
                    row.try_get_unchecked::<String>(1)?,
                    Candidate {
                        queue: row.try_get_unchecked(2)?,
                        unique_key: row.try_get_unchecked(3)?,
                        edges: BTreeMap::new(),
                    },
                );
            }
        }
        Ok(found)
    }

    /// Every edge of each candidate: its dependency and rule.
    async fn read_edges_of(
        &self,
        tx: &mut dyn Exec,
        candidates: &mut BTreeMap<String, Candidate>,
    ) -> Result<(), sqlx::Error> {
        let ids: Vec<String> = candidates.keys().cloned().collect();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT d.dependent, d.dependency, d.rule FROM jobq_deps AS d WHERE 1 = 1");
            select.any_of("d.dependent", chunk.iter().cloned());
            for row in tx.fetch_all(&select).await? {
                let dependent: String = row.try_get_unchecked(0)?;
                let rule: String = row.try_get_unchecked(2)?;
                let rule = rule.parse::<DependOn>().map_err(|e| sqlx::Error::Decode(e.into()))?;
                if let Some(c) = candidates.get_mut(&dependent) {
                    c.edges.insert(row.try_get_unchecked(1)?, rule);
                }
            }
        }
        Ok(())
    }

    /// Brings one candidate back when every edge of it can still be met and its key is free: its
    /// edges reopened or marked met, its live dependencies' counts raised, its status `blocked`.
    async fn reopen(
        &self,
        tx: &mut dyn Exec,
        id: &str,
        candidate: &Candidate,
        statuses: &std::collections::HashMap<String, JobStatus>,
    ) -> Result<bool, sqlx::Error> {
        let mut open = Vec::new();
        let mut met = Vec::new();
        for (dependency, rule) in &candidate.edges {
            match statuses.get(dependency) {
                Some(s) if !s.is_terminal() => open.push(dependency.clone()),
                Some(&s) if rule.met_by(s) => met.push(dependency.clone()),
                // Gone, or ended against its rule: it would be cancelled again.
                _ => return Ok(false),
            }
        }
        if open.is_empty() {
            return Ok(false);
        }
        if let Some(key) = &candidate.unique_key {
            let mut holder = self.stmt("SELECT j.id FROM jobq_jobs AS j WHERE j.queue = ");
            holder
                .bind(candidate.queue.clone())
                .push(" AND j.unique_key = ")
                .bind(key.clone())
                .push(&format!(" AND j.status IN {LIVE_STATUSES}"));
            if !tx.fetch_all(&holder).await?.is_empty() {
                return Ok(false);
            }
        }
        // What its cancel met keeps reading as met once it is live again.
        self.settle_edges(tx, &[id.to_string()]).await?;
        let mut update = self.stmt("UPDATE jobq_jobs SET status = 'blocked', finished_at = NULL, waiting_for = ");
        update
            .bind(open.len() as i64)
            .push(" WHERE id = ")
            .bind(id)
            .push(" AND status = 'cancelled'");
        if tx.execute(&update).await? == 0 {
            return Ok(false);
        }
        for (state, dependencies) in [(None, &open), (Some("met"), &met)] {
            if dependencies.is_empty() {
                continue;
            }
            let mut edges = self.stmt("UPDATE jobq_deps SET resolved = ");
            edges
                .bind(state.map(str::to_string))
                .push(" WHERE dependent = ")
                .bind(id);
            edges.any_of("dependency", dependencies.iter().cloned());
            tx.execute(&edges).await?;
        }
        let mut counts = self.stmt("UPDATE jobq_jobs SET dependents = dependents + 1 WHERE 1 = 1");
        counts.any_of("id", open);
        tx.execute(&counts).await?;
        Ok(true)
    }
}

/// Whether an error is the one a broken edge to `dependency` wrote
/// ([`crate::job::broken_dependency_error`]).
fn names(error: &str, dependency: &str) -> bool {
    error
        .strip_prefix("dependency ")
        .and_then(|rest| rest.strip_prefix(dependency))
        .is_some_and(|rest| rest.starts_with(" ended "))
}
