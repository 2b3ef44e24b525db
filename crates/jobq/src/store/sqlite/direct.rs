//! Connections of their own, run in the calling thread: the writer of the plain insert of new jobs
//! (the one statement every `Client::enqueue` of a job without a unique key comes down to) and of
//! imports, and, in a one-shot command, the reader of pages of jobs (`jobq export`, a copy's source).
//!
//! sqlx's SQLite driver runs each connection on a worker thread of its own and sends every statement
//! there over a channel, its answer coming back over another: two thread wake-ups per statement, which
//! cost a lone producer more than SQLite's own work on the row. This connection is opened
//! lazily through `rusqlite`, on the same SQLite library sqlx links, with the pragmas the pool's
//! connections get (`settings.rs`), and its statements are prepared once and cached.
//!
//! The writer must only ever be used under [`super::SqliteStore`]'s write gate: it is one more writer
//! of this process, and the gate is what keeps this process's writers from meeting in SQLite's busy
//! handler. Everything else (look-ups, the checked enqueue, transitions, other reads) stays on the sqlx
//! pool. A page of 1,000 jobs read through sqlx crossed threads row by row, which took most of an
//! export's time; the reader is kept to one-shot commands, whose calls come one at a time anyway, where
//! a pool serves many callers at once.
//!
//! The writer's commits leave the log's checkpoints to a thread of their own (`checkpoint.rs`), so a
//! producer's call never stops to copy the log into the database file.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{CachedStatement, Connection, ErrorCode, OpenFlags, ToSql, TransactionBehavior, ffi};
use tokio::runtime::{Handle, RuntimeFlavor};

use super::KIND;
use super::arrivals::{self, ARRIVAL_LIMIT};
use super::checkpoint::Checkpointer;
use super::settings::Settings;
use crate::job::NewJob;
use crate::store::error::DriverError;
use crate::store::sql::{Bind, INSERT_NEW_JOBS, NewJobRow, Stmt, placeholders};
use crate::store::url::RedactedUrl;
use crate::store::{StoreError, StoreUrl};

/// Values per row of [`INSERT_NEW_JOBS`].
const COLUMNS: usize = 12;

/// Statements kept prepared: one per batch size met, so a lone producer's one-row insert and the
/// group commit's usual sizes stay prepared.
const CACHED_STATEMENTS: usize = 32;

/// A dedicated connection and what opening it takes.
pub(super) struct DirectConnection {
    path: PathBuf,
    url: RedactedUrl,
    synchronous: &'static str,
    busy_timeout: Duration,
    /// The pool's page cache size, in KiB.
    cache_kib: u32,
    /// Whether it writes (and so starts the checkpoint thread).
    writes: bool,
    /// `None` until the first insert opens it. Declared before `checkpointer`, so it is dropped (and
    /// its commit hook gone) first.
    connection: Mutex<Option<Connection>>,
    /// Started with the connection; its commit hook points here.
    checkpointer: Mutex<Option<Box<Checkpointer>>>,
}

impl std::fmt::Debug for DirectConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectConnection")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Why a plain insert did not happen.
pub(super) enum InsertError {
    /// A job's id is stored already; nothing was written.
    IdTaken,
    /// Anything else, already mapped to meaning.
    Store(StoreError),
}

impl DirectConnection {
    /// The writer (see the module's text).
    pub fn writer(url: &StoreUrl, settings: &Settings) -> DirectConnection {
        DirectConnection::new(url, settings, true)
    }

    /// The reader (see the module's text).
    pub fn reader(url: &StoreUrl, settings: &Settings) -> DirectConnection {
        DirectConnection::new(url, settings, false)
    }

    fn new(url: &StoreUrl, settings: &Settings, writes: bool) -> DirectConnection {
        DirectConnection {
            path: url.sqlite_path(),
            url: url.redacted(),
            synchronous: settings.synchronous_name,
            busy_timeout: settings.busy_timeout,
            cache_kib: settings.cache_kib,
            writes,
            connection: Mutex::new(None),
            checkpointer: Mutex::new(None),
        }
    }

    /// Inserts a plain batch (no unique key, no id twice) without looking first: a few jobs in one
    /// statement into the arrivals table, more in one immediate transaction into `jobq_jobs` (see
    /// [`insert_plain`]). The caller holds the write gate.
    ///
    /// A few jobs go through [`DirectConnection::run_short`], more through [`DirectConnection::run`]
    /// (a large batch's insert takes a while, and an fsync or another process's lock can block it).
    pub fn insert_all(&self, jobs: &[NewJob], rows_per_statement: usize) -> Result<(), InsertError> {
        let insert = |connection: &mut Connection| insert_plain(connection, jobs, rows_per_statement);
        let written = if jobs.len() <= ARRIVAL_LIMIT {
            self.run_short(insert)
        } else {
            self.run(insert)
        }
        .map_err(InsertError::Store)?;
        written.map_err(|e| {
            if is_id_taken(&e) {
                InsertError::IdTaken
            } else {
                InsertError::Store(self.failed("enqueue", &e))
            }
        })
    }

    /// Maps an error of this connection met while doing `operation`: another process's lock held
    /// past `busy_timeout` → `Locked`, anything else → `Query`.
    pub fn failed(&self, operation: &'static str, e: &rusqlite::Error) -> StoreError {
        if is_busy_error(e) {
            StoreError::locked(KIND, operation, &self.url, self.busy_timeout, &driver_error(e))
        } else {
            StoreError::query(KIND, operation, driver_error(e))
        }
    }

    /// Runs `work` on the connection, in the calling thread; the writer's caller holds the write gate.
    /// The outer error is the connection's opening, the inner one the work's.
    ///
    /// A call can block (an fsync at synchronous=FULL, or `busy_timeout` while another process holds
    /// the write lock), so on a multi-thread runtime it tells tokio, which moves the thread's other
    /// tasks elsewhere meanwhile; a current-thread runtime (the one-shot commands) has nothing else
    /// to run and calls it as it is.
    pub fn run<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> Result<T, StoreError> {
        let run = || {
            let mut slot = self.connection.lock().unwrap_or_else(|e| e.into_inner());
            let connection = match &mut *slot {
                Some(connection) => connection,
                empty => empty.insert(self.open()?),
            };
            Ok(work(connection))
        };
        match Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(run),
            _ => run(),
        }
    }

    /// Runs short `work` (a few jobs' arrival, a look at the arrivals table) as [`DirectConnection::run`]
    /// does, but on a multi-thread runtime first in the runtime's own thread, unless it could block:
    /// with the connection open and free, at a level whose commits do not sync (NORMAL, OFF), and
    /// without waiting for another connection's lock. Where any of that fails it goes the way of
    /// `run`, in `block_in_place`. That hand-over of the thread's tasks to another thread cost 64
    /// concurrent producers a third of their rate (measured); a write refused for a lock changed
    /// nothing, so it is simply run again.
    pub fn run_short<T>(
        &self,
        work: impl Fn(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<rusqlite::Result<T>, StoreError> {
        let on_runtime_thread = matches!(
            Handle::try_current().map(|h| h.runtime_flavor()),
            Ok(RuntimeFlavor::MultiThread)
        );
        if on_runtime_thread
            && checkpoints_apart(self.synchronous)
            && let Ok(mut slot) = self.connection.try_lock()
            && let Some(connection) = slot.as_mut()
        {
            let done = super::busy::without_waiting(|| work(connection));
            if !is_busy(&done) {
                return Ok(done);
            }
        }
        self.run(work)
    }

    /// Opens the file (which the pool has opened, created and migrated already) with the pool's pragmas.
    fn open(&self) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let open = || -> rusqlite::Result<Connection> {
            let connection = Connection::open_with_flags(&self.path, flags)?;
            // SAFETY: the connection was just opened and is used by this thread only.
            unsafe { super::busy::install(connection.handle(), self.busy_timeout) };
            // The same pragmas, in the same order, as `Settings::open` gives the pool (foreign_keys is
            // sqlx's own default). No journal_mode: the pool put the file in WAL mode, which the file
            // keeps (see `settings::enter_wal`).
            connection.pragma_update(None, "foreign_keys", "ON")?;
            connection.pragma_update(None, "synchronous", self.synchronous)?;
            connection.pragma_update(None, "cache_size", -i64::from(self.cache_kib))?;
            connection.pragma_update(None, "temp_store", "memory")?;
            connection.set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
            Ok(connection)
        };
        let connection = open().map_err(|e| StoreError::unavailable(KIND, &self.url, &driver_error(&e)))?;
        if self.writes && checkpoints_apart(self.synchronous) {
            let mut checkpointer = self.checkpointer.lock().unwrap_or_else(|e| e.into_inner());
            checkpointer
                .get_or_insert_with(|| Checkpointer::new(&self.path, self.busy_timeout))
                .install(&connection);
        }
        Ok(connection)
    }
}

/// Whether this durability level checkpoints on a thread of its own. At NORMAL and OFF a commit
/// writes the log without an fsync, and the thread's checkpoint takes the only fsync off the producer's
/// path (a lone producer 1.35-1.5x faster, measured). At FULL and EXTRA every commit fsyncs the log,
/// and a checkpoint's fsync of the database file beside it slowed each commit down (0.6x, measured):
/// there the committing connection checkpoints, as SQLite does by default.
fn checkpoints_apart(synchronous: &str) -> bool {
    matches!(synchronous, "NORMAL" | "OFF")
}

/// A plain batch: up to [`ARRIVAL_LIMIT`] jobs in one statement into the arrivals table, in SQLite's
/// own implicit transaction (see `arrivals.rs`); a larger one into `jobq_jobs` in one immediate
/// transaction, which first moves what has arrived (so that an id given twice meets its first job),
/// then inserts `rows_per_statement` rows per statement.
fn insert_plain(connection: &mut Connection, jobs: &[NewJob], rows_per_statement: usize) -> rusqlite::Result<()> {
    if jobs.len() <= ARRIVAL_LIMIT {
        return insert(
            connection,
            &insert_text(arrivals::insert_arrivals_prefix(), jobs.len()),
            jobs,
        );
    }
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    arrivals::move_arrived(&tx)?;
    for chunk in jobs.chunks(rows_per_statement) {
        insert(&tx, &insert_text(INSERT_NEW_JOBS, chunk.len()), chunk)?;
    }
    tx.commit()
}

/// One multi-row `INSERT` of `jobs` (`sql`, from [`insert_text`]), from the statement cache.
fn insert(connection: &Connection, sql: &str, jobs: &[NewJob]) -> rusqlite::Result<()> {
    insert_rows(connection, sql, jobs, |job, bind| {
        let r = NewJobRow::of(job);
        let values: [&dyn ToSql; COLUMNS] = [
            &r.id,
            &r.queue,
            &r.job_type,
            &r.payload,
            &r.meta,
            &r.priority,
            &r.max_attempts,
            &r.run_at,
            &r.unique_key,
            &r.timeout_ms,
            &r.created_at,
            &r.expires_at,
        ];
        values.into_iter().try_for_each(bind)
    })
}

/// Runs the multi-row insert `sql` (from the statement cache), each row's values bound in order by
/// `row`, straight from the caller's rows: no copy of them into a statement first.
pub(super) fn insert_rows<T>(
    connection: &Connection,
    sql: &str,
    rows: &[T],
    row: impl Fn(&T, &mut dyn FnMut(&dyn ToSql) -> rusqlite::Result<()>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut statement = connection.prepare_cached(sql)?;
    let mut at = 0;
    let mut bind = |value: &dyn ToSql| {
        at += 1;
        statement.raw_bind_parameter(at, value)
    };
    for r in rows {
        row(r, &mut bind)?;
    }
    statement.raw_execute()?;
    Ok(())
}

/// `insert` ([`INSERT_NEW_JOBS`] or its arrivals twin) with `VALUES` for `rows` rows.
fn insert_text(insert: &str, rows: usize) -> String {
    let row = format!("({})", placeholders(COLUMNS));
    format!("{insert}VALUES {}", vec![row; rows].join(", "))
}

/// Runs a shared statement (`store/sql/`), answering the rows it changed.
pub(super) fn execute(connection: &Connection, stmt: &Stmt) -> rusqlite::Result<usize> {
    let mut statement = prepared(connection, stmt)?;
    statement.raw_execute()
}

/// Runs a shared select, handing each row to `each`.
pub(super) fn for_each_row(
    connection: &Connection,
    stmt: &Stmt,
    mut each: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut statement = prepared(connection, stmt)?;
    let mut rows = statement.raw_query();
    while let Some(row) = rows.next()? {
        each(row)?;
    }
    Ok(())
}

/// A shared statement prepared (from the statement cache: an import's texts repeat chunk after
/// chunk) with its values bound.
fn prepared<'c>(connection: &'c Connection, stmt: &Stmt) -> rusqlite::Result<CachedStatement<'c>> {
    let mut statement = connection.prepare_cached(stmt.sql())?;
    for (at, value) in stmt.binds().iter().enumerate() {
        let at = at + 1;
        match value {
            Bind::Text(v) => statement.raw_bind_parameter(at, v),
            Bind::Int(v) => statement.raw_bind_parameter(at, v),
            Bind::Int32(v) => statement.raw_bind_parameter(at, v),
            Bind::OptText(v) => statement.raw_bind_parameter(at, v),
            Bind::OptInt(v) => statement.raw_bind_parameter(at, v),
        }?;
    }
    Ok(statement)
}

/// Another connection held the lock.
fn is_busy<T>(done: &rusqlite::Result<T>) -> bool {
    matches!(done, Err(e) if is_busy_error(e))
}

/// See [`is_busy`].
fn is_busy_error(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::DatabaseBusy)
}

/// An id stored already: the primary key (or a unique index) refused a row, or the arrivals' trigger
/// found it in `jobq_jobs` (see `arrivals.rs`).
fn is_id_taken(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation
        && matches!(f.extended_code, ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE
            | ffi::SQLITE_CONSTRAINT_TRIGGER))
}

/// The error as the sqlx pool's connections word it (`(code: 5) database is locked`), so an error
/// reads the same whichever connection met it.
pub(super) fn driver_error(e: &rusqlite::Error) -> DriverError {
    match e {
        rusqlite::Error::SqliteFailure(f, Some(message)) => {
            DriverError::new(format!("(code: {}) {message}", f.extended_code))
        }
        rusqlite::Error::SqliteFailure(f, None) => DriverError::new(format!("(code: {}) {f}", f.extended_code)),
        other => DriverError::deepest(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_text_has_a_placeholder_per_value() {
        let text = insert_text(INSERT_NEW_JOBS, 2);
        assert!(text.starts_with(INSERT_NEW_JOBS));
        assert!(text.ends_with("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
        assert_eq!(INSERT_NEW_JOBS.matches(',').count() + 1, COLUMNS);
    }
}
