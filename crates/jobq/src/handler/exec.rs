//! The exec handler: runs a program per job, following the protocol of DESIGN §3 exactly.
//!
//! The program is started from an argv list (never through a shell, so no job data is ever parsed
//! as shell syntax) in a process group of its own. It reads the envelope JSON on stdin and finds
//! `JOBQ_JOB_ID`, `JOBQ_JOB_TYPE`, `JOBQ_QUEUE`, `JOBQ_ATTEMPT`, `JOBQ_MAX_ATTEMPTS` (and
//! `JOBQ_IDEMPOTENCY_KEY`) in its environment. Its exit code is the answer: 0 success, 75
//! (EX_TEMPFAIL) retry, 65 (EX_DATAERR) fail, anything else or a signal retry. Lines on stdout that
//! start with `::` steer the outcome (`::progress 40 msg`, `::result {json}`, `::retry-after 30s`,
//! `::discard reason`, `::wait`, `::snooze 30s`, `::rate-limited 30s`); all other output, stdout and stderr alike, is kept and its last
//! 2 KB become the error text when the run fails.
//!
//! Stopping (cancel, time-out, shutdown) sends SIGTERM to the whole group, then SIGKILL after the
//! grace period. Whatever happens, no process of the group outlives the run: after the program exits
//! the group is killed, and if the run is abandoned mid-way a guard kills the group on drop. Only a
//! worker killed outright (SIGKILL, the OOM killer) cannot clean up; its programs are left to the
//! supervisor (systemd kills the whole cgroup by default). A parent-death signal would cover that
//! case, but it needs a pre-exec hook, which turns posix_spawn into fork and halves the spawn rate.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use super::{Handler, JobContext, Outcome};
use crate::job::Job;

/// How much of a program's output becomes the error text of a failed run.
pub const TAIL_BYTES: usize = 2048;

/// Longest stdout line read as a control line: room for a `::result` of a large JSON document.
const MAX_CONTROL_LINE: usize = (1 << 20) + 4096;

/// How long the output readers get to finish after the program's group is gone.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// Exit code meaning "try again later" (sysexits.h EX_TEMPFAIL).
pub const EXIT_RETRY: i32 = 75;
/// Exit code meaning "this job can never succeed" (sysexits.h EX_DATAERR).
pub const EXIT_FAIL: i32 = 65;

/// Runs a program for each job.
#[derive(Debug, Clone)]
pub struct ExecHandler {
    argv: Vec<String>,
}

impl ExecHandler {
    /// A handler running `argv[0]` with the other elements as arguments.
    pub fn new(argv: Vec<String>) -> Result<ExecHandler, String> {
        match argv.first() {
            Some(p) if !p.is_empty() => Ok(ExecHandler { argv }),
            _ => Err("the argv list needs a program: exec = [\"./bin/run\", \"--flag\"]".into()),
        }
    }

    /// The program and its arguments.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }
}

/// Checks that `program` can be started, before any job needs it: a path (with a `/`) must name an
/// executable file, a bare name must be one in a folder of `PATH`. The program is looked for again
/// at each run, so a file replaced on disk later is what runs then.
pub fn check_program(program: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let executable =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        let path = std::path::Path::new(program);
        return match std::fs::metadata(path) {
            Err(_) => Err(format!("program {program} does not exist")),
            Ok(_) if !executable(path) => Err(format!("program {program} is not an executable file")),
            Ok(_) => Ok(()),
        };
    }
    // Without PATH the spawn falls back to the system's default folders; leave it to the run.
    let Some(path) = std::env::var_os("PATH") else {
        return Ok(());
    };
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(program))) {
        Ok(())
    } else {
        Err(format!("program {program} is not found on PATH"))
    }
}

#[async_trait]
impl Handler for ExecHandler {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        let envelope = match serde_json::to_vec(&job.envelope()) {
            Ok(e) => e,
            Err(e) => return Outcome::retry(format!("cannot encode the envelope: {e}")),
        };
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("JOBQ_JOB_ID", job.id.as_str())
            .env("JOBQ_JOB_TYPE", &job.job_type)
            .env("JOBQ_QUEUE", &job.queue)
            .env("JOBQ_ATTEMPT", job.attempt.to_string())
            .env("JOBQ_MAX_ATTEMPTS", job.max_attempts.to_string())
            .env("JOBQ_IDEMPOTENCY_KEY", job.idempotency_key())
            // Its own group, so a stop reaches everything the program started, and a Ctrl-C typed
            // at the worker's terminal reaches only the worker, which then shuts down in order.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Outcome::retry(format!("cannot start {}: {e}", self.argv[0])),
        };
        let guard = GroupGuard::of(&child);
        let report = Arc::new(Mutex::new(Report::default()));

        // Write stdin, read stdout and stderr concurrently with waiting: a program blocked on a full
        // pipe would otherwise never exit.
        let writer = child.stdin.take().map(|mut stdin| {
            tokio::spawn(async move {
                // A program that exits without reading its input makes this fail with EPIPE; that is
                // its right, so the error is ignored.
                let _ = stdin.write_all(&envelope).await;
            })
        });
        let out_reader = child
            .stdout
            .take()
            .map(|out| tokio::spawn(read_stdout(out, report.clone(), cx.clone())));
        let err_reader = child
            .stderr
            .take()
            .map(|err| tokio::spawn(read_stderr(err, report.clone())));

        let status = wait_or_stop(&mut child, &guard, cx).await;
        // The program is gone; anything it left running in its group goes with it.
        guard.signal(libc::SIGKILL);
        guard.disarm();
        for reader in [out_reader, err_reader].into_iter().flatten() {
            let abort = reader.abort_handle();
            // A grandchild that left the group may still hold a pipe open; do not wait for it.
            if tokio::time::timeout(DRAIN_TIMEOUT, reader).await.is_err() {
                abort.abort();
            }
        }
        if let Some(w) = writer {
            w.abort();
        }
        let report = std::mem::take(&mut *report.lock().unwrap_or_else(|e| e.into_inner()));
        match status {
            Ok(status) => outcome_of(exit_of(status), report),
            Err(e) => Outcome::retry(format!("waiting for {} failed: {e}", self.argv[0])),
        }
    }
}

/// Waits for the program to exit; when the run is asked to stop, sends SIGTERM to its group and,
/// after the grace period (or at once when stopping is forced), SIGKILL.
async fn wait_or_stop(child: &mut Child, guard: &GroupGuard, cx: &JobContext) -> io::Result<ExitStatus> {
    tokio::select! {
        biased;
        status = child.wait() => return status,
        _ = cx.cancelled() => {}
    }
    guard.signal(libc::SIGTERM);
    tokio::select! {
        biased;
        status = child.wait() => return status,
        _ = tokio::time::sleep(cx.kill_grace()) => {}
        _ = cx.kill_now() => {}
    }
    guard.signal(libc::SIGKILL);
    child.wait().await
}

/// Kills a process group: on demand, and with SIGKILL when dropped while still armed (the run was
/// abandoned, e.g. the worker gave up waiting for it).
pub(crate) struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    /// The group of `child`, started with `process_group(0)` so that its id is the group's.
    pub(crate) fn of(child: &Child) -> GroupGuard {
        GroupGuard {
            pgid: child.id().map(|p| p as i32),
        }
    }

    pub(crate) fn signal(&self, signal: libc::c_int) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals a process group; it touches no memory.
            // ESRCH (the group is already empty) is the expected answer once all is done.
            unsafe {
                libc::kill(-pgid, signal);
            }
        }
    }

    /// Stops the guard once the leader has been reaped and the group killed, so that a later drop
    /// cannot signal a group whose id has been reused.
    pub(crate) fn disarm(mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

pub(crate) fn exit_of(status: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        (None, None) => Exit::Code(-1),
    }
}

/// What the program said on its control lines, and the tail of its other output.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) result: Option<Value>,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) discard: Option<String>,
    pub(crate) wait: bool,
    pub(crate) snooze: Option<Duration>,
    /// `::rate-limited`, with its delay if it gave one.
    pub(crate) rate_limited: Option<Option<Duration>>,
    /// `::await-children`.
    pub(crate) await_children: bool,
    pub(crate) tail: Tail,
}

impl Report {
    fn apply(&mut self, control: Control, cx: &JobContext) {
        match control {
            Control::Progress(percent, message) => cx.progress(percent, message.as_deref()),
            Control::Result(v) => self.result = Some(v),
            Control::RetryAfter(d) => self.retry_after = Some(d),
            Control::Discard(reason) => self.discard = Some(reason),
            Control::Wait => self.wait = true,
            Control::Snooze(d) => self.snooze = Some(d),
            Control::RateLimited(d) => self.rate_limited = Some(d),
            Control::Spawn(child) => cx.spawn_json(child),
            Control::AwaitChildren => self.await_children = true,
        }
    }
}

/// Maps an exit and the program's report to an outcome. `::discard`, `::wait`, `::rate-limited`
/// and `::snooze` (in that order of precedence) are decisions the
/// program announced, so they stand whatever code it exits with afterwards (a program that handed the
/// job to a third party and then crashed must not hand it over twice); a signal overrides them.
pub(crate) fn outcome_of(exit: Exit, report: Report) -> Outcome {
    let tail = report.tail.text();
    let with_tail = |head: String| with_tail(head, &tail);
    match exit {
        Exit::Code(_) if report.discard.is_some() => Outcome::Discard {
            reason: report.discard.unwrap_or_default(),
        },
        Exit::Code(_) if report.wait => Outcome::Wait,
        Exit::Code(_) if report.rate_limited.is_some() => Outcome::RateLimited {
            delay: report.rate_limited.flatten(),
        },
        Exit::Code(_) if report.snooze.is_some() => Outcome::Snooze {
            delay: report.snooze.unwrap_or_default(),
        },
        Exit::Code(0) if report.await_children => Outcome::AwaitChildren,
        Exit::Code(0) => Outcome::Success { result: report.result },
        Exit::Code(EXIT_RETRY) => Outcome::Retry {
            error: if tail.is_empty() {
                format!("exited with code {EXIT_RETRY} (retry)")
            } else {
                tail
            },
            retry_after: report.retry_after,
        },
        Exit::Code(EXIT_FAIL) => Outcome::Fail {
            error: if tail.is_empty() {
                format!("exited with code {EXIT_FAIL} (fail)")
            } else {
                tail
            },
        },
        Exit::Code(code) => Outcome::Retry {
            error: with_tail(format!("exited with code {code}")),
            retry_after: report.retry_after,
        },
        Exit::Signal(sig) => Outcome::Retry {
            error: with_tail(format!("killed by signal {sig} ({})", signal_name(sig))),
            retry_after: report.retry_after,
        },
    }
}

/// An error text with the program's own last words after it, when it left any.
pub(crate) fn with_tail(head: String, tail: &str) -> String {
    if tail.is_empty() {
        head
    } else {
        format!("{head}: {tail}")
    }
}

pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => "signal",
    }
}

/// One control line from the program's stdout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Control {
    /// `::progress 40 optional message`
    Progress(u8, Option<String>),
    /// `::result {json}`
    Result(Value),
    /// `::retry-after 30s`
    RetryAfter(Duration),
    /// `::discard reason`
    Discard(String),
    /// `::wait`
    Wait,
    /// `::snooze 30s`
    Snooze(Duration),
    /// `::rate-limited [30s]`
    RateLimited(Option<Duration>),
    /// `::spawn {json}`: a child job, or why its JSON cannot be read (the attempt then fails: a
    /// child must not go missing as a line of output would).
    Spawn(Result<Value, String>),
    /// `::await-children`
    AwaitChildren,
}

/// Reads a control line. Anything malformed is not a control line and stays ordinary output, so a
/// program printing `::` for its own reasons loses nothing.
pub(crate) fn parse_control(line: &str) -> Option<Control> {
    let rest = line.strip_prefix("::")?;
    let (word, arg) = match rest.split_once(char::is_whitespace) {
        Some((w, a)) => (w, a.trim()),
        None => (rest.trim_end(), ""),
    };
    match word {
        "progress" => {
            let (number, message) = match arg.split_once(char::is_whitespace) {
                Some((n, m)) => (n, Some(m.trim()).filter(|m| !m.is_empty())),
                None => (arg, None),
            };
            let percent: f64 = number
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|p: &f64| p.is_finite())?;
            Some(Control::Progress(
                percent.clamp(0.0, 100.0).round() as u8,
                message.map(str::to_string),
            ))
        }
        "result" => serde_json::from_str(arg).ok().map(Control::Result),
        "retry-after" => crate::time::parse_duration(arg).ok().map(Control::RetryAfter),
        "discard" => Some(Control::Discard(if arg.is_empty() {
            "discarded by its handler".to_string()
        } else {
            arg.to_string()
        })),
        "wait" if arg.is_empty() => Some(Control::Wait),
        "snooze" => crate::time::parse_duration(arg).ok().map(Control::Snooze),
        "spawn" => Some(Control::Spawn(
            serde_json::from_str(arg).map_err(|e| format!("a ::spawn line that is not JSON ({e})")),
        )),
        "await-children" if arg.is_empty() => Some(Control::AwaitChildren),
        "rate-limited" if arg.is_empty() => Some(Control::RateLimited(None)),
        "rate-limited" => crate::time::parse_duration(arg)
            .ok()
            .map(|d| Control::RateLimited(Some(d))),
        _ => None,
    }
}

/// The last [`TAIL_BYTES`] of a program's output.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    buf: Vec<u8>,
    cut: bool,
}

impl Tail {
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if bytes.len() >= TAIL_BYTES {
            self.cut |= !self.buf.is_empty() || bytes.len() > TAIL_BYTES;
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - TAIL_BYTES..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        // Trim in bulk, not per write, so a chatty program costs a copy per 2 KB, not per line.
        if self.buf.len() > 2 * TAIL_BYTES {
            let excess = self.buf.len() - TAIL_BYTES;
            self.buf.drain(..excess);
            self.cut = true;
        }
    }

    /// The tail as text, trimmed; starts with `…` when earlier output was dropped.
    pub(crate) fn text(&self) -> String {
        let start = self.buf.len().saturating_sub(TAIL_BYTES);
        let mut bytes = &self.buf[start..];
        let cut = self.cut || start > 0;
        if cut {
            // Do not begin in the middle of a UTF-8 sequence.
            while let Some((&b, rest)) = bytes.split_first() {
                if b & 0xC0 != 0x80 {
                    break;
                }
                bytes = rest;
            }
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if cut && !text.is_empty() {
            format!("…{text}")
        } else {
            text.to_string()
        }
    }
}

fn lock(report: &Mutex<Report>) -> std::sync::MutexGuard<'_, Report> {
    report.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads stdout line by line: control lines steer the outcome, the rest goes to the tail.
async fn read_stdout(mut out: impl AsyncRead + Unpin, report: Arc<Mutex<Report>>, cx: JobContext) {
    let mut chunk = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    // True while the current line has overflowed MAX_CONTROL_LINE: it is plain output, whatever it
    // starts with.
    let mut overflowed = false;
    loop {
        let n = match out.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&rest[..pos]);
            handle_line(&line, overflowed, &report, &cx);
            line.clear();
            overflowed = false;
            rest = &rest[pos + 1..];
        }
        line.extend_from_slice(rest);
        if line.len() > MAX_CONTROL_LINE {
            lock(&report).tail.push(&line);
            line.clear();
            overflowed = true;
        }
    }
    if !line.is_empty() {
        handle_line(&line, overflowed, &report, &cx);
    }
}

fn handle_line(line: &[u8], overflowed: bool, report: &Mutex<Report>, cx: &JobContext) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !overflowed
        && line.starts_with(b"::")
        && let Some(control) = std::str::from_utf8(line).ok().and_then(parse_control)
    {
        lock(report).apply(control, cx);
        return;
    }
    let mut r = lock(report);
    r.tail.push(line);
    r.tail.push(b"\n");
}

async fn read_stderr(mut err: impl AsyncRead + Unpin, report: Arc<Mutex<Report>>) {
    let mut chunk = vec![0u8; 4096];
    loop {
        match err.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => lock(&report).tail.push(&chunk[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(tail: &str) -> Report {
        let mut r = Report::default();
        r.tail.push(tail.as_bytes());
        r
    }

    #[test]
    fn programs_are_checked_by_path_or_on_path() {
        assert_eq!(check_program("sh"), Ok(()));
        assert_eq!(check_program("/bin/sh"), Ok(()));
        assert_eq!(
            check_program("/no/such/program"),
            Err("program /no/such/program does not exist".into())
        );
        assert_eq!(
            check_program("no-such-program-jobq"),
            Err("program no-such-program-jobq is not found on PATH".into())
        );
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.txt");
        std::fs::write(&plain, "not a program").unwrap();
        let plain = plain.display().to_string();
        assert_eq!(
            check_program(&plain),
            Err(format!("program {plain} is not an executable file"))
        );
    }

    #[test]
    fn control_lines_parse() {
        assert_eq!(
            parse_control("::progress 40 resizing 3/8"),
            Some(Control::Progress(40, Some("resizing 3/8".into())))
        );
        assert_eq!(parse_control("::progress 40"), Some(Control::Progress(40, None)));
        assert_eq!(parse_control("::progress 55.6%"), Some(Control::Progress(56, None)));
        assert_eq!(parse_control("::progress 140"), Some(Control::Progress(100, None)));
        assert_eq!(
            parse_control(r#"::result {"ok":true,"n":[1,2]}"#),
            Some(Control::Result(json!({"ok":true,"n":[1,2]})))
        );
        assert_eq!(parse_control("::result 42"), Some(Control::Result(json!(42))));
        assert_eq!(
            parse_control("::retry-after 30s"),
            Some(Control::RetryAfter(Duration::from_secs(30)))
        );
        assert_eq!(
            parse_control("::retry-after 1500ms"),
            Some(Control::RetryAfter(Duration::from_millis(1500)))
        );
        assert_eq!(
            parse_control("::retry-after 5"),
            Some(Control::RetryAfter(Duration::from_secs(5)))
        );
        assert_eq!(
            parse_control("::discard duplicate order"),
            Some(Control::Discard("duplicate order".into()))
        );
        assert_eq!(
            parse_control("::discard"),
            Some(Control::Discard("discarded by its handler".into()))
        );
        assert_eq!(parse_control("::wait"), Some(Control::Wait));
        assert_eq!(
            parse_control("::snooze 30s"),
            Some(Control::Snooze(Duration::from_secs(30)))
        );
        assert_eq!(parse_control("::rate-limited"), Some(Control::RateLimited(None)));
        assert_eq!(
            parse_control("::rate-limited 1m"),
            Some(Control::RateLimited(Some(Duration::from_secs(60))))
        );
        assert_eq!(parse_control("::wait   "), Some(Control::Wait));
        assert_eq!(
            parse_control(r#"::spawn {"type":"t","key":"a"}"#),
            Some(Control::Spawn(Ok(json!({"type": "t", "key": "a"}))))
        );
        assert!(matches!(parse_control("::spawn {oops"), Some(Control::Spawn(Err(_)))));
        assert_eq!(parse_control("::await-children"), Some(Control::AwaitChildren));
    }

    #[test]
    fn malformed_control_lines_are_plain_output() {
        for line in [
            "::progress",
            "::progress lots",
            "::result {not json",
            "::retry-after soon",
            "::wait now",
            "::snooze",
            "::snooze later",
            "::rate-limited soon",
            "::unknown 1",
            ":: progress 4",
            "progress 40",
            "  ::wait",
        ] {
            assert_eq!(parse_control(line), None, "{line}");
        }
    }

    #[test]
    fn exit_codes_map_to_outcomes() {
        let quiet = Report::default;
        let ok = Report {
            result: Some(json!({"a": 1})),
            ..quiet()
        };
        let busy = Report {
            retry_after: Some(Duration::from_secs(30)),
            ..report("busy")
        };
        let cases = [
            (Exit::Code(0), ok, Outcome::success_with(json!({"a": 1}))),
            (Exit::Code(0), quiet(), Outcome::success()),
            (
                Exit::Code(75),
                busy,
                Outcome::retry_after("busy", Duration::from_secs(30)),
            ),
            (Exit::Code(75), quiet(), Outcome::retry("exited with code 75 (retry)")),
            (Exit::Code(65), report("bad input\n"), Outcome::fail("bad input")),
            (Exit::Code(65), quiet(), Outcome::fail("exited with code 65 (fail)")),
            (
                Exit::Code(1),
                report("Traceback: boom\n"),
                Outcome::retry("exited with code 1: Traceback: boom"),
            ),
            (Exit::Code(2), quiet(), Outcome::retry("exited with code 2")),
            (Exit::Signal(9), quiet(), Outcome::retry("killed by signal 9 (SIGKILL)")),
        ];
        for (exit, report, expected) in cases {
            assert_eq!(outcome_of(exit, report), expected, "{exit:?}");
        }
    }

    #[test]
    fn discard_and_wait_stand_unless_a_signal_ends_the_program() {
        let discard = || Report {
            discard: Some("stale".into()),
            ..Report::default()
        };
        assert_eq!(outcome_of(Exit::Code(0), discard()), Outcome::discard("stale"));
        assert_eq!(outcome_of(Exit::Code(1), discard()), Outcome::discard("stale"));
        let wait = || Report {
            wait: true,
            ..Report::default()
        };
        assert_eq!(outcome_of(Exit::Code(0), wait()), Outcome::Wait);
        assert_eq!(outcome_of(Exit::Code(3), wait()), Outcome::Wait);
        assert!(matches!(outcome_of(Exit::Signal(15), wait()), Outcome::Retry { .. }));
    }

    #[test]
    fn the_tail_keeps_the_last_two_kilobytes_on_a_character_boundary() {
        let mut t = Tail::default();
        t.push(b"first line\n");
        assert_eq!(t.text(), "first line");
        for i in 0..1000 {
            t.push(format!("line {i} é\n").as_bytes());
        }
        let text = t.text();
        assert!(text.starts_with('…'), "{text}");
        assert!(text.ends_with("line 999 é"), "{text}");
        assert!(text.len() <= TAIL_BYTES + '…'.len_utf8(), "{}", text.len());
        assert!(!text.contains('\u{FFFD}'), "{text}");
        let mut big = Tail::default();
        big.push(&vec![b'x'; 10_000]);
        assert_eq!(big.text().len(), TAIL_BYTES + '…'.len_utf8());
    }

    #[tokio::test]
    async fn stdout_lines_split_into_controls_and_output() {
        let input: &[u8] = b"hello\n::progress 10 start\n::result {\"n\":1}\r\nworld\n::bogus\nlast";
        let report = Arc::new(Mutex::new(Report::default()));
        let cx = JobContext::detached();
        read_stdout(input, report.clone(), cx.clone()).await;
        let r = lock(&report);
        assert_eq!(r.result, Some(json!({"n": 1})));
        assert_eq!(r.tail.text(), "hello\nworld\n::bogus\nlast");
        assert_eq!(
            cx.take_progress().map(|p| (p.percent, p.message)),
            Some((10, Some("start".into())))
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_output_not_control() {
        let mut input = b"::result ".to_vec();
        input.extend(std::iter::repeat_n(b'1', MAX_CONTROL_LINE + 10));
        input.extend_from_slice(b"\n::wait\n");
        let report = Arc::new(Mutex::new(Report::default()));
        read_stdout(&input[..], report.clone(), JobContext::detached()).await;
        let r = lock(&report);
        assert_eq!(r.result, None);
        assert!(r.wait);
    }
}
