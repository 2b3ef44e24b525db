//! MySQL's operator transitions over many jobs: cancel (lock the targets in id order, then cancel them)
//! and replay (lock the selected dead jobs, keep those whose unique key no live job holds, bring them
//! back), each one transaction.

use std::collections::HashSet;

use serde_json::{Value, json};
use sqlx::mysql::MySql;
use sqlx::{QueryBuilder, Row};

use super::statements::{ID_TABLE, id_array, text};
use super::{KIND, MysqlStore, ROWS_PER_STATEMENT};
use crate::job::JobId;
use crate::store::sql::{Decoder, LIVE_STATUSES, push_filter, push_in, replay_filter};
use crate::store::{Cancel, CancelTarget, Cancelled, ReplayDead};

impl MysqlStore {
    /// One cancel transaction: locks the targets in id order, then cancels them.
    pub(super) async fn cancel_once(&self, cancel: &Cancel) -> Result<Vec<Cancelled>, sqlx::Error> {
        let mut tx = self.sql.pool.begin().await?;
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new(format!(
            "SELECT j.id, j.status FROM jobq_jobs AS j WHERE j.status IN {LIVE_STATUSES}"
        ));
        match &cancel.target {
            CancelTarget::Ids(ids) if ids.is_empty() => return Ok(Vec::new()),
            CancelTarget::Ids(ids) => push_in(&mut qb, "j.id", ids.iter().map(|id| id.to_string())),
            CancelTarget::Filter(filter) => push_filter(&mut qb, "j", filter),
        }
        qb.push(" ORDER BY j.id FOR UPDATE");
        let rows = qb.build().persistent(false).fetch_all(&mut *tx).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id = text(row, 0);
            let previous = Decoder {
                kind: KIND,
                id: id.clone(),
            }
            .status(&text(row, 1))
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            out.push(Cancelled {
                id: JobId::from_stored(id),
                previous,
            });
        }
        for chunk in out.chunks(ROWS_PER_STATEMENT) {
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'cancelled', j.finished_at = ?"
            ))
            .bind(id_array(chunk.iter().map(|c| c.id.as_str())))
            .bind(cancel.now.0)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// One replay transaction: locks the selected dead jobs, keeps those whose unique key no live job
    /// holds (and, of several sharing a key, the one that died first), and brings them back.
    pub(super) async fn replay_once(&self, replay: &ReplayDead) -> Result<Vec<JobId>, sqlx::Error> {
        let mut tx = self.sql.pool.begin().await?;
        let mut qb: QueryBuilder<MySql> = QueryBuilder::new(
            "SELECT j.id, j.queue, j.unique_key, j.finished_at FROM jobq_jobs AS j WHERE j.status = 'dead'",
        );
        push_filter(&mut qb, "j", &replay_filter(replay));
        push_in(&mut qb, "j.id", replay.ids.iter().map(|id| id.to_string()));
        qb.push(" ORDER BY j.id FOR UPDATE");
        let rows = qb.build().persistent(false).fetch_all(&mut *tx).await?;
        struct Dead {
            id: String,
            queue: String,
            key: Option<String>,
            finished_at: i64,
        }
        let mut dead: Vec<Dead> = rows
            .iter()
            .map(|r| Dead {
                id: text(r, 0),
                queue: text(r, 1),
                key: r.try_get_unchecked::<Option<String>, _>(2).ok().flatten(),
                finished_at: r.get::<Option<i64>, _>(3).unwrap_or(0),
            })
            .collect();
        dead.sort_by(|a, b| (a.finished_at, &a.id).cmp(&(b.finished_at, &b.id)));
        let keys: Vec<Value> = dead
            .iter()
            .filter_map(|d| d.key.as_ref().map(|k| json!([d.queue, k])))
            .collect();
        let mut taken: HashSet<(String, String)> = HashSet::new();
        if !keys.is_empty() {
            let rows = sqlx::query(
                "SELECT j.queue, j.live_key FROM JSON_TABLE(?, '$[*]' COLUMNS \
                 (queue VARCHAR(64) PATH '$[0]', k VARCHAR(255) PATH '$[1]')) AS t \
                 STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (jobq_jobs_unique) ON j.queue = t.queue AND j.live_key = t.k",
            )
            .bind(Value::Array(keys).to_string())
            .fetch_all(&mut *tx)
            .await?;
            taken.extend(rows.iter().map(|r| (text(r, 0), text(r, 1))));
        }
        let limit = replay.limit.map_or(usize::MAX, |l| l as usize);
        let mut chosen: Vec<JobId> = Vec::new();
        for d in dead {
            if chosen.len() == limit {
                break;
            }
            if let Some(key) = d.key {
                // Whether or not it comes back, a later death with the same key stays dead.
                if !taken.insert((d.queue, key)) {
                    continue;
                }
            }
            chosen.push(JobId::from_stored(d.id));
        }
        for chunk in chosen.chunks(ROWS_PER_STATEMENT) {
            sqlx::query(&format!(
                "UPDATE {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id SET j.status = 'pending', j.attempt = 0, \
                 j.finished_at = NULL, j.result = NULL, j.worker_id = NULL, j.heartbeat_at = NULL, j.progress = NULL, \
                 j.progress_message = NULL, j.run_at = ? WHERE j.status = 'dead'"
            ))
            .bind(id_array(chunk.iter().map(JobId::as_str)))
            .bind(replay.now.0)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        chosen.sort();
        Ok(chosen)
    }
}
