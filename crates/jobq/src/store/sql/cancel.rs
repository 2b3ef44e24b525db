//! Cancel on the SQL stores ([`crate::store::Store::cancel`]): by ids or by filter, each in one
//! transaction that resolves the dependents of the jobs it cancels.

use std::collections::HashMap;

use super::dependencies::Ended;
use super::{Exec, FilterCancel, IDS_PER_STATEMENT, LIVE_STATUSES, Sql};
use crate::job::{JobId, JobStatus};
use crate::store::{Cancel, CancelAnswer, CancelTarget, Cancelled, JobFilter, StoreError};
use crate::time::UnixMillis;

impl Sql {
    /// Cancels live jobs by id or filter (see [`crate::store::Store::cancel`]): one transaction that
    /// locks the targets in id order (so two overlapping cancels cannot deadlock), reads their statuses,
    /// and cancels the live ones.
    pub async fn cancel(&self, cancel: &Cancel) -> Result<Vec<CancelAnswer>, StoreError> {
        if matches!(&cancel.target, CancelTarget::Ids(ids) if ids.is_empty()) {
            return Ok(Vec::new());
        }
        self.retrying("cancel", |_| false, || self.cancel_once(cancel)).await
    }

    async fn cancel_once(&self, cancel: &Cancel) -> Result<Vec<CancelAnswer>, sqlx::Error> {
        match &cancel.target {
            CancelTarget::Ids(ids) => self.cancel_ids(ids, cancel.now).await,
            CancelTarget::Filter(filter) => match self.dialect.cancel_by_filter {
                FilterCancel::InOneStatement => self.cancel_filter_in_one_statement(filter, cancel.now).await,
                FilterCancel::SameFilterTwice | FilterCancel::LockedIds => {
                    self.cancel_filter_in_two_steps(filter, cancel.now).await
                }
            },
        }
    }

    /// Cancels the live jobs among `ids` and answers for each id, in the order given, once.
    async fn cancel_ids(&self, ids: &[JobId], now: UnixMillis) -> Result<Vec<CancelAnswer>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut statuses: HashMap<String, JobStatus> = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT j.id, j.status FROM jobq_jobs AS j WHERE 1 = 1");
            select.any_of("j.id", chunk.iter().map(|id| id.to_string()));
            self.lock_in_id_order(&mut select);
            statuses.extend(self.read_statuses(&select, &mut tx).await?);
        }
        let mut live: Vec<&str> = statuses
            .iter()
            .filter(|(_, s)| !s.is_terminal())
            .map(|(id, _)| id.as_str())
            .collect();
        live.sort_unstable();
        self.cancel_by_id(&live, now, &mut tx).await?;
        self.release_dependents(&mut tx, ended_cancelled(live.iter().copied()), now)
            .await?;
        tx.commit().await?;
        let mut seen = std::collections::HashSet::new();
        Ok(ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .map(|id| match statuses.get(id.as_str()) {
                None => CancelAnswer::NotFound(id.clone()),
                Some(&status) if status.is_terminal() => CancelAnswer::AlreadyTerminal { id: id.clone(), status },
                Some(&previous) => CancelAnswer::Cancelled(Cancelled {
                    id: id.clone(),
                    previous,
                }),
            })
            .collect())
    }

    /// Cancels the live jobs a filter selects in one statement that locks them in id order and says
    /// what each was: no transaction to open, and one pass over the rows however many there are.
    async fn cancel_filter_in_one_statement(
        &self,
        filter: &JobFilter,
        now: UnixMillis,
    ) -> Result<Vec<CancelAnswer>, sqlx::Error> {
        let mut s = self.stmt(format!(
            "WITH c AS (SELECT j.id, j.status FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"
        ));
        s.filter("j", filter)
            .push(" ORDER BY j.id FOR UPDATE) UPDATE jobq_jobs AS u SET status = 'cancelled', finished_at = ")
            .bind(now.0)
            .push(" FROM c WHERE u.id = c.id RETURNING u.id, c.status");
        // In a transaction of its own, so that the jobs waiting for those cancelled are resolved with
        // them.
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut cancelled = self.read_statuses(&s, &mut tx).await?;
        cancelled.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        self.release_dependents(
            &mut tx,
            ended_cancelled(cancelled.iter().map(|(id, _)| id.as_str())),
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(cancelled_answers(cancelled))
    }

    /// Cancels the live jobs a filter selects: reads them (locking them in id order where the store
    /// locks rows), then cancels them, by the same filter where the transaction holds the whole
    /// database (so that it selects the same rows), by id otherwise.
    async fn cancel_filter_in_two_steps(
        &self,
        filter: &JobFilter,
        now: UnixMillis,
    ) -> Result<Vec<CancelAnswer>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut select = self.stmt(format!(
            "SELECT j.id, j.status FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"
        ));
        select.filter("j", filter);
        self.lock_in_id_order(&mut select);
        let mut found = self.read_statuses(&select, &mut tx).await?;
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if self.dialect.cancel_by_filter == FilterCancel::SameFilterTwice {
            let mut update = self.stmt("UPDATE jobq_jobs AS j SET status = 'cancelled', finished_at = ");
            update.bind(now.0).push(&format!(" WHERE j.status IN {LIVE_STATUSES}"));
            update.filter("j", filter);
            tx.execute(&update).await?;
        } else {
            let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
            self.cancel_by_id(&ids, now, &mut tx).await?;
        }
        self.release_dependents(&mut tx, ended_cancelled(found.iter().map(|(id, _)| id.as_str())), now)
            .await?;
        tx.commit().await?;
        Ok(cancelled_answers(found))
    }

    /// Cancels the jobs of `ids` (sorted, live and locked by the caller), a bounded number a statement.
    async fn cancel_by_id(&self, ids: &[&str], now: UnixMillis, conn: &mut dyn Exec) -> Result<(), sqlx::Error> {
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt("UPDATE jobq_jobs SET status = 'cancelled', finished_at = ");
            update
                .bind(now.0)
                .push(" WHERE 1 = 1")
                .any_of("id", chunk.iter().map(|id| id.to_string()));
            conn.execute(&update).await?;
        }
        Ok(())
    }
}

/// Jobs just cancelled, as the release of their dependents takes them.
fn ended_cancelled<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<Ended> {
    ids.map(|id| Ended {
        id: id.to_string(),
        status: JobStatus::Cancelled,
    })
    .collect()
}

/// The answers of a cancel by filter: each job it cancelled, with what it was, in id order.
fn cancelled_answers(cancelled: Vec<(String, JobStatus)>) -> Vec<CancelAnswer> {
    cancelled
        .into_iter()
        .map(|(id, previous)| {
            CancelAnswer::Cancelled(Cancelled {
                id: JobId::from_stored(id),
                previous,
            })
        })
        .collect()
}
