//! Expiry on the SQL stores ([`crate::store::Store::expire`]): the sweep that ends the jobs whose
//! expiry has passed before they started. Claims never lease such a job (each claim's statement
//! compares `expires_at` with the server's clock, [`super::Dialect::unexpired`]); this takes them out
//! of the ready index so that claims stop reading past them.

use super::dependencies::Ended;
use super::{Exec, IDS_PER_STATEMENT, LimitedDelete, Sql};
use crate::job::JobStatus;
use crate::store::{Expire, StoreError};
use crate::time::UnixMillis;

impl Sql {
    /// Ends up to `expire.limit` expired jobs (see [`crate::store::Store::expire`]).
    pub async fn expire(&self, expire: &Expire) -> Result<u64, StoreError> {
        if expire.limit == 0 {
            return Ok(0);
        }
        self.retrying("expire", |_| false, || self.expire_once(expire)).await
    }

    /// Deletes up to `expire.limit` throttle windows of the queues that ended by `now`
    /// (`jobq_unique_holds`, see `unique.rs`): an ended window holds nothing, and the next throttled
    /// enqueue of its key would take it over anyway; this keeps keys never used again from piling up.
    async fn drop_ended_holds(&self, tx: &mut dyn Exec, expire: &Expire, now: UnixMillis) -> Result<(), sqlx::Error> {
        let mut delete = self.stmt("DELETE FROM jobq_unique_holds WHERE ");
        match self.dialect.limited_delete {
            LimitedDelete::BySubquery => {
                delete.push(
                    "(queue, unique_key) IN (SELECT queue, unique_key FROM jobq_unique_holds WHERE held_until <= ",
                );
                delete.bind(now.0);
                delete.any_of("queue", expire.queues.iter().cloned());
                delete.push(" LIMIT ").bind(i64::from(expire.limit)).push(")");
            }
            LimitedDelete::Inline => {
                delete.push("held_until <= ").bind(now.0);
                delete.any_of("queue", expire.queues.iter().cloned());
                delete.push(" LIMIT ").bind(i64::from(expire.limit));
            }
        }
        tx.execute(&delete).await?;
        Ok(())
    }

    /// One transaction: reads the server's clock, locks the due jobs (passing over those a claim
    /// holds), ends them at that time and resolves the jobs that wait for them.
    async fn expire_once(&self, expire: &Expire) -> Result<u64, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let clock = self.stmt(format!("SELECT {}", self.dialect.now_millis));
        let now = match tx.fetch_optional(&clock).await? {
            Some(row) => UnixMillis(row.try_get::<i64>(0)?),
            None => return Err(sqlx::Error::RowNotFound),
        };
        let mut due = self.stmt(format!(
            "SELECT j.id FROM jobq_jobs AS j WHERE {}",
            self.dialect.expiry_due
        ));
        due.bind(now.0);
        due.any_of("j.queue", expire.queues.iter().cloned());
        due.push(" LIMIT ")
            .bind(i64::from(expire.limit))
            .push(self.dialect.lock_skipping);
        let mut ids: Vec<String> = Vec::new();
        for row in tx.fetch_all(&due).await? {
            ids.push(row.try_get_unchecked(0)?);
        }
        ids.sort_unstable();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut update = self.stmt("UPDATE jobq_jobs SET status = 'expired', finished_at = ");
            update
                .bind(now.0)
                .push(" WHERE status IN ('blocked', 'pending')")
                .any_of("id", chunk.iter().cloned());
            tx.execute(&update).await?;
        }
        let ended = ids
            .iter()
            .map(|id| Ended {
                id: id.clone(),
                status: JobStatus::Expired,
            })
            .collect();
        self.release_dependents(&mut tx, ended, now).await?;
        self.drop_ended_holds(&mut *tx, expire, now).await?;
        tx.commit().await?;
        Ok(ids.len() as u64)
    }
}
