//! Wake-ups without busy polling on SQLite: learn that the database may have new work as soon as it
//! is written. [`super::sqlite::SqliteStore::subscribe`] hands these to workers; `jobq wait` watches
//! with a [`StoreWatch`] directly, since every write (a job finishing too) interests it.
//!
//! SQLite has no notifications, but every commit appends to the database's `-wal` file (or rewrites
//! the database itself in rollback-journal mode), and Linux reports those writes through inotify. A
//! [`StoreWatch`] watches the database's folder (the WAL file comes and goes with checkpoints and
//! closes, the folder stays) and signals on every write to the database's own files, from any process.
//! Reads never write, so an idle worker's empty claims do not wake it again.
//!
//! A commit's frames reach the WAL a moment before SQLite publishes the commit in its shared-memory
//! index, so a waiter woken by the write could look too early and find nothing. The watch therefore
//! signals twice: at once, and again [`SETTLE`] later (trailing edge). The same pause caps the rate of
//! wake-ups under heavy writing. Where there is nothing to watch (other stores, other systems), callers
//! fall back to polling; a watch is only ever a hint that makes polling rarer.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

use crate::store::{DynStore, StoreKind, StoreUrl, Subscription};

/// Pause between the two signals of one burst of writes.
pub const SETTLE: Duration = Duration::from_millis(2);

/// A running watch on a store's files. Dropping it stops the watch.
#[derive(Debug)]
pub struct StoreWatch {
    notify: Arc<Notify>,
    /// The watching task, aborted when this drops.
    subscription: Subscription,
}

impl StoreWatch {
    /// Starts watching the store's files when it has some: a SQLite store on Linux. `None` means there
    /// is nothing to watch and the caller should poll.
    pub async fn start(store: &DynStore) -> Option<StoreWatch> {
        if store.kind() != StoreKind::Sqlite {
            return None;
        }
        // The store's info names its file; a SQLite URL has no password to redact, so the text is the
        // path as opened.
        let info = store.info().await.ok()?;
        let path = StoreUrl::parse(&info.url).ok()?.sqlite_path();
        let path = std::path::absolute(&path).ok()?;
        StoreWatch::file(&path, Arc::new(Notify::new()))
    }

    /// Watches a database file and the journal files beside it.
    pub fn file(path: &Path, notify: Arc<Notify>) -> Option<StoreWatch> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path.file_name()?.to_os_string();
        let fd = Inotify::new(dir)
            .map_err(|e| tracing::debug!("cannot watch {}: {e}; polling instead", dir.display()))
            .ok()?;
        let task = tokio::spawn(watch(fd, name, notify.clone()));
        Some(StoreWatch {
            notify,
            subscription: Subscription::new(task),
        })
    }

    /// Hands the watch over as a store [`Subscription`]: it signals the notify it was started with
    /// until the subscription drops.
    pub fn into_subscription(self) -> Subscription {
        self.subscription
    }

    /// Resolves after the next write to the store's files (or at once if one happened since the last
    /// call). Wake-ups may be spurious: the caller checks for work.
    pub async fn changed(&self) {
        self.notify.notified().await
    }
}

async fn watch(fd: Inotify, db_name: OsString, notify: Arc<Notify>) {
    // SAFETY: `Inotify` owns its descriptor and always returns that same one from `as_raw_fd`, and
    // the AsyncFd owns the `Inotify` for as long as it is registered.
    let fd = match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
        Ok(fd) => fd,
        Err(e) => {
            tracing::debug!("cannot register the inotify descriptor: {e}; polling instead");
            return;
        }
    };
    let mut buf = vec![0u8; 8192];
    loop {
        let Ok(mut ready) = fd.readable().await else { return };
        let relevant = match ready.try_io(|inner| inner.get_ref().read(&mut buf)) {
            Ok(Ok(n)) => touches_db(&buf[..n], &db_name),
            Ok(Err(e)) => {
                tracing::debug!("inotify read failed: {e}; polling instead");
                return;
            }
            // Spurious readiness: the guard was cleared, wait again.
            Err(_would_block) => continue,
        };
        if !relevant {
            continue;
        }
        notify.notify_one();
        tokio::time::sleep(SETTLE).await;
        // Events that arrived during the pause belong to this burst: drop them and signal once more.
        while matches!(fd.get_ref().read(&mut buf), Ok(n) if n > 0) {}
        notify.notify_one();
    }
}

/// True when a buffer of inotify events names the database, its `-wal` or `-journal`, or reports a
/// queue overflow (events were lost, so assume the worst).
fn touches_db(events: &[u8], db_name: &OsStr) -> bool {
    const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
    let db = db_name.as_bytes();
    let mut rest = events;
    while rest.len() >= HEADER {
        // SAFETY: the kernel writes whole events; read_unaligned copes with the byte buffer's alignment.
        let event: libc::inotify_event = unsafe { std::ptr::read_unaligned(rest.as_ptr().cast()) };
        let len = event.len as usize;
        let name_bytes = &rest[HEADER..(HEADER + len).min(rest.len())];
        let name = name_bytes.split(|&b| b == 0).next().unwrap_or(&[]);
        if event.mask & libc::IN_Q_OVERFLOW != 0 {
            return true;
        }
        if let Some(suffix) = name.strip_prefix(db) {
            if suffix.is_empty() || suffix == b"-wal" || suffix == b"-journal" {
                return true;
            }
        }
        rest = &rest[(HEADER + len).min(rest.len())..];
    }
    false
}

/// An inotify descriptor watching one folder for writes and new files.
struct Inotify(OwnedFd);

impl Inotify {
    fn new(dir: &Path) -> std::io::Result<Inotify> {
        // SAFETY: plain system calls; the descriptor is owned by the returned value from here on.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let dir = CString::new(dir.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let mask = libc::IN_MODIFY | libc::IN_CREATE | libc::IN_MOVED_TO;
        // SAFETY: `dir` is a valid C string for the duration of the call.
        if unsafe { libc::inotify_add_watch(fd.as_raw_fd(), dir.as_ptr(), mask) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Inotify(fd))
    }

    fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: reads into a buffer we own, at most its length.
        let n = unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl AsRawFd for Inotify {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_to_the_wal_wake_the_watch_and_other_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        let watch = StoreWatch::file(&db, Arc::new(Notify::new())).unwrap();
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(100), watch.changed()).await;
        assert!(quiet.is_err(), "an unrelated file woke the watch");
        std::fs::write(dir.path().join("jobs.db-wal"), "frames").unwrap();
        tokio::time::timeout(Duration::from_secs(5), watch.changed())
            .await
            .expect("the WAL write woke the watch");
    }
}
