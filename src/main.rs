//! The `jobq` binary: parse, run, print an error once, exit with its code.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;
use jobq_cli::cli::exit::{self, Exit};
use jobq_cli::cli::{self, Cli};

fn main() -> ExitCode {
    match Cli::try_parse().map_or_else(exit::usage, run) {
        Ok(exit) => exit.into(),
        Err(err) if exit::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            Exit::of_error(&err).into()
        }
    }
}

/// One runtime thread per core for the commands that run work in parallel, one thread otherwise.
fn run(args: Cli) -> anyhow::Result<Exit> {
    let mut builder = if args.command.wants_threads() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = builder.enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(cli::run(args))
}
