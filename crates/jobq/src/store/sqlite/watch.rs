//! SQLite's wake-ups: learn that the database may have new work as soon as it is written.
//!
//! SQLite has no notifications, but every commit appends to the database's `-wal` file (or rewrites
//! the database itself in rollback-journal mode), and the operating system reports those writes to a
//! file watch. On Linux the watch reads inotify on the runtime itself (the `inotify` crate's event
//! stream), so a write wakes a waiter with no thread in between; elsewhere, and where that cannot be
//! set up, the `notify` crate's portable watcher (FSEvents, kqueue, …) reports them from a thread of its
//! own. The watch covers the database's folder (the WAL file comes and goes with checkpoints and closes, the folder
//! stays) and signals on every write to the database's own files, from any process. Opening or reading
//! a file is no write, so an idle worker's empty claims do not wake it again.
//!
//! A commit's frames reach the WAL a moment before SQLite publishes the commit in its shared-memory
//! index, so a waiter woken by the write could look too early and find nothing. The watch therefore
//! signals three times: at once, again [`EARLY`] later (by then the commit is published, unless its
//! writer was held up), and again [`SETTLE`] later (trailing edge). The early second signal matters
//! since a claim's first look is one read of a page in the calling thread (SQLite's arrivals check):
//! measured, it came too early for 126 of 200 jobs, each then waiting for the trailing edge. The
//! trailing pause caps the rate of wake-ups under heavy writing. Where nothing can be watched, the
//! caller polls; a watch is only ever a hint that makes polling rarer.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::event::{EventKind, ModifyKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::{Notify, mpsc};

use crate::store::Subscription;

/// Pause between the first and the last signal of one burst of writes.
pub const SETTLE: Duration = Duration::from_millis(2);

/// Pause between the first signal of a burst and the second (see the module's text).
const EARLY: Duration = Duration::from_micros(50);

/// After a burst's first signal: signals again [`EARLY`] later, then waits out the rest of
/// [`SETTLE`] before the caller's trailing signal. The early pause runs on a thread of the blocking
/// pool, since the runtime's timer counts whole milliseconds.
async fn signal_early_then_settle(notify: &Notify) {
    let _ = tokio::task::spawn_blocking(|| std::thread::sleep(EARLY)).await;
    notify.notify_one();
    tokio::time::sleep(SETTLE - EARLY).await;
}

/// Starts watching a database file and the journal files beside it: `notify` is signalled after each
/// burst of writes until the subscription drops. `None` when the folder cannot be watched.
pub(super) fn watch(path: &Path, notify: Arc<Notify>) -> Option<Subscription> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name()?.to_os_string();
    #[cfg(target_os = "linux")]
    match native::watch(&runtime, dir, name.clone(), notify.clone()) {
        Ok(subscription) => return Some(subscription),
        Err(e) => tracing::debug!(
            "cannot read inotify for {}: {e}; using the portable watcher",
            dir.display()
        ),
    }
    portable(&runtime, dir, name, notify)
}

/// The portable watch: the `notify` crate's watcher calls back on a thread of its own. The first
/// signal of a burst is given from there, waking the waiter straight away; the trailing one is left to
/// a task on the runtime.
fn portable(runtime: &tokio::runtime::Handle, dir: &Path, name: OsString, notify: Arc<Notify>) -> Option<Subscription> {
    let (writes, seen) = mpsc::unbounded_channel();
    let first = notify.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        if event.is_ok_and(|e| touches_db(&e, &name)) {
            first.notify_one();
            let _ = writes.send(());
        }
    })
    .map_err(|e| tracing::debug!("cannot watch {}: {e}; polling instead", dir.display()))
    .ok()?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|e| tracing::debug!("cannot watch {}: {e}; polling instead", dir.display()))
        .ok()?;
    Some(Subscription::new(runtime.spawn(trailing(watcher, seen, notify))))
}

/// Gives each burst of writes the portable watcher reports its early and trailing signals (the
/// callback gave the first; see the module's text). Owns the watcher, which stops when the task ends.
async fn trailing(_watcher: RecommendedWatcher, mut seen: mpsc::UnboundedReceiver<()>, notify: Arc<Notify>) {
    while seen.recv().await.is_some() {
        signal_early_then_settle(&notify).await;
        // Writes reported during the pause belong to this burst: drop them and signal once more.
        while seen.try_recv().is_ok() {}
        notify.notify_one();
    }
}

/// Whether a file name is the database's, its `-wal` or its `-journal`.
fn is_db_file(name: &OsStr, db: &OsStr) -> bool {
    match name.as_encoded_bytes().strip_prefix(db.as_encoded_bytes()) {
        Some(suffix) => suffix.is_empty() || suffix == b"-wal" || suffix == b"-journal",
        None => false,
    }
}

#[cfg(target_os = "linux")]
mod native {
    use std::ffi::OsString;
    use std::path::Path;
    use std::sync::Arc;

    use futures_util::{FutureExt, StreamExt};
    use inotify::{EventMask, EventStream, Inotify, WatchMask};
    use tokio::sync::Notify;

    use super::is_db_file;
    use crate::store::Subscription;

    /// Watches `dir` with an inotify descriptor read by a task on `runtime`.
    pub(super) fn watch(
        runtime: &tokio::runtime::Handle,
        dir: &Path,
        name: OsString,
        notify: Arc<Notify>,
    ) -> std::io::Result<Subscription> {
        let inotify = Inotify::init()?;
        inotify
            .watches()
            .add(dir, WatchMask::MODIFY | WatchMask::CREATE | WatchMask::MOVED_TO)?;
        // The event stream registers the descriptor with the runtime it is made in.
        let _entered = runtime.enter();
        let events = inotify.into_event_stream(vec![0u8; 4096])?;
        Ok(Subscription::new(runtime.spawn(signal(events, name, notify))))
    }

    /// Signals three times per burst of writes to the database's files (see the module's text).
    async fn signal(mut events: EventStream<Vec<u8>>, db: OsString, notify: Arc<Notify>) {
        let touches_db = |event: &inotify::EventOwned| {
            // Events were lost: assume the worst.
            event.mask.contains(EventMask::Q_OVERFLOW) || event.name.as_deref().is_some_and(|n| is_db_file(n, &db))
        };
        while let Some(event) = events.next().await {
            match event {
                Ok(event) if touches_db(&event) => {}
                Ok(_) => continue,
                Err(e) => {
                    tracing::debug!("reading inotify failed: {e}; polling instead");
                    return;
                }
            }
            notify.notify_one();
            super::signal_early_then_settle(&notify).await;
            // Events that arrived during the pause belong to this burst: drop them and signal once more.
            while let Some(Some(_)) = events.next().now_or_never() {}
            notify.notify_one();
        }
    }
}

/// True when a portable watcher's event writes the database, its `-wal` or `-journal`, or says
/// events were lost (then assume the worst).
fn touches_db(event: &Event, db: &OsStr) -> bool {
    if event.need_rescan() {
        return true;
    }
    let writes = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Name(_))
    );
    writes
        && event
            .paths
            .iter()
            .any(|p| p.file_name().is_some_and(|name| is_db_file(name, db)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes an unrelated file, then the WAL, and expects only the second to signal.
    async fn wakes_on_the_wal_only(dir: &Path, notify: &Notify) {
        std::fs::write(dir.join("other.txt"), "x").unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(100), notify.notified()).await;
        assert!(quiet.is_err(), "an unrelated file woke the watch");
        std::fs::write(dir.join("jobs.db-wal"), "frames").unwrap();
        tokio::time::timeout(Duration::from_secs(5), notify.notified())
            .await
            .expect("the WAL write woke the watch");
    }

    #[tokio::test]
    async fn writes_to_the_wal_wake_the_watch_and_other_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let notify = Arc::new(Notify::new());
        let _watch = watch(&dir.path().join("jobs.db"), notify.clone()).unwrap();
        wakes_on_the_wal_only(dir.path(), &notify).await;
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn on_linux_the_watch_reads_inotify_on_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let notify = Arc::new(Notify::new());
        let runtime = tokio::runtime::Handle::current();
        let _watch = native::watch(&runtime, dir.path(), "jobs.db".into(), notify.clone()).unwrap();
        wakes_on_the_wal_only(dir.path(), &notify).await;
    }

    #[tokio::test]
    async fn the_portable_watcher_wakes_on_the_wal_too() {
        let dir = tempfile::tempdir().unwrap();
        let notify = Arc::new(Notify::new());
        let runtime = tokio::runtime::Handle::current();
        let _watch = portable(&runtime, dir.path(), "jobs.db".into(), notify.clone()).unwrap();
        wakes_on_the_wal_only(dir.path(), &notify).await;
    }
}
