//! The `jobq` binary: parse, run, print an error once, exit with its code.

use std::process::ExitCode;

use clap::Parser as _;
use jobq::cli::{self, exit};

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(err) => return exit::usage(err),
    };
    let runtime = if args.command.wants_threads() {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let result = match runtime {
        Ok(rt) => rt.block_on(cli::run(args)),
        Err(e) => Err(anyhow::Error::new(e).context("cannot start the async runtime")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if exit::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            if err.downcast_ref::<exit::Exit>().is_none() {
                eprintln!("error: {err:#}");
            }
            ExitCode::from(exit::for_error(&err) as u8)
        }
    }
}
