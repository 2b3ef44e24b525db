//! The persistent exec handler: a program started once and kept running, given jobs one JSON line
//! at a time on its stdin and answering one JSON line per outcome on its stdout (`protocol.rs`; the
//! guide's `docs/src/handlers.md`, "Persistent handlers", is the specification). A handler in any language pays its start
//! (an interpreter, a framework, a database connection) once, not per job.
//!
//! `processes` copies run side by side, each a slot (`slot.rs`) that takes jobs from one shared
//! queue while it holds fewer than `in_flight`: a free copy takes the next job, so a slow job never
//! holds up one that another copy could start. A run puts its job on the queue and waits for its
//! outcome; when the worker stops the run (time-out, cancel, shutdown, lost lease), the run tells
//! every slot, and the one holding the job writes the program a drop line and gives it the kill
//! grace to answer before restarting it.
//!
//! Programs start with the first job, not with the worker, and end when the worker stops
//! ([`Handler::close`]) or when a reload drops the handler.

mod protocol;
mod slot;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use self::slot::{Request, Slot};
use super::{DEFAULT_KILL_GRACE, Handler, JobContext, Outcome};
use crate::job::Job;

/// How a persistent handler runs its program (the `[handlers."…"]` keys beside `persistent = true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistentOptions {
    /// Jobs one copy of the program is given before it has answered (`in_flight`, default 1). A
    /// program that runs one job at a time still gains from 2 or more: the next job is already in
    /// its pipe when it answers.
    pub in_flight: u32,
    /// Copies of the program (`processes`, default 1).
    pub processes: u32,
    /// A copy is replaced after it was handed this many jobs (`max_jobs_per_process`).
    pub max_jobs_per_process: Option<u64>,
    /// A copy is replaced once its resident memory passes this many bytes
    /// (`max_memory_per_process`; checked every second, on Linux).
    pub max_memory_per_process: Option<u64>,
}

impl Default for PersistentOptions {
    fn default() -> Self {
        PersistentOptions {
            in_flight: 1,
            processes: 1,
            max_jobs_per_process: None,
            max_memory_per_process: None,
        }
    }
}

impl PersistentOptions {
    /// How many jobs all copies hold at most: `processes × in_flight`.
    pub fn capacity(&self) -> u64 {
        u64::from(self.processes) * u64::from(self.in_flight)
    }
}

/// What every slot of one handler runs.
pub(crate) struct Program {
    pub(crate) argv: Vec<String>,
    /// The job type it is configured for (`*` for the fallback), for its log lines and its
    /// `JOBQ_HANDLER`.
    pub(crate) job_type: String,
    pub(crate) options: PersistentOptions,
}

impl Program {
    /// The program as log lines and error texts name it: its argv.
    pub(crate) fn name(&self) -> String {
        format!("{:?}", self.argv.join(" "))
    }
}

/// Runs jobs on a program kept running between them.
pub struct PersistentHandler {
    program: Arc<Program>,
    queue: async_channel::Sender<Request>,
    /// One sender per slot: a stopped run tells every slot, and the one that holds its job acts.
    drops: Vec<mpsc::UnboundedSender<String>>,
    /// The slots, until the first job starts them.
    unstarted: Mutex<Vec<Slot>>,
    started: AtomicBool,
    running: Mutex<Vec<JoinHandle<()>>>,
    closing: CancellationToken,
    close_grace_ms: Arc<AtomicU64>,
}

impl std::fmt::Debug for PersistentHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentHandler")
            .field("argv", &self.program.argv)
            .field("options", &self.program.options)
            .finish()
    }
}

impl PersistentHandler {
    /// A handler keeping `argv` running for jobs of `job_type`. Nothing starts until the first job.
    pub fn new(job_type: &str, argv: Vec<String>, options: PersistentOptions) -> Result<PersistentHandler, String> {
        if argv.first().is_none_or(|p| p.is_empty()) {
            return Err("the argv list needs a program: exec = [\"python3\", \"handlers/report.py\"]".into());
        }
        if options.in_flight == 0 || options.processes == 0 {
            return Err("in_flight and processes must be at least 1".into());
        }
        let program = Arc::new(Program {
            argv,
            job_type: job_type.to_string(),
            options,
        });
        let (queue, jobs) = async_channel::unbounded();
        let closing = CancellationToken::new();
        let close_grace_ms = Arc::new(AtomicU64::new(DEFAULT_KILL_GRACE.as_millis() as u64));
        let mut drops = Vec::new();
        let mut slots = Vec::new();
        for _ in 0..program.options.processes {
            let (tx, rx) = mpsc::unbounded_channel();
            drops.push(tx);
            slots.push(Slot {
                program: program.clone(),
                queue: jobs.clone(),
                drops: rx,
                closing: closing.clone(),
                close_grace_ms: close_grace_ms.clone(),
            });
        }
        Ok(PersistentHandler {
            program,
            queue,
            drops,
            unstarted: Mutex::new(slots),
            started: AtomicBool::new(false),
            running: Mutex::new(Vec::new()),
            closing,
            close_grace_ms,
        })
    }

    /// The program and its arguments.
    pub fn argv(&self) -> &[String] {
        &self.program.argv
    }

    /// Starts the slots' tasks, once (each starts its program when it takes its first job).
    fn start(&self) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let slots = std::mem::take(&mut *lock(&self.unstarted));
        let mut running = lock(&self.running);
        running.extend(slots.into_iter().map(|slot| tokio::spawn(slot.run())));
        self.started.store(true, Ordering::Release);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait]
impl Handler for PersistentHandler {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        let mut line = match serde_json::to_vec(&job.envelope()) {
            Ok(l) => l,
            Err(e) => return Outcome::retry(format!("cannot encode the envelope: {e}")),
        };
        line.push(b'\n');
        self.start();
        let (answer, outcome) = oneshot::channel();
        let request = Request {
            job_id: job.id.as_str().to_string(),
            line,
            cx: cx.clone(),
            answer,
        };
        if self.queue.send(request).await.is_err() {
            return Outcome::retry("the persistent handler has closed");
        }
        let gone = || Outcome::retry("the persistent handler's program ended without an answer");
        tokio::pin!(outcome);
        tokio::select! {
            biased;
            answered = &mut outcome => return answered.unwrap_or_else(|_| gone()),
            _ = cx.cancelled() => {}
        }
        for slot in &self.drops {
            let _ = slot.send(job.id.as_str().to_string());
        }
        // The worker decides the job by why it stopped; this waits only so the program's answer (or
        // its restart) comes before the slot is reused.
        outcome.await.unwrap_or_else(|_| gone())
    }

    async fn close(&self, grace: Duration) {
        self.close_grace_ms.store(grace.as_millis() as u64, Ordering::Release);
        self.closing.cancel();
        self.queue.close();
        let running = std::mem::take(&mut *lock(&self.running));
        for task in running {
            let _ = task.await;
        }
    }
}

impl Drop for PersistentHandler {
    /// A handler dropped without [`Handler::close`] (a reload replaced it) still ends its programs,
    /// in the background, with the default grace.
    fn drop(&mut self) {
        self.closing.cancel();
    }
}
