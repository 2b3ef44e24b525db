//! PostgreSQL's enqueue: a batch travels as one array parameter per column (`unnest($1::text[], …)`),
//! so a statement carries any number of jobs for a constant number of parameters. A batch without unique
//! keys goes in with plain `INSERT`s; one with keys (or an id that exists) with `ON CONFLICT DO NOTHING
//! RETURNING id` in input order, and then one read says why each refused job was refused.

use std::collections::HashSet;

use sqlx::{PgConnection, Postgres, QueryBuilder, Row};

use super::{BYTES_PER_STATEMENT, KIND, PostgresStore, ROWS_PER_STATEMENT};
use crate::job::{JobId, NewJob};
use crate::store::batch::{self, job_bytes};
use crate::store::sql::{LIVE_STATUSES, NewJobRow, push_new_jobs};
use crate::store::{EnqueueOutcome, Enqueued, StoreError};

/// Attempts at one enqueue round whose conflicts vanish before they can be read (a coalescing holder
/// that finishes in between); each retry inserts only the rows still unanswered.
const ENQUEUE_ROUNDS: usize = 5;

/// What an enqueue statement does with a job that clashes with an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clashes {
    /// Leave it out (ON CONFLICT DO NOTHING) and tell which were created.
    Skip,
    /// Fail the statement (cheaper when nothing clashes).
    Fail,
}

impl PostgresStore {
    /// Inserts the jobs at `indexes` (distinct ids) in one statement; returns the ids created. With
    /// [`Clashes::Skip`] a job whose id exists, or whose unique key a live job holds, is left out (and
    /// its id is not returned); with [`Clashes::Fail`] the statement fails on it instead.
    async fn insert(
        &self,
        conn: &mut PgConnection,
        jobs: &[NewJob],
        indexes: &[usize],
        clashes: Clashes,
    ) -> Result<HashSet<String>, sqlx::Error> {
        let rows: Vec<NewJobRow> = indexes.iter().map(|&i| NewJobRow::of(&jobs[i])).collect();
        let ids: Vec<&str> = rows.iter().map(|r| r.id).collect();
        let queues: Vec<&str> = rows.iter().map(|r| r.queue).collect();
        let types: Vec<&str> = rows.iter().map(|r| r.job_type).collect();
        let payloads: Vec<&str> = rows.iter().map(|r| r.payload).collect();
        let metas: Vec<&str> = rows.iter().map(|r| r.meta.as_str()).collect();
        let priorities: Vec<i32> = rows.iter().map(|r| r.priority).collect();
        let max_attempts: Vec<i32> = rows.iter().map(|r| r.max_attempts).collect();
        let run_ats: Vec<i64> = rows.iter().map(|r| r.run_at).collect();
        let keys: Vec<Option<&str>> = rows.iter().map(|r| r.unique_key).collect();
        let timeouts: Vec<Option<i64>> = rows.iter().map(|r| r.timeout_ms).collect();
        let created: Vec<i64> = rows.iter().map(|r| r.created_at).collect();
        let expiries: Vec<Option<i64>> = rows.iter().map(|r| r.expires_at).collect();
        // status, attempt and errors take the column defaults. With Skip, rows go in input order (ORDER
        // BY ord), so a later job of the batch coalesces into an earlier one, and ON CONFLICT DO NOTHING
        // with no target covers both the primary key (duplicate id) and the partial unique index of
        // live unique keys (coalescing); which one it was is read afterwards.
        let tail = match clashes {
            Clashes::Skip => "ORDER BY t.ord ON CONFLICT DO NOTHING RETURNING id",
            Clashes::Fail => "",
        };
        let sql = format!(
            "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
             timeout_ms, created_at, expires_at) \
             SELECT t.id, t.queue, t.job_type, t.payload::json, t.meta::json, t.priority, t.max_attempts, t.run_at, \
             t.unique_key, t.timeout_ms, t.created_at, t.expires_at \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int4[], $7::int4[], \
             $8::int8[], $9::text[], $10::int8[], $11::int8[], $12::int8[]) WITH ORDINALITY \
             AS t(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, \
             created_at, expires_at, ord) {tail}"
        );
        let query = sqlx::query(&sql)
            .bind(&ids)
            .bind(queues)
            .bind(types)
            .bind(payloads)
            .bind(metas)
            .bind(priorities)
            .bind(max_attempts)
            .bind(run_ats)
            .bind(keys)
            .bind(timeouts)
            .bind(created)
            .bind(expiries);
        match clashes {
            Clashes::Skip => Ok(query
                .fetch_all(&mut *conn)
                .await?
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect()),
            Clashes::Fail => {
                query.execute(&mut *conn).await?;
                Ok(ids.iter().map(|id| id.to_string()).collect())
            }
        }
    }

    /// Enqueues a batch in which no job has a unique key and no id repeats with plain INSERTs, which
    /// skip the arbiter-index probes of ON CONFLICT; one statement, or one transaction of several.
    /// Fails with a unique violation when an id exists already, having changed nothing.
    pub(super) async fn insert_all(&self, jobs: &[NewJob], indexes: &[usize]) -> Result<(), sqlx::Error> {
        if let [only] = indexes {
            if let Some(mut call) = self.sql.kept.call(&self.sql.pool) {
                loop {
                    let done = insert_one(call.connection().await?, &jobs[*only]).await;
                    if let Some(done) = call.answer(done) {
                        return done;
                    }
                }
            }
            let mut conn = self.sql.pool.acquire().await?;
            return insert_one(&mut conn, &jobs[*only]).await;
        }
        let chunks = enqueue_chunks(jobs, indexes);
        if let [chunk] = chunks.as_slice() {
            let mut conn = self.sql.pool.acquire().await?;
            self.insert(&mut conn, jobs, chunk, Clashes::Fail).await?;
            return Ok(());
        }
        let mut tx = self.sql.pool.begin().await?;
        for chunk in chunks {
            self.insert(&mut tx, jobs, chunk, Clashes::Fail).await?;
        }
        tx.commit().await
    }

    /// Why the jobs at `indexes` were not inserted: per index, `Duplicate` when a job with its id
    /// exists, else `Coalesced` into the live holder of its queue and unique key, else `None` (the
    /// conflict vanished before it could be read).
    pub(super) async fn conflicts(
        &self,
        tx: &mut PgConnection,
        jobs: &[NewJob],
        indexes: &[usize],
    ) -> Result<Vec<Option<Enqueued>>, StoreError> {
        let ords: Vec<i32> = (0..indexes.len() as i32).collect();
        let ids: Vec<&str> = indexes.iter().map(|&i| jobs[i].id.as_str()).collect();
        let queues: Vec<&str> = indexes.iter().map(|&i| jobs[i].queue.as_str()).collect();
        let keys: Vec<Option<&str>> = indexes.iter().map(|&i| jobs[i].unique_key.as_deref()).collect();
        let rows = sqlx::query(&format!(
            "SELECT t.ord, EXISTS (SELECT 1 FROM jobq_jobs e WHERE e.id = t.id), \
             (SELECT h.id FROM jobq_jobs h WHERE t.key IS NOT NULL AND h.queue = t.queue AND h.unique_key = t.key \
             AND h.status IN {LIVE_STATUSES} LIMIT 1) \
             FROM unnest($1::int4[], $2::text[], $3::text[], $4::text[]) AS t(ord, id, queue, key)"
        ))
        .bind(ords)
        .bind(&ids)
        .bind(queues)
        .bind(keys)
        .fetch_all(&mut *tx)
        .await
        .map_err(self.sql.fail("enqueue (reading conflicts)"))?;
        let mut out = vec![None; indexes.len()];
        for row in &rows {
            let ord = row.get::<i32, _>(0) as usize;
            let exists: bool = row.get(1);
            let holder: Option<String> = row.get(2);
            out[ord] = if exists {
                Some(Enqueued {
                    id: JobId::from_stored(ids[ord].to_string()),
                    outcome: EnqueueOutcome::Duplicate,
                })
            } else {
                holder.map(|h| Enqueued {
                    id: JobId::from_stored(h),
                    outcome: EnqueueOutcome::Coalesced,
                })
            };
        }
        Ok(out)
    }

    /// Inserts the rounds of an enqueue one after the other on `conn` and answers every job.
    pub(super) async fn enqueue_rounds(
        &self,
        conn: &mut PgConnection,
        jobs: &[NewJob],
        rounds: Vec<Vec<usize>>,
    ) -> Result<Vec<Enqueued>, StoreError> {
        let mut answers: Vec<Option<Enqueued>> = vec![None; jobs.len()];
        for round in rounds {
            for chunk in enqueue_chunks(jobs, &round) {
                let mut open: Vec<usize> = chunk.to_vec();
                for _ in 0..ENQUEUE_ROUNDS {
                    let created = self
                        .insert(conn, jobs, &open, Clashes::Skip)
                        .await
                        .map_err(self.sql.fail("enqueue"))?;
                    let refused: Vec<usize> = open
                        .iter()
                        .copied()
                        .filter(|&i| !created.contains(jobs[i].id.as_str()))
                        .collect();
                    for &i in &open {
                        if created.contains(jobs[i].id.as_str()) {
                            answers[i] = Some(Enqueued {
                                id: jobs[i].id.clone(),
                                outcome: EnqueueOutcome::Created,
                            });
                        }
                    }
                    open.clear();
                    if refused.is_empty() {
                        break;
                    }
                    for (&i, answer) in refused.iter().zip(self.conflicts(conn, jobs, &refused).await?) {
                        match answer {
                            Some(answer) => answers[i] = Some(answer),
                            // The row it clashed with changed in between (a holder finished): try again.
                            None => open.push(i),
                        }
                    }
                    if open.is_empty() {
                        break;
                    }
                }
                if !open.is_empty() {
                    return Err(StoreError::query(
                        KIND,
                        "enqueue",
                        format!(
                            "{} jobs kept clashing with jobs that changed meanwhile; try again",
                            open.len()
                        ),
                    ));
                }
            }
        }
        Ok(answers
            .into_iter()
            .map(|a| a.expect("every job of the batch was answered"))
            .collect())
    }
}

/// Splits the jobs at `indexes` into statements of at most [`ROWS_PER_STATEMENT`] rows and about
/// [`BYTES_PER_STATEMENT`] bytes of payload and meta (a single larger job still gets a statement).
pub(super) fn enqueue_chunks<'a>(jobs: &[NewJob], indexes: &'a [usize]) -> Vec<&'a [usize]> {
    batch::chunks(indexes, ROWS_PER_STATEMENT, BYTES_PER_STATEMENT, |i| {
        job_bytes(&jobs[i])
    })
}

impl PostgresStore {
    /// One job with a unique key, as a web request enqueues it: the `VALUES` insert on a kept
    /// connection, skipping a clash. True when it went in; false when its id or its key was taken,
    /// which the batch path then reads.
    pub(super) async fn insert_one_unless_taken(&self, job: &NewJob) -> Result<bool, sqlx::Error> {
        if let Some(mut call) = self.sql.kept.call(&self.sql.pool) {
            loop {
                let done = insert_one_skipping(call.connection().await?, job).await;
                if let Some(done) = call.answer(done) {
                    return done;
                }
            }
        }
        let mut conn = self.sql.pool.acquire().await?;
        insert_one_skipping(&mut conn, job).await
    }
}

/// [`insert_one`], leaving the job out when its id or its live unique key is taken: true when it
/// went in.
async fn insert_one_skipping(conn: &mut PgConnection, job: &NewJob) -> Result<bool, sqlx::Error> {
    let mut qb = insert_one_statement(job);
    qb.push(" ON CONFLICT DO NOTHING RETURNING id");
    Ok(qb.build().fetch_optional(conn).await?.is_some())
}

/// One job, the call a web request makes: a `VALUES` row plans and binds for less than the arrays
/// of a batch (`unnest`), measured 5–10 % faster a call. Fails like the batch insert when the id
/// exists.
async fn insert_one(conn: &mut PgConnection, job: &NewJob) -> Result<(), sqlx::Error> {
    insert_one_statement(job).build().execute(conn).await.map(|_| ())
}

/// [`insert_one`]'s statement.
fn insert_one_statement(job: &NewJob) -> QueryBuilder<'_, Postgres> {
    let mut qb: QueryBuilder<Postgres> = QueryBuilder::new(
        "INSERT INTO jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
         timeout_ms, created_at, expires_at) SELECT t.id, t.queue, t.job_type, t.payload::json, t.meta::json, \
         t.priority, t.max_attempts, t.run_at, t.unique_key, t.timeout_ms, t.created_at, t.expires_at FROM (",
    );
    push_new_jobs(&mut qb, [job]);
    qb.push(
        ") AS t(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, \
         created_at, expires_at)",
    );
    qb
}
