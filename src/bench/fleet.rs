//! The workers of a bench: one [`Worker`] inside the bench process, or `jobq worker` processes
//! started from the bench's own executable with a config file that maps [`BENCH_TYPE`] to the bench
//! handler. Either way they serve only the bench queue.
//!
//! Every worker and process started here is also tracked by the [`Bench`], so that
//! [`Bench::finish`] can stop it when a workload ends early (an error, Ctrl-C). A child's pid is
//! signalled only until the task that waits for it has reaped it, so a pid the system has reused is
//! never signalled.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;

use super::{BENCH_TYPE, Bench, BenchError, BenchResult, Plan, Stop, machine, signal};
use jobq::handler;
use jobq::worker::Worker;

/// Workers started together.
pub(crate) struct Fleet {
    members: Vec<Member>,
}

/// One worker or process of a fleet.
pub(crate) struct Member {
    stop: Stop,
    done: oneshot::Receiver<BenchResult<()>>,
}

impl Fleet {
    /// A fleet of one.
    pub(crate) fn of(member: Member) -> Fleet {
        Fleet { members: vec![member] }
    }

    /// Starts the plan's workers with the bench handler: `plan.processes` worker processes, or one
    /// in-process worker when that is 0. In `burst` mode they stop once no job is ready.
    pub(crate) fn start(bench: &Bench, plan: &Plan, burst: bool) -> BenchResult<Fleet> {
        if plan.processes == 0 {
            let handler = handler::build(BENCH_TYPE, &bench.handler.config_kind())?;
            let worker = Worker::builder(bench.client.store().clone())
                .settings(&bench.worker_settings(plan.concurrency))
                .handler(BENCH_TYPE, handler)
                .name(bench.worker_name())
                .burst(burst)
                .build()?;
            return Ok(Fleet {
                members: vec![bench.start_worker(worker)],
            });
        }
        let mut args = vec![
            "worker".to_string(),
            "--queue".into(),
            bench.queue.clone(),
            "--concurrency".into(),
            plan.concurrency.to_string(),
            "--name".into(),
            bench.worker_name(),
        ];
        if burst {
            args.push("--burst".into());
        }
        let members = (0..plan.processes)
            .map(|_| bench.start_process("a `jobq worker` process", &args))
            .collect::<BenchResult<Vec<_>>>()?;
        Ok(Fleet { members })
    }

    /// Asks every member to stop gracefully (running jobs finish first).
    pub(crate) fn stop(&self) {
        for m in &self.members {
            signal(&m.stop, libc::SIGTERM);
        }
    }

    /// Waits until every member has stopped; fails if one failed. Returns the largest peak resident
    /// memory of the worker processes (sampled every 50 ms; `None` for an in-process worker).
    pub(crate) async fn wait(self) -> BenchResult<Option<u64>> {
        let stops: Vec<Stop> = self.members.iter().map(|m| m.stop.clone()).collect();
        let all = futures_util::future::join_all(self.members.into_iter().map(|m| m.done));
        tokio::pin!(all);
        let mut peak: Option<u64> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        let results = loop {
            tokio::select! {
                results = &mut all => break results,
                _ = tick.tick() => {
                    for stop in &stops {
                        if let Stop::Process { pid, reaped } = stop
                            && !reaped.load(Ordering::Acquire)
                                && let Some(rss) = machine::peak_rss(*pid) {
                                    peak = Some(peak.map_or(rss, |p| p.max(rss)));
                                }
                    }
                }
            }
        };
        for result in results {
            match result {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(BenchError::Incomplete("a bench worker ended without a report".into())),
            }
        }
        Ok(peak)
    }
}

impl Bench {
    /// Runs an in-process worker on its own task.
    pub(crate) fn start_worker(&self, worker: Worker) -> Member {
        let handle = worker.handle();
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            let result = worker.run().await.map(|_| ()).map_err(BenchError::from);
            let _ = tx.send(result);
        });
        self.track(Stop::Worker(handle.clone()), task);
        Member {
            stop: Stop::Worker(handle),
            done: rx,
        }
    }

    /// Starts `jobq --config <bench config> --quiet ARGS…` with the store URL in `JOBQ_URL` (not on
    /// the command line, where `ps` would show a password) and the caller's `JOBQ_*` overrides removed.
    pub(crate) fn start_process(&self, what: &str, args: &[String]) -> BenchResult<Member> {
        let config = self.config_file()?;
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.arg("--config")
            .arg(&config)
            .arg("--quiet")
            .args(args)
            .env("JOBQ_URL", self.url.expose())
            .env_remove("JOBQ_CONFIG")
            .env_remove("JOBQ_QUEUES")
            .env_remove("JOBQ_CONCURRENCY")
            .env_remove("JOBQ_OUTPUT")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let child = cmd.spawn().map_err(|source| BenchError::Spawn {
            what: what.to_string(),
            program: self.exe.display().to_string(),
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        let reaped = Arc::new(AtomicBool::new(false));
        let (tx, rx) = oneshot::channel();
        let what = what.to_string();
        let flag = reaped.clone();
        let task = tokio::spawn(async move {
            let output = child.wait_with_output().await;
            flag.store(true, Ordering::Release);
            let result = match output {
                Ok(out) if out.status.success() => Ok(()),
                Ok(out) => Err(BenchError::Process {
                    what,
                    status: out.status.to_string(),
                    stderr: tail(&out.stderr),
                }),
                Err(e) => Err(BenchError::Incomplete(format!("waiting for {what} failed: {e}"))),
            };
            let _ = tx.send(result);
        });
        let stop = Stop::Process { pid, reaped };
        self.track(stop.clone(), task);
        Ok(Member { stop, done: rx })
    }

    /// The config file of bench processes, written on first use in the temp folder (mode 0600):
    /// the bench handler, no retention, rescue only after a day, and the caller's heartbeat and poll
    /// interval.
    fn config_file(&self) -> BenchResult<PathBuf> {
        let mut slot = self.config_file.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = slot.as_ref() {
            return Ok(path.clone());
        }
        let path = std::env::temp_dir().join(format!("{}.toml", self.queue));
        let settings = self.worker_settings(1);
        let mut handler = toml::Table::new();
        match self.handler.config_kind() {
            jobq::handler::HandlerKind::Exec { argv } => {
                handler.insert(
                    "exec".into(),
                    toml::Value::Array(argv.into_iter().map(toml::Value::String).collect()),
                );
            }
            jobq::handler::HandlerKind::Persistent { argv, options } => {
                handler.insert(
                    "exec".into(),
                    toml::Value::Array(argv.into_iter().map(toml::Value::String).collect()),
                );
                handler.insert("persistent".into(), toml::Value::Boolean(true));
                handler.insert("in_flight".into(), toml::Value::Integer(options.in_flight.into()));
                handler.insert("processes".into(), toml::Value::Integer(options.processes.into()));
            }
            jobq::handler::HandlerKind::Builtin { name } => {
                handler.insert("builtin".into(), toml::Value::String(name));
            }
            _ => {
                unreachable!("bench handlers are noop, exec or persistent")
            }
        }
        let ms = |d: Duration| toml::Value::String(format!("{}ms", d.as_millis()));
        let mut worker = toml::Table::new();
        worker.insert("heartbeat".into(), ms(settings.heartbeat));
        worker.insert("stale_after".into(), ms(settings.stale_after));
        worker.insert("poll_interval".into(), ms(settings.poll_interval));
        worker.insert("shutdown_timeout".into(), ms(settings.shutdown_timeout));
        let mut handlers = toml::Table::new();
        handlers.insert(BENCH_TYPE.into(), toml::Value::Table(handler));
        let mut doc = toml::Table::new();
        doc.insert("worker".into(), toml::Value::Table(worker));
        doc.insert("handlers".into(), toml::Value::Table(handlers));
        let text = format!(
            "# Written by `jobq bench` for its worker processes; removed when the bench ends.\n{}",
            toml::to_string(&doc).unwrap_or_default()
        );
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            file.write_all(text.as_bytes())
        };
        write().map_err(|source| BenchError::ConfigFile {
            path: path.display().to_string(),
            source,
        })?;
        *slot = Some(path.clone());
        Ok(path)
    }
}

/// The last three lines a process printed on stderr, on one line.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(3);
    let tail = lines[start..].join("; ");
    if tail.is_empty() { "no output".into() } else { tail }
}
