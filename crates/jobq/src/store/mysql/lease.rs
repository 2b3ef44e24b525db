//! MySQL's claim and its fenced exits from `running`. MySQL has no `UPDATE … RETURNING`, so each is one
//! short transaction: lock the rows (a claim with `FOR UPDATE SKIP LOCKED`, so that concurrent claimers
//! pass over each other's rows instead of waiting; a finish by id, in id order), then change them with
//! one statement, then commit. Every exit from `running` is fenced by (id, attempt, worker, status) on
//! the locked rows, and again in the update's `WHERE`. The caller hands each transaction a round of
//! leases in which no job appears twice.

use std::collections::HashMap;

use serde_json::{Value, json};
use sqlx::Row;
use sqlx::mysql::MySqlConnection;

use super::MysqlStore;
use super::settings::DIALECT;
use super::statements::{ID_TABLE, append_error, id_array, jobs_from_rows, text};
use crate::job::{Job, JobStatus};
use crate::store::batch::sort_in_claim_order;
use crate::store::sql::{FinishRow, Outcomes, ReadRow, placeholders};
use crate::store::{Claim, Finish, Heartbeat, Lease, LeaseState, Rescue, Rescued};
use crate::time::UnixMillis;

/// For each lease, whether it matches a locked row `(id → (attempt, worker))` of a running job.
fn match_leases(leases: &[&Lease], held: &HashMap<String, (u32, String)>) -> Vec<bool> {
    leases
        .iter()
        .map(|lease| {
            held.get(lease.id.as_str())
                .is_some_and(|(attempt, worker)| *attempt == lease.attempt && *worker == lease.worker)
        })
        .collect()
}

impl MysqlStore {
    /// One claim transaction: locks up to `limit` ready jobs per queue in claim order (skipping rows
    /// other claimers hold), keeps the first `limit` overall, and flips them to running.
    pub(super) async fn claim_once(&self, claim: &Claim, queues: &[&str]) -> Result<Vec<Job>, sqlx::Error> {
        let exclude = if claim.exclude_types.is_empty() {
            String::new()
        } else {
            format!(" AND job_type NOT IN ({})", placeholders(claim.exclude_types.len()))
        };
        let select = format!(
            "SELECT {} FROM jobq_jobs AS j FORCE INDEX (jobq_jobs_ready) \
             WHERE queue = ? AND status = 'pending' AND run_at <= ?{exclude}{} \
             ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED",
            DIALECT.job_columns,
            DIALECT.unexpired("")
        );
        let mut tx = self.sql.pool.begin().await?;
        let mut rows = Vec::new();
        for queue in queues {
            let mut query = sqlx::query(&select).bind(*queue).bind(claim.now.0);
            for t in &claim.exclude_types {
                query = query.bind(t);
            }
            rows.extend(query.bind(i64::from(claim.limit)).fetch_all(&mut *tx).await?);
        }
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let mut jobs = jobs_from_rows(&rows).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        // Several queues: each queue's best, merged; the extra rows stay locked until the commit only.
        sort_in_claim_order(&mut jobs);
        jobs.truncate(claim.limit as usize);
        let mut ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        ids.sort_unstable();
        sqlx::query(&format!(
            "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'running', \
             j.attempt = j.attempt + 1, j.worker_id = ?, j.started_at = ?, j.heartbeat_at = ?, j.progress = NULL, \
             j.progress_message = NULL"
        ))
        .bind(id_array(ids.into_iter()))
        .bind(&claim.worker)
        .bind(claim.now.0)
        .bind(claim.now.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        for job in &mut jobs {
            claim.lease(job);
        }
        Ok(jobs)
    }

    /// Locks the running rows of `leases`' jobs (in id order, so two batches cannot deadlock each other)
    /// and tells which leases hold. `also` narrows the rows (`""` for none): outcomes pass over a job
    /// that others wait for, which ends in the shared layer's transaction that resolves them
    /// (`Sql::finish_with_dependents`).
    async fn lock_leases(
        &self,
        tx: &mut MySqlConnection,
        leases: &[&Lease],
        also: &str,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let mut ids: Vec<&str> = leases.iter().map(|l| l.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let rows = sqlx::query(&format!(
            "SELECT j.id, j.attempt, j.worker_id FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id \
             WHERE j.status = 'running'{also} FOR UPDATE"
        ))
        .bind(id_array(ids.into_iter()))
        .fetch_all(&mut *tx)
        .await?;
        let held: HashMap<String, (u32, String)> = rows
            .iter()
            .map(|r| (text(r, 0), (r.get::<i32, _>(1).max(0) as u32, text(r, 2))))
            .collect();
        Ok(match_leases(leases, &held))
    }

    /// One finish transaction for a chunk: lock, match, apply the outcomes of the leases that hold in
    /// one statement.
    pub(super) async fn finish_once(&self, finishes: &[&Finish], now: UnixMillis) -> Result<Vec<bool>, sqlx::Error> {
        let mut tx = self.sql.pool.begin().await?;
        let applied = self.finish_on(&mut tx, finishes, now, Outcomes::OfFreeJobs).await?;
        tx.commit().await?;
        Ok(applied)
    }

    /// A chunk's outcomes in `tx`, which the caller commits: its own transaction, a claim's that
    /// follows them, or that of `Sql::finish_with_dependents` (`Outcomes::OfAnyJob`).
    pub(super) async fn finish_on(
        &self,
        tx: &mut MySqlConnection,
        finishes: &[&Finish],
        now: UnixMillis,
        which: Outcomes,
    ) -> Result<Vec<bool>, sqlx::Error> {
        let leases: Vec<&Lease> = finishes.iter().map(|f| &f.lease).collect();
        let (free, count) = match which {
            Outcomes::OfFreeJobs => (" AND j.dependents = 0", ""),
            Outcomes::OfAnyJob => (
                "",
                ", j.dependents = IF(f.status IN ('succeeded', 'dead', 'discarded'), 0, j.dependents)",
            ),
        };
        let applied = self.lock_leases(tx, &leases, free).await?;
        let rows: Vec<Value> = finishes
            .iter()
            .zip(&applied)
            .filter(|(_, ok)| **ok)
            .map(|(fin, _)| {
                let f = FinishRow::of(fin);
                let mut row = json!({
                    "i": fin.lease.id.as_str(),
                    "a": fin.lease.attempt,
                    "w": fin.lease.worker,
                    "s": f.status,
                    "f": u8::from(f.finished),
                    "z": f.snoozed,
                });
                if let Some(run_at) = f.run_at {
                    row["t"] = json!(run_at);
                }
                if let Some(expires_at) = f.expires_at {
                    row["x"] = json!(expires_at);
                }
                if let Some(result) = f.result {
                    row["r"] = json!(result);
                }
                if let Some(error) = f.error {
                    row["e"] = json!(error);
                }
                if let Some(percent) = f.progress {
                    row["p"] = json!(percent);
                    if let Some(m) = f.message {
                        row["m"] = json!(m);
                    }
                }
                row
            })
            .collect();
        if !rows.is_empty() {
            let append = append_error("j.attempt", "?", "f.error");
            sqlx::query(&format!(
                "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$.i', attempt INT PATH '$.a', \
                 worker VARCHAR(255) PATH '$.w', status VARCHAR(16) PATH '$.s', finished INT PATH '$.f', \
                 run_at BIGINT PATH '$.t', result LONGTEXT PATH '$.r', error LONGTEXT PATH '$.e', \
                 progress INT PATH '$.p', message TEXT PATH '$.m', snoozed INT PATH '$.z', \
                 expires_at BIGINT PATH '$.x')) AS f \
                 STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = f.id \
                 SET j.status = f.status, j.run_at = COALESCE(f.run_at, j.run_at), j.result = f.result, \
                 j.expires_at = COALESCE(f.expires_at, j.expires_at), \
                 j.progress = COALESCE(f.progress, j.progress), \
                 j.progress_message = IF(f.progress IS NULL, j.progress_message, f.message), \
                 j.finished_at = IF(f.finished = 1, ?, NULL), j.worker_id = NULL, \
                 j.errors = IF(f.error IS NULL, j.errors, {append}), \
                 j.snoozes = j.snoozes + f.snoozed, j.attempt = j.attempt - f.snoozed{count} \
                 WHERE j.status = 'running' AND j.attempt = f.attempt AND j.worker_id = f.worker"
            ))
            .bind(Value::Array(rows).to_string())
            .bind(now.0)
            .bind(now.0)
            .execute(&mut *tx)
            .await?;
        }
        Ok(applied)
    }

    /// One release transaction for a chunk.
    pub(super) async fn release_once(&self, leases: &[&Lease]) -> Result<Vec<bool>, sqlx::Error> {
        let mut tx = self.sql.pool.begin().await?;
        let released = self.lock_leases(&mut tx, leases, "").await?;
        let ids: Vec<&str> = leases
            .iter()
            .zip(&released)
            .filter(|(_, ok)| **ok)
            .map(|(l, _)| l.id.as_str())
            .collect();
        if !ids.is_empty() {
            // run_at is kept: a released job keeps its place at the front of its queue.
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'pending', \
                 j.attempt = j.attempt - 1, j.worker_id = NULL, j.heartbeat_at = NULL, j.progress = NULL, \
                 j.progress_message = NULL WHERE j.status = 'running'"
            ))
            .bind(id_array(ids.into_iter()))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(released)
    }

    /// One heartbeat round for a chunk: records the beats of the leases that hold, then reads the
    /// status of every job of the chunk to answer each lease.
    pub(super) async fn heartbeat_once(
        &self,
        beats: &[&Heartbeat],
        now: UnixMillis,
    ) -> Result<Vec<LeaseState>, sqlx::Error> {
        let rows: Vec<Value> = beats
            .iter()
            .map(|b| {
                let mut row = json!({"i": b.lease.id.as_str(), "a": b.lease.attempt, "w": b.lease.worker});
                if let Some(p) = &b.progress {
                    row["p"] = json!(p.percent);
                    if let Some(m) = &p.message {
                        row["m"] = json!(m);
                    }
                }
                row
            })
            .collect();
        sqlx::query(
            "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(128) PATH '$.i', attempt INT PATH '$.a', \
             worker VARCHAR(255) PATH '$.w', progress INT PATH '$.p', message TEXT PATH '$.m')) AS b \
             STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = b.id \
             SET j.heartbeat_at = ?, j.progress = COALESCE(b.progress, j.progress), \
             j.progress_message = IF(b.progress IS NULL, j.progress_message, b.message) \
             WHERE j.status = 'running' AND j.attempt = b.attempt AND j.worker_id = b.worker",
        )
        .bind(Value::Array(rows).to_string())
        .bind(now.0)
        .execute(&self.sql.pool)
        .await?;
        let rows = sqlx::query(&format!(
            "SELECT j.id, j.attempt, j.worker_id, j.status, j.cancel_requested AND j.dependents > 0 \
             FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id"
        ))
        .bind(id_array(beats.iter().map(|b| b.lease.id.as_str())))
        .fetch_all(&self.sql.pool)
        .await?;
        let now_held: HashMap<String, (u32, String, String, bool)> = rows
            .iter()
            .map(|r| {
                let asked_to_stop = r.get::<Option<i64>, _>(4).unwrap_or(0) != 0;
                let lease = (r.get::<i32, _>(1).max(0) as u32, text(r, 2), text(r, 3), asked_to_stop);
                (text(r, 0), lease)
            })
            .collect();
        Ok(beats
            .iter()
            .map(|b| match now_held.get(b.lease.id.as_str()) {
                Some((attempt, worker, status, asked_to_stop))
                    if status == "running" && *attempt == b.lease.attempt && *worker == b.lease.worker =>
                {
                    match asked_to_stop {
                        true => LeaseState::CancelRequested,
                        false => LeaseState::Held,
                    }
                }
                Some((_, _, status, _)) if status == JobStatus::Cancelled.as_str() => LeaseState::Cancelled,
                _ => LeaseState::Lost,
            })
            .collect())
    }

    /// One rescue transaction.
    pub(super) async fn rescue_once(&self, rescue: &Rescue) -> Result<Vec<Rescued>, sqlx::Error> {
        use crate::store::sql::DYING_LEFT_TO_SHARED;
        let mut tx = self.sql.pool.begin().await?;
        // SKIP LOCKED: a job another sweeper (or its own worker's finish) holds right now is left to it.
        let rows = sqlx::query(&format!(
            "SELECT id, job_type, attempt, max_attempts FROM jobq_jobs FORCE INDEX (jobq_jobs_running) \
             WHERE status = 'running' AND heartbeat_at < ? AND {DYING_LEFT_TO_SHARED} \
             ORDER BY heartbeat_at LIMIT ? FOR UPDATE SKIP LOCKED"
        ))
        .bind(rescue.stale_before.0)
        .bind(i64::from(rescue.limit))
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(Vec::new());
        }
        let mut rescued = rows.iter().map(|r| r.rescued()).collect::<Result<Vec<Rescued>, _>>()?;
        let append = append_error("j.attempt", "?", "'worker lost'");
        sqlx::query(&format!(
            "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET \
             j.errors = {append}, \
             j.finished_at = IF(j.attempt >= j.max_attempts, ?, NULL), \
             j.status = IF(j.attempt >= j.max_attempts, 'dead', 'pending'), \
             j.run_at = ?, j.worker_id = NULL, j.heartbeat_at = NULL \
             WHERE j.status = 'running'"
        ))
        .bind(id_array(rescued.iter().map(|r| r.id.as_str())))
        .bind(rescue.now.0)
        .bind(rescue.now.0)
        .bind(rescue.now.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        rescued.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rescued)
    }
}
