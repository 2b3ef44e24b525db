//! PostgreSQL's insert of whole jobs in an import: one array parameter per column
//! (`unnest($1::text[], …)`), as its enqueue sends a batch. A `VALUES` row of 22 placeholders cost the
//! server about 40 µs a job to parse and plan; the arrays cost a few.

use futures_util::future::BoxFuture;
use sqlx::{PgConnection, Postgres};

use crate::job::Job;
use crate::store::sql::{Dialect, InsertWhole, WHOLE_JOB_COLUMNS, WholeJobRow};

impl InsertWhole for Postgres {
    fn insert_whole<'c>(
        conn: &'c mut PgConnection,
        _dialect: &'static Dialect,
        jobs: &'c [&'c Job],
    ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
        Box::pin(insert_arrays(conn, jobs))
    }
}

async fn insert_arrays(conn: &mut PgConnection, jobs: &[&Job]) -> Result<(), sqlx::Error> {
    let rows: Vec<WholeJobRow> = jobs.iter().map(|j| WholeJobRow::of(j)).collect();
    let rows = rows.as_slice();
    let sql = format!(
        "INSERT INTO jobq_jobs ({WHOLE_JOB_COLUMNS}) \
         SELECT t.id, t.queue, t.job_type, t.payload::json, t.meta::json, t.priority, t.status, t.attempt, \
         t.max_attempts, t.run_at, t.unique_key, t.timeout_ms, t.progress, t.progress_message, t.result::json, \
         t.errors::jsonb, t.created_at, t.started_at, t.finished_at, t.heartbeat_at, t.worker_id, t.snoozes, \
         t.expires_at, t.unique_mode \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int4[], $7::text[], \
         $8::int4[], $9::int4[], $10::int8[], $11::text[], $12::int8[], $13::int4[], $14::text[], $15::text[], \
         $16::text[], $17::int8[], $18::int8[], $19::int8[], $20::int8[], $21::text[], $22::int4[], \
         $23::int8[], $24::text[]) \
         AS t(id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, run_at, unique_key, \
         timeout_ms, progress, progress_message, result, errors, created_at, started_at, finished_at, \
         heartbeat_at, worker_id, snoozes, expires_at, unique_mode)"
    );
    sqlx::query(&sql)
        .bind(column(rows, |r| r.id))
        .bind(column(rows, |r| r.queue))
        .bind(column(rows, |r| r.job_type))
        .bind(column(rows, |r| r.payload))
        .bind(column(rows, |r| r.meta.as_str()))
        .bind(column(rows, |r| r.priority))
        .bind(column(rows, |r| r.status))
        .bind(column(rows, |r| r.attempt))
        .bind(column(rows, |r| r.max_attempts))
        .bind(column(rows, |r| r.run_at))
        .bind(column(rows, |r| r.unique_key))
        .bind(column(rows, |r| r.timeout_ms))
        .bind(column(rows, |r| r.progress.map(|p| p as i32)))
        .bind(column(rows, |r| r.progress_message))
        .bind(column(rows, |r| r.result))
        .bind(column(rows, |r| r.errors.as_str()))
        .bind(column(rows, |r| r.created_at))
        .bind(column(rows, |r| r.started_at))
        .bind(column(rows, |r| r.finished_at))
        .bind(column(rows, |r| r.heartbeat_at))
        .bind(column(rows, |r| r.worker_id))
        .bind(column(rows, |r| r.snoozes))
        .bind(column(rows, |r| r.expires_at))
        .bind(column(rows, |r| r.unique_mode.as_deref()))
        .execute(conn)
        .await?;
    Ok(())
}

/// One column of the rows, as the array bound for it.
fn column<'r, T>(rows: &'r [WholeJobRow<'_>], value: impl Fn(&'r WholeJobRow<'_>) -> T) -> Vec<T> {
    rows.iter().map(value).collect()
}
