//! Cleanup on the SQL stores ([`crate::store::Store::cleanup`]): bounded deletes of terminal jobs by
//! queue, status, type and finish time, and, with `keep_last`, below each queue and status's cut-off.

use super::{LimitedDelete, Sql, Stmt, TERMINAL_STATUSES, cleanup_filter, count};
use crate::job::JobStatus;
use crate::store::{Cleanup, JobFilter, StoreError};

impl Sql {
    /// Deletes (or counts, on a dry run) up to `limit` terminal jobs matching; returns how many.
    pub async fn cleanup(&self, cleanup: &Cleanup) -> Result<u64, StoreError> {
        let Some(filter) = cleanup_filter(cleanup) else {
            return Ok(0);
        };
        let Some(keep) = cleanup.keep_last else {
            return self.cleanup_selected(cleanup, &filter, None, cleanup.limit).await;
        };
        // Each queue and status keeps its newest `keep`: one cut-off each, below which the same
        // bounded delete runs.
        let mut total = 0u64;
        for (queue, status) in self.queues_and_statuses(&filter).await? {
            let left = u64::from(cleanup.limit).saturating_sub(total);
            if left == 0 {
                break;
            }
            let one = JobFilter {
                queues: vec![queue],
                statuses: vec![status],
                ..filter.clone()
            };
            let Some(cut) = self.keep_last_cut(cleanup, &one, keep).await? else {
                continue;
            };
            total += self.cleanup_selected(cleanup, &one, Some(cut), left as u32).await?;
        }
        Ok(total)
    }

    /// The queues and terminal statuses that have jobs `filter` selects.
    async fn queues_and_statuses(&self, filter: &JobFilter) -> Result<Vec<(String, JobStatus)>, StoreError> {
        let mut select = self.stmt(format!(
            "SELECT DISTINCT j.queue, j.status FROM jobq_jobs AS j WHERE j.status IN {TERMINAL_STATUSES}"
        ));
        select.any_of("j.queue", filter.queues.iter().cloned());
        select.any_of("j.status", filter.statuses.iter().map(|s| s.as_str().to_string()));
        // A queue and a status, read as a job id and its status are.
        let mut conn = self.connections.acquire().await.map_err(self.fail("cleanup"))?;
        let mut pairs = self
            .read_statuses(&select, &mut *conn)
            .await
            .map_err(self.fail("cleanup"))?;
        pairs.sort();
        Ok(pairs)
    }

    /// The newest job past the `keep` newest of the one queue and status `filter` names (with the
    /// cleanup's types), by finish time then id: it and every older one may go. `None` when there are
    /// no more than `keep`.
    async fn keep_last_cut(
        &self,
        cleanup: &Cleanup,
        filter: &JobFilter,
        keep: u32,
    ) -> Result<Option<(i64, String)>, StoreError> {
        let mut select = self.stmt("SELECT j.finished_at, j.id FROM jobq_jobs AS j WHERE 1 = 1");
        select.filter("j", filter);
        exclude_types(&mut select, "j", &cleanup.exclude_types);
        select
            .push(" ORDER BY j.finished_at DESC, j.id DESC LIMIT 1 OFFSET ")
            .bind(i64::from(keep));
        let rows = self.fetch_all(&select, "cleanup").await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let finished: Option<i64> = row.try_get(0).map_err(self.fail("cleanup"))?;
        let id: String = row.try_get_unchecked(1).map_err(self.fail("cleanup"))?;
        Ok(Some((finished.unwrap_or(i64::MIN), id)))
    }

    /// Deletes (or counts) up to `limit` terminal jobs `filter` and the cleanup's other conditions
    /// select, only those at or past `cut` (finish time, id) when there is one.
    async fn cleanup_selected(
        &self,
        cleanup: &Cleanup,
        filter: &JobFilter,
        cut: Option<(i64, String)>,
        limit: u32,
    ) -> Result<u64, StoreError> {
        // The selection, on `jobq_jobs` as `table`; what wraps it counts, or deletes it (MySQL refuses a
        // LIMIT inside an IN subquery, but deletes with one of its own).
        let (open, close) = self.dialect.in_selected;
        let (head, table, tail) = match (cleanup.dry_run, self.dialect.limited_delete) {
            (true, _) => (
                "SELECT COUNT(*) FROM (SELECT j.id FROM jobq_jobs AS j".to_string(),
                "j",
                ") AS t".to_string(),
            ),
            (false, LimitedDelete::Inline) => ("DELETE FROM jobq_jobs".to_string(), "jobq_jobs", String::new()),
            (false, LimitedDelete::BySubquery) => (
                format!("DELETE FROM jobq_jobs WHERE id{open}SELECT j.id FROM jobq_jobs AS j"),
                "j",
                format!("{}{close}", self.dialect.skip_locked),
            ),
        };
        let mut stmt = self.stmt(head);
        // Terminal statuses only, whatever the filter says: cleanup never touches live jobs.
        stmt.push(&format!(" WHERE {table}.status IN {TERMINAL_STATUSES}"))
            .filter(table, filter);
        exclude_types(&mut stmt, table, &cleanup.exclude_types);
        if let Some(before) = cleanup.finished_before {
            stmt.push(&format!(" AND {table}.finished_at < ")).bind(before.0);
        }
        if let Some((finished, id)) = cut {
            // At or past the cut in (finish time, id) order, spelled out (MySQL takes no row value
            // as a range).
            stmt.push(&format!(" AND ({table}.finished_at < "))
                .bind(finished)
                .push(&format!(" OR ({table}.finished_at = "))
                .bind(finished)
                .push(&format!(" AND {table}.id <= "))
                .bind(id)
                .push("))");
        }
        stmt.push(&self.not_awaited(table));
        stmt.push(" LIMIT ").bind(i64::from(limit)).push(&tail);
        if cleanup.dry_run {
            let rows = self.fetch_all(&stmt, "cleanup").await?;
            let n: i64 = match rows.first() {
                Some(row) => row.try_get(0).map_err(self.fail("cleanup"))?,
                None => 0,
            };
            return Ok(count(n));
        }
        self.execute(&stmt, "cleanup").await
    }
}

/// `AND table.job_type NOT IN (…)` for `types`, when there are any.
fn exclude_types(stmt: &mut Stmt, table: &str, types: &[String]) {
    if !types.is_empty() {
        stmt.push(&format!(" AND {table}.job_type NOT IN "));
        stmt.list(types.iter().cloned());
    }
}
