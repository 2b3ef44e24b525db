//! [`crate::store::Store::edges`] for the three SQL stores: the rows of `jobq_deps` on either side
//! of the jobs asked about, each joined to the job at its other end. A job's dependencies are read
//! through `jobq_deps_dependent`, its dependents through the primary key (which leads with the
//! dependency); a bounded number of ids at a time. An edge left unmarked reads as open while its
//! dependency is live, and as met once that has ended or is gone (see `dependencies.rs`).

use std::collections::HashMap;

use super::decode::compact_json;
use super::{Decoder, IDS_PER_STATEMENT, Sql};
use crate::job::{DependOn, JobId, Join};
use crate::store::{Edge, EdgeState, JobEdges, ReadEdges, StoreError};

/// Which side of the edges a statement reads.
#[derive(Clone, Copy)]
enum Side {
    /// The jobs the asked-about jobs wait for (joined on `dependency`).
    Dependencies,
    /// The jobs that wait for them (joined on `dependent`).
    Dependents,
}

impl Side {
    /// (the column naming the asked-about job, the column naming the other end)
    fn columns(self) -> (&'static str, &'static str) {
        match self {
            Side::Dependencies => ("dependent", "dependency"),
            Side::Dependents => ("dependency", "dependent"),
        }
    }
}

impl Sql {
    pub(crate) async fn edges(&self, read: &ReadEdges) -> Result<Vec<JobEdges>, StoreError> {
        let mut found: HashMap<String, JobEdges> = HashMap::new();
        let ids: Vec<&str> = read.ids.iter().map(JobId::as_str).collect();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            for (asked, edge) in self.edges_on(Side::Dependencies, chunk, read.results).await? {
                found.entry(asked).or_default().dependencies.push(edge);
            }
            if read.dependents {
                for (asked, edge) in self.edges_on(Side::Dependents, chunk, false).await? {
                    found.entry(asked).or_default().dependents.push(edge);
                }
                for id in self.waiting_for_any(chunk).await? {
                    found.entry(id).or_default().join = Join::Any;
                }
            }
        }
        Ok(ids
            .iter()
            .map(|id| found.get(*id).cloned().unwrap_or_default())
            .collect())
    }

    /// The edges on `side` of the jobs of `ids`, each with the id it was asked for, in order of
    /// (asked id, other end's id). The other end is `LEFT JOIN`ed: a dependency may be gone. The
    /// dependency's status (`k`) is what an unmarked edge's state reads from.
    async fn edges_on(&self, side: Side, ids: &[&str], results: bool) -> Result<Vec<(String, Edge)>, StoreError> {
        let (asked, other) = side.columns();
        let result = if results { self.dialect.result_text } else { "NULL" };
        // The dependency's row: the other end's, or (asked for its dependents) the asked job's.
        let (dependency_status, dependency_join) = match side {
            Side::Dependencies => ("j.status", ""),
            Side::Dependents => ("k.status", " LEFT JOIN jobq_jobs AS k ON k.id = d.dependency"),
        };
        let mut select = self.stmt(format!(
            "SELECT d.{asked}, d.{other}, d.rule, d.resolved, j.job_type, j.queue, j.status, {result}, \
             {dependency_status} FROM jobq_deps AS d LEFT JOIN jobq_jobs AS j ON j.id = d.{other}{dependency_join} \
             WHERE 1 = 1"
        ));
        select.any_of(&format!("d.{asked}"), ids.iter().map(|id| id.to_string()));
        select.push(&format!(" ORDER BY d.{asked}, d.{other}"));
        let rows = self.fetch_all(&select, "edges").await?;
        let mut edges = Vec::with_capacity(rows.len());
        for row in rows {
            // Errors name the job asked about, then (for its fields) the job at the other end.
            let mut d = Decoder {
                kind: self.dialect.kind,
                id: String::new(),
            };
            let text = |d: &Decoder, i: usize| {
                row.try_get_unchecked::<Option<String>>(i)
                    .map_err(|e| d.corrupt(format!("jobq_deps: {e}")))
            };
            d.id = text(&d, 0)?.unwrap_or_default();
            let asked = d.id.clone();
            let on: DependOn = text(&d, 2)?.unwrap_or_default().parse().map_err(|e| d.corrupt(e))?;
            let dependency_ended = match text(&d, 8)? {
                Some(status) => d.status(&status)?.is_terminal(),
                None => true,
            };
            let state = edge_state(text(&d, 3)?.as_deref(), dependency_ended);
            d.id = text(&d, 1)?.unwrap_or_default();
            let status = text(&d, 6)?.map(|s| d.status(&s)).transpose()?;
            let result = text(&d, 7)?.map(|r| d.raw("result", compact_json(r))).transpose()?;
            edges.push((
                asked,
                Edge {
                    job_id: JobId::from_stored(d.id.clone()),
                    job_type: text(&d, 4)?,
                    queue: text(&d, 5)?,
                    status,
                    on,
                    state,
                    result,
                },
            ));
        }
        Ok(edges)
    }
}

impl Sql {
    /// Which of `ids` wait for any of their dependencies rather than all ([`Join::Any`]).
    async fn waiting_for_any(&self, ids: &[&str]) -> Result<Vec<String>, StoreError> {
        let mut select = self.stmt("SELECT j.id FROM jobq_jobs AS j WHERE j.wait_any = TRUE");
        select.any_of("j.id", ids.iter().map(|id| id.to_string()));
        let rows = self.fetch_all(&select, "edges").await?;
        rows.iter()
            .map(|row| {
                row.try_get_unchecked::<String>(0)
                    .map_err(|e| StoreError::query(self.dialect.kind, "edges", e.to_string()))
            })
            .collect()
    }
}

/// The state of an edge by its `resolved` column and whether its dependency has ended (or is gone):
/// unmarked, it is open until then and met from then on.
fn edge_state(resolved: Option<&str>, dependency_ended: bool) -> EdgeState {
    match resolved {
        Some("met") => EdgeState::Met,
        Some("broken") => EdgeState::Broken,
        _ if dependency_ended => EdgeState::Met,
        _ => EdgeState::Open,
    }
}
