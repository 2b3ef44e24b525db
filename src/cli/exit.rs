//! How `jobq` exits (DESIGN §5): [`Exit`], the one exit-code type, which [`super::run`] returns and
//! `main` turns into the process's code; the code an error stands for ([`Exit::of_error`]); and the
//! one line printed for a command line clap refuses ([`usage`]).
//!
//! Nothing here prints an error: `main` does, once. An outcome (a waited-for job that died) is an
//! exit code, never an error, so it needs no message.

use std::fmt;

use clap::error::{ContextKind, ContextValue, ErrorKind};

use jobq::job::JobStatus;
use jobq::store::StoreError;

/// How the process exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// 0: done; for `wait` and `enqueue --wait`, the job succeeded.
    Success,
    /// 1: a runtime error (the store unreachable, a time-out).
    Failure,
    /// 2: bad usage or bad input.
    Usage,
    /// 3: no such job.
    NotFound,
    /// 4: the waited-for job is dead.
    Dead,
    /// 5: the waited-for job was cancelled.
    Cancelled,
    /// 6: the waited-for job was discarded.
    Discarded,
    /// 7: the waited-for job expired before it started.
    Expired,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::NotFound => 3,
            Exit::Dead => 4,
            Exit::Cancelled => 5,
            Exit::Discarded => 6,
            Exit::Expired => 7,
        }
    }

    /// How a waited-for job ended. A job that has not ended is a failure to wait for it.
    pub fn of_outcome(status: JobStatus) -> Exit {
        match status {
            JobStatus::Succeeded => Exit::Success,
            JobStatus::Dead => Exit::Dead,
            JobStatus::Cancelled => Exit::Cancelled,
            JobStatus::Discarded => Exit::Discarded,
            JobStatus::Expired => Exit::Expired,
            JobStatus::Blocked | JobStatus::Pending | JobStatus::Running | JobStatus::Waiting => Exit::Failure,
        }
    }

    /// The code for an error that reached `main`: the first cause in its chain that says.
    pub fn of_error(err: &anyhow::Error) -> Exit {
        for cause in err.chain() {
            if let Some(e) = cause.downcast_ref::<jobq::Error>() {
                return Exit::from(e);
            }
            if let Some(e) = cause.downcast_ref::<StoreError>() {
                return Exit::of_store(e);
            }
            if cause.is::<jobq::error::InvalidInput>() || cause.is::<UsageError>() {
                return Exit::Usage;
            }
        }
        Exit::Failure
    }

    fn of_store(e: &StoreError) -> Exit {
        match e {
            StoreError::InvalidUrl { .. } => Exit::Usage,
            StoreError::UnknownDependency { .. } => Exit::NotFound,
            _ => Exit::Failure,
        }
    }
}

/// Refused input, an unusable config and a job in a status the command cannot act on are bad usage,
/// a missing job is not found, and whatever else fails is a runtime error.
impl From<&jobq::Error> for Exit {
    fn from(e: &jobq::Error) -> Exit {
        match e {
            jobq::Error::Invalid { .. } | jobq::Error::Config { .. } | jobq::Error::Conflict { .. } => Exit::Usage,
            jobq::Error::NotFound { .. } | jobq::Error::NoSuchSchedule { .. } => Exit::NotFound,
            jobq::Error::TimedOut { .. } | jobq::Error::Broker { .. } => Exit::Failure,
            jobq::Error::Store(e) => Exit::of_store(e),
            _ => Exit::Failure,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
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

/// What a command line clap could not parse comes to: help and the version print as clap prints
/// them (exit 0, or 2 for the help shown when nothing was asked for); any other refusal becomes a
/// [`UsageError`] for `main` to print.
pub fn usage(err: clap::Error) -> anyhow::Result<Exit> {
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            Ok(if err.use_stderr() { Exit::Usage } else { Exit::Success })
        }
        _ => Err(UsageError::of(&err).into()),
    }
}

/// A command line clap refused, as one line: clap's own sentence for the error's kind, its first
/// suggestion, and where to look (`… (see --help)`). Exits with 2.
#[derive(Debug)]
pub struct UsageError(String);

impl UsageError {
    /// Words the error from its kind and context, as clap's rich formatter does, on one line.
    pub fn of(err: &clap::Error) -> UsageError {
        let sentence = sentence(err).unwrap_or_else(|| fallback(err));
        let tip = tip(err).map(|t| format!("; {t}")).unwrap_or_default();
        UsageError(one_line(&format!("{sentence}{tip} (see --help)")))
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// clap's sentence for the kinds that carry context; `None` for the others (and for context missing).
fn sentence(err: &clap::Error) -> Option<String> {
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let number = |kind| match err.get(kind) {
        Some(ContextValue::Number(n)) => Some(*n),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg);
    let value = text(ContextKind::InvalidValue);
    Some(match err.kind() {
        ErrorKind::ArgumentConflict => conflict(err),
        ErrorKind::NoEquals => format!("equal sign is needed when assigning values to '{}'", arg?),
        ErrorKind::InvalidValue => {
            let (arg, value) = (arg?, value?);
            let head = if value.is_empty() {
                format!("a value is required for '{arg}' but none was supplied")
            } else {
                format!("invalid value '{value}' for '{arg}'")
            };
            head + &values_list("possible values", err.get(ContextKind::ValidValue))
        }
        ErrorKind::InvalidSubcommand => format!("unrecognized subcommand '{}'", text(ContextKind::InvalidSubcommand)?),
        ErrorKind::MissingRequiredArgument => match err.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(args)) => {
                format!("the following required arguments were not provided: {}", args.join(" "))
            }
            _ => return None,
        },
        ErrorKind::MissingSubcommand => format!(
            "'{}' requires a subcommand but one was not provided{}",
            text(ContextKind::InvalidSubcommand)?,
            values_list("subcommands", err.get(ContextKind::ValidSubcommand))
        ),
        ErrorKind::TooManyValues => format!(
            "unexpected value '{}' for '{}' found; no more were expected",
            value?, arg?
        ),
        ErrorKind::TooFewValues => {
            let (actual, min) = (number(ContextKind::ActualNumValues)?, number(ContextKind::MinValues)?);
            format!(
                "{min} values required by '{}'; only {actual}{}",
                arg?,
                were_provided(actual)
            )
        }
        ErrorKind::ValueValidation => {
            let cause = std::error::Error::source(err)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("invalid value '{}' for '{}'{cause}", value?, arg?)
        }
        ErrorKind::WrongNumberOfValues => {
            let (actual, expected) = (
                number(ContextKind::ActualNumValues)?,
                number(ContextKind::ExpectedNumValues)?,
            );
            format!(
                "{expected} values required for '{}' but {actual}{}",
                arg?,
                were_provided(actual)
            )
        }
        ErrorKind::UnknownArgument => format!("unexpected argument '{}' found", arg?),
        _ => return None,
    })
}

/// An argument used with another it excludes, or used twice.
fn conflict(err: &clap::Error) -> String {
    let mut prior = err.get(ContextKind::PriorArg);
    let head = match (
        err.get(ContextKind::InvalidArg),
        err.get(ContextKind::InvalidSubcommand),
    ) {
        (Some(ContextValue::String(arg)), _) if prior == Some(&ContextValue::String(arg.clone())) => {
            prior = None;
            format!("the argument '{arg}' cannot be used multiple times")
        }
        (Some(ContextValue::String(arg)), _) => format!("the argument '{arg}' cannot be used with"),
        (_, Some(ContextValue::String(sub))) => format!("the subcommand '{sub}' cannot be used with"),
        _ => fallback(err),
    };
    match prior {
        None => head,
        Some(ContextValue::Strings(args)) => format!("{head}: {}", args.join(" ")),
        Some(ContextValue::String(arg)) => format!("{head} '{arg}'"),
        Some(_) => format!("{head} one or more of the other specified arguments"),
    }
}

/// The sentence of a kind without context: clap's description of the kind, or its cause.
fn fallback(err: &clap::Error) -> String {
    match (err.kind().as_str(), std::error::Error::source(err)) {
        (Some(description), _) => description.to_string(),
        (None, Some(cause)) => cause.to_string(),
        (None, None) => "unknown cause".to_string(),
    }
}

/// ` [possible values: a, b]`, quoting values that are empty or hold white space as clap does.
fn values_list(name: &str, values: Option<&ContextValue>) -> String {
    match values {
        Some(ContextValue::Strings(values)) if !values.is_empty() => {
            let shown: Vec<String> = values
                .iter()
                .map(|v| {
                    if v.is_empty() || v.contains(char::is_whitespace) {
                        format!("{v:?}")
                    } else {
                        v.clone()
                    }
                })
                .collect();
            format!(" [{name}: {}]", shown.join(", "))
        }
        _ => String::new(),
    }
}

fn were_provided(n: isize) -> &'static str {
    if n > 1 { " were provided" } else { " was provided" }
}

/// clap's first suggestion: a similar subcommand, argument or value, else its first tip.
fn tip(err: &clap::Error) -> Option<String> {
    let similar = [
        (ContextKind::SuggestedSubcommand, "subcommand"),
        (ContextKind::SuggestedArg, "argument"),
        (ContextKind::SuggestedValue, "value"),
    ];
    for (kind, what) in similar {
        match err.get(kind) {
            Some(ContextValue::String(one)) => return Some(format!("a similar {what} exists: '{one}'")),
            Some(ContextValue::Strings(many)) => {
                let quoted: Vec<String> = many.iter().map(|m| format!("'{m}'")).collect();
                return Some(match quoted.as_slice() {
                    [one] => format!("a similar {what} exists: {one}"),
                    _ => format!("some similar {what}s exist: {}", quoted.join(", ")),
                });
            }
            _ => {}
        }
    }
    match err.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips.first().map(ToString::to_string),
        _ => None,
    }
}

/// Folds the line breaks a value or cause may hold, so the error stays on one line.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.join(" ")
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::cli::Cli;

    fn line(args: &[&str]) -> String {
        let err = Cli::try_parse_from(std::iter::once("jobq").chain(args.iter().copied())).unwrap_err();
        UsageError::of(&err).to_string()
    }

    #[test]
    fn usage_errors_read_as_clap_words_them_on_one_line() {
        let cases: [(&[&str], &str); 6] = [
            (
                &["lst"],
                "unrecognized subcommand 'lst'; a similar subcommand exists: 'list' (see --help)",
            ),
            (&["list", "--bogus"], "unexpected argument '--bogus' found (see --help)"),
            (
                &["list", "--limit"],
                "a value is required for '--limit <N>' but none was supplied (see --help)",
            ),
            (
                &["-q", "-v", "stats"],
                "the argument '--quiet' cannot be used with '--verbose...' (see --help)",
            ),
            (
                &["cancel"],
                "the following required arguments were not provided: <ID>... (see --help)",
            ),
            (
                &["enqueue", "t", "--priority", "high"],
                "invalid value 'high' for '--priority <N>': invalid digit found in string (see --help)",
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(line(args), expected, "{args:?}");
        }
    }

    #[test]
    fn each_usage_error_is_the_first_line_of_claps_own_rendering() {
        // The same sentence clap renders (its first paragraph, joined) and its first tip.
        let cases: [&[&str]; 15] = [
            &["enqueue", "t", "--prio", "1"],
            &["enqueue", "--delay", "1s", "--at", "2026-01-01T00:00:00Z", "t"],
            &["enqueue", "--file", "x", "--id", "y"],
            &["enqueue", "t", "{}", "--bogus"],
            &["enqueue"],
            &["-o", "xml", "list"],
            &["-v"],
            &["completions", "tcsh"],
            &["cancel", "a", "--queue", "q"],
            &["list", "--limit", "-1"],
            &["stats", "--watch", "often"],
            &["worker", "--max-jobs", "0"],
            &["worker", "--nice", "30"],
            &["bench", "nope"],
            &["show"],
        ];
        for args in cases {
            let err = Cli::try_parse_from(std::iter::once("jobq").chain(args.iter().copied())).unwrap_err();
            let rendered = err.render().to_string();
            let first: Vec<&str> = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = first.join(" ");
            let tip = rendered
                .lines()
                .find_map(|l| l.trim().strip_prefix("tip: "))
                .map(|t| format!("; {t}"))
                .unwrap_or_default();
            assert_eq!(
                format!("error: {}", UsageError::of(&err)),
                format!("{first}{tip} (see --help)"),
                "{args:?}"
            );
        }
        Cli::command().debug_assert();
    }

    #[test]
    fn outcomes_and_errors_map_to_the_documented_codes() {
        let codes: Vec<u8> = JobStatus::TERMINAL
            .into_iter()
            .map(|s| Exit::of_outcome(s).code())
            .collect();
        assert_eq!(codes, vec![0, 4, 5, 6, 7]);
        let not_found = anyhow::Error::from(jobq::Error::not_found("j1"));
        assert_eq!(Exit::of_error(&not_found), Exit::NotFound);
        let invalid = anyhow::Error::from(jobq::Error::invalid(jobq::error::Input::Queue, "bad")).context("while x");
        assert_eq!(Exit::of_error(&invalid), Exit::Usage);
        assert_eq!(Exit::of_error(&anyhow::anyhow!("store down")), Exit::Failure);
    }
}
