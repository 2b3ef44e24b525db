//! Shell completions and man pages, rendered in memory from the clap definition. The repository keeps
//! generated copies in completions/ and man/; a test compares them with these renderers, and
//! `JOBQ_BLESS=1 cargo test generated` rewrites them.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

/// Arguments of `jobq completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Arguments of `jobq man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (jobq.1, jobq-enqueue.1, …) into this folder instead of printing jobq(1)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The shells completions are generated for, with the file name each is kept under.
pub const SHELLS: [(Shell, &str); 5] = [
    (Shell::Bash, "jobq.bash"),
    (Shell::Zsh, "_jobq"),
    (Shell::Fish, "jobq.fish"),
    (Shell::PowerShell, "_jobq.ps1"),
    (Shell::Elvish, "jobq.elv"),
];

/// The completion script for one shell.
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "jobq", &mut out);
    out
}

/// Every man page as (file name, roff): `jobq.1`, then `jobq-<subcommand>.1`.
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let cmd = Cli::command();
    let mut pages = Vec::new();
    let mut top = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut top)?;
    pages.push(("jobq.1".to_string(), top));
    for sub in cmd.get_subcommands() {
        let name = format!("jobq-{}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .version(cmd.get_version().unwrap_or_default().to_string());
        let mut page = Vec::new();
        clap_mangen::Man::new(sub).render(&mut page)?;
        pages.push((format!("{name}.1"), page));
    }
    Ok(pages)
}

/// The guide's command-line reference (`docs/src/cli.md`), in Markdown: every subcommand with its
/// usage and every option with its help, default and variable, as `--help` has them.
pub fn markdown_reference() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         Every subcommand and option of `jobq`, as `jobq --help` and `jobq SUBCOMMAND --help` give them\n\
         (generated from the command-line definition: `JOBQ_BLESS=1 cargo test generated` rewrites this\n\
         page). The other pages of the guide say what each area does; [exit codes](exit-codes.md) and\n\
         [configuration](configuration.md) are their own pages.\n",
    );
    out.push_str("\n## Options of every subcommand\n\n");
    options_table(&cmd, &mut out);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        command_section(sub, "jobq", 2, &mut out);
    }
    out
}

/// A subcommand's heading, about, usage and options, then its own subcommands one level down.
fn command_section(cmd: &clap::Command, parent: &str, level: usize, out: &mut String) {
    let path = format!("{parent} {}", cmd.get_name());
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(&format!("{} `{path}`\n\n", "#".repeat(level)));
    if let Some(about) = cmd.get_about() {
        out.push_str(&format!("{}\n\n", escape(&about.to_string())));
    }
    let usage = cmd.clone().bin_name(path.clone()).render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim();
    out.push_str(&format!("```text\n{usage}\n```\n\n"));
    options_table(cmd, out);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        command_section(sub, &path, (level + 1).min(4), out);
    }
}

/// A table of a command's own arguments (global ones only at the top).
fn options_table(cmd: &clap::Command, out: &mut String) {
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .filter(|a| cmd.get_name() == "jobq" || !a.is_global_set())
        .collect();
    if args.is_empty() {
        return;
    }
    out.push_str("| argument | meaning |\n|---|---|\n");
    for arg in args {
        let mut names = Vec::new();
        if let Some(short) = arg.get_short() {
            names.push(format!("-{short}"));
        }
        if let Some(long) = arg.get_long() {
            names.push(format!("--{long}"));
        }
        let value = arg
            .get_value_names()
            .map(|v| v.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" "))
            .filter(|_| arg.get_action().takes_values());
        let name = match (names.is_empty(), value) {
            (true, Some(v)) => v,
            (true, None) => arg.get_id().to_string().to_uppercase(),
            (false, Some(v)) => format!("{} {v}", names.join(", ")),
            (false, None) => names.join(", "),
        };
        let mut meaning = arg.get_help().map(|h| escape(&h.to_string())).unwrap_or_default();
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().to_string())
            .collect();
        if !defaults.is_empty() && arg.get_action().takes_values() {
            meaning.push_str(&format!(" (default: `{}`)", defaults.join(", ")));
        }
        if let Some(env) = arg.get_env() {
            meaning.push_str(&format!(" (env: `{}`)", env.to_string_lossy()));
        }
        let possible: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        if !possible.is_empty() && arg.get_action().takes_values() {
            meaning.push_str(&format!(" (one of {})", possible.join(", ")));
        }
        out.push_str(&format!("| `{name}` | {} |\n", meaning.trim()));
    }
    out.push('\n');
}

/// Help text in a table cell: one line, its pipes escaped.
fn escape(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// Runs `jobq completions`.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    std::io::stdout().lock().write_all(&completion(args.shell))?;
    Ok(())
}

/// Runs `jobq man`.
pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let pages = man_pages()?;
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)?;
            for (name, page) in pages {
                std::fs::write(dir.join(name), page)?;
            }
            Ok(())
        }
        None => {
            std::io::stdout().lock().write_all(&pages[0].1)?;
            Ok(())
        }
    }
}
