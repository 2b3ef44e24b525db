//! The edges of imported jobs (the contract of [`crate::store::Store::import_edges`]), for the three
//! SQL stores: written once every job of an import is, since an export lists a dependent before the
//! jobs it waits for.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::super::Sql;
use crate::job::{DependOn, EdgeState, JobStatus, Join};
use crate::store::ImportEdges;
use crate::time::UnixMillis;

impl Sql {
    /// In one transaction: the dependents of `edges` locked in id order, and their open edges'
    /// dependencies; each dependent the store holds with no edge yet gets its edges (an open one to
    /// a live job counted on that job, one to a job that ended resolved by its end, one to a job
    /// the store does not hold broken as if cancelled), its flags, and then, if blocked, its
    /// decision. Answers per input whether it wrote.
    pub(crate) async fn import_edges(&self, edges: &[ImportEdges], now: UnixMillis) -> Result<Vec<bool>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let ids: BTreeSet<&str> = edges.iter().map(|e| e.job.as_str()).collect();
        let held = self.locked_statuses(&mut *tx, ids.iter().copied()).await?;
        let ids: Vec<&str> = ids.into_iter().collect();
        let with_edges = self
            .texts_among(
                &mut *tx,
                "SELECT DISTINCT d.dependent FROM jobq_deps AS d WHERE 1 = 1",
                "d.dependent",
                &ids,
            )
            .await?;
        // The first entry of each job the store holds without edges.
        let mut taken: HashSet<&str> = HashSet::new();
        let writes: Vec<bool> = edges
            .iter()
            .map(|e| {
                let id = e.job.as_str();
                held.contains_key(id) && !with_edges.contains(id) && taken.insert(id)
            })
            .collect();
        let open_to: BTreeSet<&str> = edges
            .iter()
            .zip(&writes)
            .filter(|(_, w)| **w)
            .flat_map(|(e, _)| e.after.iter())
            .filter(|edge| edge.state == EdgeState::Open)
            .map(|edge| edge.id.as_str())
            .collect();
        let dependencies = self.locked_statuses(&mut *tx, open_to.into_iter()).await?;

        let mut rows: Vec<(&str, &str, DependOn, Option<&'static str>)> = Vec::new();
        let mut open: BTreeMap<&str, i64> = BTreeMap::new();
        let mut waiting: BTreeMap<&str, i64> = BTreeMap::new();
        let mut written: BTreeSet<&str> = BTreeSet::new();
        let mut any: BTreeSet<&str> = BTreeSet::new();
        let mut blocked: BTreeSet<String> = BTreeSet::new();
        for (job, _) in edges.iter().zip(&writes).filter(|(_, w)| **w) {
            let id = job.job.as_str();
            written.insert(id);
            if job.join == Join::Any {
                any.insert(id);
            }
            if held.get(id) == Some(&JobStatus::Blocked) {
                blocked.insert(id.to_string());
            }
            let mut named = HashSet::new();
            for edge in job.after.iter().filter(|edge| named.insert(edge.id.as_str())) {
                let dependency = edge.id.as_str();
                let resolved = match edge.state {
                    EdgeState::Met => Some("met"),
                    EdgeState::Broken => Some("broken"),
                    EdgeState::Open => {
                        // A job the store does not hold will not end here: its edge breaks as a
                        // deletion breaks one.
                        let status = dependencies.get(dependency).copied().unwrap_or(JobStatus::Cancelled);
                        if status.is_terminal() {
                            Some(if edge.on.met_by(status) { "met" } else { "broken" })
                        } else {
                            *open.entry(dependency).or_default() += 1;
                            *waiting.entry(id).or_default() += 1;
                            None
                        }
                    }
                };
                rows.push((dependency, id, edge.on, resolved));
            }
        }
        if written.is_empty() {
            tx.rollback().await?;
            return Ok(writes);
        }
        self.insert_edges(&mut *tx, &rows).await?;
        self.mark(&mut *tx, "waits", &written).await?;
        self.mark(&mut *tx, "wait_any", &any).await?;
        self.add_to_counts(&mut *tx, "dependents", &open).await?;
        self.add_to_counts(&mut *tx, "waiting_for", &waiting).await?;
        self.recheck_blocked(&mut *tx, &blocked, now).await?;
        tx.commit().await?;
        Ok(writes)
    }
}
