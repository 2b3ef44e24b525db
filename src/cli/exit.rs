//! Exit codes (DESIGN §5): 0 ok; 1 runtime error; 2 bad usage or input; 3 not found; and for `wait`
//! and `enqueue --wait`: 4 dead, 5 cancelled, 6 discarded.

use std::fmt;

use crate::job::JobStatus;

/// A finished command whose exit code carries a result rather than an error (the outcome of a waited
/// job). `main` exits with `code` and prints nothing more.
#[derive(Debug)]
pub struct Exit {
    /// The process exit code.
    pub code: i32,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exit {}", self.code)
    }
}

impl std::error::Error for Exit {}

/// The exit code that tells how a waited-for job ended.
pub fn for_outcome(status: JobStatus) -> i32 {
    match status {
        JobStatus::Succeeded => 0,
        JobStatus::Dead => 4,
        JobStatus::Cancelled => 5,
        JobStatus::Discarded => 6,
        JobStatus::Pending | JobStatus::Running | JobStatus::Waiting => 1,
    }
}

/// The exit code for an error that reached `main`.
pub fn for_error(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(exit) = cause.downcast_ref::<Exit>() {
            return exit.code;
        }
        if let Some(e) = cause.downcast_ref::<crate::Error>() {
            return e.exit_code();
        }
        if let Some(e) = cause.downcast_ref::<crate::store::StoreError>() {
            return if matches!(e, crate::store::StoreError::InvalidUrl { .. }) {
                2
            } else {
                1
            };
        }
        if let Some(e) = cause.downcast_ref::<clap::Error>() {
            return e.exit_code();
        }
    }
    1
}

/// True when the error is a closed stdout (`jobq list | head`): exit quietly with 0. JSON output fails
/// with a `serde_json::Error` that wraps the io error without exposing it as its `source()`.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(BrokenPipe))
    })
}

/// Prints a command-line parsing error on one line (help and version print as usual) and gives
/// clap's exit code: 2 for bad usage, 0 for help and version.
pub fn usage(err: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    let code = err.exit_code() as u8;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
        }
        _ => {
            let text = err.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = first.join(" ");
            let tip = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("tip: "))
                .map(|t| format!("; {t}"))
                .unwrap_or_default();
            eprintln!("{first}{tip} (see --help)");
        }
    }
    std::process::ExitCode::from(code)
}
