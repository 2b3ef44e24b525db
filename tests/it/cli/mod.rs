//! Tests of the `jobq` binary: each runs the real executable against a SQLite file in its own temporary
//! directory and snapshots exit code, stdout and stderr together (`insta`; CI sets `INSTA_UPDATE=no`).
//!
//! A [`Sandbox`] is one test's world: a temp dir that is also the working directory (so no `./jobq.toml`
//! leaks in), `HOME` and the XDG folders inside it, `JOBQ_CONFIG` and the other `JOBQ_*` variables
//! removed, and `JOBQ_URL` naming `jobs.db` in it. Output is made stable before it is compared:
//! - UUIDs become `[ID1]`, `[ID2]`, … numbered in the order the sandbox first saw them, so one job keeps
//!   its name across the commands of a test (a coalesced enqueue prints the first job's `[ID1]` again);
//! - runs of spaces after a line's indentation collapse to two and trailing spaces go, because table
//!   columns are as wide as their widest cell and relative times (`now`, `1s ago`) vary in width;
//! - insta filters replace the temp dir (`[TEMP]`), times near the present (Unix ms `[MS]`, RFC 3339
//!   `[TIME]`, `3s ago`/`now` `[AGO]`, `in 9m59s` `[IN]`) and the elapsed time and rate of a bulk enqueue.
//!   Times far from the present (`--at 2030-…`) are left as they are, so tests can check them exactly.
//!
//! Every failing run is also checked for the one-line rule: stderr is exactly one line, starting with
//! `error: ` (see [`Run`]).

/// Snapshots a [`Run`]: `snap!(run)` names the snapshot after the test, `snap!("what", run)` after the
/// test and `what`.
macro_rules! snap {
    ($run:expr) => {
        insta::assert_snapshot!($run.snapshot())
    };
    ($name:expr, $run:expr) => {{
        fn here() {}
        let name = format!("{}__{}", $crate::cli::test_name(here), $name);
        insta::assert_snapshot!(name, $run.snapshot())
    }};
}

mod batch;
mod bench;
mod cancel;
mod cleanup;
mod delete;
mod doctor;
mod enqueue;
mod errors;
mod flow;
mod generate;
mod help;
mod init;
mod list;
mod migrate;
mod replay_dead;
mod resolve;
mod retry;
mod schedules;
mod show;
mod stats;
mod transfer;

use std::cell::RefCell;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use jobq::store::{Claim, DynStore, Finish, Lease, StoreUrl, Transition};
use jobq::time::UnixMillis;
use serde_json::Value;
use tempfile::TempDir;

/// Variables that would let the caller's environment change what jobq does.
const CLEARED_ENV: [&str; 10] = [
    "JOBQ_CONFIG",
    "JOBQ_URL",
    "JOBQ_OUTPUT",
    "JOBQ_QUEUES",
    "JOBQ_CONCURRENCY",
    "JOBQ_MAX_PAYLOAD_BYTES",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "NO_COLOR",
    "CLICOLOR_FORCE",
];

/// The worker id the tests claim jobs under when they set up state through the library.
pub const WORKER: &str = "cli-test-worker";

/// One test's private world; see the module docs.
pub struct Sandbox {
    dir: TempDir,
    ids: RefCell<Vec<String>>,
    extra_filters: Vec<(String, String)>,
    verbatim: bool,
    guard: Option<insta::internals::SettingsBindDropGuard>,
}

/// One finished run of the binary.
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// stdout as printed (ids not replaced).
    pub stdout: String,
    /// stderr as printed.
    pub stderr: String,
    snapshot: String,
}

impl Sandbox {
    /// A fresh sandbox whose snapshot filters are bound for the rest of the test.
    pub fn new() -> Sandbox {
        Sandbox::create(false)
    }

    /// A sandbox for text whose spacing and wording must be kept as printed (help, SQL): it neither
    /// collapses spaces nor filters times, only the temp dir.
    pub fn verbatim() -> Sandbox {
        Sandbox::create(true)
    }

    fn create(verbatim: bool) -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("jobq-cli-")
            .tempdir()
            .expect("a temp dir");
        std::fs::create_dir_all(dir.path().join("home")).expect("a home dir");
        let mut sandbox = Sandbox {
            dir,
            ids: RefCell::new(Vec::new()),
            extra_filters: Vec::new(),
            verbatim,
            guard: None,
        };
        sandbox.bind();
        sandbox
    }

    /// Adds a filter for this test only (e.g. the age column of `stats`).
    pub fn add_filter(&mut self, regex: &str, replacement: &str) {
        self.extra_filters.push((regex.to_string(), replacement.to_string()));
        self.bind();
    }

    /// Filters the age of the oldest ready job (`stats`), which varies with timing: the last column
    /// of a table row, and the value of `jobq_oldest_ready_age_seconds`.
    pub fn filter_ages(&mut self) {
        self.add_filter(r"(?m)  (?:\d+(?:ms|[smhd]))+$", "  [AGE]");
        self.add_filter(r"(jobq_oldest_ready_age_seconds\{[^}]*\}) \d+\.\d+", "$1 [AGE]");
    }

    fn bind(&mut self) {
        // Drop the old guard first: it restores the settings from before this sandbox.
        self.guard = None;
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(true);
        for (regex, replacement) in filters(self.path(), self.verbatim) {
            settings.add_filter(&regex, replacement);
        }
        for (regex, replacement) in &self.extra_filters {
            settings.add_filter(regex, replacement.clone());
        }
        self.guard = Some(settings.bind_to_scope());
    }

    /// The temp dir (also the working directory of every run).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The store URL every run gets through `JOBQ_URL`.
    pub fn url(&self) -> String {
        format!("sqlite://{}", self.path().join("jobs.db").display())
    }

    /// Writes a file in the sandbox and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, contents).expect("writing a test file");
        path
    }

    /// The binary, set up to run in this sandbox (stdin is not a terminal: it is empty).
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(insta_cmd::get_cargo_bin("jobq"));
        cmd.args(args).current_dir(self.path());
        for var in CLEARED_ENV {
            cmd.env_remove(var);
        }
        let home = self.path().join("home");
        cmd.env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("COLUMNS", "100")
            .env("JOBQ_URL", self.url());
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }

    /// Runs `jobq ARGS…` with empty stdin.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let cmd = self.command(args);
        self.finish(cmd, None)
    }

    /// Runs `jobq ARGS…` with `input` on stdin.
    pub fn run_with_stdin<I, S>(&self, args: I, input: &str) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped());
        self.finish(cmd, Some(input))
    }

    /// Runs a prepared command (e.g. with more environment) with empty stdin.
    pub fn run_command(&self, cmd: Command) -> Run {
        self.finish(cmd, None)
    }

    fn finish(&self, mut cmd: Command, input: Option<&str>) -> Run {
        let mut line = String::from("$ jobq");
        for arg in cmd.get_args() {
            line.push(' ');
            line.push_str(&shell_quote(&arg.to_string_lossy()));
        }
        let output: Output = match input {
            None => cmd.output().expect("running jobq"),
            Some(input) => {
                let mut child = cmd.spawn().expect("running jobq");
                let mut stdin = child.stdin.take().expect("a stdin pipe");
                let input = input.to_string();
                let writer = std::thread::spawn(move || {
                    // jobq may exit without reading everything; a broken pipe here is fine.
                    let _ = stdin.write_all(input.as_bytes());
                });
                let output = child.wait_with_output().expect("waiting for jobq");
                writer.join().expect("the stdin writer");
                output
            }
        };
        let code = output.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if let Some(input) = input {
            if input.len() <= 200 {
                line.push_str(&format!(" <<< {}", shell_quote(input)));
            } else {
                line.push_str(&format!(" <<< ({} bytes)", input.len()));
            }
        }
        let line = self.number_ids(&line);
        let snapshot = format!(
            "{line}\nexit code: {code}\n----- stdout -----\n{}\n----- stderr -----\n{}",
            self.stable(&stdout),
            self.stable(&stderr)
        );
        Run {
            code,
            stdout,
            stderr,
            snapshot,
        }
    }

    /// `text` with UUIDs numbered and table padding collapsed (the rest is left to insta filters).
    fn stable(&self, text: &str) -> String {
        let text = self.number_ids(text);
        if self.verbatim {
            return text;
        }
        let mut out = String::new();
        for line in text.lines() {
            // Indentation (of JSON, of a table's continuation lines) is kept; padding inside is not.
            let body = line.trim_start_matches(' ');
            let mut collapsed = line[..line.len() - body.len()].to_string();
            let mut spaces = 0;
            for c in body.chars() {
                if c == ' ' {
                    spaces += 1;
                    continue;
                }
                if spaces > 0 {
                    collapsed.push_str(if spaces == 1 { " " } else { "  " });
                    spaces = 0;
                }
                collapsed.push(c);
            }
            out.push_str(&collapsed);
            out.push('\n');
        }
        out
    }

    fn number_ids(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((start, uuid)) = find_uuid(rest) {
            out.push_str(&rest[..start]);
            let mut ids = self.ids.borrow_mut();
            let n = match ids.iter().position(|i| i == uuid) {
                Some(n) => n + 1,
                None => {
                    ids.push(uuid.to_string());
                    ids.len()
                }
            };
            out.push_str(&format!("[ID{n}]"));
            rest = &rest[start + uuid.len()..];
        }
        out.push_str(rest);
        out
    }

    /// Runs a command that must succeed and returns its stdout, trimmed.
    pub fn ok<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let run = self.run(args);
        assert_eq!(run.code, 0, "expected success:\n{}", run.snapshot);
        run.stdout.trim().to_string()
    }

    /// Enqueues a job (`jobq enqueue ARGS…`) and returns its id.
    pub fn enqueue(&self, args: &[&str]) -> String {
        let mut all = vec!["enqueue"];
        all.extend_from_slice(args);
        self.ok(all)
    }

    /// Runs a command that must succeed and parses its stdout as one JSON document.
    pub fn json<I, S>(&self, args: I) -> Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.ok(args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{out}"))
    }

    /// One job as `show -o json` prints it.
    pub fn job(&self, id: &str) -> Value {
        self.json(["show", id, "-o", "json"])
    }

    /// `(id, status)` of every job, newest first, as `list -o json` prints them.
    pub fn statuses(&self) -> Vec<(String, String)> {
        let jobs = self.json(["list", "--limit", "1000", "-o", "json"]);
        jobs.as_array()
            .expect("a JSON array")
            .iter()
            .map(|j| {
                (
                    j["jobId"].as_str().unwrap().to_string(),
                    j["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The status of one job.
    pub fn status(&self, id: &str) -> String {
        self.job(id)["status"].as_str().expect("a status").to_string()
    }

    /// Opens the sandbox's store through the library, as a worker would, and runs `f` on it.
    pub fn with_store<T>(&self, f: impl AsyncFnOnce(&DynStore) -> T) -> T {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let url = StoreUrl::parse(&self.url()).expect("the sandbox URL");
            let store = jobq::store::connect(&url).await.expect("opening the sandbox store");
            store.migrate().await.expect("migrating the sandbox store");
            f(&store).await
        })
    }

    /// Claims every ready job of `queue` as a worker would (they become `running`); returns their ids.
    pub fn claim(&self, queue: &str) -> Vec<String> {
        self.with_store(async |store| claim_all(store, queue).await.iter().map(|l| l.id.to_string()).collect())
    }

    /// Claims every ready job of `queue` and finishes each with `outcome`, recorded at `at` (which sets
    /// `finished_at` for terminal outcomes and `waiting`). Returns their ids.
    pub fn settle(&self, queue: &str, outcome: Transition, at: UnixMillis) -> Vec<String> {
        self.with_store(async |store| {
            let leases = claim_all(store, queue).await;
            let finishes: Vec<Finish> = leases
                .iter()
                .map(|lease| Finish {
                    progress: None,
                    lease: lease.clone(),
                    outcome: outcome.clone(),
                    spawn: Vec::new(),
                })
                .collect();
            let applied = store.finish(&finishes, at).await.expect("finishing jobs");
            assert!(applied.iter().all(|a| *a), "every finish applies");
            leases.iter().map(|l| l.id.to_string()).collect()
        })
    }

    /// Makes every ready job of `queue` dead with `error`, as a worker would on a permanent failure.
    pub fn kill(&self, queue: &str, error: &str) -> Vec<String> {
        self.settle(
            queue,
            Transition::Dead {
                error: error.to_string(),
            },
            UnixMillis::now(),
        )
    }
}

async fn claim_all(store: &DynStore, queue: &str) -> Vec<Lease> {
    let claim = Claim {
        queues: vec![queue.to_string()],
        exclude_types: Vec::new(),
        worker: WORKER.to_string(),
        limit: 1000,
        now: UnixMillis::now(),
        flow: Default::default(),
    };
    let jobs = store.claim(&claim).await.expect("claiming jobs");
    assert!(!jobs.is_empty(), "no ready job in queue {queue} to claim");
    jobs.iter().map(Lease::of).collect()
}

impl Run {
    /// Exit code, command line, stdout and stderr in one text, for a snapshot. Checks the one-line rule
    /// for failures first.
    pub fn snapshot(&self) -> &str {
        self.assert_one_line_error();
        &self.snapshot
    }

    /// A failing run prints exactly one line on stderr, starting with `error: `.
    pub fn assert_one_line_error(&self) {
        if self.code == 0 {
            return;
        }
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            lines.len() == 1 && lines[0].starts_with("error: "),
            "a failure must print one line starting with \"error: \" on stderr, got:\n{}",
            self.snapshot
        );
    }
}

/// The name of the test function that defines `here` (for snapshot names).
pub fn test_name<F>(_here: F) -> &'static str {
    let path = std::any::type_name::<F>().trim_end_matches("::here");
    let path = path.trim_end_matches("::{{closure}}");
    path.rsplit("::").next().unwrap_or(path)
}

/// The filters every sandbox applies, in order.
fn filters(dir: &Path, verbatim: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.display().to_string()];
    if let Ok(canonical) = dir.canonicalize() {
        dirs.push(canonical.display().to_string());
    }
    for d in dirs {
        out.push((escape(&d), "[TEMP]".to_string()));
    }
    if verbatim {
        return out;
    }
    // Unix milliseconds within about a day of now (the 13-digit numbers that share their first 5 digits,
    // give or take one, with the present).
    let now = UnixMillis::now();
    let prefix = now.0 / 100_000_000;
    out.push((
        format!(r"\b(?:{}|{}|{})\d{{8}}\b", prefix - 1, prefix, prefix + 1),
        "[MS]".to_string(),
    ));
    // RFC 3339 times from yesterday to tomorrow (UTC), as jobq prints them: with milliseconds (so an
    // example time in a message, such as 2026-01-31T09:00:00Z, stays as it is).
    let day = 86_400_000;
    let dates: Vec<String> = [-day, 0, day]
        .iter()
        .map(|d| UnixMillis(now.0 + d).to_rfc3339()[..10].to_string())
        .collect();
    out.push((
        format!(r"\b(?:{})T\d{{2}}:\d{{2}}:\d{{2}}\.\d{{3}}Z", dates.join("|")),
        "[TIME]".to_string(),
    ));
    // Relative times from jobq::time::relative.
    out.push((r"\b(?:\d+(?:ms|[smhd]))+ ago\b".to_string(), "[AGO]".to_string()));
    out.push((r"\bnow\b".to_string(), "[AGO]".to_string()));
    out.push((r"\bin (?:\d+(?:ms|[smhd]))+\b".to_string(), "[IN]".to_string()));
    // `enqueue --file`'s summary: "in 0.01s (300/s)".
    out.push((
        r"in \d+\.\d+s \(\d+/s\)".to_string(),
        "in [ELAPSED] ([RATE]/s)".to_string(),
    ));
    out
}

/// A literal as a regex.
fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The first UUID (8-4-4-4-12 lowercase hex) in `text`, with its byte offset.
fn find_uuid(text: &str) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    if bytes.len() < 36 {
        return None;
    }
    (0..=bytes.len() - 36).find_map(|start| {
        let candidate = &bytes[start..start + 36];
        let is_uuid = candidate.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(b),
        });
        let bounded = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        (is_uuid && bounded).then(|| (start, &text[start..start + 36]))
    })
}

/// An argument as a shell would need it written.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%^".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
