//! WAL checkpoints off the producer's path.
//!
//! In WAL mode every commit appends to the `-wal` file, and by default the connection whose commit
//! takes the log past 1,000 pages copies the log back into the database file then and there, fsync
//! included: once every few hundred one-job enqueues, one producer's call takes milliseconds instead of
//! microseconds, and on jobq's table (five b-trees a row) that was a third of a lone producer's time.
//!
//! The dedicated writer (`direct.rs`) hands that work to a thread of its own instead: SQLite calls
//! [`on_commit`] after each commit with the log's size, which past [`SIGNAL_AT`] pages wakes the
//! thread to run a passive checkpoint on its own connection (passive: it never waits for nor blocks a
//! writer or a reader). If the log still grows past [`INLINE_AT`] pages (the thread falls behind a
//! writer, or readers hold old snapshots), the committing connection checkpoints itself as before,
//! so the log stays bounded. The sqlx pool's connections keep SQLite's automatic checkpoints, and so
//! does the writer at synchronous FULL and EXTRA (see `direct.rs` for why).

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, ffi};

/// Log pages after which the checkpointer is woken: SQLite's own automatic checkpoint threshold.
pub(super) const SIGNAL_AT: c_int = 1_000;

/// Log pages after which the committing connection checkpoints itself (about 40 MB of 4 KiB pages).
pub(super) const INLINE_AT: c_int = 10_000;

/// What the commit hook needs: the way to wake the checkpointer, whose thread starts the first time
/// it is needed (a one-shot command never starts it). Boxed, and kept alive by the writer for as
/// long as the connection the hook is installed on; the thread ends when this is dropped.
pub(super) struct Checkpointer {
    path: PathBuf,
    busy_timeout: Duration,
    wake: OnceLock<SyncSender<()>>,
    /// The log's size after the last commit, as SQLite reported it.
    log_pages: AtomicI32,
}

impl Checkpointer {
    /// A checkpointer for the database at `path`.
    pub fn new(path: &Path, busy_timeout: Duration) -> Box<Checkpointer> {
        Box::new(Checkpointer {
            path: path.to_path_buf(),
            busy_timeout,
            wake: OnceLock::new(),
            log_pages: AtomicI32::new(0),
        })
    }

    /// Wakes the thread, starting it the first time.
    fn wake(&self) {
        let wake = self.wake.get_or_init(|| {
            // One waiting signal is enough: a checkpoint copies whatever the log holds when it runs.
            let (wake, woken) = mpsc::sync_channel(1);
            let (path, busy_timeout) = (self.path.clone(), self.busy_timeout);
            let spawned = std::thread::Builder::new()
                .name("jobq-sqlite-checkpoint".into())
                .spawn(move || run(&path, busy_timeout, woken));
            if let Err(e) = spawned {
                // The signals then go nowhere, and the inline threshold still bounds the log.
                tracing::warn!("SQLite checkpoints stay on the committing connection: no thread for them ({e})");
            }
            wake
        });
        match wake.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
        }
    }

    /// Replaces `connection`'s automatic checkpoints with [`on_commit`]. `self` must outlive the
    /// connection (the writer declares the connection first, so it is dropped first).
    pub fn install(&self, connection: &Connection) {
        let arg = self as *const Checkpointer as *mut c_void;
        // SAFETY: the handle is a live connection that this thread holds (the caller's `&Connection`),
        // and `arg` points at `self`, which outlives the connection (see above) and is only read.
        unsafe {
            ffi::sqlite3_wal_hook(connection.handle(), Some(on_commit), arg);
        }
    }
}

/// SQLite's WAL hook: called after every commit with the log's size in pages.
unsafe extern "C" fn on_commit(arg: *mut c_void, db: *mut ffi::sqlite3, name: *const c_char, pages: c_int) -> c_int {
    // SAFETY: `arg` is the `Checkpointer` `install` registered, alive as long as the connection.
    let checkpointer = unsafe { &*(arg as *const Checkpointer) };
    checkpointer.log_pages.store(pages, Ordering::Relaxed);
    if pages >= INLINE_AT {
        // SAFETY: SQLite passes its own live handle and the database's name; a checkpoint from the
        // hook is what SQLite's automatic checkpoints do.
        unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                db,
                name,
                ffi::SQLITE_CHECKPOINT_PASSIVE,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
    } else if pages >= SIGNAL_AT {
        checkpointer.wake();
    }
    ffi::SQLITE_OK
}

/// The checkpointer's thread: a passive checkpoint each time it is woken, until the writer is gone.
fn run(path: &Path, busy_timeout: Duration, woken: Receiver<()>) {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = match Connection::open_with_flags(path, flags).and_then(|c| {
        c.busy_timeout(busy_timeout)?;
        Ok(c)
    }) {
        Ok(connection) => connection,
        Err(e) => {
            tracing::warn!("SQLite checkpoints stay on the committing connection: cannot open the file ({e})");
            return;
        }
    };
    while woken.recv().is_ok() {
        if let Err(e) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::debug!("SQLite checkpoint: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_checkpoints_so_that_the_log_starts_over_without_the_writer_copying_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let writer = Connection::open(&path).unwrap();
        writer.pragma_update(None, "journal_mode", "WAL").unwrap();
        writer
            .execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)", [])
            .unwrap();
        let checkpointer = Checkpointer::new(&path, Duration::from_secs(5));
        checkpointer.install(&writer);
        let pages = || checkpointer.log_pages.load(Ordering::Relaxed);
        // About a page a row: the log passes SIGNAL_AT, far from INLINE_AT.
        let big = "x".repeat(3_000);
        let mut inserted = 0;
        while pages() < SIGNAL_AT + 100 {
            writer.execute("INSERT INTO t (v) VALUES (?1)", [&big]).unwrap();
            inserted += 1;
        }
        // Once the thread has copied the log, the next commit starts it over from its first page.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while pages() >= SIGNAL_AT {
            assert!(pages() < INLINE_AT, "the writer had to checkpoint itself");
            assert!(std::time::Instant::now() < deadline, "the log was never checkpointed");
            std::thread::sleep(Duration::from_millis(2));
            writer.execute("INSERT INTO t (v) VALUES ('y')", []).unwrap();
            inserted += 1;
        }
        let rows: i64 = writer.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, inserted);
        drop(writer);
        drop(checkpointer);
    }
}
