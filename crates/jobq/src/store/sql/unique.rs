//! Unique modes on the SQL stores: the enqueue of a job whose [`UniqueMode`] is not `coalesce`
//! (`replace`, `keep-last`, `debounce`, `throttle`), written once over any connection ([`Exec`]) so
//! that the store's own enqueue and an enqueue inside an application's transaction decide alike.
//!
//! Each decision is made by the statement that writes it:
//! - `replace`, `keep-last` and `debounce` update the key's live holder only while it is still
//!   pending or blocked (the row's lock makes a claim that took it first, or comes second, see the
//!   other's change), or insert the job only while no live job holds the key (the unique index of
//!   live keys); on SQLite and PostgreSQL the two are first tried as one upsert. A holder that
//!   changed since it was read makes the decision start again.
//! - A job that queues behind a running holder (`keep-last`, `cancel-running`, or `debounce` with
//!   `queue-behind`) takes the key from it with an update that holds only while it still runs (the row's lock
//!   orders it with the holder's end), and is inserted `blocked` with an edge `finish` to it, in one
//!   transaction: the holder's end releases it as any dependency's end releases its dependents, so
//!   the two never run at once.
//! - `throttle` takes the key's row of `jobq_unique_holds` with one upsert that changes it only when
//!   its window is over (by the server's clock), then reads who holds it, and inserts the job only
//!   under its own id, all in one transaction (on PostgreSQL one statement): two producers can
//!   never both take one window.
//! - With no holder, the job is inserted with the clash-skipping insert; a holder that appeared
//!   meanwhile (another producer's insert) makes the decision start again, now against that holder.

use super::exec::Exec;
use super::in_transaction::{SqlTables, id_taken, live_holder, row_values, skip_clashes};
use super::{Bind, Dialect, LIVE_STATUSES, Stmt, Upsert};
use crate::job::{JobId, NewJob, UniqueMode};
use crate::store::{EnqueueOutcome, Enqueued, StoreError};

/// Attempts at a decision whose holder changes under it (inserted, or finished, by another
/// producer or a worker between two statements).
const ROUNDS: usize = 8;

/// The columns of a new job with a unique mode: those of every new job, and its mode.
const INSERT_COLUMNS: &str = "(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
     timeout_ms, created_at, expires_at, unique_mode)";

/// [`INSERT_COLUMNS`], and those of a job created waiting behind a running one.
const BEHIND_COLUMNS: &str = "(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, \
     timeout_ms, created_at, expires_at, unique_mode, status, waits, waiting_for)";

/// The live holder of a key, as read for a decision.
struct Holder {
    id: String,
    /// Whether it has not started (pending or blocked): the only holder a replace may change.
    unstarted: bool,
    created_at: i64,
}

/// Whether [`enqueue`] may queue a job behind a running holder, which takes a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behind {
    /// `exec` is a transaction: queue it there.
    InThisTransaction,
    /// `exec` is a connection: answer `None` instead, for the caller to start again in one.
    NotHere,
}

/// Enqueues `job`, whose unique mode is not `coalesce`, on `exec` (a connection, or a transaction:
/// the store's own for a throttle, or an application's), with its answer; `None` when the job is
/// to queue behind a running holder and `behind` says that cannot be done on `exec`. Every
/// statement leaves a transaction usable: a clash is skipped, not raised.
pub(crate) async fn enqueue(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    behind: Behind,
) -> Result<Option<Enqueued>, sqlx::Error> {
    let key = job
        .unique_key
        .as_deref()
        .expect("a job with a unique mode has a unique key (NewJob::check)");
    for _ in 0..ROUNDS {
        let decided = match job.unique_mode {
            UniqueMode::Throttle { window_ms } => {
                if id_taken(exec, tables, job.id.as_str()).await? {
                    return Ok(Some(answer(job.id.as_str(), EnqueueOutcome::Duplicate)));
                }
                throttle(exec, tables, job, key, window_ms).await?.map(Decided::Done)
            }
            UniqueMode::Replace | UniqueMode::KeepLast | UniqueMode::CancelRunning | UniqueMode::Debounce { .. } => {
                replace(exec, tables, job, key, behind).await?
            }
            UniqueMode::Coalesce => unreachable!("coalescing jobs go in with the plain enqueue"),
        };
        match decided {
            Some(Decided::Done(done)) => return Ok(Some(done)),
            Some(Decided::NeedsTransaction) => return Ok(None),
            None => {}
        }
    }
    Err(sqlx::Error::Protocol(format!(
        "job {}: the holder of its unique key kept changing; nothing was enqueued",
        job.id
    )))
}

/// What a round of [`enqueue`] decided.
enum Decided {
    Done(Enqueued),
    /// The job is to queue behind a running holder, which `exec` cannot do ([`Behind::NotHere`]).
    NeedsTransaction,
}

/// `replace`, `keep-last`, `cancel-running` and `debounce`: change the holder that has not started,
/// coalesce into (or queue behind) one that has, insert when there is none. The decision is the
/// statement that writes it: the update changes the holder only while it is still pending or
/// blocked (a claim that took it meanwhile leaves it unchanged), the insert only while no live job
/// holds the key. `None`: either found the key's
/// holder changed since it was read; decide again.
async fn replace(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    key: &str,
    behind: Behind,
) -> Result<Option<Decided>, sqlx::Error> {
    let (holder, id_taken) = holder_and_id(exec, tables, job, key).await?;
    if id_taken {
        return Ok(Some(Decided::Done(answer(job.id.as_str(), EnqueueOutcome::Duplicate))));
    }
    let Some(holder) = holder else {
        return Ok(insert(exec, tables, job).await?.map(Decided::Done));
    };
    if !holder.unstarted {
        return Ok(match (job.unique_mode.queues_behind(), behind) {
            (true, Behind::InThisTransaction) => queue_behind(exec, tables, job, key, &holder.id)
                .await?
                .map(Decided::Done),
            (true, Behind::NotHere) => Some(Decided::NeedsTransaction),
            (false, _) => Some(Decided::Done(answer(&holder.id, EnqueueOutcome::Coalesced))),
        });
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
        .push(" AND status IN ('blocked', 'pending')")
        .keep();
    if exec.execute(&update).await? == 0 {
        return Ok(None);
    }
    if let Some(notify) = d.notify_ready {
        // The holder may now be due sooner than it was: wake the queue's listeners.
        let mut wake = Stmt::new(d, notify);
        wake.binds.push(Bind::Text(job.queue.clone()));
        exec.execute(&wake).await?;
    }
    Ok(Some(Decided::Done(answer(&holder.id, outcome))))
}

/// Queues `job` behind `holder`, which has started: the holder gives up the key (keeping it in
/// `yielded_key`, for what it shows; under `cancel-running` it is also asked to stop,
/// `cancel_requested`) only while it is still running or waiting, which locks its row, so that its
/// end, which writes that row, comes after this and finds the edge; then the job is inserted
/// `blocked`, holding the key, with an edge `finish` to the holder, which counts it.
/// Runs in a transaction (the store's own, or the application's). `None`: the holder ended or
/// stopped running meanwhile, or another job took the key it gave up; decide again.
async fn queue_behind(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    key: &str,
    holder: &str,
) -> Result<Option<Enqueued>, sqlx::Error> {
    let d = tables.dialect;
    let jobs = &tables.jobs;
    // MySQL assigns in order, from the values already assigned: the key is copied before it goes.
    // Under `cancel-running` the holder is also asked to stop: its heartbeat tells its worker.
    let cancels = job.unique_mode == UniqueMode::CancelRunning;
    let mut give_up = Stmt::new(
        d,
        format!(
            "UPDATE {jobs} SET yielded_key = unique_key, unique_key = NULL{} WHERE id = ",
            if cancels { ", cancel_requested = TRUE" } else { "" }
        ),
    );
    give_up
        .bind(holder)
        .push(" AND unique_key = ")
        .bind(key)
        .push(" AND status IN ('running', 'waiting')")
        .keep();
    if exec.execute(&give_up).await? == 0 {
        return Ok(None);
    }
    let mut insert = Stmt::new(d, format!("INSERT INTO {jobs} {BEHIND_COLUMNS} VALUES ("));
    moded_row(&mut insert, d, job).push(", 'blocked', TRUE, 1)").keep();
    if !skip_clashes(exec, d, &mut insert).await? {
        return Ok(None);
    }
    let mut edge = Stmt::new(
        d,
        format!(
            "INSERT INTO {} (dependency, dependent, rule, resolved) VALUES (",
            tables.deps()
        ),
    );
    edge.bind(holder)
        .push(", ")
        .bind(job.id.as_str())
        .push(", 'finish', NULL)")
        .keep();
    exec.execute(&edge).await?;
    let mut count = Stmt::new(d, format!("UPDATE {jobs} SET dependents = dependents + 1 WHERE id = "));
    count.bind(holder).keep();
    exec.execute(&count).await?;
    let outcome = match cancels {
        true => EnqueueOutcome::CancelledPrevious,
        false => EnqueueOutcome::QueuedBehind,
    };
    Ok(Some(answer(job.id.as_str(), outcome)))
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
    let mut take = Stmt::new(d, "");
    take_window(&mut take, tables, job, window_ms).push(")");
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
        // The expiry sweep deleted the row between the two statements: take it again.
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
    moded_row(&mut stmt, d, job).push(")").keep();
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

/// A replace or debounce as one statement (SQLite, PostgreSQL): insert the job, or, when a live job
/// holds its key, update that holder if it has not started, handing back the id of the row written.
/// The conflict is judged on the partial unique index of live keys, whose row the statement locks:
/// a claim that took the holder first has made it `running`, and the update's condition then leaves
/// it alone (no row comes back). An id that exists fails the statement (a unique violation), or,
/// when it is the holder's own, updates nothing.
fn upsert(tables: &SqlTables, job: &NewJob) -> Stmt {
    let d = tables.dialect;
    let jobs = &tables.jobs;
    let mut stmt = Stmt::new(d, format!("INSERT INTO {jobs} {INSERT_COLUMNS} VALUES ("));
    moded_row(&mut stmt, d, job).push(&format!(
        ") ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND status IN {LIVE_STATUSES} \
             DO UPDATE SET payload = excluded.payload, meta = excluded.meta, priority = excluded.priority, \
             timeout_ms = excluded.timeout_ms, expires_at = excluded.expires_at, \
             unique_mode = excluded.unique_mode, run_at = "
    ));
    match job.unique_mode.max_wait_ms() {
        // Put off again, but never past the longest wait from the holder's first enqueue.
        Some(max_wait) => {
            let latest = format!("{jobs}.created_at + {}", max_wait.min(i64::MAX as u64));
            stmt.push(&format!(
                "CASE WHEN excluded.run_at < {latest} THEN excluded.run_at ELSE {latest} END"
            ))
        }
        None => stmt.push("excluded.run_at"),
    };
    // The holder being this very job (a producer that sent it again) is a duplicate, not a replace.
    stmt.push(&format!(
        " WHERE {jobs}.status IN ('blocked', 'pending') AND {jobs}.id <> excluded.id RETURNING id"
    ))
    .keep();
    stmt
}

/// A throttle as one statement (PostgreSQL's data-modifying `WITH`): take the key's window if it is
/// over (the upsert locks the window's row and always hands back who holds it now), and insert the
/// job only under the id that holds it. Answers one row: the window's holder and the id created.
fn throttle_in_one(tables: &SqlTables, job: &NewJob, window_ms: u64) -> Stmt {
    let d = tables.dialect;
    let (holds, jobs, now) = (tables.holds(), &tables.jobs, d.now_millis);
    let over = format!("{holds}.held_until <= {now}");
    let mut stmt = Stmt::new(d, "WITH hold AS (");
    take_window(&mut stmt, tables, job, window_ms).push(&format!(
        ") ON CONFLICT (queue, unique_key) DO UPDATE SET \
             holder = CASE WHEN {over} THEN excluded.holder ELSE {holds}.holder END, \
             held_until = CASE WHEN {over} THEN excluded.held_until ELSE {holds}.held_until END \
             RETURNING holder), job AS (INSERT INTO {jobs} {INSERT_COLUMNS} SELECT "
    ));
    moded_row(&mut stmt, d, job)
        .push(" WHERE EXISTS (SELECT 1 FROM hold WHERE holder = ")
        .bind(job.id.as_str())
        .push(") ON CONFLICT DO NOTHING RETURNING id) SELECT (SELECT holder FROM hold), (SELECT id FROM job)")
        .keep();
    stmt
}

/// The values of the job's row with its mode, in [`INSERT_COLUMNS`]'s order.
fn moded_row<'s>(stmt: &'s mut Stmt, d: &Dialect, job: &NewJob) -> &'s mut Stmt {
    row_values(stmt, d, &super::NewJobRow::of(job))
        .push(", ")
        .bind(job.unique_mode.stored())
}

/// `INSERT INTO jobq_unique_holds … VALUES (` the job's queue, key and id, and its window's end by
/// the server's clock, without the closing parenthesis (what follows it differs).
fn take_window<'s>(stmt: &'s mut Stmt, tables: &SqlTables, job: &NewJob, window_ms: u64) -> &'s mut Stmt {
    let now = tables.dialect.now_millis;
    stmt.push(&format!(
        "INSERT INTO {} (queue, unique_key, holder, held_until) VALUES (",
        tables.holds()
    ))
    .bind(job.queue.as_str())
    .push(", ")
    .bind(job.unique_key.as_deref().unwrap_or_default())
    .push(", ")
    .bind(job.id.as_str())
    .push(&format!(", {now} + "))
    .bind(window_ms.min(i64::MAX as u64) as i64)
}

/// The live job of the job's queue holding `key`, and whether a job with the job's own id exists
/// (SQLite: stored or arrived), read together.
async fn holder_and_id(
    exec: &mut dyn Exec,
    tables: &SqlTables,
    job: &NewJob,
    key: &str,
) -> Result<(Option<Holder>, bool), sqlx::Error> {
    let d = tables.dialect;
    let jobs = &tables.jobs;
    let mut stmt = Stmt::new(d, format!("SELECT id, status, created_at FROM {jobs} WHERE queue = "));
    stmt.bind(job.queue.as_str())
        .push(&format!(" AND {}", d.live_key_is))
        .bind(key)
        .push(&format!(" UNION ALL SELECT id, 'taken', 0 FROM {jobs} WHERE id = "))
        .bind(job.id.as_str());
    if let Some(arrivals) = &tables.arrivals {
        stmt.push(&format!(" UNION ALL SELECT id, 'taken', 0 FROM {arrivals} WHERE id = "))
            .bind(job.id.as_str());
    }
    stmt.keep();
    let mut holder = None;
    let mut taken = false;
    for row in exec.fetch_all(&stmt).await? {
        let status: String = row.try_get_unchecked(1)?;
        if status == "taken" {
            taken = true;
            continue;
        }
        holder = Some(Holder {
            id: row.try_get_unchecked(0)?,
            unstarted: matches!(status.as_str(), "pending" | "blocked"),
            created_at: row.try_get_unchecked(2)?,
        });
    }
    Ok((holder, taken))
}

fn answer(id: &str, outcome: EnqueueOutcome) -> Enqueued {
    Enqueued {
        id: JobId::from_stored(id.to_string()),
        outcome,
    }
}

impl super::Sql {
    /// Enqueues one job with a unique mode: a replace, keep-last or debounce first as one upsert
    /// where the database hands back the row it wrote ([`upsert`]), and otherwise (a holder that has
    /// started, an id that exists, MySQL, a throttle) by [`enqueue`] on a connection; a throttle, or
    /// a job found to queue behind a running holder, in a transaction of its own, tried again when it
    /// loses a race for a lock (a deadlock between two producers of one key).
    pub async fn enqueue_moded(&self, tables: &SqlTables, job: &NewJob) -> Result<Enqueued, StoreError> {
        if self.dialect.update_returning
            && matches!(
                job.unique_mode,
                UniqueMode::Replace | UniqueMode::KeepLast | UniqueMode::CancelRunning | UniqueMode::Debounce { .. }
            )
        {
            match self.connections.fetch_all_kept(&upsert(tables, job)).await {
                Ok(rows) => {
                    if let Some(row) = rows.first() {
                        let id: String = row.try_get_unchecked(0).map_err(self.fail("enqueue"))?;
                        let outcome = if id == job.id.as_str() {
                            EnqueueOutcome::Created
                        } else if job.unique_mode.debounce_ms().is_some() {
                            EnqueueOutcome::Debounced
                        } else {
                            EnqueueOutcome::Replaced
                        };
                        return Ok(answer(&id, outcome));
                    }
                }
                // The job's id is taken: the transaction below answers `duplicate`.
                Err(e) if (self.dialect.is_unique_violation)(&e) => {}
                Err(e) => return Err(self.fail("enqueue")(e)),
            }
        }
        if let (true, UniqueMode::Throttle { window_ms }) = (self.dialect.writable_cte, job.unique_mode) {
            let rows = self
                .connections
                .fetch_all_kept(&throttle_in_one(tables, job, window_ms))
                .await
                .map_err(self.fail("enqueue"))?;
            if let Some(row) = rows.first() {
                let holder: Option<String> = row.try_get_unchecked(0).map_err(self.fail("enqueue"))?;
                let created: Option<String> = row.try_get_unchecked(1).map_err(self.fail("enqueue"))?;
                match (holder, created) {
                    (_, Some(id)) => return Ok(answer(&id, EnqueueOutcome::Created)),
                    (Some(holder), None) if holder != job.id.as_str() => {
                        return Ok(answer(&holder, EnqueueOutcome::Throttled));
                    }
                    // The window is this job's, but its id or a live holder refused it: the
                    // transaction below answers, and points the window at the holder.
                    _ => {}
                }
            }
        }
        if !matches!(job.unique_mode, UniqueMode::Throttle { .. }) {
            // Each statement of a replace decides by itself (see `replace`): no transaction to hold,
            // unless the job is to queue behind a running holder. A statement that loses a lock race
            // to a claim (a MySQL deadlock) wrote nothing: the decision is made again.
            let decided = self
                .retrying(
                    "enqueue",
                    |_| false,
                    || async {
                        let mut conn = self.connections.acquire().await?;
                        enqueue(&mut *conn, tables, job, Behind::NotHere).await
                    },
                )
                .await?;
            if let Some(done) = decided {
                return Ok(done);
            }
        }
        // The window and the job are written together, or neither; so are a job queued behind a
        // running holder, its edge, and the key the holder gave up.
        self.retrying(
            "enqueue",
            |_| false,
            || async {
                let mut tx = self.connections.begin(self.dialect.begin_write).await?;
                let done = enqueue(&mut *tx, tables, job, Behind::InThisTransaction).await?;
                tx.commit().await?;
                Ok(done.expect("a transaction may queue a job behind a running holder"))
            },
        )
        .await
    }
}
