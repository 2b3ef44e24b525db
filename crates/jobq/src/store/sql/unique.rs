//! Unique modes on the SQL stores: the enqueue of a job whose [`UniqueMode`] is not `coalesce`
//! (`replace`, `debounce`, `throttle`), written once over any connection ([`Exec`]) so that the
//! store's own enqueue and an enqueue inside an application's transaction decide alike.
//!
//! Each decision is made in the transaction that writes it, against rows it has locked:
//! - `replace` and `debounce` lock the key's live holder (`FOR UPDATE`; SQLite's transaction holds the
//!   whole database) and change it only while it has not started. A claim that took the holder first
//!   has changed its status by the time the lock is granted, and the holder is then left alone; a
//!   claim that comes second passes over the locked row or waits for it.
//! - `throttle` takes the key's row of `jobq_unique_holds` with one upsert that changes it only when
//!   its window is over (by the server's clock), then reads who holds it: two producers can never
//!   both take one window.
//! - With no holder, the job is inserted with the clash-skipping insert; a holder that appeared
//!   meanwhile (another producer's insert) makes the decision start again, now against that holder.

use super::exec::Exec;
use super::in_transaction::{SqlTables, id_taken, live_holder, row_values, skip_clashes};
use super::{Bind, Stmt, Upsert};
use crate::job::{JobId, NewJob, UniqueMode};
use crate::store::{EnqueueOutcome, Enqueued, StoreError};

/// Attempts at a decision whose holder changes under it (inserted, or finished, by another
/// producer or a worker between two statements).
const ROUNDS: usize = 8;

/// The columns of a new job with a unique mode: those of every new job, and its mode.
const INSERT_COLUMNS: &str = "(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
     timeout_ms, created_at, expires_at, unique_mode)";

/// The live holder of a key, as locked for a decision.
struct Holder {
    id: String,
    /// Whether it has not started (pending or blocked): the only holder a replace may change.
    unstarted: bool,
    created_at: i64,
}

/// Enqueues `job`, whose unique mode is not `coalesce`, on `exec` (a transaction: the store's own,
/// or an application's), with its answer. Every statement leaves the transaction usable: a clash is
/// skipped, not raised.
pub(crate) async fn enqueue(exec: &mut dyn Exec, tables: &SqlTables, job: &NewJob) -> Result<Enqueued, sqlx::Error> {
    let key = job
        .unique_key
        .as_deref()
        .expect("a job with a unique mode has a unique key (NewJob::check)");
    if id_taken(exec, tables, job.id.as_str()).await? {
        return Ok(answer(job.id.as_str(), EnqueueOutcome::Duplicate));
    }
    for _ in 0..ROUNDS {
        let decided = match job.unique_mode {
            UniqueMode::Throttle { window_ms } => throttle(exec, tables, job, key, window_ms).await?,
            UniqueMode::Replace | UniqueMode::Debounce { .. } => replace(exec, tables, job, key).await?,
            UniqueMode::Coalesce => unreachable!("coalescing jobs go in with the plain enqueue"),
        };
        if let Some(done) = decided {
            return Ok(done);
        }
    }
    Err(sqlx::Error::Protocol(format!(
        "job {}: the holder of its unique key kept changing; nothing was enqueued",
        job.id
    )))
}

/// `replace` and `debounce`: change the holder that has not started, coalesce into one that has,
/// insert when there is none. `None`: a holder appeared meanwhile; decide again.
async fn replace(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    key: &str,
) -> Result<Option<Enqueued>, sqlx::Error> {
    let Some(holder) = locked_holder(exec, tables, &job.queue, key).await? else {
        return insert(exec, tables, job).await;
    };
    if !holder.unstarted {
        return Ok(Some(answer(&holder.id, EnqueueOutcome::Coalesced)));
    }
    let (run_at, outcome) = match job.unique_mode {
        // Put off again, but never past the longest wait from the holder's first enqueue.
        UniqueMode::Debounce { max_wait_ms, .. } => {
            let latest = max_wait_ms.map_or(i64::MAX, |w| holder.created_at.saturating_add(w as i64));
            (job.run_at.0.min(latest), EnqueueOutcome::Debounced)
        }
        _ => (job.run_at.0, EnqueueOutcome::Replaced),
    };
    let d = tables.dialect;
    let mut update = Stmt::new(d, format!("UPDATE {} SET payload = ", tables.jobs));
    let (open, close) = d.json_in;
    update
        .push(open)
        .bind(job.payload.get())
        .push(close)
        .push(", meta = ")
        .push(open)
        .bind(super::NewJobRow::of(job).meta)
        .push(close)
        .push(", priority = ")
        .bind(job.priority)
        .push(", run_at = ")
        .bind(run_at)
        .push(", timeout_ms = ")
        .bind(job.timeout_ms.map(|t| t.min(i64::MAX as u64) as i64))
        .push(", expires_at = ")
        .bind(job.expires_at.map(|at| at.0))
        .push(", unique_mode = ")
        .bind(job.unique_mode.stored())
        .push(" WHERE id = ")
        .bind(holder.id.as_str())
        .keep();
    exec.execute(&update).await?;
    if let Some(notify) = d.notify_ready {
        // The holder may now be due sooner than it was: wake the queue's listeners.
        let mut wake = Stmt::new(d, notify);
        wake.binds.push(Bind::Text(job.queue.clone()));
        exec.execute(&wake).await?;
    }
    Ok(Some(answer(&holder.id, outcome)))
}

/// `throttle`: take the key's window if it is over, else answer with whoever took it. With the
/// window taken, the job is inserted, or coalesces into a live holder that outlived its own window
/// (which then holds the new window).
async fn throttle(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    key: &str,
    window_ms: u64,
) -> Result<Option<Enqueued>, sqlx::Error> {
    let d = tables.dialect;
    let now = d.now_millis;
    let holds = tables.holds();
    let mut take = Stmt::new(
        d,
        format!("INSERT INTO {holds} (queue, unique_key, holder, held_until) VALUES ("),
    );
    take.bind(job.queue.as_str())
        .push(", ")
        .bind(key)
        .push(", ")
        .bind(job.id.as_str())
        .push(&format!(", {now} + "))
        .bind(window_ms.min(i64::MAX as u64) as i64)
        .push(")");
    match d.upsert {
        Upsert::OnConflict => take.push(&format!(
            " ON CONFLICT (queue, unique_key) DO UPDATE SET holder = excluded.holder, \
             held_until = excluded.held_until WHERE {holds}.held_until <= {now}"
        )),
        // Each IF reads the row as it was: `held_until` is assigned last.
        Upsert::OnDuplicateKey => take.push(&format!(
            " ON DUPLICATE KEY UPDATE holder = IF(held_until <= {now}, VALUES(holder), holder), \
             held_until = IF(held_until <= {now}, VALUES(held_until), held_until)"
        )),
    };
    take.keep();
    exec.execute(&take).await?;
    let mut read = Stmt::new(d, format!("SELECT holder FROM {holds} WHERE queue = "));
    read.bind(job.queue.as_str())
        .push(" AND unique_key = ")
        .bind(key)
        .keep();
    let Some(row) = exec.fetch_optional(&read).await? else {
        // The retention sweep deleted the row between the two statements: take it again.
        return Ok(None);
    };
    let holder: String = row.try_get_unchecked(0)?;
    if holder != job.id.as_str() {
        return Ok(Some(answer(&holder, EnqueueOutcome::Throttled)));
    }
    let Some(done) = insert(exec, tables, job).await? else {
        return Ok(None);
    };
    if done.outcome == EnqueueOutcome::Coalesced {
        let mut point = Stmt::new(d, format!("UPDATE {holds} SET holder = "));
        point
            .bind(done.id.as_str())
            .push(" WHERE queue = ")
            .bind(job.queue.as_str())
            .push(" AND unique_key = ")
            .bind(key)
            .keep();
        exec.execute(&point).await?;
    }
    Ok(Some(done))
}

/// Inserts the job unless its key is taken: `Created`, `Coalesced` into a live holder that has
/// started (or that any mode but `replace`'s would leave alone), or `None` when the holder that
/// refused it has not started (another producer's job: the caller decides again, against it) or
/// was gone by the time it was read.
async fn insert(exec: &mut dyn Exec, tables: &SqlTables, job: &NewJob) -> Result<Option<Enqueued>, sqlx::Error> {
    let d = tables.dialect;
    let mut stmt = Stmt::new(d, format!("INSERT INTO {} {INSERT_COLUMNS} VALUES (", tables.jobs));
    row_values(&mut stmt, d, &super::NewJobRow::of(job))
        .push(", ")
        .bind(job.unique_mode.stored())
        .push(")")
        .keep();
    if skip_clashes(exec, d, &mut stmt).await? {
        return Ok(Some(answer(job.id.as_str(), EnqueueOutcome::Created)));
    }
    if id_taken(exec, tables, job.id.as_str()).await? {
        // The same job sent twice at once, by a producer that retried.
        return Ok(Some(answer(job.id.as_str(), EnqueueOutcome::Duplicate)));
    }
    let key = job.unique_key.as_deref().unwrap_or_default();
    match job.unique_mode {
        UniqueMode::Throttle { .. } => Ok(live_holder(exec, tables, &job.queue, key)
            .await?
            .map(|holder| answer(&holder, EnqueueOutcome::Coalesced))),
        _ => Ok(None),
    }
}

/// The live job of `queue` holding `key`, locked until the transaction ends. `None` also when the
/// holder found stopped holding the key before it was locked (the caller decides again).
async fn locked_holder(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    queue: &str,
    key: &str,
) -> Result<Option<Holder>, sqlx::Error> {
    let d = tables.dialect;
    let columns = "id, status, created_at, unique_key";
    let mut stmt = Stmt::new(d, format!("SELECT {columns} FROM {} WHERE queue = ", tables.jobs));
    stmt.bind(queue).push(&format!(" AND {}", d.live_key_is)).bind(key);
    if !d.locks_holder_by_id {
        stmt.push(d.for_update);
    }
    stmt.keep();
    let Some(mut row) = exec.fetch_optional(&stmt).await? else {
        return Ok(None);
    };
    if d.locks_holder_by_id {
        let id: String = row.try_get_unchecked(0)?;
        let mut lock = Stmt::new(d, format!("SELECT {columns} FROM {} WHERE id = ", tables.jobs));
        lock.bind(id).push(d.for_update).keep();
        match exec.fetch_optional(&lock).await? {
            Some(locked) => row = locked,
            None => return Ok(None),
        }
    }
    let status: String = row.try_get_unchecked(1)?;
    let held: Option<String> = row.try_get_unchecked(3)?;
    let live = matches!(status.as_str(), "pending" | "blocked" | "running" | "waiting");
    if !live || held.as_deref() != Some(key) {
        return Ok(None);
    }
    Ok(Some(Holder {
        id: row.try_get_unchecked(0)?,
        unstarted: matches!(status.as_str(), "pending" | "blocked"),
        created_at: row.try_get_unchecked(2)?,
    }))
}

fn answer(id: &str, outcome: EnqueueOutcome) -> Enqueued {
    Enqueued {
        id: JobId::from_stored(id.to_string()),
        outcome,
    }
}

impl super::Sql {
    /// Enqueues one job with a unique mode in a transaction of its own (see [`enqueue`]), tried
    /// again when it loses a race for a lock (a deadlock between two producers of one key).
    pub async fn enqueue_moded(&self, tables: &SqlTables, job: &NewJob) -> Result<Enqueued, StoreError> {
        self.retrying(
            "enqueue",
            |_| false,
            || async {
                let mut tx = self.connections.begin(self.dialect.begin_write).await?;
                let done = enqueue(&mut *tx, tables, job).await?;
                tx.commit().await?;
                Ok(done)
            },
        )
        .await
    }
}
