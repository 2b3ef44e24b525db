//! Output helpers shared by the subcommands: JSON to stdout, tables for people, colour only on a
//! terminal. stdout is data; stderr is for people.

use std::io::{IsTerminal, Write};

use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use serde::Serialize;

use super::OutputFormat;
use jobq::job::{Job, JobStatus};
use jobq::time::{UnixMillis, relative};

/// True when stdout is a terminal (colour and table borders are for people only).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// True when stderr is a terminal (progress bars and prompts).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Writes one JSON document and a newline to stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Writes one compact JSON object per line to stdout.
pub fn print_ndjson<'a, T: Serialize + 'a>(values: impl IntoIterator<Item = &'a T>) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for v in values {
        serde_json::to_writer(&mut out, v)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Writes text to stdout, turning a closed pipe into an error `main` treats as success.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Prints a listing as `format` asks: one JSON document, JSON lines, or for people the table that
/// `table` makes of the rows, where no rows is the sentence `none` on stderr instead (unless `quiet`).
pub fn print_rows<T: Serialize>(
    format: OutputFormat,
    rows: &[T],
    quiet: bool,
    none: &str,
    table: impl FnOnce(&[T]) -> Table,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Json => print_json(rows),
        OutputFormat::Ndjson => print_ndjson(rows),
        _ if rows.is_empty() => {
            if !quiet {
                eprintln!("{none}");
            }
            Ok(())
        }
        _ => print(&table(rows).to_string()),
    }
}

/// A table styled for where it goes: box drawing and colour on a terminal, plain columns elsewhere.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    if stdout_is_terminal() {
        t.load_preset(presets::UTF8_HORIZONTAL_ONLY)
            .set_content_arrangement(ContentArrangement::Dynamic);
    } else {
        t.load_preset(presets::NOTHING).force_no_tty();
    }
    t.set_header(header.iter().map(Cell::new));
    t
}

/// A status, coloured on a terminal.
pub fn status_cell(status: JobStatus) -> Cell {
    let cell = Cell::new(status.as_str());
    if !stdout_is_terminal() {
        return cell;
    }
    match status {
        JobStatus::Succeeded => cell.fg(Color::Green),
        JobStatus::Dead => cell.fg(Color::Red),
        JobStatus::Running => cell.fg(Color::Cyan),
        JobStatus::Cancelled | JobStatus::Discarded | JobStatus::Expired => cell.fg(Color::DarkGrey),
        JobStatus::Blocked | JobStatus::Pending | JobStatus::Waiting => cell.fg(Color::Yellow),
    }
}

/// `3m ago`, `in 20s`, or `-` for nothing.
pub fn when(at: Option<UnixMillis>, now: UnixMillis) -> String {
    at.map(|t| relative(t, now)).unwrap_or_else(|| "-".into())
}

/// The first line of text, cut to `max` characters with an ellipsis.
pub fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max && !text.contains('\n') {
        line.to_string()
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// The last error of a job, if any, shortened for a table.
pub fn last_error(job: &Job, max: usize) -> String {
    job.errors.last().map(|e| short(&e.error, max)).unwrap_or_default()
}

pub use crate::report::jobs;
