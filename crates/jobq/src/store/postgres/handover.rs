//! PostgreSQL's hand-over of freed slots in one statement (see `sql/flow/handover.rs` for the rules):
//! the outcomes, the count of each limit's running jobs, the room the outcomes hand over, and the
//! lease of the queue's first ready jobs that fit in it, as one `UPDATE` with its CTEs.
//!
//! Under a binding limit, a slot's cycle (an outcome written, its replacement leased) is what bounds a
//! drain: by Little's law, `global_concurrency = 50` drains at most 50 jobs per cycle. Written as the
//! shared statements, the cycle was five round trips (begin, outcomes, count, lease, commit); here it
//! is three, and one statement is planned instead of three. Every part of the statement reads one
//! snapshot, taken before its outcomes are written, so the count of a limit's running jobs still
//! includes the jobs this statement finishes, and the room is worked out with them taken off.

use sqlx::{PgConnection, Row};

use super::{KIND, PostgresStore, ROWS_PER_STATEMENT, bind_outcomes, outcomes_update};
use crate::job::Job;
use crate::store::batch::rounds_by_id;
use crate::store::sql::in_claim_order;
use crate::store::{Claim, Finish, Lease, Scope};

impl PostgresStore {
    /// The outcomes and their replacements' lease in one statement on `conn` (the transaction's),
    /// for a claim of one queue whose scopes' limits are `limits` (each an unpartitioned
    /// concurrency limit). `None`, with nothing done, for a batch that names a job twice (its
    /// outcomes are written round by round) or is larger than one statement takes.
    pub(super) async fn hand_over_on(
        &self,
        conn: &mut PgConnection,
        finishes: &[Finish],
        claim: &Claim,
        limits: &[(Scope, u32)],
    ) -> Result<Option<(Vec<bool>, Vec<Job>)>, sqlx::Error> {
        let leases: Vec<&Lease> = finishes.iter().map(|f| &f.lease).collect();
        if finishes.len() > ROWS_PER_STATEMENT || rounds_by_id(&leases, |l| l.id.as_str()).len() > 1 {
            return Ok(None);
        }
        // In each scope, the room handed over: the running jobs this statement's outcomes took off
        // (`freed`), and no more than the limit leaves once they are off (a lowered limit binds).
        let count_in = |table: &str| {
            format!(
                "(SELECT count(*) FROM {table} WHERE CASE s.kind WHEN 'q' THEN r.queue = s.name \
                 ELSE r.job_type = s.name END"
            )
        };
        let freed = format!("{} )", count_in("done AS r"));
        let running = format!("{} AND r.status = 'running')", count_in("jobq_jobs AS r"));
        let sql = format!(
            "WITH done AS ({outcomes} RETURNING f.ord, j.job_type, j.queue), \
             s AS (SELECT * FROM unnest($18::text[], $19::text[], $20::int8[]) AS s(kind, name, most)), \
             room AS (SELECT LEAST($16::int8, COALESCE(MIN(LEAST({freed}, s.most - ({running} - {freed}))), $16::int8)) \
             AS n FROM s), \
             c AS (SELECT j.ctid FROM jobq_jobs AS j WHERE j.status = 'pending' AND j.queue = $14 \
             AND j.run_at <= $10 AND j.job_type <> ALL($15) ORDER BY j.priority, j.run_at, j.id \
             LIMIT (SELECT GREATEST(n, 0) FROM room) FOR UPDATE SKIP LOCKED), \
             l AS (UPDATE jobq_jobs AS j SET status = 'running', attempt = j.attempt + 1, worker_id = $17, \
             started_at = $10, heartbeat_at = $10, progress = NULL, progress_message = NULL \
             WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM c)) RETURNING {columns}) \
             SELECT l.*, (SELECT array_agg(ord) FROM done) AS applied FROM (SELECT 1) AS one LEFT JOIN l ON true",
            outcomes = outcomes_update(),
            columns = super::DIALECT.job_columns,
        );
        let all: Vec<usize> = (0..finishes.len()).collect();
        let ords: Vec<i32> = (0..finishes.len() as i32).collect();
        let (kinds, names, most): (Vec<&str>, Vec<&str>, Vec<i64>) = limits
            .iter()
            .map(|(scope, most)| match scope {
                Scope::Queue(q) => ("q", q.as_str(), i64::from(*most)),
                Scope::Type(t) => ("t", t.as_str(), i64::from(*most)),
            })
            .fold(
                (Vec::new(), Vec::new(), Vec::new()),
                |(mut k, mut n, mut m), (a, b, c)| {
                    k.push(a);
                    n.push(b);
                    m.push(c);
                    (k, n, m)
                },
            );
        let rows = bind_outcomes(sqlx::query(&sql).bind(ords), finishes, &leases, &all, claim.now)
            .bind(&claim.queues[0])
            .bind(&claim.exclude_types)
            .bind(i64::from(claim.limit))
            .bind(&claim.worker)
            .bind(kinds)
            .bind(names)
            .bind(most)
            .fetch_all(conn)
            .await?;
        let columns = rows.first().map_or(0, |r| r.len());
        let mut applied = vec![false; finishes.len()];
        if let Some(first) = rows.first() {
            let ords: Option<Vec<i32>> = first.try_get(columns - 1)?;
            for ord in ords.unwrap_or_default() {
                applied[ord as usize] = true;
            }
        }
        let leased: Vec<_> = rows
            .into_iter()
            .filter(|r| r.try_get::<Option<String>, _>(0).ok().flatten().is_some())
            .collect();
        let jobs = in_claim_order(&leased, KIND).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        Ok(Some((applied, jobs)))
    }
}
