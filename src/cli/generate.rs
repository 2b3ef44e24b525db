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
