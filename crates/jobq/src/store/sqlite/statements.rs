//! The look-ups and SQL fragments SQLite's transitions use: which ids of a batch exist, who holds its
//! unique keys, the statuses of jobs whose lease no longer held, and the error-history append.

use std::collections::{HashMap, HashSet};

use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};

use super::{KIND, ROWS_PER_STATEMENT, SqliteStore};
use crate::job::{ERROR_HISTORY_CAP, JobId, JobStatus, NewJob, Progress};
use crate::store::StoreError;
use crate::store::sql::{Decoder, LIVE_STATUSES, placeholders};

/// SQL that appends `{attempt, at, error}` to the `errors` JSON array, dropping the oldest entry once
/// the history holds [`ERROR_HISTORY_CAP`] entries. `attempt`, `at` and `error` are SQL expressions.
pub(super) fn append_error(attempt: &str, at: &str, error: &str) -> String {
    let entry = format!("json_object('attempt', {attempt}, 'at', {at}, 'error', {error})");
    format!(
        "CASE WHEN json_array_length(jobq_jobs.errors) >= {ERROR_HISTORY_CAP} \
         THEN json_insert(json_remove(jobq_jobs.errors, '$[0]'), '$[#]', {entry}) \
         ELSE json_insert(jobq_jobs.errors, '$[#]', {entry}) END"
    )
}

impl SqliteStore {
    /// Runs one fenced statement, which returns the id of every job it changed, and sets `answers[i]`
    /// for each index of its `chunk` whose job it changed (a chunk names each job once), on `conn`.
    pub(super) async fn fenced<'a>(
        &self,
        conn: &mut SqliteConnection,
        mut statement: QueryBuilder<'_, Sqlite>,
        answers: &mut [bool],
        chunk: &[usize],
        id: impl Fn(usize) -> &'a str,
    ) -> Result<(), sqlx::Error> {
        let rows = statement.build().fetch_all(conn).await?;
        let returned: HashSet<&str> = rows.iter().map(|r| r.get::<&str, _>(0)).collect();
        for &i in chunk {
            answers[i] = returned.contains(id(i));
        }
        Ok(())
    }

    /// The ids of `jobs` that the table holds already.
    pub(super) async fn existing_ids(
        &self,
        tx: &mut sqlx::SqliteConnection,
        jobs: &[NewJob],
    ) -> Result<HashSet<String>, StoreError> {
        let sql = format!("SELECT id FROM jobq_jobs WHERE id IN ({})", placeholders(jobs.len()));
        let mut query = sqlx::query_scalar::<_, String>(&sql);
        for job in jobs {
            query = query.bind(job.id.as_str());
        }
        Ok(query
            .fetch_all(&mut *tx)
            .await
            .map_err(self.sql.fail("enqueue (id look-up)"))?
            .into_iter()
            .collect())
    }

    /// The live jobs holding the unique keys of `jobs`, by (queue, key).
    pub(super) async fn live_unique_keys(
        &self,
        tx: &mut sqlx::SqliteConnection,
        jobs: &[NewJob],
    ) -> Result<HashMap<(String, String), JobId>, StoreError> {
        let keyed: Vec<&NewJob> = jobs.iter().filter(|j| j.unique_key.is_some()).collect();
        if keyed.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!(
            "SELECT queue, unique_key, id FROM jobq_jobs WHERE status IN {LIVE_STATUSES} AND unique_key IN ({})",
            placeholders(keyed.len())
        );
        let mut query = sqlx::query(&sql);
        for job in &keyed {
            query = query.bind(job.unique_key.as_deref());
        }
        let rows = query
            .fetch_all(&mut *tx)
            .await
            .map_err(self.sql.fail("enqueue (unique key look-up)"))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    (r.get::<String, _>(0), r.get::<String, _>(1)),
                    JobId::from_stored(r.get(2)),
                )
            })
            .collect())
    }

    pub(super) async fn statuses_of(&self, ids: &[&JobId]) -> Result<HashMap<String, JobStatus>, StoreError> {
        let mut out = HashMap::new();
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, status FROM jobq_jobs WHERE id IN ({})",
                placeholders(chunk.len())
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(id.as_str());
            }
            for row in query
                .fetch_all(&self.sql.pool)
                .await
                .map_err(self.sql.fail("reading job statuses"))?
            {
                let id: String = row.get(0);
                let status: String = row.get(1);
                let status = Decoder {
                    kind: KIND,
                    id: id.clone(),
                }
                .status(&status)?;
                out.insert(id, status);
            }
        }
        Ok(out)
    }
}

/// Progress as the two columns hold it.
pub(super) fn split_progress(progress: Option<&Progress>) -> (Option<i64>, Option<String>) {
    match progress {
        Some(p) => (Some(i64::from(p.percent)), p.message.clone()),
        None => (None, None),
    }
}
