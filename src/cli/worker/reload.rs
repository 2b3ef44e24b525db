//! Reloading `jobq worker`'s config while it runs: on SIGHUP, and with `--reload-on-change` when the
//! config file changes on disk. This reads and watches the file and logs the outcome; what a reload
//! changes, and that running jobs keep what they started with, is the library's
//! ([`jobq::worker::WorkerHandle::reload`]).
//!
//! A file that does not load is refused with one error line and the worker keeps what it has. A
//! file's settings that a reload cannot apply (the store URL, queues, heartbeat…) get one warning
//! naming them. Nothing here stops the worker: a reload that fails is only a log line.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::signal::unix::Signal;
use tokio::sync::mpsc;

use super::{SettingFlags, check_handlers};
use crate::config::{Config, Overrides, UrlSource};
use jobq::worker::{Reload, WorkerHandle};

/// Reloads the config into the running worker on SIGHUP and on changes to the file.
pub(super) struct Reloader {
    /// The config the worker started with: its store URL is the one it keeps.
    running: Config,
    flags: SettingFlags,
    handle: WorkerHandle,
}

/// How long the config file must stay quiet before a change is reloaded: saving a file is often
/// several events (truncate, write, rename, chmod), and an editor's save must be one reload.
const SETTLE: Duration = Duration::from_millis(150);

impl Reloader {
    pub(super) fn new(running: Config, flags: SettingFlags, handle: WorkerHandle) -> Reloader {
        Reloader { running, flags, handle }
    }

    /// Reloads on every SIGHUP and every settled change of the file (when watched), until aborted.
    pub(super) async fn run(self, mut hangups: Signal, mut changes: Option<FileChanges>) {
        loop {
            let cause = tokio::select! {
                _ = hangups.recv() => "SIGHUP",
                () = settled(&mut changes) => "config file changed",
            };
            self.reload(cause);
        }
    }

    /// Reads the config again and hands it to the worker; one log line says what changed or why the
    /// file was refused, and one more, when needed, which changes wait for a restart.
    fn reload(&self, cause: &str) {
        let reloaded = self.load().and_then(|(config, reload)| {
            let report = self.handle.reload(reload)?;
            Ok((config, report))
        });
        let (config, mut report) = match reloaded {
            Ok(done) => done,
            Err(e) => {
                // One line, even for a parser's message that spans several.
                let problem: Vec<String> = format!("{e:#}").lines().map(|l| l.trim().to_string()).collect();
                let problem = problem.join(" ");
                tracing::error!(
                    cause,
                    "config not reloaded, the worker keeps its current one: {problem}"
                );
                return;
            }
        };
        if config.url != self.running.url {
            report.needs_restart.insert(0, "url".into());
        }
        tracing::info!(cause, "config reloaded: {report}");
        if !report.needs_restart.is_empty() {
            tracing::warn!(
                "config reloaded without its changes to {}: {} a restart",
                report.needs_restart.join(", "),
                if report.needs_restart.len() == 1 {
                    "it needs"
                } else {
                    "they need"
                }
            );
        }
    }

    /// The config file read the way the worker read it at start, and turned into a reload.
    fn load(&self) -> anyhow::Result<(Config, Reload)> {
        let config = self.flags.overlay(Config::load(&reload_overrides(&self.running))?)?;
        check_handlers(&config)?;
        let reload = config.reload()?.settings(&self.flags.apply(&config));
        Ok((config, reload))
    }
}

/// The overrides that resolve the same file and URL as at start. `--url` and `--config` are not kept
/// past parsing, but the config says where its file and URL came from: the same file again, and a
/// URL from `--url` passed again (one from `JOBQ_URL` is read from the environment again).
fn reload_overrides(running: &Config) -> Overrides {
    Overrides {
        url: (running.url_source == UrlSource::Flag).then(|| running.url.expose().to_string()),
        config: running.file.clone(),
    }
}

/// Changes to the config file, one message per event, from the watcher it owns.
pub(super) struct FileChanges {
    _watcher: RecommendedWatcher,
    events: mpsc::UnboundedReceiver<()>,
}

/// Watches the config file's folder (editors replace a file rather than write it in place, which a
/// watch on the file itself would lose) for writes, creations and renames of the file.
pub(super) fn watch_file(config: &Config) -> anyhow::Result<FileChanges> {
    let Some(file) = &config.file else {
        return Err(jobq::Error::config(
            "--reload-on-change needs a config file to watch (--config, JOBQ_CONFIG or ./jobq.toml), and none was found",
        )
        .into());
    };
    let file = std::path::absolute(file)?;
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let names = watched_names(&file);
    let (tx, events) = mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        if event.is_ok_and(|e| changes_content(&e.kind) && e.paths.iter().any(|p| is_one_of(p, &names))) {
            let _ = tx.send(());
        }
    })
    .map_err(|e| anyhow::anyhow!("cannot watch the config file's folder {}: {e}", dir.display()))?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| anyhow::anyhow!("cannot watch the config file's folder {}: {e}", dir.display()))?;
    Ok(FileChanges {
        _watcher: watcher,
        events,
    })
}

/// The names in the config's folder whose change may change the config: the file's own, and, when
/// the file is a symlink into a subfolder, that subfolder's (Kubernetes mounts a ConfigMap as
/// `jobq.toml -> ..data/jobq.toml` and updates it by swapping the `..data` link).
fn watched_names(file: &Path) -> Vec<OsString> {
    let mut names: Vec<OsString> = file.file_name().map(|n| vec![n.to_os_string()]).unwrap_or_default();
    if let Ok(target) = std::fs::read_link(file)
        && target.is_relative()
        && let Some(first) = target.components().next()
    {
        names.push(first.as_os_str().to_os_string());
    }
    names
}

/// Whether `path` names one of `names` in the watched folder.
fn is_one_of(path: &Path, names: &[OsString]) -> bool {
    path.file_name().is_some_and(|n| names.iter().any(|w| w == n))
}

/// Writes, creations and renames; not opens and reads (reloading reads the file, which must not
/// trigger another reload), nor metadata changes.
fn changes_content(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Create(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        _ => false,
    }
}

/// Resolves once a burst of changes has settled ([`SETTLE`] without another); never without a watch.
async fn settled(changes: &mut Option<FileChanges>) {
    let Some(changes) = changes else {
        return std::future::pending().await;
    };
    if changes.events.recv().await.is_none() {
        return std::future::pending().await;
    }
    loop {
        match tokio::time::timeout(SETTLE, changes.events.recv()).await {
            Ok(Some(())) => continue,
            Ok(None) | Err(_) => return,
        }
    }
}
