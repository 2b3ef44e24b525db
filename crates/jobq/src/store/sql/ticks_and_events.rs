//! The jobs a SQL store makes from a record of its own, written once: schedules' ticks and events
//! (see the schedule and event methods of [`crate::store::Store`]). Each is one transaction that
//! writes the record and the jobs together.
//!
//! Firing ticks is one transaction: lock the schedules' rows in name order
//! (so two workers firing overlapping batches cannot deadlock; SQLite's immediate transaction holds
//! the whole file instead), decide every tick in Rust with the rules every store shares
//! ([`crate::store::decide_tick`]), insert the jobs that are due, move each schedule's record, wake the
//! queues' workers, commit. A second worker firing the same tick waits for the first one's lock and
//! then finds the tick handled.
//!
//! Emitting events is one transaction for the whole call: the ids already recorded are read first
//! (those events are duplicates), then each new event is recorded and its jobs inserted. Two callers
//! emitting one new id at once both find it missing; the second's insert then fails on the primary
//! key, its transaction rolls back whole and runs again, and finds the event recorded. Expanding the
//! events applications stored locks the oldest waiting rows (skipping rows another worker holds),
//! inserts their jobs and marks them expanded, in one transaction.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::str::FromStr;

use super::{Exec, IDS_PER_STATEMENT, Sql, SqlRow, Stmt};
use crate::job::{JobId, JobStatus, NewJob};
use crate::store::sql::NewJobRow;
use crate::store::{
    Emit, EmitOutcome, Event, ExpandEvents, Expander, ScheduleKey, ScheduleState, SetSchedulePaused, StoreError, Tick,
    TickOutcome, decide_tick,
};
use crate::time::UnixMillis;

/// Jobs per multi-row `INSERT`: 11 values each, well under every server's limit on placeholders.
const JOBS_PER_STATEMENT: usize = 500;

/// Columns of a schedule's record as the statements below read it, the last job's status included
/// (from a join: MySQL reports a scalar subquery's text as binary).
const SCHEDULE_COLUMNS: &str = "s.name, s.last_tick, s.not_before, s.paused, s.last_job, j.status";

impl Sql {
    /// The recorded state of each schedule, in input order.
    pub async fn schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError> {
        let mut found: HashMap<String, ScheduleState> = HashMap::new();
        for chunk in keys.chunks(IDS_PER_STATEMENT) {
            let stmt = self.select_schedules(chunk, false);
            for row in self.fetch_all(&stmt, "reading schedules").await? {
                let state = schedule_from_row(&row).map_err(self.fail("reading schedules"))?;
                found.insert(state.name.clone(), state);
            }
        }
        Ok(keys.iter().map(|k| found.get(&k.name).cloned()).collect())
    }

    /// Records the schedules that have no record yet.
    pub async fn register_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError> {
        for key in keys {
            let stmt = self.insert_schedule(key, now, false);
            self.execute(&stmt, "recording a schedule").await?;
        }
        Ok(())
    }

    /// Writes schedules' records as given (see [`crate::store::Store::restore_schedules`]).
    pub async fn restore_schedules(
        &self,
        records: &[(ScheduleKey, ScheduleState)],
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        for (key, state) in records {
            let mut stmt = self.stmt(
                "INSERT INTO jobq_schedules (name, queue, last_tick, not_before, paused, last_job, updated_at) VALUES (",
            );
            stmt.bind(key.name.as_str())
                .push(", ")
                .bind(key.queue.as_str())
                .push(", ")
                .bind(state.last_tick.map(|t| t.0))
                .push(", ")
                .bind(state.not_before.0)
                .push(", ")
                .bind(i32::from(state.paused))
                .push(", ")
                .bind(state.last_job.as_ref().map(|j| j.to_string()))
                .push(", ")
                .bind(now.0)
                .push(")")
                .push(&self.dialect.upsert(
                    "name",
                    &["queue", "last_tick", "not_before", "paused", "last_job", "updated_at"],
                ));
            self.execute(&stmt, "restoring a schedule").await?;
        }
        Ok(())
    }

    /// Pauses or resumes a schedule, recording it first if needed.
    pub async fn set_schedule_paused(&self, pause: &SetSchedulePaused<'_>) -> Result<(), StoreError> {
        let SetSchedulePaused {
            key,
            paused,
            now,
            skip_missed,
        } = *pause;
        let operation = if paused {
            "pausing a schedule"
        } else {
            "resuming a schedule"
        };
        self.execute(&self.insert_schedule(key, now, paused), operation).await?;
        let mut update = self.stmt("UPDATE jobq_schedules SET paused = ");
        update.bind(i32::from(paused)).push(", updated_at = ").bind(now.0);
        if !paused && skip_missed {
            // Never backwards: a resume must not reopen ticks before an earlier start.
            update
                .push(", not_before = CASE WHEN not_before < ")
                .bind(now.0)
                .push(" THEN ")
                .bind(now.0)
                .push(" ELSE not_before END");
        }
        update.push(" WHERE name = ").bind(key.name.as_str());
        self.execute(&update, operation).await.map(drop)
    }

    /// Fires ticks: one transaction, retried when it loses a lock race.
    pub async fn fire_ticks(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError> {
        if ticks.is_empty() {
            return Ok(Vec::new());
        }
        self.retrying("firing schedule ticks", self.dialect.is_unique_violation, || {
            self.fire_ticks_once(ticks)
        })
        .await
    }

    async fn fire_ticks_once(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let names: BTreeSet<&str> = ticks.iter().map(|t| t.schedule.as_str()).collect();
        let mut states: HashMap<String, ScheduleState> = HashMap::new();
        let names: Vec<&str> = names.into_iter().collect();
        for chunk in names.chunks(IDS_PER_STATEMENT) {
            let keys: Vec<ScheduleKey> = chunk
                .iter()
                .map(|n| ScheduleKey {
                    name: n.to_string(),
                    queue: String::new(),
                })
                .collect();
            let select = self.select_schedules(&keys, true);
            for row in tx.fetch_all(&select).await? {
                let state = schedule_from_row(&row)?;
                states.insert(state.name.clone(), state);
            }
        }
        self.last_job_statuses(&mut tx, &mut states).await?;
        let before: HashMap<String, ScheduleState> = states.clone();
        let mut outcomes = Vec::with_capacity(ticks.len());
        let mut due: Vec<&NewJob> = Vec::new();
        for tick in ticks {
            let outcome = match states.get_mut(&tick.schedule) {
                None => TickOutcome::Unknown,
                Some(state) => decide_tick(state, tick),
            };
            if matches!(outcome, TickOutcome::Enqueued(_)) {
                due.push(&tick.job);
            }
            outcomes.push(outcome);
        }
        // A tick's job may exist already (its schedule's record was lost and made anew): it stays as
        // it is, and stands for the tick.
        let existing = self.existing_ids(&mut tx, &due).await?;
        for outcome in &mut outcomes {
            if matches!(outcome, TickOutcome::Enqueued(id) if existing.contains(id.as_str())) {
                *outcome = TickOutcome::AlreadyHandled;
            }
        }
        let fresh: Vec<&NewJob> = due.into_iter().filter(|j| !existing.contains(j.id.as_str())).collect();
        self.insert_all_jobs(&mut tx, &fresh).await?;
        let now = ticks.iter().map(|t| t.job.created_at).max().unwrap_or(UnixMillis(0));
        for (name, state) in &states {
            if before.get(name) == Some(state) {
                continue;
            }
            let mut update = self.stmt("UPDATE jobq_schedules SET last_tick = ");
            update
                .bind(state.last_tick.map(|t| t.0))
                .push(", last_job = ")
                .bind(state.last_job.as_ref().map(|j| j.to_string()))
                .push(", updated_at = ")
                .bind(now.0)
                .push(" WHERE name = ")
                .bind(name.as_str());
            tx.execute(&update).await?;
        }
        self.notify_inserted(&mut tx, fresh.iter().map(|j| j.queue.as_str()))
            .await?;
        tx.commit().await?;
        Ok(outcomes)
    }

    /// The ids of `jobs` that the table holds.
    async fn existing_ids(&self, conn: &mut dyn Exec, jobs: &[&NewJob]) -> Result<HashSet<String>, sqlx::Error> {
        let mut found = HashSet::new();
        for chunk in jobs.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT id FROM jobq_jobs WHERE 1 = 1");
            select.any_of("id", chunk.iter().map(|j| j.id.to_string()));
            for row in conn.fetch_all(&select).await? {
                found.insert(row.try_get_unchecked::<String>(0)?);
            }
        }
        Ok(found)
    }

    /// `SELECT` of the records of `keys` by name, locking them in name order when `lock`. A locking
    /// read leaves the last job's status out (no lock on the jobs' rows, and PostgreSQL locks no
    /// outer join's nullable side): [`SqlPool::last_job_statuses`] reads it in the same transaction.
    fn select_schedules(&self, keys: &[ScheduleKey], lock: bool) -> Stmt {
        let from = if lock {
            "SELECT s.name, s.last_tick, s.not_before, s.paused, s.last_job, NULL FROM jobq_schedules s WHERE 1 = 1"
                .to_string()
        } else {
            format!(
                "SELECT {SCHEDULE_COLUMNS} FROM jobq_schedules s LEFT JOIN jobq_jobs j ON j.id = s.last_job \
                 WHERE 1 = 1"
            )
        };
        let mut stmt = self.stmt(from);
        stmt.any_of("s.name", keys.iter().map(|k| k.name.clone()));
        if lock {
            stmt.push(" ORDER BY s.name").push(self.dialect.for_update);
        }
        stmt
    }

    /// Fills in the status of each state's last job, read on `conn`.
    async fn last_job_statuses(
        &self,
        conn: &mut dyn Exec,
        states: &mut HashMap<String, ScheduleState>,
    ) -> Result<(), sqlx::Error> {
        let ids: Vec<String> = states
            .values()
            .filter_map(|s| s.last_job.as_ref().map(|j| j.to_string()))
            .collect();
        let mut statuses: HashMap<String, JobStatus> = HashMap::new();
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT id, status FROM jobq_jobs WHERE 1 = 1");
            select.any_of("id", chunk.iter().cloned());
            for row in conn.fetch_all(&select).await? {
                let status: String = row.try_get_unchecked(1)?;
                let status = JobStatus::from_str(&status).map_err(|e| sqlx::Error::Decode(e.into()))?;
                statuses.insert(row.try_get_unchecked(0)?, status);
            }
        }
        for state in states.values_mut() {
            state.last_job_status = state.last_job.as_ref().and_then(|j| statuses.get(j.as_str()).copied());
        }
        Ok(())
    }

    /// `INSERT` of a schedule's first record, doing nothing when it has one.
    fn insert_schedule(&self, key: &ScheduleKey, now: UnixMillis, paused: bool) -> Stmt {
        let mut stmt = self.stmt(
            "INSERT INTO jobq_schedules (name, queue, last_tick, not_before, paused, last_job, updated_at) VALUES (",
        );
        stmt.bind(key.name.as_str())
            .push(", ")
            .bind(key.queue.as_str())
            .push(", NULL, ")
            .bind(now.0)
            .push(", ")
            .bind(i32::from(paused))
            .push(", NULL, ")
            .bind(now.0)
            .push(")")
            .push(&self.dialect.insert_ignoring("name"));
        stmt
    }

    /// `INSERT` of new jobs, as every enqueue path writes them ([`NewJobRow`]): one statement for
    /// up to [`JOBS_PER_STATEMENT`] jobs.
    fn insert_jobs(&self, jobs: &[&NewJob]) -> Stmt {
        let mut stmt = self.stmt(format!("{}VALUES ", super::INSERT_NEW_JOBS));
        self.push_job_rows(&mut stmt, jobs);
        stmt.keep();
        stmt
    }

    /// Appends `(…), (…)`, a row of [`super::INSERT_NEW_JOBS`]'s values per job.
    fn push_job_rows(&self, stmt: &mut Stmt, jobs: &[&NewJob]) {
        for (n, job) in jobs.iter().enumerate() {
            stmt.push(if n == 0 { "(" } else { ", (" });
            super::in_transaction::row_values(stmt, self.dialect, &NewJobRow::of(job)).push(")");
        }
    }

    /// Wakes the listeners of the queues new jobs went to, where inserting them did not already.
    async fn notify_inserted<'q>(
        &self,
        conn: &mut dyn Exec,
        queues: impl Iterator<Item = &'q str>,
    ) -> Result<(), sqlx::Error> {
        if self.dialect.inserts_notify {
            return Ok(());
        }
        self.notify_ready(conn, queues).await
    }

    /// Inserts new jobs on `conn`, a statement per [`JOBS_PER_STATEMENT`].
    pub(super) async fn insert_all_jobs(&self, conn: &mut dyn Exec, jobs: &[&NewJob]) -> Result<(), sqlx::Error> {
        for chunk in jobs.chunks(JOBS_PER_STATEMENT) {
            let insert = self.insert_jobs(chunk);
            conn.execute(&insert).await?;
        }
        Ok(())
    }

    /// Emits events in one transaction, retried when it loses a race for an id.
    pub async fn emit(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, StoreError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        if let [one] = events
            && self.dialect.writable_cte
            && !one.jobs.is_empty()
            && one.jobs.len() <= JOBS_PER_STATEMENT
        {
            match self.emit_in_one_statement(one).await {
                Ok(outcome) => return Ok(vec![outcome]),
                // A job id taken already (or a race lost): the general path sorts it out.
                Err(e) if (self.dialect.is_unique_violation)(&e) => {}
                Err(e) => return Err(self.fail("emitting events")(e)),
            }
        }
        self.retrying("emitting events", self.dialect.is_unique_violation, || {
            self.emit_once(events)
        })
        .await
    }

    /// One event and its jobs in one statement: the record's insert, which does nothing for an id
    /// recorded already, feeds the jobs' insert, which then inserts none.
    async fn emit_in_one_statement(&self, emit: &Emit) -> Result<EmitOutcome, sqlx::Error> {
        let mut stmt = self.stmt("WITH e AS (");
        self.push_event_insert(&mut stmt, &emit.event, emit.now, Some(emit.now));
        stmt.push(&self.dialect.insert_ignoring("id"))
            .push(" RETURNING id) ")
            .push(super::INSERT_NEW_JOBS)
            .push("SELECT * FROM (VALUES ");
        let jobs: Vec<&NewJob> = emit.jobs.iter().collect();
        self.push_job_rows(&mut stmt, &jobs);
        stmt.push(
            ") AS v (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, \
             created_at, expires_at) WHERE EXISTS (SELECT 1 FROM e)",
        )
        .keep();
        let done = self.connections.execute(&stmt).await?;
        Ok(if done == 0 {
            EmitOutcome::Duplicate
        } else {
            EmitOutcome::Emitted
        })
    }

    async fn emit_once(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut known: HashSet<String> = HashSet::new();
        for chunk in events.chunks(IDS_PER_STATEMENT) {
            let mut select = self.stmt("SELECT id FROM jobq_events WHERE 1 = 1");
            select.any_of("id", chunk.iter().map(|e| e.event.id.clone()));
            for row in tx.fetch_all(&select).await? {
                known.insert(row.try_get_unchecked::<String>(0)?);
            }
        }
        let mut outcomes = Vec::with_capacity(events.len());
        let mut jobs: Vec<&NewJob> = Vec::new();
        for emit in events {
            // A second event with one id in the same call is a duplicate of the first.
            if !known.insert(emit.event.id.clone()) {
                outcomes.push(EmitOutcome::Duplicate);
                continue;
            }
            let record = self.insert_event(&emit.event, emit.now, Some(emit.now));
            tx.execute(&record).await?;
            jobs.extend(emit.jobs.iter());
            outcomes.push(EmitOutcome::Emitted);
        }
        self.insert_all_jobs(&mut tx, &jobs).await?;
        self.notify_inserted(&mut tx, jobs.iter().map(|j| j.queue.as_str()))
            .await?;
        tx.commit().await?;
        Ok(outcomes)
    }

    /// Expands up to `limit` waiting events in one transaction.
    pub async fn expand_events(&self, expand: &ExpandEvents<'_>) -> Result<usize, StoreError> {
        let ExpandEvents { expander, limit, now } = *expand;
        self.retrying("expanding events", self.dialect.is_unique_violation, || {
            self.expand_once(expander, limit, now)
        })
        .await
    }

    async fn expand_once(&self, expander: &Expander, limit: usize, now: UnixMillis) -> Result<usize, sqlx::Error> {
        let mut tx = self.connections.begin(self.dialect.begin_write).await?;
        let mut select = self.stmt(
            "SELECT id, name, payload, meta FROM jobq_events WHERE expanded_at IS NULL ORDER BY created_at, id LIMIT ",
        );
        select
            .bind(limit.min(i64::MAX as usize) as i64)
            .push(self.dialect.lock_skipping);
        let rows = tx.fetch_all(&select).await?;
        if rows.is_empty() {
            return Ok(0);
        }
        let mut ids = Vec::with_capacity(rows.len());
        let mut made: Vec<NewJob> = Vec::new();
        for row in &rows {
            let event = event_from_row(row)?;
            made.extend(expander(&event, now));
            ids.push(event.id);
        }
        // A job of an event expanded before (its row lost its mark in a restore) stays as it is.
        let refs: Vec<&NewJob> = made.iter().collect();
        let existing = self.existing_ids(&mut tx, &refs).await?;
        let fresh: Vec<&NewJob> = refs.into_iter().filter(|j| !existing.contains(j.id.as_str())).collect();
        self.insert_all_jobs(&mut tx, &fresh).await?;
        for chunk in ids.chunks(IDS_PER_STATEMENT) {
            let mut mark = self.stmt("UPDATE jobq_events SET expanded_at = ");
            mark.bind(now.0)
                .push(" WHERE expanded_at IS NULL")
                .any_of("id", chunk.iter().cloned());
            tx.execute(&mark).await?;
        }
        self.notify_inserted(&mut tx, fresh.iter().map(|j| j.queue.as_str()))
            .await?;
        tx.commit().await?;
        Ok(rows.len())
    }

    /// `INSERT` of an event's record.
    fn insert_event(&self, event: &Event, now: UnixMillis, expanded_at: Option<UnixMillis>) -> Stmt {
        let mut stmt = self.stmt("");
        self.push_event_insert(&mut stmt, event, now, expanded_at);
        stmt.keep();
        stmt
    }

    /// Appends the `INSERT` of an event's record.
    fn push_event_insert(&self, stmt: &mut Stmt, event: &Event, now: UnixMillis, expanded_at: Option<UnixMillis>) {
        let (json_open, json_close) = self.dialect.json_in;
        let meta = if event.meta.is_empty() {
            "{}".to_string()
        } else {
            serde_json::to_string(&event.meta).unwrap_or_else(|_| "{}".into())
        };
        stmt.push("INSERT INTO jobq_events (id, name, payload, meta, created_at, expanded_at) VALUES (")
            .bind(event.id.as_str())
            .push(", ")
            .bind(event.name.as_str())
            .push(", ")
            .push(json_open)
            .bind(event.payload.get())
            .push(json_close)
            .push(", ")
            .push(json_open)
            .bind(meta)
            .push(json_close)
            .push(", ")
            .bind(now.0)
            .push(", ")
            .bind(expanded_at.map(|t| t.0))
            .push(")");
    }
}

/// An event from a row of (id, name, payload, meta).
fn event_from_row(row: &SqlRow) -> Result<Event, sqlx::Error> {
    let bad = |e: String| sqlx::Error::Decode(e.into());
    let payload: String = row.try_get_unchecked(2)?;
    let payload = serde_json::value::RawValue::from_string(super::decode::compact_json(payload))
        .map_err(|e| bad(format!("an event's payload: {e}")))?;
    let meta: String = row.try_get_unchecked(3)?;
    let meta: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&meta).map_err(|e| bad(format!("an event's meta: {e}")))?;
    Ok(Event {
        id: row.try_get_unchecked(0)?,
        name: row.try_get_unchecked(1)?,
        payload,
        // Meta values are text; an application's number or flag is kept as its JSON text.
        meta: meta
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect(),
    })
}

/// A schedule's record from a row of [`SCHEDULE_COLUMNS`].
fn schedule_from_row(row: &SqlRow) -> Result<ScheduleState, sqlx::Error> {
    // Text is read unchecked: MySQL flags text in a binary collation (jobq's) as binary.
    let status: Option<String> = row.try_get_unchecked(5)?;
    let last_job_status = status
        .map(|s| JobStatus::from_str(&s))
        .transpose()
        .map_err(|e| sqlx::Error::Decode(e.into()))?;
    Ok(ScheduleState {
        name: row.try_get_unchecked(0)?,
        last_tick: row.try_get::<Option<i64>>(1)?.map(UnixMillis),
        not_before: UnixMillis(row.try_get(2)?),
        paused: row.try_get::<i32>(3)? != 0,
        last_job: row.try_get_unchecked::<Option<String>>(4)?.map(JobId::from_stored),
        last_job_status,
    })
}
