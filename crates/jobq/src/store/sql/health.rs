//! The reads `jobq doctor` and `jobq autoscale` make of the jobs, written once for the three SQL
//! stores: the jobs workers keep losing ([`crate::store::Store::often_rescued`]), a queue's load
//! over a window ([`crate::store::Store::queue_load`]) and the jobs finished per bucket
//! ([`crate::store::Store::throughput`]). Each is one `SELECT`; none writes.

use super::{LIVE_STATUSES, Sql, count, job_from_row};
use crate::job::{Job, JobId, JobStatus};
use crate::store::{FinishedCount, Load, OftenRescued, QueueLoad, RESCUE_ERROR, StoreError, Throughput};

impl Sql {
    /// Live and dead jobs whose history holds at least `at_least` rescues, by id.
    pub async fn often_rescued(&self, params: &OftenRescued) -> Result<Vec<Job>, StoreError> {
        // A rescue is the JSON string "worker lost" in the history's text, quotes included, so an
        // error that only mentions the words does not count (inside another string its quotes are
        // escaped). The number of times it occurs is what removing it shortens the text by.
        let needle = format!("\"{RESCUE_ERROR}\"");
        let errors = self.dialect.errors_text;
        let mut stmt = self.stmt(format!(
            "SELECT {} FROM jobq_jobs AS j WHERE j.status IN ('pending', 'running', 'waiting', 'dead') \
             AND {errors} LIKE ",
            self.dialect.job_columns
        ));
        stmt.bind(format!("%{needle}%"))
            .push(&format!(" AND LENGTH({errors}) - LENGTH(REPLACE({errors}, "))
            .bind(needle.clone())
            .push(", '')) >= ")
            .bind(i64::from(params.at_least.max(1)) * needle.len() as i64)
            .push(" ORDER BY j.id LIMIT ")
            .bind(i64::from(params.limit));
        let rows = self.fetch_all(&stmt, "finding often rescued jobs").await?;
        rows.iter().map(|r| job_from_row(r, self.dialect.kind)).collect()
    }

    /// Blocked jobs that wait for no job which has not ended (see [`crate::store::Store::stranded`]):
    /// one `SELECT` over the blocked jobs, each with a probe of its own edges.
    pub async fn stranded(&self, limit: u32) -> Result<Vec<JobId>, StoreError> {
        let mut stmt = self.stmt(format!(
            "SELECT j.id FROM jobq_jobs AS j WHERE j.status = 'blocked' AND NOT EXISTS (SELECT 1 \
             FROM jobq_deps AS d JOIN jobq_jobs AS k ON k.id = d.dependency WHERE d.dependent = j.id \
             AND k.status IN {LIVE_STATUSES}) ORDER BY j.id LIMIT "
        ));
        stmt.bind(i64::from(limit));
        let rows = self.fetch_all(&stmt, "finding stranded blocked jobs").await?;
        rows.iter()
            .map(|r| {
                r.try_get_unchecked::<String>(0)
                    .map(JobId::from_stored)
                    .map_err(self.fail("finding stranded blocked jobs"))
            })
            .collect()
    }

    /// One queue's load over `[since, now]`, in one pass over its live rows and the rows that
    /// finished in the window.
    pub async fn queue_load(&self, load: &QueueLoad) -> Result<Load, StoreError> {
        let (since, now) = (load.since.0, load.now.0);
        let (sum_open, sum_close) = self.dialect.int_sum;
        // A run that finished in the window: the status a run ends in, a start, a finish within.
        let ran = "j.status IN ('succeeded', 'dead', 'discarded') AND j.started_at IS NOT NULL \
                   AND j.finished_at >= ";
        let mut stmt = self.stmt("SELECT COUNT(CASE WHEN j.run_at >= ");
        stmt.bind(since)
            .push(" AND j.run_at <= ")
            .bind(now)
            .push(&format!(" THEN 1 END), COUNT(CASE WHEN {ran}"))
            .bind(since)
            .push(" AND j.finished_at <= ")
            .bind(now)
            .push(&format!(" THEN 1 END), {sum_open}CASE WHEN {ran}"))
            .bind(since)
            .push(" AND j.finished_at <= ")
            .bind(now)
            .push(&format!(
                " THEN j.finished_at - j.started_at ELSE 0 END{sum_close}, \
                 COUNT(CASE WHEN j.status = 'pending' AND j.run_at <= "
            ))
            .bind(now)
            .push(
                " THEN 1 END), COUNT(CASE WHEN j.status = 'running' THEN 1 END) FROM jobq_jobs AS j \
                 WHERE j.queue = ",
            )
            .bind(load.queue.clone())
            // Every row counted above is live, or finished at or after `since` (a job that came due in
            // the window cannot have finished before it): the rest of the table is left unread. Three
            // terms, each the condition of one partial index (pending, running, finished), so that a
            // planner may read the three and leave the old finished rows alone.
            .push(" AND (j.status = 'pending' OR j.status = 'running' OR j.finished_at >= ")
            .bind(since)
            .push(")");
        let rows = self.fetch_all(&stmt, "reading a queue's load").await?;
        let Some(row) = rows.first() else {
            return Ok(Load::default());
        };
        let cell = |i: usize| -> Result<u64, StoreError> {
            row.try_get::<i64>(i)
                .map(count)
                .map_err(self.fail("reading a queue's load"))
        };
        Ok(Load {
            arrived: cell(0)?,
            finished: cell(1)?,
            busy_ms: cell(2)?,
            ready: cell(3)?,
            running: cell(4)?,
        })
    }

    /// The jobs finished per queue, bucket and status over the window, in one grouped `SELECT` over
    /// the `finished_at` index's range.
    pub async fn throughput(&self, throughput: &Throughput) -> Result<Vec<FinishedCount>, StoreError> {
        let (since, until) = (throughput.since.0, throughput.until().0);
        let div = self.dialect.int_div;
        let mut stmt = self.stmt("SELECT j.queue, j.status, (j.finished_at - ");
        stmt.bind(since)
            .push(&format!("){div}"))
            .bind(throughput.bucket_ms.max(1))
            .push(", COUNT(*) FROM jobq_jobs AS j WHERE j.finished_at >= ")
            .bind(since)
            .push(" AND j.finished_at < ")
            .bind(until)
            // A replayed or retried job keeps its old finish time while it is live again.
            .push(" AND j.status IN ('succeeded', 'dead', 'discarded', 'cancelled', 'expired')");
        stmt.any_of("j.queue", throughput.queues.iter().cloned());
        // By position: the bucket's expression holds placeholders, which PostgreSQL would not match
        // with a second copy of it.
        stmt.push(" GROUP BY 1, 2, 3");
        let what = "counting finished jobs";
        let rows = self.fetch_all(&stmt, what).await?;
        let mut counts = rows
            .iter()
            .map(|row| {
                // Unchecked: MySQL's queue and status columns are binary strings (byte order).
                let queue: String = row.try_get_unchecked(0).map_err(self.fail(what))?;
                let status: String = row.try_get_unchecked(1).map_err(self.fail(what))?;
                let status = status.parse::<JobStatus>().map_err(|reason| StoreError::Corrupt {
                    kind: self.dialect.kind,
                    id: format!("counted in queue {queue}"),
                    reason,
                })?;
                Ok(FinishedCount {
                    queue,
                    bucket: u32::try_from(row.try_get::<i64>(2).map_err(self.fail(what))?).unwrap_or(u32::MAX),
                    status,
                    count: count(row.try_get::<i64>(3).map_err(self.fail(what))?),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        counts.sort();
        Ok(counts)
    }
}
