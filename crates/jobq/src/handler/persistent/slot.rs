//! One slot of a persistent handler: a copy of the program kept running, fed jobs from the handler's
//! queue while it holds fewer than `in_flight`, and started again when it ends.
//!
//! The slot's task owns everything about its program (the jobs it holds, their drop deadlines, its
//! job count), so nothing here is shared but the queue it takes jobs from. Writing to the program
//! happens on a task of its own: a program blocked writing a reply while the worker is blocked
//! writing it a job would otherwise never move again.
//!
//! How a program ends decides what happens to its jobs:
//! - it breaks (exits, writes a line that is not a reply, answers for a job it does not hold, keeps
//!   a dropped job past the grace): it is killed with its process group, every job it held is
//!   retried (an attempt spent, so a job that crashes it every time ends dead, not in a loop), one
//!   log line says why, and the next start waits a back-off;
//! - it retires (`max_jobs_per_process`, `max_memory_per_process`): it gets no new job, finishes
//!   the ones it holds, and is closed in the background while a fresh copy takes the next job;
//! - the handler closes (the worker stops, a reload drops the handler): stdin is closed, the
//!   program gets half the kill grace to exit, then its group gets SIGTERM and, after the other
//!   half, SIGKILL.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Program;
use super::protocol::{self, Reply};
use crate::handler::exec::{Exit, GroupGuard, Tail, exit_of, signal_name, with_tail};
use crate::handler::{JobContext, Outcome};

/// Longest reply line: room for a result of 16 MiB.
const MAX_REPLY_LINE: usize = 16 << 20;

/// How often a slot with `max_memory_per_process` reads its program's resident memory.
const MEMORY_CHECK_EVERY: Duration = Duration::from_secs(1);

/// How long the stderr reader gets to finish once a broken program is dead.
const STDERR_DRAIN: Duration = Duration::from_millis(200);

/// How long a program whose stdout has closed gets to exit before it is killed.
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// One job on its way to a program, and where its outcome goes.
pub(super) struct Request {
    pub(super) job_id: String,
    /// The envelope, one line.
    pub(super) line: Vec<u8>,
    pub(super) cx: JobContext,
    pub(super) answer: oneshot::Sender<Outcome>,
}

/// What a slot needs to run: its program, the shared queue, the drops meant for it and the
/// handler's close signal.
pub(super) struct Slot {
    pub(super) program: Arc<Program>,
    pub(super) queue: async_channel::Receiver<Request>,
    pub(super) drops: mpsc::UnboundedReceiver<String>,
    pub(super) closing: CancellationToken,
    /// The grace a closing program gets, in milliseconds, set before `closing` fires.
    pub(super) close_grace_ms: Arc<AtomicU64>,
}

/// A job the program holds.
struct Held {
    cx: JobContext,
    answer: oneshot::Sender<Outcome>,
    /// When a dropped job must have been answered by.
    drop_deadline: Option<Instant>,
}

/// How a program's session ended.
enum End {
    /// It broke; the text says how (`exited with code 1`, `wrote a line that is not a reply …`).
    Broken(String),
    /// It reached a per-process limit and holds no job any more.
    Retired(String),
    /// The handler closed and the program holds no job any more.
    Closing,
}

impl Slot {
    /// Runs until the handler closes: starts the program when a job comes, feeds it, and starts it
    /// again when it ends.
    pub(super) async fn run(mut self) {
        let mut failures: u32 = 0;
        loop {
            // A program is started when there is a job for it, not before.
            let first = tokio::select! {
                biased;
                _ = self.closing.cancelled() => return,
                request = self.queue.recv() => match request {
                    Ok(r) => r,
                    Err(_) => return,
                },
            };
            if failures > 0 {
                tokio::select! {
                    _ = self.closing.cancelled() => {
                        let _ = first.answer.send(Outcome::retry("the persistent handler closed before starting it"));
                        return;
                    }
                    _ = tokio::time::sleep(restart_delay(failures)) => {}
                }
            }
            // The worker's kill grace, as its jobs' contexts carry it.
            let grace = first.cx.kill_grace();
            let mut process = match Process::start(&self.program) {
                Ok(p) => p,
                Err(e) => {
                    failures += 1;
                    tracing::warn!(
                        handler = %self.program.job_type,
                        "persistent handler {e}; its job is retried; next start in {}",
                        crate::time::format_duration(restart_delay(failures))
                    );
                    let _ = first.answer.send(Outcome::retry(e));
                    continue;
                }
            };
            let mut session = Session {
                held: HashMap::new(),
                sent: 0,
                answered: 0,
                retiring: None,
                closing: false,
                dropped: 0,
            };
            let end = session.run(&mut self, &mut process, first).await;
            match end {
                End::Closing => {
                    let ms = self.close_grace_ms.load(Ordering::Acquire);
                    process.close(Duration::from_millis(ms)).await;
                    return;
                }
                End::Retired(why) => {
                    tracing::info!(
                        handler = %self.program.job_type, pid = process.pid,
                        "persistent handler {} retired after {} jobs: {why}; a fresh one takes the next job",
                        self.program.name(), session.sent
                    );
                    failures = 0;
                    tokio::spawn(process.close(grace));
                }
                End::Broken(why) => {
                    let tail = process.kill().await;
                    let error = with_tail(format!("persistent handler {} {why}", self.program.name()), &tail);
                    let jobs = session.held.len();
                    for (_, held) in session.held.drain() {
                        let _ = held.answer.send(Outcome::retry(error.clone()));
                    }
                    failures = if session.answered > 0 { 1 } else { failures + 1 };
                    tracing::warn!(
                        handler = %self.program.job_type, pid = process.pid,
                        "{error}; {jobs} job{} it held retried; next start in {}",
                        if jobs == 1 { "" } else { "s" },
                        crate::time::format_duration(restart_delay(failures))
                    );
                }
            }
        }
    }
}

/// The pause before starting a program again after `failures` broken starts in a row: 100 ms
/// doubling to 30 s.
fn restart_delay(failures: u32) -> Duration {
    crate::time::doubling(Duration::from_millis(100), failures, Duration::from_secs(30))
}

/// The jobs one program holds and what it has done.
struct Session {
    held: HashMap<String, Held>,
    /// Jobs handed to it.
    sent: u64,
    /// Outcomes it gave.
    answered: u64,
    /// Why it takes no new job, when it has reached a per-process limit.
    retiring: Option<String>,
    /// The handler is closing: no new job.
    closing: bool,
    /// Jobs it was told to drop and has not answered: while there are none (nearly always), no
    /// deadline is looked for.
    dropped: usize,
}

impl Session {
    async fn run(&mut self, slot: &mut Slot, process: &mut Process, first: Request) -> End {
        let program = slot.program.clone();
        let options = &program.options;
        let in_flight = options.in_flight as usize;
        self.send(process, first, options.max_jobs_per_process);
        let mut line: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut memory_check = tokio::time::interval(MEMORY_CHECK_EVERY);
        memory_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.held.is_empty() {
                if let Some(why) = self.retiring.take() {
                    return End::Retired(why);
                }
                if self.closing {
                    return End::Closing;
                }
            }
            let room = !self.closing && self.retiring.is_none() && self.held.len() < in_flight;
            let deadline = if self.dropped == 0 {
                None
            } else {
                self.held
                    .iter()
                    .filter_map(|(id, h)| Some((h.drop_deadline?, id)))
                    .min()
                    .map(|(at, id)| (at, id.clone()))
            };
            let drop_deadline = deadline.as_ref().map(|(at, _)| *at);
            tokio::select! {
                biased;
                read = process.stdout.read(&mut chunk) => {
                    let n = match read {
                        Ok(0) | Err(_) => return End::Broken(process.exit_text().await),
                        Ok(n) => n,
                    };
                    if let Err(why) = self.take_replies(&chunk[..n], &mut line) {
                        return End::Broken(why);
                    }
                }
                Some(job_id) = slot.drops.recv() => self.drop_job(process, &job_id),
                _ = sleep_until(drop_deadline) => {
                    let id = deadline.map(|(_, id)| id).unwrap_or_default();
                    return End::Broken(format!("kept job {id} past the grace after it was dropped"));
                }
                request = slot.queue.recv(), if room => match request {
                    Ok(r) => {
                        self.send(process, r, options.max_jobs_per_process);
                        // Take what else is waiting now, so one write carries it.
                        while self.retiring.is_none() && self.held.len() < in_flight {
                            match slot.queue.try_recv() {
                                Ok(r) => self.send(process, r, options.max_jobs_per_process),
                                Err(_) => break,
                            }
                        }
                    }
                    Err(_) => self.closing = true,
                },
                _ = slot.closing.cancelled(), if !self.closing => self.closing = true,
                _ = memory_check.tick(), if options.max_memory_per_process.is_some() && self.retiring.is_none() => {
                    let limit = options.max_memory_per_process.unwrap_or(u64::MAX);
                    if let Some(rss) = crate::memory::resident_bytes_of(process.pid).filter(|rss| *rss > limit) {
                        self.retiring = Some(format!(
                            "its resident memory, {} MiB, is over max_memory_per_process ({} MiB)",
                            rss >> 20, limit >> 20
                        ));
                    }
                }
            }
        }
    }

    /// Hands a job to the program, unless it was stopped while it waited in the queue.
    fn send(&mut self, process: &Process, request: Request, max_jobs: Option<u64>) {
        if request.cx.is_cancelled() {
            let _ = request
                .answer
                .send(Outcome::retry("stopped before it was handed to the program"));
            return;
        }
        let _ = process.input.send(request.line);
        self.held.insert(
            request.job_id,
            Held {
                cx: request.cx,
                answer: request.answer,
                drop_deadline: None,
            },
        );
        self.sent += 1;
        if let Some(max) = max_jobs.filter(|max| self.sent >= *max) {
            self.retiring = Some(format!("it was handed {max} jobs (max_jobs_per_process)"));
        }
    }

    /// Tells the program to drop a job it holds, and starts the grace it has to answer.
    fn drop_job(&mut self, process: &Process, job_id: &str) {
        let Some(held) = self.held.get_mut(job_id).filter(|h| h.drop_deadline.is_none()) else {
            return;
        };
        let reason = held.cx.stop_reason().map(|r| r.to_string()).unwrap_or_default();
        let _ = process.input.send(protocol::drop_line(job_id, &reason));
        held.drop_deadline = Some(Instant::now() + held.cx.kill_grace());
        self.dropped += 1;
    }

    /// Splits what the program wrote into lines and acts on each whole one.
    fn take_replies(&mut self, bytes: &[u8], line: &mut Vec<u8>) -> Result<(), String> {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            let whole: &[u8] = if line.is_empty() {
                &rest[..pos]
            } else {
                line.extend_from_slice(&rest[..pos]);
                line
            };
            let outcome = self.take_reply(whole);
            line.clear();
            outcome?;
            rest = &rest[pos + 1..];
        }
        line.extend_from_slice(rest);
        if line.len() > MAX_REPLY_LINE {
            return Err(format!("wrote a line longer than {} MiB", MAX_REPLY_LINE >> 20));
        }
        Ok(())
    }

    fn take_reply(&mut self, line: &[u8]) -> Result<(), String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let reply = protocol::parse_reply(line).map_err(|e| format!("wrote {e}: {}", excerpt(line)))?;
        let Some(held) = self.held.get(reply.job_id()) else {
            return Err(format!(
                "answered for job {}, which it does not hold: {}",
                reply.job_id(),
                excerpt(line)
            ));
        };
        match reply {
            Reply::Progress { progress, .. } => held.cx.progress(progress.percent, progress.message.as_deref()),
            Reply::Outcome { job_id, outcome, spawn } => {
                let held = self.held.remove(&job_id).expect("looked up just above");
                for child in spawn {
                    held.cx.spawn_json(Ok(child));
                }
                self.answered += 1;
                if held.drop_deadline.is_some() {
                    self.dropped -= 1;
                }
                let _ = held.answer.send(outcome);
            }
        }
        Ok(())
    }
}

/// The start of a line, for an error text.
fn excerpt(line: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(&line[..line.len().min(MAX)]).into_owned();
    if line.len() > MAX { format!("{text}…") } else { text }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A running copy of the program.
struct Process {
    child: Child,
    pid: u32,
    group: Option<GroupGuard>,
    /// Lines for the writer task; dropping it closes the program's stdin.
    input: mpsc::UnboundedSender<Vec<u8>>,
    stdout: ChildStdout,
    /// The last of what it wrote on stderr, for the error text when it breaks.
    stderr: Arc<Mutex<Tail>>,
    /// The task reading stderr, which ends when the program's last process closes it.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl Process {
    fn start(program: &Program) -> Result<Process, String> {
        let mut cmd = Command::new(&program.argv[0]);
        cmd.args(&program.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("JOBQ_HANDLER", &program.job_type)
            .env("JOBQ_IN_FLIGHT", program.options.in_flight.to_string())
            // Its own group, as the per-job exec handler's: a stop reaches everything it started,
            // and a Ctrl-C at the worker's terminal reaches only the worker.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{} cannot start: {e}", program.name()))?;
        let pid = child.id().unwrap_or_default();
        let group = GroupGuard::of(&child);
        let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => return Err(format!("{} started without its pipes", program.name())),
        };
        let (input, lines) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, lines));
        let tail = Arc::new(Mutex::new(Tail::default()));
        let stderr_reader = tokio::spawn(read_stderr(stderr, tail.clone(), program.job_type.clone(), pid));
        Ok(Process {
            child,
            pid,
            group: Some(group),
            input,
            stdout,
            stderr: tail,
            stderr_reader: Some(stderr_reader),
        })
    }

    /// How the program ended, once its stdout has closed.
    async fn exit_text(&mut self) -> String {
        match tokio::time::timeout(EXIT_WAIT, self.child.wait()).await {
            Ok(Ok(status)) => match exit_of(status) {
                Exit::Code(code) => format!("exited with code {code}"),
                Exit::Signal(sig) => format!("was killed by signal {sig} ({})", signal_name(sig)),
            },
            Ok(Err(e)) => format!("could not be waited for: {e}"),
            Err(_) => "closed its stdout".into(),
        }
    }

    /// Kills the program's group at once; returns the tail of its stderr.
    async fn kill(&mut self) -> String {
        if let Some(group) = self.group.take() {
            group.signal(libc::SIGKILL);
            let _ = self.child.wait().await;
            group.disarm();
        }
        // Let the stderr reader take what the program wrote last (the group is dead, so its pipe
        // closes at once, unless a process that left the group holds it).
        if let Some(reader) = self.stderr_reader.take() {
            let abort = reader.abort_handle();
            if tokio::time::timeout(STDERR_DRAIN, reader).await.is_err() {
                abort.abort();
            }
        }
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).text()
    }

    /// Ends the program in order: closes its stdin and gives it half of `grace` to exit, then
    /// SIGTERM to its group and, after the other half, SIGKILL. Whatever it left in its group is
    /// killed after. (Half each, so that a worker's stop takes no more than one grace here.)
    async fn close(mut self, grace: Duration) {
        let Some(group) = self.group.take() else {
            return;
        };
        drop(self.input);
        let half = grace / 2;
        if tokio::time::timeout(half, self.child.wait()).await.is_err() {
            group.signal(libc::SIGTERM);
            if tokio::time::timeout(half, self.child.wait()).await.is_err() {
                group.signal(libc::SIGKILL);
                let _ = self.child.wait().await;
            }
        }
        group.signal(libc::SIGKILL);
        group.disarm();
    }
}

/// Writes the lines the slot sends, as many as are waiting in one write.
async fn write_lines(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    let mut buf = Vec::with_capacity(64 * 1024);
    while let Some(first) = lines.recv().await {
        buf.clear();
        buf.extend_from_slice(&first);
        while buf.len() < 64 * 1024 {
            match lines.try_recv() {
                Ok(more) => buf.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        // A program that has exited makes this fail (EPIPE); its slot learns of it from its stdout.
        if stdin.write_all(&buf).await.is_err() {
            return;
        }
    }
    // The slot let go of its sender: dropping stdin here tells the program no more jobs come.
}

/// Keeps the tail of the program's stderr (the error text when it breaks) and logs each line at
/// debug level.
async fn read_stderr(mut err: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>, job_type: String, pid: u32) {
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match err.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let bytes = &chunk[..n];
        tail.lock().unwrap_or_else(|e| e.into_inner()).push(bytes);
        if tracing::enabled!(tracing::Level::DEBUG) {
            for line in String::from_utf8_lossy(bytes).lines().filter(|l| !l.trim().is_empty()) {
                tracing::debug!(handler = %job_type, pid, "{line}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_from_100ms_to_30s() {
        let pauses: Vec<u64> = (1..=12).map(|n| restart_delay(n).as_millis() as u64).collect();
        assert_eq!(
            pauses,
            vec![100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]
        );
    }

    #[test]
    fn excerpts_are_cut_at_200_bytes() {
        assert_eq!(excerpt(b"short"), "short");
        let long = vec![b'x'; 300];
        assert_eq!(excerpt(&long), format!("{}…", "x".repeat(200)));
    }
}
