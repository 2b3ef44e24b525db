//! MySQL's enqueue: multi-row `INSERT`s, bounded by rows and bytes. A batch without unique keys goes in
//! without looking first; one with keys (or an id that exists) is answered in a transaction that looks
//! up what exists, decides every job, and inserts the new ones.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use sqlx::QueryBuilder;
use sqlx::mysql::{MySql, MySqlConnection};

use super::statements::{ID_TABLE, id_array, text};
use super::{MysqlStore, ROWS_PER_STATEMENT};
use crate::job::{JobId, NewJob};
use crate::store::batch::{self, job_bytes};
use crate::store::sql::{EnqueuePlan, INSERT_NEW_JOBS, push_new_jobs};
use crate::store::{EnqueueOutcome, Enqueued};

/// Rows per multi-row INSERT: 11 placeholders a row stays well under MySQL's 65,535 per statement.
const ROWS_PER_INSERT: usize = 4_000;

/// Payload and meta bytes per INSERT, well under the default `max_allowed_packet` (16 MiB on MariaDB,
/// 64 MiB on MySQL 8); a single larger job still gets a statement of its own.
const BYTES_PER_INSERT: usize = 6 * 1024 * 1024;

/// Splits `jobs` into INSERT statements of at most [`ROWS_PER_INSERT`] rows and about
/// [`BYTES_PER_INSERT`] bytes of payload and meta, as runs of indexes into `jobs`.
fn insert_chunks(jobs: &[&NewJob]) -> Vec<Vec<usize>> {
    let all: Vec<usize> = (0..jobs.len()).collect();
    batch::chunks(&all, ROWS_PER_INSERT, BYTES_PER_INSERT, |i| job_bytes(jobs[i]))
        .into_iter()
        .map(<[usize]>::to_vec)
        .collect()
}

impl MysqlStore {
    /// Why the plain insert refused `job`, in one read: its id exists (`Duplicate`), or a live job
    /// holds its key (`Coalesced` into it). `None` when neither holds any more (the holder ended
    /// meanwhile): the checked path decides then.
    pub(super) async fn why_refused(&self, job: &NewJob) -> Result<Option<Enqueued>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT id, 1 FROM jobq_jobs WHERE id = ? \
             UNION ALL SELECT id, 0 FROM jobq_jobs WHERE queue = ? AND live_key = ?",
        )
        .bind(job.id.as_str())
        .bind(&job.queue)
        .bind(job.unique_key.as_deref())
        .fetch_all(&self.sql.pool)
        .await?;
        let answer = |row: &sqlx::mysql::MySqlRow, outcome| Enqueued {
            id: JobId::from_stored(text(row, 0)),
            outcome,
        };
        let taken = rows
            .iter()
            .find(|r| sqlx::Row::try_get_unchecked::<i64, _>(*r, 1).is_ok_and(|flag| flag == 1));
        Ok(match (taken, rows.first()) {
            (Some(row), _) => Some(answer(row, EnqueueOutcome::Duplicate)),
            (None, Some(row)) => Some(answer(row, EnqueueOutcome::Coalesced)),
            (None, None) => None,
        })
    }

    /// Inserts `jobs` with multi-row INSERTs on `conn`. Fails with a duplicate key when an id exists
    /// or a live unique key is taken.
    async fn insert(conn: &mut MySqlConnection, jobs: &[&NewJob]) -> Result<(), sqlx::Error> {
        for chunk in insert_chunks(jobs) {
            let chunk = chunk.iter().map(|&i| jobs[i]);
            let mut qb: QueryBuilder<MySql> = QueryBuilder::new(INSERT_NEW_JOBS);
            push_new_jobs(&mut qb, chunk);
            qb.build().execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// Inserts a batch in which no job has a unique key and no id repeats, without looking first: one
    /// statement, or one transaction of several. Fails with a duplicate key, having changed nothing,
    /// when an id exists already.
    pub(super) async fn insert_all(&self, jobs: &[NewJob]) -> Result<(), sqlx::Error> {
        let refs: Vec<&NewJob> = jobs.iter().collect();
        if let [_] = jobs
            && let Some(mut call) = self.sql.kept.call(&self.sql.pool)
        {
            loop {
                let done = MysqlStore::insert(call.connection().await?, &refs).await;
                if let Some(done) = call.answer(done) {
                    return done;
                }
            }
        }
        if insert_chunks(&refs).len() == 1 {
            let mut conn = self.sql.pool.acquire().await?;
            return MysqlStore::insert(&mut conn, &refs).await;
        }
        let mut tx = self.sql.pool.begin().await?;
        MysqlStore::insert(&mut tx, &refs).await?;
        tx.commit().await
    }

    /// One checked enqueue: in a transaction, looks up which ids exist and who holds the unique keys,
    /// answers every job, and inserts the new ones. A producer that writes a clashing job between the
    /// look-up and the insert makes the insert fail with a duplicate key; the caller runs it again.
    pub(super) async fn enqueue_checked(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, sqlx::Error> {
        let mut tx = self.sql.pool.begin().await?;
        let mut plan = EnqueuePlan::default();
        for chunk in jobs.chunks(ROWS_PER_STATEMENT) {
            let ids = id_array(chunk.iter().map(|j| j.id.as_str()));
            let stored: HashSet<String> = sqlx::query(&format!(
                "SELECT j.id FROM {ID_TABLE} STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (PRIMARY) ON j.id = t.id"
            ))
            .bind(ids)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| text(r, 0))
            .collect();
            let keys: Vec<Value> = chunk
                .iter()
                .filter_map(|j| j.unique_key.as_deref().map(|k| json!([j.queue, k])))
                .collect();
            let mut live: HashMap<(String, String), JobId> = HashMap::new();
            if !keys.is_empty() {
                let rows = sqlx::query(
                    "SELECT j.queue, j.live_key, j.id FROM JSON_TABLE(?, '$[*]' COLUMNS \
                     (queue VARCHAR(64) PATH '$[0]', k VARCHAR(255) PATH '$[1]')) AS t \
                     STRAIGHT_JOIN jobq_jobs AS j FORCE INDEX (jobq_jobs_unique) ON j.queue = t.queue AND j.live_key = t.k",
                )
                .bind(Value::Array(keys).to_string())
                .fetch_all(&mut *tx)
                .await?;
                for r in &rows {
                    live.insert((text(r, 0), text(r, 1)), JobId::from_stored(text(r, 2)));
                }
            }
            let fresh = plan.decide(chunk, &stored, &live);
            if !fresh.is_empty() {
                MysqlStore::insert(&mut tx, &fresh).await?;
            }
        }
        tx.commit().await?;
        Ok(plan.answers())
    }
}
