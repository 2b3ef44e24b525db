//! `jobq` processes a test starts (workers, mostly): the real binary, with the caller's `JOBQ_*`
//! environment removed, its stderr kept in a log file for assertions and failure messages, and killed
//! (SIGKILL) if the test ends while it runs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use super::{eventually, lazy};

/// Worker settings that keep tests quick: fast heartbeats and polls, a short shutdown, exact back-off.
/// Rescue stays well away (tests of rescue set their own): on a loaded machine a starved worker's
/// heartbeat can be late by seconds, and a rescue would then run a job twice, as it should.
pub const FAST: &str = r#"
[worker]
heartbeat = "200ms"
stale_after = "10s"
poll_interval = "50ms"
shutdown_timeout = "500ms"

[retry]
base_delay = "100ms"
jitter = 0.0
"#;

/// Variables of the caller's environment that would change what a `jobq` process does.
const CLEARED_ENV: [&str; 5] = [
    "JOBQ_URL",
    "JOBQ_CONFIG",
    "JOBQ_QUEUES",
    "JOBQ_CONCURRENCY",
    "JOBQ_OUTPUT",
];

/// The `jobq` binary with the caller's `JOBQ_*` settings removed and no stdin.
pub fn jobq() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jobq"));
    for name in CLEARED_ENV {
        cmd.env_remove(name);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `jobq --url URL ARGS…` to its end in a fresh temporary folder (so that no `jobq.toml` nearby
/// is read) and returns what it did.
pub fn output(url: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("a temporary folder");
    jobq()
        .arg("--url")
        .arg(url)
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("running jobq {args:?}: {e}"))
}

/// A running `jobq` process and the file its stderr goes to. Every method takes `&self`, so that a
/// wait's failure message can show the log while the wait checks on the process.
pub struct Process {
    child: Mutex<Child>,
    pid: i32,
    log: PathBuf,
}

impl Process {
    /// Starts `cmd` with its stderr in the file `log` and its stdout discarded unless `cmd` says
    /// otherwise.
    pub fn spawn(mut cmd: Command, log: &Path) -> Process {
        let stderr = std::fs::File::create(log).unwrap_or_else(|e| panic!("creating {}: {e}", log.display()));
        let child = cmd
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        Process {
            pid: child.id() as i32,
            child: Mutex::new(child),
            log: log.to_path_buf(),
        }
    }

    /// Starts `jobq --url URL --config FILE worker ARGS…` with `config` written to `jobq.toml` in `dir`,
    /// logging to `worker.log` there as an operator's worker logs by default (jobq's own lines from
    /// `info`, the libraries' warnings as jobq filters them).
    pub fn worker(dir: &Path, url: &str, config: &str, args: &[&str]) -> Process {
        let file = dir.join("jobq.toml");
        std::fs::write(&file, config).unwrap();
        let mut cmd = jobq();
        cmd.args(["--url", url, "--config"])
            .arg(&file)
            .arg("worker")
            .args(args)
            .env_remove("JOBQ_LOG")
            .stdout(Stdio::null());
        Process::spawn(cmd, &dir.join("worker.log"))
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
        unsafe {
            libc::kill(self.pid(), signal);
        }
    }

    /// Everything the process has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `n` lines the process has logged, for a failure message that must stay short enough
    /// to be read whole in a CI excerpt.
    pub fn log_tail(&self, n: usize) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        let from = lines.len().saturating_sub(n);
        let cut = if from > 0 {
            format!("[{from} earlier lines]\n")
        } else {
            String::new()
        };
        format!("{cut}{}", lines[from..].join("\n"))
    }

    /// The exit status, once the process has exited.
    fn exited(&self) -> Option<ExitStatus> {
        self.child.lock().unwrap().try_wait().unwrap()
    }

    /// Waits for the process to exit, failing with its log after `timeout`.
    pub async fn exit(&self, timeout: Duration) -> ExitStatus {
        eventually("the process to exit", timeout, async || {
            self.exited()
                .ok_or_else(|| lazy(|| format!("still running\n{}", self.log())))
        })
        .await
    }

    /// Sends SIGTERM and waits for a clean exit (code 0), failing with the log otherwise.
    pub async fn terminate(&self, timeout: Duration) {
        self.signal(libc::SIGTERM);
        let status = self.exit(timeout).await;
        assert_eq!(status.code(), Some(0), "{}", self.log());
    }

    /// Waits until the log contains `needle`.
    pub async fn wait_log(&self, needle: &str, timeout: Duration) {
        eventually(format!("the log to say {needle:?}"), timeout, async || {
            let log = self.log();
            if log.contains(needle) { Ok(()) } else { Err(log) }
        })
        .await
    }

    /// Fails the test if the process has exited.
    pub fn assert_running(&self) {
        if let Some(status) = self.exited() {
            panic!("the process exited ({status}) instead of carrying on\n{}", self.log());
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if child.try_wait().ok().flatten().is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Jobs the enqueues of [`started_together`] put in.
pub const TOGETHER_JOBS: usize = 6;

/// Starts, at the same moment, what a first deploy starts against a store nobody has opened yet: two
/// burst workers (as a supervisor starts them) and [`TOGETHER_JOBS`] enqueues of a job each (an
/// application's first requests), all on `url`; waits for every one of them and fails the test
/// naming each that did not exit 0, with what it said. Every process opens, creates or migrates the
/// store at the same time as the others.
pub async fn started_together(url: &str, round: usize) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let mut commands: Vec<(String, Command)> = Vec::new();
    for w in 0..2 {
        let mut cmd = jobq();
        cmd.args(["--url", url, "worker", "--burst", "--handler", "together=builtin:noop"]);
        commands.push((format!("burst worker {w}"), cmd));
    }
    for n in 0..TOGETHER_JOBS {
        let mut cmd = jobq();
        cmd.args(["--url", url, "enqueue", "together", &format!("{{\"n\":{n}}}")]);
        commands.push((format!("enqueue {n}"), cmd));
    }
    let running: Vec<_> = commands
        .into_iter()
        .map(|(name, mut cmd)| {
            cmd.current_dir(home.path())
                .env("HOME", home.path())
                .env("XDG_CONFIG_HOME", home.path().join("config"))
                .env("XDG_DATA_HOME", home.path().join("data"));
            let out = tokio::process::Command::from(cmd).output();
            async move { (name, out.await) }
        })
        .collect();
    let mut failed = Vec::new();
    for (name, out) in futures_util::future::join_all(running).await {
        let out = out.unwrap_or_else(|e| panic!("starting jobq ({name}): {e}"));
        if !out.status.success() {
            failed.push(format!(
                "{name}: {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(failed.is_empty(), "round {round}: {}", failed.join("\n"));
}
