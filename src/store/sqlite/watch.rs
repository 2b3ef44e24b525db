//! SQLite's wake-ups: learn that the database may have new work as soon as it is written.
//!
//! SQLite has no notifications, but every commit appends to the database's `-wal` file (or rewrites
//! the database itself in rollback-journal mode), and the operating system reports those writes to a
//! file watch (inotify on Linux, FSEvents or kqueue on macOS, through the `notify` crate). A [`Watch`]
//! watches the database's folder (the WAL file comes and goes with checkpoints and closes, the folder
//! stays) and signals on every write to the database's own files, from any process. Opening or reading
//! a file is no write, so an idle worker's empty claims do not wake it again.
//!
//! A commit's frames reach the WAL a moment before SQLite publishes the commit in its shared-memory
//! index, so a waiter woken by the write could look too early and find nothing. The watch therefore
//! signals twice: at once, and again [`SETTLE`] later (trailing edge). The same pause caps the rate of
//! wake-ups under heavy writing. Where nothing can be watched, the caller polls; a watch is only ever a
//! hint that makes polling rarer.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::event::{EventKind, ModifyKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::{Notify, mpsc};

use crate::store::Subscription;

/// Pause between the two signals of one burst of writes.
pub const SETTLE: Duration = Duration::from_millis(2);

/// Starts watching a database file and the journal files beside it: `notify` is signalled after each
/// burst of writes until the subscription drops. `None` when the folder cannot be watched.
pub(super) fn watch(path: &Path, notify: Arc<Notify>) -> Option<Subscription> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name()?.to_os_string();
    // The watcher calls back on a thread of its own. The first signal of a burst is given from there,
    // waking the waiter straight away; the trailing one is left to a task on the runtime.
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
    Some(Subscription::new(runtime.spawn(signal(watcher, seen, notify))))
}

/// Gives each burst of writes its trailing signal (the watcher's callback gave the first; see the
/// module's text). Owns the watcher, which stops when the task ends.
async fn signal(_watcher: RecommendedWatcher, mut seen: mpsc::UnboundedReceiver<()>, notify: Arc<Notify>) {
    while seen.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        // Writes reported during the pause belong to this burst: drop them and signal once more.
        while seen.try_recv().is_ok() {}
        notify.notify_one();
    }
}

/// True when an event writes the database, its `-wal` or `-journal`, or says events were lost (then
/// assume the worst).
fn touches_db(event: &Event, db: &OsString) -> bool {
    if event.need_rescan() {
        return true;
    }
    let writes = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Name(_))
    );
    writes
        && event.paths.iter().any(|p| {
            let Some(name) = p.file_name() else { return false };
            let db = db.as_encoded_bytes();
            match name.as_encoded_bytes().strip_prefix(db) {
                Some(suffix) => suffix.is_empty() || suffix == b"-wal" || suffix == b"-journal",
                None => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_to_the_wal_wake_the_watch_and_other_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        let notify = Arc::new(Notify::new());
        let _watch = watch(&db, notify.clone()).unwrap();
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(100), notify.notified()).await;
        assert!(quiet.is_err(), "an unrelated file woke the watch");
        std::fs::write(dir.path().join("jobs.db-wal"), "frames").unwrap();
        tokio::time::timeout(Duration::from_secs(5), notify.notified())
            .await
            .expect("the WAL write woke the watch");
    }
}
