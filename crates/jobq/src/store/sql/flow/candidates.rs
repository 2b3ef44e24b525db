//! A limited claim's candidates, page by page (see `flow.rs`): which ready jobs of each queue a page
//! reads, what it leaves out (the types and partitions at their limit, paused or blocked), and how
//! far past its cursor it looks, so that jobs behind a held-back backlog still start in claim order
//! without the backlog being read by every claim.

use std::collections::HashMap;

use super::Locking;
use crate::store::sql::Stmt;
use crate::store::sql::{Exec, Sql};
use crate::store::{Admission, Claim, FieldPath, Headroom, Limit, Scope, SlotKey};
use crate::time::UnixMillis;

/// Most candidates one page of a limited claim reads per queue: enough to pass over the jobs it
/// holds back without reading a whole backlog.
const CANDIDATES_CAP: u32 = 2000;
/// Most pages of candidates one limited claim reads: each after a limit filled up within the claim.
const MAX_PAGES: usize = 4;
/// Candidates read beyond what the limits are sure to admit, so that the page that fills a limit
/// usually also holds the jobs behind it that no limit holds back.
const PAGE_SLACK: u32 = 16;
/// Most full partitions of one limit that the candidates' selection names (the rest are passed over
/// one by one, as candidates).
const CLOSED_KEYS_CAP: usize = 200;
/// How far past its cursor, in ready jobs of the queue, a page that leaves some jobs out looks for
/// ones it may start (as `claim_limited.lua` scans at most so many per priority).
const SCAN_WINDOW: u32 = 1000;

impl Sql {
    /// Reads candidates in claim order, page by page, and decides each with `admission`; the ids of
    /// the admitted ones, in claim order. A page holds as many candidates as the claim still wants
    /// while the limits are sure to admit them all (see [`Admission::headroom`]); otherwise a few more
    /// than the limits are sure to admit, and when a limit filled up and turned some away, the next
    /// page leaves that limit's jobs out, so the jobs behind them still start in claim order without a
    /// long backlog of held-back jobs being read.
    pub(super) async fn admit_candidates(
        &self,
        tx: &mut dyn Exec,
        claim: &Claim,
        admission: &mut Admission<'_>,
        locking: Locking,
    ) -> Result<Vec<String>, sqlx::Error> {
        let partitioned = claim.flow.limits.iter().filter(|l| l.partition.is_some()).count();
        let mut queues: Vec<QueuePage> = claim
            .queues
            .iter()
            .map(|q| QueuePage {
                queue: q,
                after: None,
                more: true,
            })
            .collect();
        let mut taken = Vec::new();
        for _ in 0..MAX_PAGES {
            let closed = admission.closed_keys();
            let size = page_size(claim.limit - admission.admitted(), admission.headroom(), &closed);
            let mut page: Vec<CandidateRow> = Vec::new();
            for q in queues.iter_mut().filter(|q| q.more) {
                let Some(filter) = self.page_filter(claim, q.queue, &closed) else {
                    q.more = false;
                    continue;
                };
                let window_end = if filter.leaves_out() && self.dialect.row_value_ranges {
                    self.window_end(tx, claim, q).await?
                } else {
                    None
                };
                let select = self.candidates(claim, q, filter, size, locking, window_end.as_ref());
                let rows = tx.fetch_all(&select).await?;
                q.more = rows.len() >= size as usize;
                for row in rows {
                    page.push(CandidateRow {
                        id: row.try_get_unchecked(0)?,
                        job_type: row.try_get_unchecked(1)?,
                        queue: q.queue.clone(),
                        priority: row.try_get(2)?,
                        run_at: row.try_get(3)?,
                        attempt: row.try_get(4)?,
                        partitions: (5..5 + partitioned)
                            .map(|i| row.try_get_unchecked::<String>(i))
                            .collect::<Result<_, _>>()?,
                    });
                }
                if let Some(last) = page.last().filter(|c| c.queue == *q.queue) {
                    q.after = Some((last.priority, last.run_at, last.id.clone()));
                }
            }
            page.sort_by(|a, b| (a.priority, a.run_at, &a.id).cmp(&(b.priority, b.run_at, &b.id)));
            for c in &page {
                if admission.is_full() {
                    break;
                }
                if admission.admit_with(c.view(), &c.partitions) {
                    taken.push(c.id.clone());
                }
            }
            if admission.is_full() || queues.iter().all(|q| !q.more) {
                break;
            }
        }
        Ok(taken)
    }

    /// What a page of `queue`'s candidates leaves out, or `None` when nothing of the queue can start
    /// (paused, or its own limit full).
    pub(super) fn page_filter<'c>(
        &self,
        claim: &'c Claim,
        queue: &str,
        closed: &'c [SlotKey],
    ) -> Option<PageFilter<'c>> {
        let flow = &claim.flow;
        if flow.pauses.iter().any(|p| p.queue == queue && p.job_type.is_none()) {
            return None;
        }
        let mut excluded: Vec<String> = claim.exclude_types.clone();
        excluded.extend(
            flow.pauses
                .iter()
                .filter(|p| p.queue == queue)
                .filter_map(|p| p.job_type.clone()),
        );
        excluded.extend(
            flow.blocks
                .iter()
                .filter(|b| b.until > claim.now && b.partition.is_none())
                .map(|b| b.job_type.clone()),
        );
        let mut closed_partitions = Vec::new();
        for limit in &flow.limits {
            let key = limit.scope.key();
            let full: Vec<&String> = closed.iter().filter(|(s, _)| *s == key).map(|(_, p)| p).collect();
            if full.is_empty() {
                continue;
            }
            match (&limit.scope, &limit.partition) {
                (Scope::Queue(q), None) if q == queue => return None,
                (Scope::Queue(_), None) => {}
                (Scope::Type(t), None) => excluded.push(t.clone()),
                (Scope::Queue(q), Some(_)) if q != queue => {}
                (_, Some(path)) => closed_partitions.push((limit, path, full)),
            }
        }
        Some(PageFilter {
            excluded,
            closed_partitions,
        })
    }

    /// The selection of one queue's page of candidates, leaving out what `filter` says, and when it
    /// leaves something out, looking no further than the window (see [`Self::window_end`]).
    pub(super) fn candidates(
        &self,
        claim: &Claim,
        page: &QueuePage,
        filter: PageFilter<'_>,
        size: u32,
        locking: Locking,
        window_end: Option<&CandidateKey>,
    ) -> Stmt {
        let flow = &claim.flow;
        let queue = page.queue.as_str();
        let leaves_out = filter.leaves_out();
        let PageFilter {
            excluded,
            closed_partitions,
        } = filter;
        let mut s = self.stmt("SELECT j.id, j.job_type, j.priority, j.run_at, j.attempt");
        for path in flow.limits.iter().filter_map(|l| l.partition.as_ref()) {
            s.push(", COALESCE(");
            self.json_text(&mut s, path);
            s.push(", '')");
        }
        s.push(" FROM jobq_jobs AS j WHERE ");
        self.push_ready(&mut s, "j", queue, claim.now, page.after.as_ref());
        if let Some((priority, run_at, id)) = window_end {
            s.push(" AND (j.priority, j.run_at, j.id) <= (")
                .bind(i64::from(*priority))
                .push(", ")
                .bind(*run_at)
                .push(", ")
                .bind(id.clone())
                .push(")");
        }
        if leaves_out && !self.dialect.row_value_ranges {
            // The same window where a row value bounds no range: the ids of the first SCAN_WINDOW
            // ready jobs, read from the index (a literal limit, in a derived table, as MySQL asks).
            s.push(" AND j.id IN (SELECT w.id FROM (SELECT r.id FROM jobq_jobs AS r WHERE ");
            self.push_ready(&mut s, "r", queue, claim.now, page.after.as_ref());
            s.push(&format!(
                " ORDER BY r.priority, r.run_at, r.id LIMIT {SCAN_WINDOW}) AS w)"
            ));
        }
        for (limit, path, full) in closed_partitions {
            s.push(" AND NOT (");
            if let Scope::Type(t) = &limit.scope {
                s.push("j.job_type = ").bind(t.clone()).push(" AND ");
            }
            s.push("COALESCE(");
            self.json_text(&mut s, path);
            s.push(", '') IN (");
            for (i, p) in full.iter().take(CLOSED_KEYS_CAP).enumerate() {
                if i > 0 {
                    s.push(", ");
                }
                s.bind((*p).clone());
            }
            s.push("))");
        }
        if !excluded.is_empty() {
            s.push(" AND j.job_type NOT IN (");
            for (i, t) in excluded.into_iter().enumerate() {
                if i > 0 {
                    s.push(", ");
                }
                s.bind(t);
            }
            s.push(")");
        }
        s.push(" ORDER BY j.priority, j.run_at, j.id LIMIT ")
            .bind(i64::from(size));
        if locking == Locking::Yes {
            s.push(self.dialect.lock_skipping);
        }
        s
    }

    /// The claim-order key of the queue's ready job [`SCAN_WINDOW`] places past the page's cursor, if
    /// there is one: the end of the window that a page leaving some jobs out looks in. Without that
    /// bound, a backlog of held-back jobs would be read to its end by every claim (and every look)
    /// while a limit is full. It is a separate statement, read from the ready index alone, so that
    /// the candidates' own stays a plain range scan every planner gets right.
    pub(super) async fn window_end(
        &self,
        tx: &mut dyn Exec,
        claim: &Claim,
        page: &QueuePage<'_>,
    ) -> Result<Option<CandidateKey>, sqlx::Error> {
        let mut s = self.stmt("SELECT r.priority, r.run_at, r.id FROM jobq_jobs AS r WHERE ");
        self.push_ready(&mut s, "r", page.queue, claim.now, page.after.as_ref());
        s.push(&format!(
            " ORDER BY r.priority, r.run_at, r.id LIMIT 1 OFFSET {}",
            SCAN_WINDOW - 1
        ));
        let row = tx.fetch_optional(&s).await?;
        row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get_unchecked(2)?)))
            .transpose()
    }

    /// Appends the conditions of `alias`'s ready jobs of `queue` that come after `after` in claim order.
    pub(super) fn push_ready(
        &self,
        s: &mut Stmt,
        alias: &str,
        queue: &str,
        now: UnixMillis,
        after: Option<&CandidateKey>,
    ) {
        s.push(&format!("{alias}.queue = "))
            .bind(queue.to_string())
            .push(&format!(" AND {alias}.status = 'pending' AND {alias}.run_at <= "))
            .bind(now.0)
            .push(&self.dialect.unexpired(&format!("{alias}.")));
        if let Some((priority, run_at, id)) = after {
            let priority = i64::from(*priority);
            if self.dialect.row_value_ranges {
                // A row value, which the planner uses as the start of a range of the ready index
                // (the spelled-out comparison below is only a filter, so each page would read the
                // index from its start).
                s.push(&format!(" AND ({alias}.priority, {alias}.run_at, {alias}.id) > ("))
                    .bind(priority)
                    .push(", ")
                    .bind(*run_at)
                    .push(", ")
                    .bind(id.clone())
                    .push(")");
            } else {
                s.push(&format!(" AND ({alias}.priority > "))
                    .bind(priority)
                    .push(&format!(" OR ({alias}.priority = "))
                    .bind(priority)
                    .push(&format!(" AND ({alias}.run_at > "))
                    .bind(*run_at)
                    .push(&format!(" OR ({alias}.run_at = "))
                    .bind(*run_at)
                    .push(&format!(" AND {alias}.id > "))
                    .bind(id.clone())
                    .push("))))");
            }
        }
    }
}

/// A ready job's place in claim order: priority, run time, id.
pub(super) type CandidateKey = (i32, i64, String);

/// What one queue's page of candidates leaves out.
pub(super) struct PageFilter<'c> {
    /// Types at their limit, paused in the queue, blocked, or excluded by the claim.
    excluded: Vec<String>,
    /// The full partitions of each partitioned limit, with the field that names them.
    closed_partitions: Vec<(&'c Limit, &'c FieldPath, Vec<&'c String>)>,
}

impl PageFilter<'_> {
    /// Whether the page leaves some jobs out, and so may have to pass over held-back ones.
    pub(super) fn leaves_out(&self) -> bool {
        !self.excluded.is_empty() || !self.closed_partitions.is_empty()
    }
}

/// One queue's place in a limited claim's pages of candidates.
pub(super) struct QueuePage<'a> {
    queue: &'a String,
    /// The claim order key of the last candidate read; the next page starts after it.
    after: Option<CandidateKey>,
    /// Whether the last page was full, so that more candidates may follow.
    more: bool,
}

/// A candidate as the page read it: what admission needs, not the whole job.
struct CandidateRow {
    id: String,
    job_type: String,
    queue: String,
    priority: i32,
    run_at: i64,
    attempt: i32,
    partitions: Vec<String>,
}

impl CandidateRow {
    fn view(&self) -> crate::store::Candidate<'_> {
        crate::store::Candidate {
            id: &self.id,
            job_type: &self.job_type,
            queue: &self.queue,
            attempt: self.attempt.max(0) as u32,
        }
    }
}

/// How many candidates the next page reads per queue for a claim that still wants `wanted` jobs.
fn page_size(wanted: u32, headroom: Headroom, closed: &[SlotKey]) -> u32 {
    // A limit with more full partitions than the selection names has its other full ones turned away
    // one by one.
    let mut per_scope: HashMap<&str, usize> = HashMap::new();
    for (scope, _) in closed {
        *per_scope.entry(scope).or_default() += 1;
    }
    let overflowing = per_scope.values().any(|n| *n > CLOSED_KEYS_CAP);
    let size = if headroom.jobs >= wanted && !overflowing {
        wanted
    } else if headroom.bounded_by_partition || overflowing {
        // Any partition may fill after a job or two: the partitions that do are left out of the next
        // page.
        wanted.saturating_add(PAGE_SLACK)
    } else {
        headroom
            .jobs
            .saturating_add(PAGE_SLACK)
            .min(wanted.saturating_add(PAGE_SLACK))
    };
    size.clamp(1, CANDIDATES_CAP)
}
